/*
 * ptp.c - IEEE 1588 time sync of the 82599 (7.9; registers 8.2.3.26, all
 * offsets as there):
 * SYSTIM advancing per TIMINCA, and the RX and TX timestamp latches.
 *
 * SYSTIM is a function of the wire clock (wire.c): every TIMINCA.Incperiod
 * periods of 6.4 ns (the 10 Gb/s clock) it grows by TIMINCA.Incvalue;
 * Incperiod or Incvalue 0 stops it.  Timestamps are SYSTIM at the frame's
 * wire time (its first preamble byte, the same instant on both ends of a
 * cable), exact to the tick whenever the model ran.  The SYSTIML/SYSTIMH
 * registers themselves are refreshed by the slow scan (~0.5 ms), every port's from
 * one instant (ptp_publish).
 *
 * A latched timestamp stays until the driver releases it.  On the NIC a
 * read of RXSTMPH (TXSTMPH) clears TSYNCRXCTL.RXTT (TSYNCTXCTL.TXTT); a
 * shared file cannot see a read, so here the driver releases the latch by
 * writing the control register with the valid bit clear after reading the
 * high register.  That write changes nothing on the NIC (the bit is read
 * only and the read has cleared it already), so such a driver is right on
 * both (README, "IEEE 1588").
 */
#include <string.h>

#include "model.h"
#include "regs.h"
#include "wire.h"

#define TSYNCRXCTL      0x05188
#define RXSTMPL         0x051E8
#define RXSTMPH         0x051A4
#define RXMTRL          0x05120
#define TSYNCTXCTL      0x08C00
#define TXSTMPL         0x08C04
#define TXSTMPH         0x08C08
#define SYSTIML         0x08C0C
#define SYSTIMH         0x08C10
#define TIMINCA         0x08C14
#define ETQF(n)         (0x05128 + 4 * (n))   /* EType queue filters (8.2.3.7), n < 8 */
#define ETQF_1588       (1u << 30)
#define ETQF_EN         (1u << 31)
#define TSYNC_VALID     (1u << 0)  /* RXTT / TXTT */
#define TSYNC_EN        (1u << 4)
#define TICK_PS         6400ull    /* SYSTIM clock period at 10 Gb/s */

/* TSYNCRXCTL.Type values the model knows (V2 over Ethernet, 7.9.1) */
#define TYPE_L2_V2      0u         /* V2 frames with MessageType = RXMTRL.MSGT */
#define TYPE_L2_L4_V2   2u         /* the same, L2 part */
#define TYPE_EVENT_V2   5u         /* every V2 event message (MessageType bit 3 zero) */

/* SYSTIM at wire time ps (ps may lie before the base: ticks round down). */
static uint64_t systim_at(const struct ptp *t, uint64_t ps)
{
	uint64_t inc = t->timinca & 0xffffff, per = t->timinca >> 24;
	if (!inc || !per)
		return t->base;
	int64_t tick = (int64_t)(per * TICK_PS), d = (int64_t)(ps - t->base_ps);
	int64_t ticks = d >= 0 ? d / tick : -((-d + tick - 1) / tick);
	return t->base + (uint64_t)ticks * inc;
}

void ptp_reset(struct port *p)
{
	memset(&p->ptp, 0, sizeof p->ptp);
}

/* Publish one half of SYSTIM unless the driver wrote it since (then the next
 * scan takes the driver's value). */
static void publish(struct port *p, uint32_t off, uint32_t seen, uint32_t v, uint32_t *pub)
{
	if (__atomic_compare_exchange_n((uint32_t *)&REG(p, off), &seen, v, 0, __ATOMIC_RELEASE,
					__ATOMIC_RELAXED))
		*pub = v;
}

/* Slow scan: TIMINCA, a SYSTIM written by the driver, the filters.  SYSTIM itself is
 * published by ptp_publish(), every port's at once after all are scanned. */
void ptp_scan(struct port *p, uint64_t now)
{
	struct ptp *t = &p->ptp;
	uint64_t ps = wire_ps(now);
	uint32_t inc = REG(p, TIMINCA);
	if (inc != t->timinca) {
		/* a new increment applies from now: SYSTIM keeps its value */
		uint64_t v = systim_at(t, ps);
		t->base = v;
		t->base_ps = ps;
		t->timinca = inc;
	}
	uint32_t l = REG(p, SYSTIML), h = REG(p, SYSTIMH);
	if (l != t->pub_l || h != t->pub_h) {      /* the driver set the time */
		t->base = (uint64_t)h << 32 | l;
		t->base_ps = ps;
	}
	t->seen_l = l;
	t->seen_h = h;
	t->publish_due = 1;

	uint32_t rc = REG(p, TSYNCRXCTL);
	t->rx_on = (rc & TSYNC_EN) != 0;
	t->rx_type = (rc >> 1) & 7;
	t->rx_msgt = (REG(p, RXMTRL) >> 8) & 0xff;
	t->tx_on = (REG(p, TSYNCTXCTL) & TSYNC_EN) != 0;
	t->n_etype = 0;
	for (int n = 0; n < 8; n++) {
		uint32_t q = REG(p, ETQF(n));
		if ((q & (ETQF_EN | ETQF_1588)) == (ETQF_EN | ETQF_1588))
			t->etype[t->n_etype++] = (uint16_t)q;
	}
}

/* SYSTIML/SYSTIMH of a port ptp_scan() has just seen, at wire time `now`.  The slow
 * work calls it for every port in a row with one `now`, so that two ports' registers
 * read one after the other show the same instant, as two NICs' live clocks would: a
 * driver that compares them (ixy latency's clock offset) would otherwise see the time
 * between two ports' scans, or a whole nap when the model was preempted in between. */
void ptp_publish(struct port *p, uint64_t now)
{
	struct ptp *t = &p->ptp;
	if (!t->publish_due)
		return;
	t->publish_due = 0;
	uint64_t v = systim_at(t, wire_ps(now));
	publish(p, SYSTIML, t->seen_l, (uint32_t)v, &t->pub_l);
	publish(p, SYSTIMH, t->seen_h, (uint32_t)(v >> 32), &t->pub_h);
}

/* Whether an RX frame is one TSYNCRXCTL asks to timestamp (V2 over Ethernet). */
static int ptp_rx_wanted(const struct ptp *t, const uint8_t *f, uint32_t len)
{
	if (len < 14 + 34)                     /* Ethernet header + PTP V2 header */
		return 0;
	uint16_t et = (uint16_t)(f[12] << 8 | f[13]);
	int hit = 0;
	for (int n = 0; n < t->n_etype; n++)
		hit |= t->etype[n] == et;
	if (!hit || (f[15] & 0xf) != 2)        /* versionPTP */
		return 0;
	uint32_t mt = f[14] & 0xf;              /* messageType */
	if (t->rx_type == TYPE_L2_V2 || t->rx_type == TYPE_L2_L4_V2)
		return mt == t->rx_msgt;
	return t->rx_type == TYPE_EVENT_V2 && mt < 8;
}

/* A frame that passed the MAC's filters arrived at wire time ps. */
void ptp_rx(struct port *p, const uint8_t *f, uint32_t len, uint64_t ps)
{
	struct ptp *t = &p->ptp;
	uint32_t c = __atomic_load_n(&REG(p, TSYNCRXCTL), __ATOMIC_ACQUIRE);
	if (!(c & TSYNC_EN) || (c & TSYNC_VALID) || !ptp_rx_wanted(t, f, len))
		return;                            /* off, latch held, or not a frame to stamp */
	uint64_t v = systim_at(t, ps ? ps : wire_ps(now_ns()));
	REG(p, RXSTMPL) = (uint32_t)v;
	REG(p, RXSTMPH) = (uint32_t)(v >> 32);
	__atomic_store_n(&REG(p, TSYNCRXCTL), c | TSYNC_VALID, __ATOMIC_RELEASE);
	p->t.ptp_rx_stamped++;
}

/* A frame whose descriptor asked for a timestamp left at wire time ps. */
void ptp_tx(struct port *p, uint64_t ps)
{
	uint32_t c = __atomic_load_n(&REG(p, TSYNCTXCTL), __ATOMIC_ACQUIRE);
	if (!(c & TSYNC_EN) || (c & TSYNC_VALID))
		return;
	uint64_t v = systim_at(&p->ptp, ps);
	REG(p, TXSTMPL) = (uint32_t)v;
	REG(p, TXSTMPH) = (uint32_t)(v >> 32);
	__atomic_store_n(&REG(p, TSYNCTXCTL), c | TSYNC_VALID, __ATOMIC_RELEASE);
	p->t.ptp_tx_stamped++;
}
