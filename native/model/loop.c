/*
 * loop.c - the data thread: one thread polls every port.
 *
 * Fast work each iteration: per port one RX visit (source, pcap replay)
 * and one TX visit (all enabled TX queues; cable frames go straight into
 * the peer's RX ring).  Heads and statistics registers are published every
 * 0.5 ms and after 50 us without work (port_publish).  Slow work every 0.5 ms: control registers, control
 * commands, DMA rescans, driver liveness.  With nothing to do the thread
 * backs off: it spins 20 us, yields until 2 ms, then sleeps 50 us, after
 * 100 ms idle 1 ms.  It sleeps in ppoll() on the ports' TAPs (tap.c), so a
 * frame from the kernel wakes it at once.
 */
#define _GNU_SOURCE
#include <poll.h>
#include <sched.h>
#include <sys/prctl.h>
#include <time.h>

#include "model.h"

#define SLOW_EVERY_NS 500000ull
#define SPIN_NS       2000000ull     /* keep spinning this long after the last work */
#define NAP_NS        100000000ull   /* short naps until idle this long */
#define PUBLISH_IDLE_NS 50000ull     /* idle this long: publish heads and counters */
#define PAUSE_NS      20000ull       /* spin without yielding this long after work */

static void publish_all(void)
{
	for (int i = 0; i < M.nports; i++)
		port_publish(&M.ports[i]);
}

static void slow_work(uint64_t now)
{
	publish_all();
	control_poll();
	for (int i = 0; i < M.nports; i++) {
		struct port *p = &M.ports[i];
		regs_scan(p, now);
		tap_sync(p);
		if ((p->stats_left || watch_any(p->idx)) && !p->removed)
			stats_publish(p);        /* counts still to hand over, reads to answer (watch.c) */
	}
	for (int i = 0; i < M.nports; i++)
		ptp_publish(&M.ports[i], now);   /* every port's SYSTIM from one instant (ptp.c) */
	dma_maybe_scan(now, 0);
	dma_check_owners(now);
}

/* Sleep ns, or less when a TAP has a frame (no TAPs: a plain sleep). */
static void nap(uint64_t ns)
{
	struct pollfd fds[MAX_PORTS];
	struct timespec ts = { 0, (long)ns };
	ppoll(fds, (nfds_t)tap_pollfds(fds), &ts, NULL);
}

void *data_thread(void *arg)
{
	(void)arg;
	prctl(PR_SET_TIMERSLACK, 1000UL);    /* short sleeps really are short */
	watch_init();                        /* the watches signal this thread */
	uint64_t last_slow = 0, last_work = now_ns(), prev = last_work;
	while (!M.stop) {
		uint64_t now = now_ns();
		if (now - prev > M.max_gap_ns && now - last_work < SPIN_NS)
			M.max_gap_ns = now - prev;   /* while busy: how long we were away */
		prev = now;
		int work = 0;
		for (int i = 0; i < M.nports; i++) {
			struct port *p = &M.ports[i];
			work |= rx_visit(p, now);
			work |= tx_visit(p, now);
		}
		if (now - last_slow >= SLOW_EVERY_NS) {
			last_slow = now;
			slow_work(now);
		}
		if (work) {
			last_work = now;
		} else if (now - last_work < SPIN_NS) {
			/* Short gaps (a driver with small batches leaves the model
			 * without work for a few microseconds all the time): spin, as
			 * a sched_yield() syscall per gap costs more than the gap.
			 * Longer gaps: yield, so that a driver sharing this core (a
			 * busy machine) gets to run. */
			if (now - last_work > PUBLISH_IDLE_NS)
				publish_all();
			if (now - last_work < PAUSE_NS)
				__builtin_ia32_pause();
			else
				sched_yield();
		} else {
			publish_all();
			nap(now - last_work < NAP_NS ? 50000 : 1000000);
		}
	}
	return NULL;
}
