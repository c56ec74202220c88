/*
 * c-xdp-forward.c - the C yardstick for `npm run bench -- --xdp` (bench/xdp.js): AF_XDP
 * through raw syscalls, the same scheme as the JavaScript backend (lib/xdp/,
 * native/xdp.cc), so that "JS / C" compares languages, not designs:
 *  - one UMEM of 2 KiB chunks on hugepages (anonymous plain pages when there are none),
 *    shared by the sockets of both interfaces (XDP_SHARED_UMEM), a stack of free chunks;
 *  - per interface: the XDP program redirecting rx_queue_index through an XSKMAP (XDP_PASS
 *    otherwise), attached by a BPF link, native XDP where the driver has it, else generic;
 *    one socket on queue 0 with 2048-entry rings (receive: RING, as ixy pcap's --ring) and
 *    need_wakeup;
 *  - forward: receive a batch on A, touch byte 1 of each frame, send it on B, and back;
 *    reclaim completions into the free stack; refill the fill ring; sendto()/recvfrom()
 *    only when a ring's flags ask for it.
 *  - generate: 60-byte UDP frames from the free stack to the TX ring of A, as fast as the
 *    kernel takes them (the traffic source of the bench).
 *  - receive: take each batch from A's RX ring and give its chunks back, sleeping in poll()
 *    when the ring is empty: a capture that does nothing with its frames (bench/xdp.js
 *    sets `ixy pcap` beside it).
 *  - redirect: no socket. An XDP program that redirects every frame to A, run by the kernel
 *    on the generate frame over and over (BPF_PROG_TEST_RUN with live frames, Linux 5.18+):
 *    A sends page-pool frames with XDP headroom, as a NIC with native XDP hands frames to
 *    its program, and a veth passes them to its peer as XDP frames, never as skbs.
 * Build: gcc -O2 -o build/c-xdp-forward bench/c-xdp-forward.c   (bench/c-build.js)
 * Usage: c-xdp-forward forward IF_A IF_B SECONDS [BATCH] | generate IF_A SECONDS [BATCH]
 *                     | receive IF_A SECONDS [BATCH [RING]] | redirect IF_A SECONDS
 * Prints one JSON line: { "packets": forwarded, sent, received or redirected (frames the
 * program ran on: A drops what its peer has no room for), "seconds": ..., "mpps": ... }.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <net/if.h>
#include <poll.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#ifndef SOL_XDP
#define SOL_XDP 283
#endif
#ifndef AF_XDP
#define AF_XDP 44
#endif

static uint32_t ring_size = 2048; /* entries of every ring; receive mode may ask for more */
#define CHUNK 2048
#define FRAMES 32768 /* a full RX ring and a full fill ring at the largest ring */
#define HEADROOM 256 /* XDP_PACKET_HEADROOM: where the kernel puts a received frame */
#define RUNS_PER_CALL 65536 /* frames per BPF_PROG_TEST_RUN: a few ms, so the clock is read often */

struct ring {
  uint32_t *producer, *consumer, *flags;
  void *desc;
  uint32_t cached; /* our producer or consumer index */
};

struct port {
  int fd;
  struct ring rx, tx, fill, comp;
  uint32_t in_flight;
};

static uint8_t *umem;
static uint32_t free_ids[FRAMES];
static uint32_t free_count;

static void die(const char *what) {
  fprintf(stderr, "c-xdp-forward: %s: %s\n", what, strerror(errno));
  exit(1);
}

static long bpf(int cmd, union bpf_attr *attr) { return syscall(__NR_bpf, cmd, attr, sizeof(*attr)); }

static int load_xdp_program(const struct bpf_insn *prog, uint32_t count) {
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.prog_type = BPF_PROG_TYPE_XDP;
  a.expected_attach_type = BPF_XDP;
  a.insns = (uint64_t)(uintptr_t)prog;
  a.insn_cnt = count;
  a.license = (uint64_t)(uintptr_t)"GPL";
  int fd = bpf(BPF_PROG_LOAD, &a);
  if (fd < 0) die("BPF_PROG_LOAD");
  return fd;
}

static void attach(int ifindex, int *map_fd) {
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_type = BPF_MAP_TYPE_XSKMAP;
  a.key_size = 4;
  a.value_size = 4;
  a.max_entries = 64;
  int map = bpf(BPF_MAP_CREATE, &a);
  if (map < 0) die("BPF_MAP_CREATE");
  struct bpf_insn prog[] = {
      {BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, offsetof(struct xdp_md, rx_queue_index), 0},
      {BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, map},
      {0, 0, 0, 0, 0},
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, XDP_PASS},
      {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  int fd = load_xdp_program(prog, sizeof(prog) / sizeof(prog[0]));
  for (int skb = 0; skb < 2; skb++) {
    memset(&a, 0, sizeof(a));
    a.link_create.prog_fd = fd;
    a.link_create.target_ifindex = ifindex;
    a.link_create.attach_type = BPF_XDP;
    a.link_create.flags = skb ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
    if (bpf(BPF_LINK_CREATE, &a) >= 0) {
      *map_fd = map;
      return;
    }
  }
  die("BPF_LINK_CREATE");
}

static void map_ring(int fd, struct ring *r, struct xdp_ring_offset *off, size_t desc_bytes, off_t pgoff) {
  uint8_t *m = mmap(NULL, off->desc + ring_size * desc_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff);
  if (m == MAP_FAILED) die("mmap ring");
  r->producer = (uint32_t *)(m + off->producer);
  r->consumer = (uint32_t *)(m + off->consumer);
  r->flags = (uint32_t *)(m + off->flags);
  r->desc = m + off->desc;
  r->cached = 0;
}

static void open_port(struct port *p, const char *name, int shared_fd) {
  int ifindex = if_nametoindex(name);
  if (ifindex == 0) die(name);
  int map;
  attach(ifindex, &map);
  p->fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
  if (p->fd < 0) die("socket(AF_XDP)");
  if (shared_fd < 0) {
    struct xdp_umem_reg reg = {(uint64_t)(uintptr_t)umem, (uint64_t)FRAMES * CHUNK, CHUNK, 0, 0};
    if (setsockopt(p->fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg))) die("XDP_UMEM_REG");
  }
  int size = ring_size;
  int opts[] = {XDP_RX_RING, XDP_TX_RING, XDP_UMEM_FILL_RING, XDP_UMEM_COMPLETION_RING};
  for (int i = 0; i < 4; i++)
    if (setsockopt(p->fd, SOL_XDP, opts[i], &size, sizeof(size))) die("ring size");
  struct xdp_mmap_offsets off;
  socklen_t len = sizeof(off);
  if (getsockopt(p->fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &len)) die("XDP_MMAP_OFFSETS");
  map_ring(p->fd, &p->rx, &off.rx, sizeof(struct xdp_desc), XDP_PGOFF_RX_RING);
  map_ring(p->fd, &p->tx, &off.tx, sizeof(struct xdp_desc), XDP_PGOFF_TX_RING);
  map_ring(p->fd, &p->fill, &off.fr, 8, XDP_UMEM_PGOFF_FILL_RING);
  map_ring(p->fd, &p->comp, &off.cr, 8, XDP_UMEM_PGOFF_COMPLETION_RING);
  struct sockaddr_xdp sx = {0};
  sx.sxdp_family = AF_XDP;
  sx.sxdp_ifindex = ifindex;
  sx.sxdp_queue_id = 0;
  sx.sxdp_flags = shared_fd < 0 ? XDP_USE_NEED_WAKEUP : XDP_SHARED_UMEM;
  sx.sxdp_shared_umem_fd = shared_fd < 0 ? 0 : shared_fd;
  if (bind(p->fd, (struct sockaddr *)&sx, sizeof(sx))) die("bind");
  uint32_t key = 0, value = p->fd;
  union bpf_attr a;
  memset(&a, 0, sizeof(a));
  a.map_fd = map;
  a.key = (uint64_t)(uintptr_t)&key;
  a.value = (uint64_t)(uintptr_t)&value;
  if (bpf(BPF_MAP_UPDATE_ELEM, &a)) die("XSKMAP update");
  p->in_flight = 0;
}

/* Up to want free chunks onto the fill ring, as far as it has room. */
static void refill(struct port *p, uint32_t want) {
  uint32_t cons = __atomic_load_n(p->fill.consumer, __ATOMIC_ACQUIRE);
  uint32_t room = ring_size - (p->fill.cached - cons);
  uint32_t n = want < room ? want : room;
  if (n > free_count) n = free_count;
  uint64_t *d = p->fill.desc;
  for (uint32_t i = 0; i < n; i++) d[(p->fill.cached + i) & (ring_size - 1)] = (uint64_t)free_ids[--free_count] * CHUNK;
  p->fill.cached += n;
  __atomic_store_n(p->fill.producer, p->fill.cached, __ATOMIC_RELEASE);
  if (*p->fill.flags & XDP_RING_NEED_WAKEUP) recvfrom(p->fd, NULL, 0, MSG_DONTWAIT, NULL, NULL);
}

static void reclaim(struct port *p) {
  uint32_t prod = __atomic_load_n(p->comp.producer, __ATOMIC_ACQUIRE);
  uint64_t *d = p->comp.desc;
  for (; p->comp.cached != prod; p->comp.cached++) free_ids[free_count++] = d[p->comp.cached & (ring_size - 1)] / CHUNK;
  p->in_flight = p->tx.cached - p->comp.cached;
  __atomic_store_n(p->comp.consumer, p->comp.cached, __ATOMIC_RELEASE);
}

/* Sends ids[0..n) (lengths lens) on p; returns how many went; the rest stay the caller's. */
static uint32_t send_batch(struct port *p, uint32_t *ids, uint32_t *lens, uint32_t n) {
  reclaim(p);
  uint32_t room = ring_size - p->in_flight;
  if (n > room) n = room;
  struct xdp_desc *d = p->tx.desc;
  for (uint32_t i = 0; i < n; i++) {
    struct xdp_desc *x = &d[(p->tx.cached + i) & (ring_size - 1)];
    x->addr = (uint64_t)ids[i] * CHUNK + HEADROOM;
    x->len = lens[i];
    x->options = 0;
  }
  p->tx.cached += n;
  p->in_flight += n;
  __atomic_store_n(p->tx.producer, p->tx.cached, __ATOMIC_RELEASE);
  if ((n > 0 || p->in_flight > 0) && (*p->tx.flags & XDP_RING_NEED_WAKEUP)) sendto(p->fd, NULL, 0, MSG_DONTWAIT, NULL, 0);
  return n;
}

static uint32_t receive(struct port *p, uint32_t *ids, uint32_t *lens, uint32_t max) {
  uint32_t prod = __atomic_load_n(p->rx.producer, __ATOMIC_ACQUIRE);
  uint32_t n = prod - p->rx.cached;
  if (n > max) n = max;
  struct xdp_desc *d = p->rx.desc;
  for (uint32_t i = 0; i < n; i++) {
    struct xdp_desc *x = &d[(p->rx.cached + i) & (ring_size - 1)];
    ids[i] = x->addr / CHUNK;
    lens[i] = x->len;
  }
  p->rx.cached += n;
  __atomic_store_n(p->rx.consumer, p->rx.cached, __ATOMIC_RELEASE);
  refill(p, n > 32 ? n : 32);
  return n;
}

/* The source's frame: 60 bytes of UDP to a MAC nobody has, 10.0.0.1:1024 -> 10.1.0.1:5000. */
static uint8_t frame[60] = {2, 0, 0, 0, 0, 2, 2, 0, 0, 0, 0, 1, 8, 0, 0x45, 0, 0, 46, 0, 0, 0, 0, 64, 17, 0, 0,
                            10, 0, 0, 1, 10, 1, 0, 1, 4, 0, 0x13, 0x88, 0, 26, 0, 0};

static void checksum_frame(void) {
  uint32_t sum = 0; /* the IPv4 header checksum; UDP's is 0 (none) */
  for (int i = 14; i < 34; i += 2) sum += (frame[i] << 8) | frame[i + 1];
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  frame[24] = (uint8_t)(~sum >> 8);
  frame[25] = (uint8_t)~sum;
}

static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec + t.tv_nsec / 1e9;
}

/* One direction of the forwarder: like lib/apps/forward.js, unsent frames wait. */
struct way {
  uint32_t ids[256], lens[256], count, from;
};

static uint64_t forward_step(struct port *rx, struct port *tx, struct way *w, uint32_t batch) {
  if (w->count == 0) {
    w->count = receive(rx, w->ids, w->lens, batch);
    w->from = 0;
    for (uint32_t i = 0; i < w->count; i++) umem[(size_t)w->ids[i] * CHUNK + HEADROOM + 1] |= 0;
  }
  uint32_t sent = send_batch(tx, w->ids + w->from, w->lens + w->from, w->count - w->from);
  w->from += sent;
  if (w->from == w->count) w->count = 0;
  return sent;
}

/* redirect mode: the frames the kernel ran the redirecting program on until `end`. */
static uint64_t redirect_until(const char *name, double end) {
  int ifindex = if_nametoindex(name);
  if (ifindex == 0) die(name);
  struct bpf_insn prog[] = {
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_1, 0, 0, ifindex}, /* bpf_redirect(ifindex, 0) */
      {BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_2, 0, 0, 0},
      {BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect},
      {BPF_JMP | BPF_EXIT, 0, 0, 0, 0},
  };
  int fd = load_xdp_program(prog, sizeof(prog) / sizeof(prog[0]));
  union bpf_attr a;
  uint64_t runs = 0;
  while (now() < end) {
    memset(&a, 0, sizeof(a));
    a.test.prog_fd = fd;
    a.test.data_in = (uint64_t)(uintptr_t)frame;
    a.test.data_size_in = sizeof(frame);
    a.test.repeat = RUNS_PER_CALL;
    a.test.flags = BPF_F_TEST_XDP_LIVE_FRAMES;
    if (bpf(BPF_PROG_TEST_RUN, &a)) die("BPF_PROG_TEST_RUN (live frames)");
    runs += RUNS_PER_CALL;
  }
  return runs;
}

int main(int argc, char **argv) {
  if (argc < 4) {
    fprintf(stderr, "usage: c-xdp-forward forward IF_A IF_B SECONDS [BATCH] | generate IF_A SECONDS [BATCH] | receive IF_A SECONDS [BATCH [RING]] | redirect IF_A SECONDS\n");
    return 2;
  }
  checksum_frame();
  if (strcmp(argv[1], "redirect") == 0) {
    double start = now();
    uint64_t runs = redirect_until(argv[2], start + atof(argv[3]));
    double took = now() - start;
    printf("{\"packets\":%llu,\"seconds\":%.3f,\"mpps\":%.4f}\n", (unsigned long long)runs, took, runs / took / 1e6);
    return 0;
  }
  int gen = strcmp(argv[1], "generate") == 0;
  int rcv = strcmp(argv[1], "receive") == 0;
  int one = gen || rcv; /* one interface */
  double seconds = atof(argv[one ? 3 : 4]);
  uint32_t batch = argc > (one ? 4 : 5) ? (uint32_t)atoi(argv[one ? 4 : 5]) : 32;
  if (batch < 1 || batch > 256) batch = 32;
  if (rcv && argc > 5) ring_size = (uint32_t)atoi(argv[5]);
  if (ring_size < 64 || ring_size > 16384 || (ring_size & (ring_size - 1))) ring_size = 2048;
  size_t bytes = (size_t)FRAMES * CHUNK;
  umem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_HUGETLB | MAP_POPULATE, -1, 0);
  if (umem == MAP_FAILED) umem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (umem == MAP_FAILED) die("mmap UMEM");
  for (uint32_t i = 0; i < FRAMES; i++) free_ids[free_count++] = FRAMES - 1 - i;
  struct port a, b;
  open_port(&a, argv[2], -1);
  refill(&a, ring_size);
  uint64_t packets = 0;
  double start = now(), end = start + seconds;
  if (gen) {
    uint32_t ids[256], lens[256];
    for (uint32_t i = 0; i < FRAMES; i++) memcpy(umem + (size_t)i * CHUNK + HEADROOM, frame, sizeof(frame));
    uint32_t k = 0;
    while ((++k & 1023) || now() < end) {
      reclaim(&a);
      uint32_t n = batch < free_count ? batch : free_count;
      for (uint32_t i = 0; i < n; i++) {
        ids[i] = free_ids[--free_count];
        lens[i] = 60;
      }
      uint32_t sent = send_batch(&a, ids, lens, n);
      for (uint32_t i = sent; i < n; i++) free_ids[free_count++] = ids[i];
      packets += sent;
    }
  } else if (rcv) {
    uint32_t ids[256], lens[256];
    struct pollfd pfd = {a.fd, POLLIN, 0};
    while (now() < end) {
      uint32_t n = receive(&a, ids, lens, batch);
      for (uint32_t i = 0; i < n; i++) free_ids[free_count++] = ids[i];
      packets += n;
      if (n == 0) poll(&pfd, 1, 1);
    }
  } else {
    open_port(&b, argv[3], a.fd);
    refill(&b, ring_size);
    static struct way ab, ba;
    uint32_t k = 0;
    while ((++k & 1023) || now() < end) {
      packets += forward_step(&a, &b, &ab, batch);
      packets += forward_step(&b, &a, &ba, batch);
    }
  }
  double took = now() - start;
  printf("{\"packets\":%llu,\"seconds\":%.3f,\"mpps\":%.4f}\n", (unsigned long long)packets, took, packets / took / 1e6);
  return 0;
}
