/*
 * dma.c - real DMA into the driver's hugepages.
 *
 * A real NIC reads and writes host memory by physical address.  The driver
 * gives the model physical addresses of its hugepages (from its pagemap).
 * To reach them the model:
 *  1. finds the driver processes ("clients"): every process other than the
 *     model whose /proc/<pid>/maps shows a port's resource0 (matched by
 *     device and inode, so the path may differ in another mount namespace);
 *  2. maps each hugetlbfs mapping of a client through
 *     /proc/<pid>/map_files/<start>-<end> (MAP_SHARED: the same pages);
 *  3. looks up the physical address of each 2 MiB page in its own
 *     /proc/self/pagemap and records phys page -> model address in a hash.
 * When a client dies (or unmaps memory) the model unmaps its regions at
 * once, so that the hugepages are freed; rings there become "released".
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/statfs.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include "model.h"

#define HUGETLBFS_MAGIC 0x958458f6
#define MAX_REGIONS 512
#define MAX_CLIENTS 16
#define HT_SIZE 32768               /* slots, power of two; 2 MiB pages */
#define MS 1000000ull

struct region {
	pid_t pid;
	unsigned long start;
	ino_t ino;
	uint8_t *virt;
	size_t len;
	int seen;
};

struct client {
	pid_t pid;
	unsigned long long starttime;
	uint32_t ports;              /* bit i: maps port i's resource0 */
	unsigned long regs_va[MAX_PORTS];  /* where it maps port i's resource0 (0: not) */
};

static struct region regions[MAX_REGIONS];
static int nregions;
static struct client clients[MAX_CLIENTS];
static int nclients;
static struct { uint64_t key; uint8_t *virt; } table[HT_SIZE];  /* key = phys page + 1 */
uint64_t dma_last_key;              /* the last page found (dma_virt_fast in model.h) */
uint8_t *dma_last_virt;
static uint64_t last_scan, last_full, last_check, last_refresh;
static int scan_wanted;

static inline uint32_t slot_of(uint64_t key)
{
	return (uint32_t)((key * 0x9E3779B97F4A7C15ull) >> 40) & (HT_SIZE - 1);
}

static void table_put(uint64_t key, uint8_t *virt)
{
	uint32_t s = slot_of(key);
	while (table[s].key && table[s].key != key)
		s = (s + 1) & (HT_SIZE - 1);
	if (!table[s].key) {
		table[s].key = key;
		table[s].virt = virt;
	}
}

static inline uint8_t *page_virt(uint64_t key)
{
	if (key == dma_last_key)
		return dma_last_virt;
	uint32_t s = slot_of(key);
	while (table[s].key) {
		if (table[s].key == key) {
			dma_last_key = key;
			dma_last_virt = table[s].virt;
			return dma_last_virt;
		}
		s = (s + 1) & (HT_SIZE - 1);
	}
	return NULL;
}

/* Model address of [phys, phys+len) or NULL when any byte is not mapped. */
uint8_t *dma_virt(uint64_t phys, uint32_t len)
{
	uint64_t key = (phys >> 21) + 1;
	uint8_t *v = page_virt(key);
	if (!v)
		return NULL;
	uint64_t off = phys & (HUGE_SIZE - 1);
	if (len && off + len > HUGE_SIZE) {
		/* crossing pages: the next pages must follow in our mapping too */
		uint64_t last = ((phys + len - 1) >> 21) + 1;
		for (uint64_t k = key + 1; k <= last; k++)
			if (page_virt(k) != v + (k - key) * HUGE_SIZE)
				return NULL;
		page_virt(key);
	}
	return v + off;
}

/* Physical address of one of our own pages via /proc/self/pagemap. */
static uint64_t own_phys(int pagemap, void *virt)
{
	uint64_t e;
	off_t off = (off_t)((uintptr_t)virt / 4096) * 8;
	if (pread(pagemap, &e, 8, off) != 8 || !(e & (1ull << 63)))
		return 0;
	return (e & ((1ull << 55) - 1)) * 4096;
}

static void rebuild_table(void)
{
	memset(table, 0, sizeof table);
	dma_last_key = 0;
	int pm = open("/proc/self/pagemap", O_RDONLY);
	for (int i = 0; i < nregions; i++) {
		struct region *r = &regions[i];
		for (size_t o = 0; o < r->len; o += HUGE_SIZE) {
			(void)*(volatile uint8_t *)(r->virt + o);   /* fault the page in */
			uint64_t phys = own_phys(pm, r->virt + o);
			if (phys)
				table_put((phys >> 21) + 1, r->virt + o);
		}
	}
	close(pm);
}

/* Map one mapping of a client if it is hugetlbfs and not mapped yet. */
static void map_region(pid_t pid, unsigned long start, unsigned long end,
		       unsigned long long off, ino_t ino)
{
	for (int i = 0; i < nregions; i++)
		if (regions[i].pid == pid && regions[i].start == start && regions[i].ino == ino) {
			regions[i].seen = 1;
			return;
		}
	if (nregions == MAX_REGIONS)
		return;
	char path[96];
	snprintf(path, sizeof path, "/proc/%d/map_files/%lx-%lx", pid, start, end);
	int fd = open(path, O_RDWR);
	if (fd < 0)
		return;
	struct statfs sf;
	if (fstatfs(fd, &sf) < 0 || (unsigned long)sf.f_type != HUGETLBFS_MAGIC) {
		close(fd);
		return;
	}
	void *v = mmap(NULL, end - start, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	close(fd);
	if (v == MAP_FAILED)
		return;
	regions[nregions++] = (struct region){ pid, start, ino, v, end - start, 1 };
}

/* Read /proc/<pid>/maps: which ports it maps, where (regs_va[i]: its first
 * mapping of port i's resource0 from offset 0; 0 if none), and (if map) its
 * hugepages.  A scan reads a client's maps only here (watch.c takes regs_va):
 * reading them is the largest part of the slow scan. */
static uint32_t read_maps(pid_t pid, int map, unsigned long *regs_va)
{
	char path[64], line[512];
	uint32_t ports = 0;
	memset(regs_va, 0, MAX_PORTS * sizeof *regs_va);
	snprintf(path, sizeof path, "/proc/%d/maps", pid);
	FILE *f = fopen(path, "re");
	if (!f)
		return 0;
	while (fgets(line, sizeof line, f)) {
		unsigned long start, end, ino;
		unsigned long long off;
		unsigned maj, min;
		char perms[8];
		if (sscanf(line, "%lx-%lx %7s %llx %x:%x %lu", &start, &end, perms, &off,
			   &maj, &min, &ino) != 7 || ino == 0 || perms[3] != 's')
			continue;
		int is_port = 0;
		for (int i = 0; i < M.nports; i++) {
			struct port *p = &M.ports[i];
			if (ino == p->res_ino && makedev(maj, min) == p->res_dev) {
				ports |= 1u << i;
				is_port = 1;
				if (off == 0 && !regs_va[i])
					regs_va[i] = start;
			}
		}
		if (map && !is_port)
			map_region(pid, start, end, off, (ino_t)ino);
	}
	fclose(f);
	return ports;
}

static unsigned long long start_time(pid_t pid, char *state)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", pid);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return 0;
	ssize_t n = read(fd, buf, sizeof buf - 1);
	close(fd);
	if (n <= 0)
		return 0;
	buf[n] = 0;
	char *s = strrchr(buf, ')');      /* the command name may contain spaces */
	if (!s)
		return 0;
	unsigned long long st = 0;
	/* fields after ")": state(3) ... starttime(22) */
	sscanf(s + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %*u %*u %*d %*d %*d %*d %*d %*d %llu",
	       state, &st);
	return st;
}

/* Find every process that maps one of our register files. */
static void find_clients(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	pid_t self = getpid();
	nclients = 0;
	while (d && (e = readdir(d)) && nclients < MAX_CLIENTS) {
		pid_t pid = atoi(e->d_name);
		if (pid <= 0 || pid == self)
			continue;
		struct client *c = &clients[nclients];
		c->ports = read_maps(pid, 0, c->regs_va);
		if (c->ports) {
			char state = 0;
			c->pid = pid;
			c->starttime = start_time(pid, &state);
			nclients++;
		}
	}
	if (d)
		closedir(d);
}

/*
 * After regions went away: rings that pointed there are released, not
 * forgotten.  A real NIC does not know that the memory changed hands:
 * while RXEN/TE, the queue's ENABLE and bus mastering stay set, it goes on
 * fetching descriptors and writing frames there.  The model never touches
 * that memory (it is unmapped) but counts what the NIC would have done in
 * dma_after_release (rx.c, tx.c).  A reset, clearing the queue's ENABLE or
 * bus mastering off ends a released ring (regs.c).
 */
static int release_if_stale(struct ring *r)
{
	if (!r->desc || dma_virt(r->base_phys, r->count * 16) == r->desc)
		return 0;
	r->desc = NULL;
	r->released = 1;
	r->miss_gen = ~0u;    /* never mapped again until re-enabled */
	return 1;
}

static void drop_stale_rings(void)
{
	for (int i = 0; i < M.nports; i++) {
		struct port *p = &M.ports[i];
		release_if_stale(&p->rx.ring);
		for (int q = 0; q < NUM_QUEUES; q++)   /* mid-batch queue 0 waits here too */
			if (q != p->rss.cur)
				release_if_stale(&p->rss.q[q].ring);
		for (int q = 0; q < NUM_QUEUES; q++)
			if (release_if_stale(&p->txq[q])) {
				p->tx_active &= ~(1ull << q);
				p->tx_released |= 1ull << q;
			}
		p->gather_len = 0;
	}
}

/* Rescan the clients' memory maps: map new hugepages, unmap vanished ones. */
void dma_scan(void)
{
	for (int i = 0; i < nregions; i++)
		regions[i].seen = 0;
	for (int c = 0; c < nclients; c++)
		clients[c].ports = read_maps(clients[c].pid, 1, clients[c].regs_va);
	int removed = 0, j = 0;
	for (int i = 0; i < nregions; i++) {
		if (regions[i].seen) {
			regions[j++] = regions[i];
		} else {
			munmap(regions[i].virt, regions[i].len);
			removed = 1;
		}
	}
	nregions = j;
	rebuild_table();
	if (removed)
		drop_stale_rings();
	M.dma_gen++;
}

static int is_client(pid_t pid)
{
	for (int c = 0; c < nclients; c++)
		if (clients[c].pid == pid)
			return 1;
	return 0;
}

/* Watch the clients' reads of the statistics registers (watch.c). */
static void watch_clients(void)
{
	watch_forget(is_client);
	for (int c = 0; c < nclients; c++)
		watch_client(clients[c].pid, clients[c].regs_va);
}

/*
 * Called from the slow scan.  force: scan now (a queue was just enabled
 * and its ring is unknown).  Otherwise serve a rescan requested by a
 * translation miss, at most every 20 ms; look for new clients at most
 * every 100 ms; re-read known clients' maps every 500 ms.
 */
void dma_maybe_scan(uint64_t now, int force)
{
	if (!force && !scan_wanted) {
		if (nclients && now - last_refresh > 500 * MS) {
			last_refresh = now;
			dma_scan();
			watch_clients();   /* threads started since */
		}
		return;
	}
	if (!force && now - last_scan < 20 * MS)
		return;
	if (force || now - last_full >= 100 * MS) {
		find_clients();
		last_full = now;
	}
	scan_wanted = 0;
	last_scan = last_refresh = now;
	dma_scan();
	watch_clients();
}

void dma_request_scan(void)
{
	scan_wanted = 1;
}

/* Every 100 ms: a client that exited (or is a zombie) loses its regions. */
void dma_check_owners(uint64_t now)
{
	if (now - last_check < 100 * MS)
		return;
	last_check = now;
	int dead = 0;
	for (int c = 0; c < nclients; c++) {
		char state = 0;
		unsigned long long st = start_time(clients[c].pid, &state);
		if (st == 0 || st != clients[c].starttime || state == 'Z' || state == 'X') {
			clients[c] = clients[--nclients];
			c--;
			dead = 1;
		}
	}
	if (dead) {
		dma_scan();   /* regions of the dead are not seen any more: unmapped */
		watch_clients();
	}
}

int dma_owner_pid(int port)
{
	for (int c = 0; c < nclients; c++)
		if (clients[c].ports & (1u << port))
			return clients[c].pid;
	return 0;
}

void dma_unmap_all(void)
{
	for (int i = 0; i < nregions; i++)
		munmap(regions[i].virt, regions[i].len);
	nregions = 0;
	nclients = 0;
	memset(table, 0, sizeof table);
	dma_last_key = 0;
}
