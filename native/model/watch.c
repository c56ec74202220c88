/*
 * watch.c - seeing a driver read its statistics registers.
 *
 * The 82599's statistics registers clear when read (8.2.3.23).  A shared
 * file cannot see a read, so a driver that only reads (ixy's C driver, the
 * seed's ixy.js: they add each value to their totals) would see the count
 * since reset on the model.  The CPU can see the read: a hardware
 * watchpoint (x86 debug registers, through perf_event_open with
 * PERF_TYPE_BREAKPOINT) on GPRC in each thread of each process that maps a
 * port's resource0 catches the driver's accesses to it.  Drivers read their
 * counters together (GPRC, GPTC, GORC, GOTC, MPC(0)), and a thread has four
 * debug registers, so GPRC stands for the group: stats.c stats_publish()
 * treats an access seen since the last publish as a read of the group.
 *
 * Every access overflows its watchpoint (a period of 1), and the kernel
 * tells the data thread with a signal of the watch's port.  The model never
 * read()s a watch: to read the count of a thread running on another CPU the
 * kernel interrupts that CPU and waits for its answer, a stall of the data
 * thread and an interrupt of the driver at every publish.
 *
 * Best effort: where perf_event_open is refused (no permission, no debug
 * registers free, a kernel without it) nothing is watched and the model
 * falls back to adding to the registers (README, "Statistics registers").
 * The model's own accesses go through its own mapping, not watched.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <fcntl.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "model.h"
#include "regs.h"

#define MAX_WATCHES 512

struct watch {
	pid_t pid, tid;
	int port;
	int fd;
};

static struct watch watches[MAX_WATCHES];
static int nwatches;

/* Port i's watches send signal first_signal + i (real-time signals queue, one
 * per access), so the handler knows the port from the signal alone; a signal
 * still queued for a watch the model has closed counts for that watch's port. */
static int first_signal;
static uint64_t accesses[MAX_PORTS];                /* atomic: the handler adds */
static pid_t signal_tid;                            /* the data thread */

/* An access to port (sig - first_signal)'s GPRC.  SIGIO comes instead when the
 * queue of signals is full: some watch was hit, which one is lost, so every
 * port counts it (a read-only driver reads its ports together anyway). */
static void on_access(int sig)
{
	for (int port = 0; port < M.nports; port++)
		if (sig == SIGIO || sig == first_signal + port)
			__atomic_add_fetch(&accesses[port], 1, __ATOMIC_RELAXED);
}

/* On the data thread, before it first looks for clients: the watches'
 * signals go to it, and it takes them in any state (a ppoll() they
 * interrupt just ends early). */
void watch_init(void)
{
	first_signal = SIGRTMIN + 1;
	signal_tid = (pid_t)syscall(SYS_gettid);
	struct sigaction sa;
	memset(&sa, 0, sizeof sa);
	sa.sa_handler = on_access;
	sa.sa_flags = SA_RESTART;
	sigemptyset(&sa.sa_mask);
	for (int port = 0; port < MAX_PORTS; port++)
		sigaction(first_signal + port, &sa, NULL);
	sigaction(SIGIO, &sa, NULL);
}

static int watched(pid_t tid, int port)
{
	for (int i = 0; i < nwatches; i++)
		if (watches[i].tid == tid && watches[i].port == port)
			return 1;
	return 0;
}

/* A read-or-write watchpoint on 4 bytes at va in thread tid (x86 has no
 * read-only one); threads it starts later inherit it.  Each access
 * overflows it and sends port's signal to the data thread. */
static int watch_open(pid_t tid, unsigned long va, int port)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof a);
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof a;
	a.bp_type = HW_BREAKPOINT_RW;
	a.bp_addr = va;
	a.bp_len = HW_BREAKPOINT_LEN_4;
	a.sample_period = 1;
	a.wakeup_events = 1;
	a.inherit = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	int fd = (int)syscall(SYS_perf_event_open, &a, tid, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -1;
	struct f_owner_ex owner = { F_OWNER_TID, signal_tid };
	if (!signal_tid || fcntl(fd, F_SETOWN_EX, &owner) < 0 || fcntl(fd, F_SETSIG, first_signal + port) < 0 ||
	    fcntl(fd, F_SETFL, O_ASYNC) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Watch GPRC of every port in every thread of driver process pid, which maps
 * port i's registers at regs_va[i] (0: not at all; dma.c read_maps()). */
void watch_client(pid_t pid, const unsigned long *regs_va)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%d/task", pid);
	DIR *d = opendir(path);
	struct dirent *e;
	while (d && (e = readdir(d))) {
		pid_t tid = atoi(e->d_name);
		if (tid <= 0)
			continue;
		for (int port = 0; port < M.nports && nwatches < MAX_WATCHES; port++) {
			if (!regs_va[port] || watched(tid, port))
				continue;
			int fd = watch_open(tid, regs_va[port] + GPRC, port);
			if (fd >= 0)
				watches[nwatches++] = (struct watch){ pid, tid, port, fd };
		}
	}
	if (d)
		closedir(d);
}

/* Forget the watches of processes that are no longer clients (dma.c). */
void watch_forget(int (*is_client)(pid_t))
{
	for (int i = 0; i < nwatches; i++) {
		if (is_client(watches[i].pid))
			continue;
		close(watches[i].fd);
		watches[i--] = watches[--nwatches];
	}
}

/* Accesses to port's GPRC by its drivers so far (a sum: only its changes matter). */
uint64_t watch_reads(int port)
{
	return __atomic_load_n(&accesses[port], __ATOMIC_RELAXED);
}

/* Whether any driver of port is watched. */
int watch_any(int port)
{
	for (int i = 0; i < nwatches; i++)
		if (watches[i].port == port)
			return 1;
	return 0;
}
