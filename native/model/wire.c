/*
 * wire.c - the wire: a clock in picoseconds, line pacing at 10 Gb/s (wire.h),
 * the per-queue TX rate limiters (82599 7.7.2.x; RTTDQSEL and RTTBCNRC
 * among the DCB transmit registers, 8.2.3.10) and the `wire` command.
 * See README.md, "The wire".
 */
#define _GNU_SOURCE
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "model.h"
#include "regs.h"
#include "wire.h"

#define RTTDQSEL        0x04904   /* 8.2.3.10: TX descriptor queue select */
#define RTTBCNRC        0x04984   /* 8.2.3.10: rate-scheduler config of that queue */
#define RTTBCNRC_RS_ENA (1u << 31)
#define RTTBCNRC_RF     0x00ffffffu   /* RF_INT 23:14, RF_DEC 13:0 */
#define RF_ONE          (1u << 14)

static uint64_t t0_ns;   /* CLOCK_MONOTONIC of wire time 0 */

/* Wire time (ps) of a CLOCK_MONOTONIC instant.  Time 0 lies a second before
 * the first call, so that a `now` read a little earlier never goes below it. */
uint64_t wire_ps(uint64_t now)
{
	if (!t0_ns)
		t0_ns = now > 1000000000ull ? now - 1000000000ull : 1;
	return (now - t0_ns) * 1000;
}

/* CLOCK_MONOTONIC nanoseconds of a wire time (rounded down). */
uint64_t wire_to_ns(uint64_t ps)
{
	return t0_ns + ps / 1000;
}

/* CTRL.RST: the rate limiters are off again (RTTBCNRC resets to 0). */
void wire_reset(struct port *p)
{
	struct wire *w = &p->w;
	w->limited = 0;
	memset(w->rf, 0, sizeof w->rf);
	memset(w->next_ps, 0, sizeof w->next_ps);
	w->sel_seen = w->bcnrc_seen = 0;
}

/*
 * Slow scan.  RTTBCNRC is one register for 128 queues: a write goes to the
 * queue RTTDQSEL selects.  A shared file cannot see the write, so a change
 * of the pair (RTTDQSEL, RTTBCNRC) since the last scan counts as writing
 * RTTBCNRC for the selected queue; a driver programs one queue per scan
 * (README).  A rate factor below 1 (RF_INT 0) limits nothing beyond the line.
 */
void wire_scan(struct port *p)
{
	struct wire *w = &p->w;
	uint32_t sel = REG(p, RTTDQSEL) & 0x7f, v = REG(p, RTTBCNRC);
	if (sel != w->sel_seen || v != w->bcnrc_seen) {
		w->sel_seen = sel;
		w->bcnrc_seen = v;
		if (sel < NUM_QUEUES) {
			uint32_t rf = v & RTTBCNRC_RF;
			w->rf[sel] = rf < RF_ONE ? RF_ONE : rf;
			if (v & RTTBCNRC_RS_ENA)
				w->limited |= 1ull << sel;
			else
				w->limited &= ~(1ull << sel);
		}
	}
	uint32_t pb = REG(p, TXPBSIZE(0));   /* bytes, 8.2.3.9.13 */
	if (pb == 0 || pb > (160u << 10))
		pb = 160u << 10;
	w->horizon_ps = (uint64_t)pb * WIRE_PS_PER_BYTE;
}

/* wire PORT unlimited|paced */
int wire_command(char **tok, int nt, char *reply, size_t n)
{
	char *end = NULL;
	long pi = nt == 3 ? strtol(tok[1], &end, 10) : -1;
	if (!end || *end || pi < 0 || pi >= M.nports ||
	    (strcmp(tok[2], "unlimited") && strcmp(tok[2], "paced")))
		return reply_fail(reply, n, "usage: wire PORT paced|unlimited", NULL);
	struct wire *w = &M.ports[pi].w;
	w->unlimited = !strcmp(tok[2], "unlimited");
	w->free_ps = 0;
	return reply_ok(reply, n);
}

/* Stats members of the wire and 1588 (each followed by a comma). */
int wire_stats(struct port *p, char *out, size_t n)
{
	return snprintf(out, n, "\"wire\":\"%s\",\"wireLastNs\":%lu,\"ptpRxStamped\":%lu,"
			"\"ptpTxStamped\":%lu,\"txRateLimited\":%d,\"txLatencyNs\":%lu,\"rxLatencyNs\":%lu,",
			p->w.unlimited ? "unlimited" : "paced",
			p->w.last_ps ? wire_to_ns(p->w.last_ps) : 0, p->t.ptp_rx_stamped,
			p->t.ptp_tx_stamped, __builtin_popcountll(p->w.limited),
			(unsigned long)(PORT_TX_LATENCY_PS / 1000), (unsigned long)(PORT_RX_LATENCY_PS / 1000));
}
