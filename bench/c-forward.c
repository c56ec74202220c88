/*
 * c-forward.c - the C yardstick for `npm run bench`, and the trivial driver
 * that measures the device model's ceiling (native/model/README.md, "Speed").
 *
 * A minimal 82599 driver with the JavaScript driver's memory scheme and ring
 * algorithm, so that "JS / C" compares languages, not algorithms:
 *  - memory like native/addon.cc: a file on hugetlbfs (/mnt/huge), mapped
 *    shared, mlocked, unlinked, physical addresses from /proc/self/pagemap;
 *    one mempool of 4096 x 2 KiB buffers per port with a stack of free ids and
 *    each buffer's physical address precomputed (lib/memory/mempool.js);
 *  - RX like lib/intel/rx-queue.js: in one run of descriptors that does
 *    not wrap, count the good completed frames, then hand their buffers out
 *    and put a fresh one into each descriptor, all n taken off the free stack
 *    at once (popIds()); bad frames keep their buffer; RDT = last processed,
 *    written once at least --rx-free descriptors (default ring/4) are back;
 *  - TX like lib/intel/tx-queue.js: each slot keeps its buffer's id tagged
 *    with its pool's number (tagOf()); once 3/4 of the ring is in flight (or
 *    the pool runs low), reclaim in groups of 32 by checking DD of a group's
 *    last descriptor, a group of one pool's buffers going back to it in one
 *    copy (pushIds()); write the descriptors, one TDT write;
 *  - each queue counts the packets and bytes it moved, as a JavaScript
 *    queue's totals do;
 *  - forwarding like lib/apps/forward.js: rx A -> touch one byte (read and
 *    written back) -> tx B and back; what TX cannot take stays in that
 *    direction's batch and goes first at its next step, which receives nothing
 *    until it is sent;
 *  - generate like lib/traffic/generator.js with its default frames: held
 *    frames (lib/intel/held-frames.js), each TX slot keeping one buffer whose
 *    sequence number is rewritten as the slot is sent again (tx_held()).
 * It is written to be as fast as C allows (64-bit descriptor stores, release
 * stores for the tails, which are plain stores on x86).
 *
 * Build: gcc -O2 -o build/c-forward bench/c-forward.c
 * Usage: c-forward DIR [--seconds S] [--warmup S] [--batch N] [--touch 0|1]
 *                      [--ring N] [--rx-free N] [--mode forward|generate|stand-in|stand-in-generate]
 *                      [--first-port N]
 * DIR is the model's directory (ports DIR/0000:ff:00.N and .N+1, N = 0 unless
 * --first-port says otherwise: the side-by-side bench runs this driver on ports
 * 2 and 3 beside the JavaScript driver on 0 and 1).  Prints a JSON line when the
 * ports are up, then one with the result.  generate: TX only on port N, 60-byte
 * frames with a sequence number (like `ixy generate`).  stand-in: forwarding
 * without the model (DIR is not used), against a NIC played in this process
 * (c-forward-init.h): the driver's own cost, as bench/stand-in.js measures
 * it for JavaScript; stand-in-generate: generate against the stand-in NIC.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#define HUGE (2u << 20)
#define NBUF 4096
#define BUFSZ 2048
#define MAX_BATCH 4096
#define CLEAN_BATCH 32
#define ID_BITS 20                             /* as lib/memory/mempool.js: a TX slot keeps a pool number above them */
#define MAX_POOLS (1u << (31 - ID_BITS))
#define RXD_DD 1u
#define RXD_DONE_AND_WHOLE 3u                  /* DD | EOP */
#define RXD_ERRORS 0x20000000u  /* RXE: a broken frame; IPE and L4E are checksum verdicts */
#define RXD_GOOD_FRAME_BITS (RXD_DONE_AND_WHOLE | RXD_ERRORS) /* a good frame: exactly DD|EOP of these */
#define TXD_CMD ((3u << 20) | (1u << 24) | (1u << 25) | (1u << 27) | (1u << 29)) /* DATA EOP IFCS RS DEXT */

struct pool { uint8_t *mem; uint64_t *phys; uint32_t *free; uint32_t count; };
struct rxq {
	volatile uint32_t *ring, *tail;
	uint32_t *ids, next, mask, free_thresh, unreturned;
	struct pool *pool;
	uint64_t packets, bytes;                 /* as a queue's totals in JavaScript */
};
struct txq {
	volatile uint32_t *ring, *tail;
	uint32_t *ids, head, clean, mask;        /* ids: each slot's buffer id | its pool's tag */
	struct pool *pools[MAX_POOLS], *last_pool;
	uint32_t npools, last_tag;
	uint64_t packets, bytes;
};
struct batch { uint32_t ids[MAX_BATCH], lens[MAX_BATCH], count; struct pool *pool; };

static void die(const char *m) { fprintf(stderr, "c-forward: %s\n", m); exit(1); }
static uint64_t cpu_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}
static uint64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* DMA memory as the addon makes it; phys[k] = physical address of hugepage k. */
static uint8_t *dma_alloc(size_t len, uint64_t *phys)
{
	static int n;
	char path[64];
	len = (len + HUGE - 1) / HUGE * HUGE;
	snprintf(path, sizeof path, "/mnt/huge/c-forward-%d-%d", getpid(), n++);
	int fd = open(path, O_CREAT | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, (off_t)len) < 0) die("cannot create a file on /mnt/huge (run ./setup-hugetlbfs.sh)");
	uint8_t *v = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	unlink(path);
	if (v == MAP_FAILED || mlock(v, len)) die("no free hugepages (mmap/mlock failed)");
	memset(v, 0, len);
	int pm = open("/proc/self/pagemap", O_RDONLY);
	for (size_t o = 0; o < len; o += HUGE) {
		uint64_t e;
		if (pm < 0 || pread(pm, &e, 8, (off_t)((uintptr_t)(v + o) / 4096 * 8)) != 8 || !(e >> 63))
			die("cannot read /proc/self/pagemap (root needed)");
		phys[o / HUGE] = (e & ((1ull << 55) - 1)) * 4096;
	}
	close(pm);
	return v;
}

static void pool_init(struct pool *p)
{
	uint64_t pages[NBUF * BUFSZ / HUGE];
	p->mem = dma_alloc((size_t)NBUF * BUFSZ, pages);
	p->phys = malloc(NBUF * sizeof *p->phys);
	p->free = malloc(NBUF * sizeof *p->free);
	for (uint32_t i = 0; i < NBUF; i++) {
		uint64_t off = (uint64_t)i * BUFSZ;
		p->phys[i] = pages[off / HUGE] + off % HUGE;
		p->free[i] = NBUF - 1 - i;           /* low ids first, as lib/memory/mempool.js */
	}
	p->count = NBUF;
}

/* ---- the hot path: receive(), reclaim(), send() of lib/intel/ ---- */

static uint32_t rx_batch(struct rxq *q, struct batch *b, uint32_t max)
{
	/* As RxQueue.receive() (lib/intel/rx-queue.js): one run of descriptors from
	 * q->next, never around the end of the ring, at most one fresh buffer per frame;
	 * count the good frames, then hand them out and refill their descriptors. The n
	 * fresh buffers come off the pool's free stack at once (popIds()): frame k takes
	 * the one k below the top. */
	struct pool *pool = q->pool;
	uint32_t first = q->next, room = q->mask + 1 - first, n = 0, status = 0;
	if (max > pool->count)
		max = pool->count;
	if (max > room)
		max = room;
	volatile uint32_t *d = q->ring + first * 4;
	while (n < max) {
		status = d[n * 4 + 2];
		if ((status & RXD_GOOD_FRAME_BITS) != RXD_DONE_AND_WHOLE)
			break;
		n++;
	}
	const uint32_t *stack = pool->free;
	uint32_t top = pool->count;
	pool->count = top - n;
	uint32_t *ids = q->ids + first;
	const uint64_t *phys = pool->phys;
	uint32_t bytes = 0;
	for (uint32_t k = 0; k < n; k++) {
		volatile uint64_t *e = (volatile uint64_t *)(d + k * 4);
		uint32_t fresh = stack[top - 1 - k], len = d[k * 4 + 3] & 0xffff;
		b->ids[k] = ids[k];
		b->lens[k] = len;
		bytes += len;
		ids[k] = fresh;
		e[0] = phys[fresh];
		e[1] = 0;
	}
	b->count = n;
	b->pool = pool;
	uint32_t used = n;
	if (n < max && (status & RXD_DD)) {
		/* bad frames right after the run: the buffer stays, the NIC gets it back
		 * (the write-back overwrote its address) */
		while (used < room) {
			uint32_t s = d[used * 4 + 2];
			if (!(s & RXD_DD) || (s & RXD_GOOD_FRAME_BITS) == RXD_DONE_AND_WHOLE)
				break;
			volatile uint64_t *e = (volatile uint64_t *)(d + used * 4);
			e[0] = pool->phys[q->ids[first + used]];
			e[1] = 0;
			used++;
		}
	}
	if (used) {
		q->next = (first + used) & q->mask;
		q->packets += n;
		q->bytes += bytes;
		q->unreturned += used;
		if (q->unreturned >= q->free_thresh) {
			q->unreturned = 0;
			__atomic_store_n(q->tail, (q->next - 1) & q->mask, __ATOMIC_RELEASE);
		}
	}
	return n;
}

static void tx_reclaim(struct txq *q)
{
	/* As TxQueue.reclaim(): in groups of 32 slots, which never wrap (the ring is a
	 * multiple of 32); a queue that has sent buffers of one pool only gives a group back
	 * in one copy (pushIds()). Here each TX queue sends one pool's buffers, that of the
	 * other port's RX queue. */
	uint32_t clean = q->clean, mask = q->mask;
	while (((q->head - clean) & mask) >= CLEAN_BATCH) {
		uint32_t last = clean + CLEAN_BATCH - 1;
		if (!(q->ring[last * 4 + 3] & RXD_DD))
			break;
		const uint32_t *from = q->ids + clean;
		if (q->npools == 1) {
			struct pool *p = q->pools[0];
			memcpy(p->free + p->count, from, CLEAN_BATCH * sizeof *from);
			p->count += CLEAN_BATCH;
		} else {
			die("a TX queue sent buffers of several pools");
		}
		clean = (last + 1) & mask;
	}
	q->clean = clean;
}

/* As TxQueue.tagOf(): the pool's number in the bits above a buffer id. */
static uint32_t tag_of(struct txq *q, struct pool *p)
{
	if (p == q->last_pool)
		return q->last_tag;
	uint32_t k = 0;
	while (k < q->npools && q->pools[k] != p)
		k++;
	if (k == q->npools) {
		if (k == MAX_POOLS)
			die("too many pools for one TX queue");
		q->pools[k] = p;
		q->npools = k + 1;
	}
	q->last_pool = p;
	q->last_tag = k << ID_BITS;
	return q->last_tag;
}

static uint32_t tx_batch(struct txq *q, struct batch *b)
{
	struct pool *pool = b->pool;
	uint32_t tag = tag_of(q, pool), mask = q->mask;
	/* reclaim once 3/4 of the ring is in flight, or the pool runs low */
	if (((q->head - q->clean) & mask) >= mask + 1 - (mask + 1) / 4 || pool->count < mask + 1)
		tx_reclaim(q);
	uint32_t room = mask - ((q->head - q->clean) & mask);
	uint32_t n = b->count < room ? b->count : room, t = q->head;
	const uint64_t *phys = pool->phys;
	uint32_t *ids = q->ids, bytes = 0;
	for (uint32_t k = 0; k < n; k++) {
		volatile uint64_t *d = (volatile uint64_t *)(q->ring + t * 4);
		uint32_t len = b->lens[k], id = b->ids[k];
		d[0] = phys[id];
		d[1] = (TXD_CMD | len) | (uint64_t)len << 46;   /* PAYLEN at bit 14 of word 3 */
		ids[t] = id | tag;
		bytes += len;
		t = (t + 1) & mask;
	}
	if (n) {
		q->head = t;
		q->packets += n;
		q->bytes += bytes;
		__atomic_store_n(q->tail, t, __ATOMIC_RELEASE);
	}
	return n;
}

/* Held frames, as generate's (lib/intel/held-frames.js): each TX slot t keeps one
 * buffer of the generator's pool for good, its frame FRAME_AT bytes into it (frames[t],
 * the frame's address addrs[t]: the number then sits at a multiple of 4); a send
 * writes the next sequence numbers into the buffers of the next free slots and their
 * descriptors, one TDT write.  No buffer id moves: a slot is free again once the NIC
 * reports its descriptor done, so the reclaim only moves `clean` (in groups of 32, at
 * 3/4 of the ring in flight, as TxQueue.room() and reclaim() do in held mode). */
#define FRAME_AT 2
struct held { uint8_t **frames; uint64_t *addrs; };

static uint32_t tx_held(struct txq *q, const struct held *h, uint32_t want, uint32_t seq, uint32_t len)
{
	if (((q->head - q->clean) & q->mask) >= q->mask + 1 - (q->mask + 1) / 4) {
		uint32_t clean = q->clean;
		while (((q->head - clean) & q->mask) >= CLEAN_BATCH) {
			uint32_t last = (clean + CLEAN_BATCH - 1) & q->mask;
			if (!(q->ring[last * 4 + 3] & RXD_DD))
				break;
			clean = (last + 1) & q->mask;
		}
		q->clean = clean;
	}
	uint32_t room = q->mask - ((q->head - q->clean) & q->mask);
	uint32_t n = want < room ? want : room, t = q->head;
	uint64_t length_half = (TXD_CMD | len) | (uint64_t)len << 46;   /* PAYLEN at bit 14 of word 3 */
	for (uint32_t k = 0; k < n; k++) {
		uint32_t number = __builtin_bswap32(seq + k);        /* big-endian, at bytes 42..45 */
		memcpy(h->frames[t] + 42, &number, 4);
		volatile uint64_t *d = (volatile uint64_t *)(q->ring + t * 4);
		d[0] = h->addrs[t];
		d[1] = length_half;
		t = (t + 1) & q->mask;
	}
	if (n) {
		q->head = t;
		q->packets += n;
		q->bytes += (uint64_t)n * len;
		__atomic_store_n(q->tail, t, __ATOMIC_RELEASE);
	}
	return n;
}

/* Receive calls and frames received: a mean batch well under --batch means
 * the ring was mostly empty, i.e. this driver was waiting for the model. */
static uint64_t rx_calls, rx_frames;

static uint64_t forward_batch(struct rxq *rx, struct txq *tx, struct batch *b, uint32_t max, int touch)
{
	/* As forwardBatch() (lib/apps/forward.js): frames the TX ring had no room for stay
	 * in this direction's batch and go first at the next step, which receives nothing
	 * until they are sent. */
	uint32_t n = b->count;
	if (!n) {
		n = rx_batch(rx, b, max);
		rx_calls++;
		rx_frames += n;
		if (!n)
			return 0;
		if (touch) { /* read and write back byte 1, as touchFrames() does: the frame is unchanged */
			volatile uint8_t *mem = rx->pool->mem;
			for (uint32_t k = 0; k < n; k++)
				mem[(size_t)b->ids[k] * BUFSZ + 1] = mem[(size_t)b->ids[k] * BUFSZ + 1];
		}
	}
	uint32_t sent = tx_batch(tx, b);
	if (sent == n) {
		b->count = 0;
	} else {                                 /* keepFrom(sent) */
		memmove(b->ids, b->ids + sent, (n - sent) * sizeof *b->ids);
		memmove(b->lens, b->lens + sent, (n - sent) * sizeof *b->lens);
		b->count = n - sent;
	}
	return sent;
}

/* ---- set-up: the init sequence of lib/intel/ixgbe/device.js, condensed ---- */

#include "c-forward-init.h"

int main(int argc, char **argv)
{
	if (argc < 2)
		die("usage: c-forward DIR [--seconds S] [--warmup S] [--batch N] [--touch 0|1] [--ring N] [--rx-free N] [--mode forward|generate|stand-in|stand-in-generate] [--first-port N]");
	double seconds = 3, warmup = 1;
	uint32_t batch = 32, ring = 512, rx_free = 0;
	int touch = 1, generate = 0, stand_in = 0, first_port = 0;
	for (int a = 2; a + 1 < argc; a += 2) {
		const char *k = argv[a], *v = argv[a + 1];
		if (!strcmp(k, "--seconds")) seconds = atof(v);
		else if (!strcmp(k, "--warmup")) warmup = atof(v);
		else if (!strcmp(k, "--batch")) batch = (uint32_t)atoi(v);
		else if (!strcmp(k, "--touch")) touch = atoi(v);
		else if (!strcmp(k, "--ring")) ring = (uint32_t)atoi(v);
		else if (!strcmp(k, "--rx-free")) rx_free = (uint32_t)atoi(v);
		else if (!strcmp(k, "--mode")) {
			generate = !strcmp(v, "generate") || !strcmp(v, "stand-in-generate");
			stand_in = !strcmp(v, "stand-in") || !strcmp(v, "stand-in-generate");
			if (!generate && !stand_in && strcmp(v, "forward"))
				die("--mode must be forward, generate, stand-in or stand-in-generate");
		}
		else if (!strcmp(k, "--first-port")) first_port = atoi(v);
		else die("unknown option");
	}
	if (batch < 1 || batch > MAX_BATCH || ring < 64 || ring > 4096 || (ring & (ring - 1)))
		die("batch must be 1..4096, ring a power of two 64..4096");
	if (first_port < 0 || first_port > 6)
		die("--first-port must be 0..6");
	if (rx_free == 0)
		rx_free = ring / 4;                  /* as lib/intel/nic.js */
	if (rx_free > ring / 2)
		die("--rx-free must be 1..ring/2");

	struct pool pools[3];
	struct rxq rx[2];
	struct txq tx[2];
	static struct batch b[2];                    /* one per direction, as forward() has */
	struct stand_in nic[2] = { { 0, 0 }, { 0, 0 } };
	for (int i = 0; i < 2; i++) {
		pool_init(&pools[i]);
		port_open(stand_in ? stand_in_registers() : map_port(argv[1], first_port + i), stand_in, ring, &pools[i], &rx[i], &tx[i]);
		rx[i].free_thresh = rx_free;
		rx[i].unreturned = 0;
	}
	printf("{\"ready\":true}\n");
	fflush(stdout);

	uint64_t moved = 0, base = 0, seq = 0, t0 = now_ns(), tw = 0, cw = 0;
	uint64_t end = t0 + (uint64_t)((warmup + seconds) * 1e9), warm = t0 + (uint64_t)(warmup * 1e9);
	struct held held = { NULL, NULL };
	if (generate) {
		pool_init(&pools[2]);
		for (uint32_t i = 0; i < NBUF; i++)
			fill_frame(pools[2].mem + (size_t)i * BUFSZ + FRAME_AT);
		held.frames = malloc(ring * sizeof *held.frames);
		held.addrs = malloc(ring * sizeof *held.addrs);
		for (uint32_t t = 0; t < ring; t++) {         /* TxQueue.holdBuffers() */
			uint32_t id = pools[2].free[--pools[2].count];
			held.frames[t] = pools[2].mem + (size_t)id * BUFSZ + FRAME_AT;
			held.addrs[t] = pools[2].phys[id] + FRAME_AT;
		}
	}
	for (uint64_t it = 0;; it++) {
		if (generate) {
			if (stand_in)
				stand_in_nic(&nic[0], &rx[0], &tx[0]);
			uint32_t sent = tx_held(&tx[0], &held, batch, (uint32_t)seq, 60);
			seq += sent;
			moved += sent;
		} else {
			if (stand_in) {
				stand_in_nic(&nic[0], &rx[0], &tx[0]);
				stand_in_nic(&nic[1], &rx[1], &tx[1]);
			}
			moved += forward_batch(&rx[0], &tx[1], &b[0], batch, touch);
			moved += forward_batch(&rx[1], &tx[0], &b[1], batch, touch);
		}
		if ((it & 1023) == 0) {
			uint64_t t = now_ns();
			if (!tw && t >= warm) {
				tw = t;
				cw = cpu_ns();
				base = moved;
				rx_calls = rx_frames = 0;
			}
			if (t >= end)
				break;
		}
	}
	/* the queues' totals count what was sent, as a JavaScript queue's do */
	if (tx[0].packets + tx[1].packets != moved)
		die("the TX queues' totals do not add up to the frames sent");
	double s = (now_ns() - tw) / 1e9;
	double mpps = (moved - base) / s / 1e6;
	double cpu = (double)(cpu_ns() - cw);
	printf("{\"packets\":%llu,\"seconds\":%.3f,\"mpps\":%.3f,\"nsPerPacket\":%.2f,\"cpuNsPerPacket\":%.2f,\"batch\":%u,\"touch\":%d,\"mode\":\"%s\",\"ring\":%u,\"rxPerCall\":%.2f}\n",
	       (unsigned long long)(moved - base), s, mpps, mpps > 0 ? 1e3 / mpps : 0, moved > base ? cpu / (moved - base) : 0, batch, touch,
	       generate ? (stand_in ? "stand-in-generate" : "generate") : stand_in ? "stand-in" : "forward", ring, rx_calls ? (double)rx_frames / rx_calls : 0.0);
	return 0;
}
