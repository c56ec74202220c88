/*
 * stats.c - the statistics registers (82599 8.2.3.23): the totals the data
 * path counts, handed over to the clear-on-read registers a driver reads.
 */
#include "model.h"
#include "regs.h"

/*
 * Statistics registers (8.2.3.23) are clear-on-read on the 82599.  A shared
 * file cannot see a read, so the model hands counts over instead: it keeps
 * totals since reset (p->cnt) and, per register, how much of them the
 * register already got (p->handed).  A publish adds what is pending to the
 * register with a compare-and-swap old -> old + pending: a driver that takes
 * its counts (reads, then writes 0 after a non-zero value; on the NIC the
 * read clears and the write finds nothing to do) finds every event since its
 * last take in it, from the very first read, as on the NIC.  While a count
 * grows it goes only into a register that reads 0; the rest is added once it
 * stopped (publish() below).  A driver that only reads is seen reading GPRC
 * by a hardware watchpoint (watch.c): a register of GPRC's group that still
 * holds what the model put there is then replaced by what came since, as the
 * read cleared it (README, "Statistics registers"); never once a driver was
 * seen taking.  A register is never carried past its width (32 bits; 36 for
 * GORC/GOTC, read as two halves and added to as one 64-bit value): the rest
 * waits for a take.
 */
enum { S_GPRC, S_GORC, S_TPR, S_MPC0, S_CRCERRS, S_RUC, S_RFC,
       S_ROC, S_RJC, S_GPTC, S_TPT, S_GOTC,
       S_QPRC0, S_QPRDC0 = S_QPRC0 + 16, S_END = S_QPRDC0 + 16 };   /* QPRC(n), QPRDC(n), n < 16 */

static const uint32_t stat_off[S_QPRC0] = {
	[S_GPRC] = GPRC, [S_GORC] = GORCL, [S_TPR] = TPR,
	[S_MPC0] = MPC(0), [S_CRCERRS] = CRCERRS, [S_RUC] = RUC,
	[S_RFC] = RFC, [S_ROC] = ROC, [S_RJC] = RJC, [S_GPTC] = GPTC, [S_TPT] = TPT,
	[S_GOTC] = GOTCL,
};

static uint32_t stat_offset(int i)
{
	if (i >= S_QPRC0)
		return (uint32_t)(i >= S_QPRDC0 ? QPRDC(i - S_QPRDC0) : QPRC(i - S_QPRC0));
	return stat_off[i];
}

_Static_assert(S_END <= NSTATREG, "NSTATREG too small");

static uint64_t stat_total(const struct port *p, int i)
{
	const uint64_t *c = p->cnt;
	if (i >= S_QPRC0)      /* per queue, through RQSMR (rss.c) */
		return i >= S_QPRDC0 ? rss_qstat(p, i - S_QPRDC0, 1) : rss_qstat(p, i - S_QPRC0, 0);
	switch (i) {
	case S_GPRC: return c[C_GPRC];
	case S_GORC: return c[C_GORC];
	case S_TPR:  /* every frame the MAC took in for this port */
		return c[C_GPRC] + c[C_MPC] + c[C_QPRDC] + c[C_CRCERRS] + c[C_RUC] + c[C_RFC] +
		       c[C_ROC] + c[C_RJC];
	case S_MPC0: return c[C_MPC];
	case S_CRCERRS: return c[C_CRCERRS];
	case S_RUC: return c[C_RUC];
	case S_RFC: return c[C_RFC];
	case S_ROC: return c[C_ROC];
	case S_RJC: return c[C_RJC];
	case S_GPTC: case S_TPT: return c[C_GPTC];
	default: return c[C_GOTC];
	}
}

/* Puts up to pend into the register at off, width 32 or 36 bits: added to
 * what it holds, or, with replace, instead of it when it still holds `was`
 * (a driver read it: on the NIC the read cleared it).  With hold, nothing
 * goes into a register that is not 0: a driver may be between its read and
 * its write of 0, which would wipe what was added.  Returns what went in;
 * *now what the register holds after. */
static uint64_t stat_put(struct port *p, uint32_t off, int wide, uint64_t pend, int replace,
			 int hold, uint64_t was, uint64_t *now)
{
	uint64_t max = wide ? (1ull << 36) - 1 : 0xffffffffull;
	if (wide) {
		uint64_t *reg = (uint64_t *)&REG(p, off);   /* L and H, 8-aligned */
		uint64_t cur = __atomic_load_n(reg, __ATOMIC_ACQUIRE);
		uint64_t base = replace && cur == was ? 0 : cur;
		uint64_t v = base >= max || (hold && base) ? 0 : pend < max - base ? pend : max - base;
		*now = cur;
		if ((v || base != cur) &&
		    __atomic_compare_exchange_n(reg, &cur, base + v, 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
			*now = base + v;
			return v;
		}
		return 0;
	}
	uint32_t *reg = (uint32_t *)&REG(p, off);
	uint32_t cur = __atomic_load_n(reg, __ATOMIC_ACQUIRE);
	uint64_t base = replace && cur == was ? 0 : cur;
	uint64_t v = hold && base ? 0 : pend < max - base ? pend : max - base;
	*now = cur;
	if ((v || base != cur) &&
	    __atomic_compare_exchange_n(reg, &cur, (uint32_t)(base + v), 0, __ATOMIC_RELEASE, __ATOMIC_RELAXED)) {
		*now = base + v;
		return v;
	}
	return 0;
}

/* The registers a driver reads together with GPRC, whose reads watch.c sees:
 * ixy's C driver reads GPRC, GPTC, GORC and GOTC, the seed's ixy.js MPC too. */
static int read_with_gprc(int i)
{
	return i == S_GPRC || i == S_GPTC || i == S_GORC || i == S_GOTC || i == S_MPC0;
}

/* Whether a driver wrote 0 over a count the model put in a register: a
 * driver that takes its counts, for as long as the port is not reset. */
static int saw_take(struct port *p)
{
	for (int i = 0; i < S_END; i++) {
		uint64_t now;
		if (i == S_GORC || i == S_GOTC)
			now = __atomic_load_n((uint64_t *)&REG(p, stat_offset(i)), __ATOMIC_ACQUIRE);
		else
			now = __atomic_load_n((uint32_t *)&REG(p, stat_offset(i)), __ATOMIC_ACQUIRE);
		if (p->wrote[i] != 0 && now == 0)
			return 1;
	}
	return 0;
}

/* Whether GPRC's group is to be answered as read now (watch.c saw an access
 * to GPRC).  Never for a driver that takes its counts: it takes register by
 * register, and a GPRC read says nothing of the others, which it may not
 * have read yet.  A read is answered READ_SETTLE_NS after it was seen, so
 * that a taking driver stopped between its first read and its write of 0
 * shows itself first; the group holds what it has until then. */
#define READ_SETTLE_NS 10000000ull
static int group_read(struct port *p, int *hold_group)
{
	*hold_group = 0;
	if (!watch_any(p->idx))
		return 0;
	uint64_t reads = watch_reads(p->idx);
	uint64_t now = now_ns();
	if (reads != p->reads_seen)
		p->access_at = now;
	if (reads != p->reads_seen && !p->read_seen_at)
		p->read_seen_at = now;
	p->reads_seen = reads;
	if (!p->takes)
		p->takes = saw_take(p);
	if (p->takes || !p->read_seen_at) {
		p->read_seen_at = 0;
		return 0;
	}
	if (now - p->read_seen_at < READ_SETTLE_NS) {
		*hold_group = 1;
		return 0;
	}
	p->read_seen_at = 0;
	return 1;
}

/* A count is quiet when it did not change over QUIET_NS at least (publishes
 * can follow each other within microseconds).  An add into a register that
 * is not 0 waits until no driver accessed GPRC for DRIVER_QUIET_NS, where
 * the driver is watched: a taking driver reads GPRC first, so one that was
 * descheduled between a read and its write of 0 is within that time. */
#define QUIET_NS 200000ull
#define DRIVER_QUIET_NS 2000000ull

/* Hands what is pending to the registers; with settle, also a count still
 * growing (no more grows while the model answers a command). */
static void publish(struct port *p, int settle)
{
	int left = 0, hold_group;
	int read = group_read(p, &hold_group);
	uint64_t now_at = now_ns();
	int judged = now_at - p->seen_at >= QUIET_NS;
	int driver_busy = watch_any(p->idx) && now_at - p->access_at < DRIVER_QUIET_NS;
	if (judged)
		p->seen_at = now_at;
	for (int i = 0; i < S_END; i++) {
		uint64_t total = stat_total(p, i);
		uint64_t pend = total - p->handed[i];
		int replace = read && read_with_gprc(i) && p->wrote[i] != 0;
		if (hold_group && read_with_gprc(i)) {
			left |= pend != 0;
			continue;
		}
		/* While the count grows, it waits for the register to be taken (0);
		 * once it stops, the rest joins what the register holds, so that one
		 * read after traffic has it all. */
		int quiet = judged && total == p->seen[i];
		int hold = !replace && ((!settle && !quiet) || driver_busy);
		if (judged)
			p->seen[i] = total;
		if (!pend && !replace)
			continue;
		uint64_t now;
		uint64_t v = stat_put(p, stat_offset(i), i == S_GORC || i == S_GOTC, pend, replace,
				      hold, p->wrote[i], &now);
		p->handed[i] += v;
		p->wrote[i] = now;
		left |= pend != v;
	}
	p->stats_left = left || hold_group || driver_busy;
}

void stats_publish(struct port *p)
{
	publish(p, 0);
}

/* Before the model reports its counts (commands.c): a driver that reads the
 * registers after that report finds every event it counted in them. */
void stats_settle(struct port *p)
{
	if (!p->removed)
		publish(p, 1);
}
