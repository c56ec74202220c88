/*
 * fwd.c - a trivial 82599 driver used to measure the model's ceiling.
 * NOT part of ixy-model.  Build: gcc -O2 -o /tmp/model-fwd native/model/bench/fwd.c
 * Usage: model-fwd DIR SECONDS [BATCH]   (DIR = the model's directory, 2 ports)
 *
 * Like a real driver it uses hugepages (file on /mnt/huge, mmap, mlock,
 * unlink, /proc/self/pagemap), resets both ports, sets up one RX and one
 * TX ring of 512 advanced descriptors each and forwards 0 -> 1 and 1 -> 0.
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

#define RING 512
#define NBUF 4096
#define BUFSZ 2048
#define HUGE (2u << 20)

struct port { volatile uint32_t *r; volatile uint64_t *rx, *tx; uint32_t rxi, txi, txc;
	      uint32_t rxbuf[RING], txbuf[RING]; };
static struct port P[2];
static uint8_t *mem;            /* buffers */
static uint64_t page_phys[16];
static uint32_t stack[NBUF], top;
static uint64_t txdrop;

#define REG(p, o) ((p)->r[(o) >> 2])
static uint64_t now(void) { struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec * 1000000000ull + t.tv_nsec; }
static void die(const char *m) { fprintf(stderr, "model-fwd: %s\n", m); exit(1); }
static uint64_t phys_of(uint32_t id) { uint64_t off = (uint64_t)id * BUFSZ; return page_phys[off / HUGE] + off % HUGE; }

static uint8_t *huge_alloc(size_t len, uint64_t *phys)
{
	char path[64];
	static int n;
	snprintf(path, sizeof path, "/mnt/huge/model-fwd-%d-%d", getpid(), n++);
	int fd = open(path, O_CREAT | O_RDWR, 0600);
	if (fd < 0 || ftruncate(fd, len) < 0) die("hugepage file");
	uint8_t *v = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	unlink(path);
	if (v == MAP_FAILED || mlock(v, len)) die("mmap/mlock hugepages");
	memset(v, 0, len);
	int pm = open("/proc/self/pagemap", O_RDONLY);
	for (size_t o = 0; o < len; o += HUGE) {
		uint64_t e;
		if (pread(pm, &e, 8, ((uintptr_t)(v + o) / 4096) * 8) != 8) die("pagemap");
		phys[o / HUGE] = (e & ((1ull << 55) - 1)) * 4096;
	}
	close(pm);
	return v;
}

static void wait_bits(struct port *p, uint32_t off, uint32_t mask, uint32_t want)
{
	for (int i = 0; i < 5000; i++) {
		if ((REG(p, off) & mask) == want) return;
		usleep(1000);
	}
	die("register wait timed out");
}

static void init_port(const char *dir, int i, uint8_t *ringmem, uint64_t ringphys)
{
	char path[512];
	struct port *p = &P[i];
	snprintf(path, sizeof path, "%s/0000:ff:00.%d/resource0", dir, i);
	int fd = open(path, O_RDWR);
	if (fd < 0) die("open resource0");
	p->r = mmap(NULL, 0x80000, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	close(fd);
	snprintf(path, sizeof path, "%s/0000:ff:00.%d/config", dir, i);
	fd = open(path, O_RDWR);
	uint16_t cmd = 0x6;                                 /* memory + bus master */
	if (fd < 0 || pwrite(fd, &cmd, 2, 4) != 2) die("config");
	close(fd);
	REG(p, 0x0) = (1u << 26) | (1u << 3);               /* CTRL.RST | LNK_RST */
	usleep(10000);
	wait_bits(p, 0x0, (1u << 26) | (1u << 3), 0);
	wait_bits(p, 0x10010, 1u << 9, 1u << 9);            /* EEC.ARD */
	wait_bits(p, 0x02F00, 1u << 3, 1u << 3);            /* RDRXCTL.DMAIDONE */
	REG(p, 0x02F00) |= 1u << 1;                         /* CRCSTRIP */
	REG(p, 0x05080) |= 1u << 10;                        /* FCTRL.BAM */
	REG(p, 0x01014) = (1u << 25) | (1u << 28) | 2;      /* SRRCTL: adv, drop, 2 KiB */
	p->rx = (volatile uint64_t *)(ringmem + i * 32768);
	p->tx = (volatile uint64_t *)(ringmem + i * 32768 + 16384);
	uint64_t rxp = ringphys + i * 32768, txp = rxp + 16384;
	for (int d = 0; d < RING; d++) {
		p->rxbuf[d] = stack[--top];
		p->rx[d * 2] = phys_of(p->rxbuf[d]);
		p->rx[d * 2 + 1] = 0;
	}
	REG(p, 0x01000) = (uint32_t)rxp; REG(p, 0x01004) = rxp >> 32; REG(p, 0x01008) = RING * 16;
	REG(p, 0x01010) = 0; REG(p, 0x01018) = 0;
	REG(p, 0x01028) |= 1u << 25;
	wait_bits(p, 0x01028, 1u << 25, 1u << 25);
	REG(p, 0x01018) = RING - 1;
	REG(p, 0x03000) |= 1;                               /* RXCTRL.RXEN */
	REG(p, 0x06000) = (uint32_t)txp; REG(p, 0x06004) = txp >> 32; REG(p, 0x06008) = RING * 16;
	REG(p, 0x06010) = 0; REG(p, 0x06018) = 0;
	REG(p, 0x04A80) |= 1;                               /* DMATXCTL.TE */
	REG(p, 0x06028) |= 1u << 25;
	wait_bits(p, 0x06028, 1u << 25, 1u << 25);
	REG(p, 0x042A0) |= 1u << 12;                        /* AUTOC restart AN */
	wait_bits(p, 0x042A4, 1u << 30, 1u << 30);          /* LINKS.UP */
}

static uint32_t rx_batch(struct port *p, uint32_t *ids, uint16_t *lens, uint32_t max)
{
	uint32_t n = 0, i = p->rxi;
	while (n < max) {
		volatile uint64_t *d = p->rx + i * 2;
		uint64_t wb = d[1];
		if (!(wb & 1)) break;                       /* DD */
		ids[n] = p->rxbuf[i];
		lens[n++] = (uint16_t)(wb >> 32);
		uint32_t nb = stack[--top];
		p->rxbuf[i] = nb;
		d[0] = phys_of(nb);
		d[1] = 0;
		i = (i + 1) % RING;
	}
	if (n) {
		p->rxi = i;
		__atomic_store_n(&REG(p, 0x01018), (i + RING - 1) % RING, __ATOMIC_RELEASE);
	}
	return n;
}

static uint32_t tx_batch(struct port *p, uint32_t *ids, uint16_t *lens, uint32_t n)
{
	/* clean: free buffers whose descriptors have DD, 32 at a time */
	while (1) {
		uint32_t used = (p->txi - p->txc + RING) % RING;
		if (used < 32) break;
		uint32_t last = (p->txc + 31) % RING;
		if (!(p->tx[last * 2 + 1] & (1ull << 32))) break;
		for (int k = 0; k < 32; k++)
			stack[top++] = p->txbuf[(p->txc + k) % RING];
		p->txc = (p->txc + 32) % RING;
	}
	uint32_t sent = 0;
	for (; sent < n; sent++) {
		uint32_t next = (p->txi + 1) % RING;
		if (next == p->txc) break;
		volatile uint64_t *d = p->tx + p->txi * 2;
		d[0] = phys_of(ids[sent]);
		uint64_t cmd = lens[sent] | (3u << 20) | (1u << 24) | (1u << 25) | (1u << 27) | (1u << 29);
		d[1] = cmd | ((uint64_t)lens[sent] << 46);
		p->txbuf[p->txi] = ids[sent];
		p->txi = next;
	}
	__atomic_store_n(&REG(p, 0x06018), p->txi, __ATOMIC_RELEASE);
	for (uint32_t k = sent; k < n; k++)
		stack[top++] = ids[k];
	txdrop += n - sent;
	return sent;
}

int main(int argc, char **argv)
{
	if (argc < 3) die("usage: model-fwd DIR SECONDS [BATCH]");
	double secs = atof(argv[2]);
	uint32_t batch = argc > 3 ? atoi(argv[3]) : 32;
	uint64_t ringphys[1];
	uint8_t *ringmem = huge_alloc(HUGE, ringphys);
	mem = huge_alloc((size_t)NBUF * BUFSZ, page_phys);
	for (uint32_t k = 0; k < NBUF; k++) stack[top++] = k;
	init_port(argv[1], 0, ringmem, ringphys[0]);
	init_port(argv[1], 1, ringmem, ringphys[0]);
	uint32_t ids[256];
	uint16_t lens[256];
	uint64_t fwd = 0, t0 = now(), end = t0 + (uint64_t)(secs * 1e9);
	printf("{\"ready\":true}\n");
	fflush(stdout);
	for (uint64_t it = 0;; it++) {
		for (int i = 0; i < 2; i++) {
			uint32_t n = rx_batch(&P[i], ids, lens, batch);
			if (n) fwd += tx_batch(&P[i ^ 1], ids, lens, n);
		}
		if ((it & 0xfff) == 0 && now() >= end) break;
	}
	double s = (now() - t0) / 1e9;
	printf("{\"forwarded\":%lu,\"txDropped\":%lu,\"seconds\":%.3f,\"mpps\":%.2f}\n", fwd, txdrop, s, fwd / s / 1e6);
	return 0;
}
