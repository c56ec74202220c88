/*
 * regs.c - register defaults, reset, link and the slow control scan.
 *
 * A shared file cannot trap register writes, so the data thread looks at
 * the control registers about every 0.5 ms (regs_scan) and reacts the way
 * the hardware would: self-clearing reset bits, link after autonegotiation,
 * queues that start when their ENABLE bit is set.
 */
#include <string.h>

#include "model.h"
#include "regs.h"

#define MS (1000000ull)
#define LINK_DELAY (20 * MS)   /* autonegotiation takes ~20 ms in the model */

/* Link state is reflected in LINKS (8.2.3.22.20) and STATUS (8.2.3.1.2). */
void port_set_link(struct port *p, int up)
{
	p->link_up = up;
	if (up) {
		REG(p, LINKS) = LINKS_UP | LINKS_SPEED_10G | LINKS_KX_UP;
		REG(p, STATUS) |= STATUS_LINK_UP;
	} else {
		REG(p, LINKS) = 0;
		REG(p, STATUS) &= ~STATUS_LINK_UP;
	}
}

/*
 * Link mode the NVM loads into AUTOC.LMS (8.2.3.22.19) for each 82599 part
 * (device IDs as in 9.3.3 / the ixgbe drivers): SFP+ parts 10 GbE serial,
 * CX4/XAUI parts 10 GbE parallel, backplane parts KX/KX4/KR
 * autonegotiation.  0 = not an 82599 ID the model knows.
 */
uint32_t nvm_lms_of(uint16_t id)
{
	switch (id) {
	case 0x10fb: case 0x1529: case 0x154d: case 0x1557:
		return LMS_10G_SERIAL;
	case 0x10f9: case 0x10fc:
		return LMS_10G_PARALLEL;
	case 0x10f7: case 0x10f8: case 0x1514: case 0x1517: case 0x152a: case 0x151c:
		return LMS_KX_KX4_KR;
	default:
		return 0;
	}
}

/* Forget every ring of the port (reset, or the driver went away). */
void port_drop_queues(struct port *p)
{
	memset(&p->rx.ring, 0, sizeof p->rx.ring);
	rss_drop(p);
	memset(p->txq, 0, sizeof p->txq);
	p->tx_active = 0;
	p->tx_released = 0;
	p->gather_len = 0;
	p->gather_bad = 0;
}

/*
 * Software reset, CTRL.RST (8.2.3.1.1, 4.2.1): every register returns to
 * its default, link goes down, then CTRL is written last with RST clear so
 * a driver that sees RST clear sees the defaults.
 */
void regs_reset(struct port *p)
{
	volatile uint32_t *r = p->regs;

	if (p->removed)
		return;
	port_drop_queues(p);
	pb_clear(p);
	p->link_up = 0;
	p->link_up_at = 0;
	memset(p->cnt, 0, sizeof p->cnt);
	memset(p->rss.frames, 0, sizeof p->rss.frames);
	memset(p->rss.drops, 0, sizeof p->rss.drops);
	memset(p->handed, 0, sizeof p->handed);
	memset(p->wrote, 0, sizeof p->wrote);
	memset(p->seen, 0, sizeof p->seen);
	p->stats_left = 0;
	p->read_seen_at = 0;
	p->access_at = 0;
	p->seen_at = 0;
	p->takes = 0;
	for (size_t i = 1; i < BAR_SIZE / 4; i++)
		r[i] = 0;

	REG(p, EEC) = EEC_PRES | EEC_ARD;                   /* 8.2.3.2.1: EEPROM read done */
	REG(p, RDRXCTL) = RDRXCTL_DMAIDONE;                 /* 8.2.3.8.8: DMA init done */
	REG(p, HLREG0) = 1u | HLREG0_RXCRCSTRP | HLREG0_TXPADEN; /* 8.2.3.22.8: TXCRCEN, RXCRCSTRP, TXPADEN */
	REG(p, MAXFRS) = 0x5EEu << 16;                      /* 8.2.3.22.13: 1518 bytes */
	REG(p, RXPBSIZE(0)) = 0x200u << 10;                 /* 8.2.3.8.9: 512 KiB */
	REG(p, TXPBSIZE(0)) = 0xA0u << 10;                  /* 8.2.3.9.13: 160 KiB */
	for (int q = 0; q < NUM_QUEUES; q++)
		REG(p, SRRCTL(q)) = 0x2u | (0x4u << 8);         /* 8.2.3.8.7: 2 KiB buffers */
	/* 8.2.3.7.8/9: receive address 0 is loaded from the EEPROM at reset;
	 * it reads at the 82598-compatible offset too. */
	REG(p, RAL0) = p->mac[0] | p->mac[1] << 8 | p->mac[2] << 16 | (uint32_t)p->mac[3] << 24;
	REG(p, RAH0) = p->mac[4] | p->mac[5] << 8 | RAH_AV;
	REG(p, RAL_82598(0)) = REG(p, RAL0);
	REG(p, RAH_82598(0)) = REG(p, RAH0);
	memset(p->ra_seen, 0, sizeof p->ra_seen);
	p->ra_seen[0][0] = REG(p, RAL0);
	p->ra_seen[0][1] = REG(p, RAH0);
	/* 8.2.3.22.19: the NVM loads the part's link mode into AUTOC.LMS. */
	REG(p, AUTOC) = p->nvm_lms << AUTOC_LMS_SHIFT;
	intr_reset(p);
	wire_reset(p);
	ptp_reset(p);
	port_set_link(p, 0);
	__atomic_store_n(&r[CTRL >> 2], 0, __ATOMIC_RELEASE);
}

/* Translate a ring base and length; on a miss rescan the driver's memory once. */
static void ring_start(struct port *p, struct ring *ring, uint32_t bal, uint32_t bah,
		       uint32_t len, uint32_t head, uint64_t now)
{
	ring->enabled = 1;
	ring->base_phys = (uint64_t)bah << 32 | bal;
	ring->count = len / 16;
	ring->head = head < ring->count ? head : 0;
	ring->published = head;
	ring->miss_gen = 0;
	ring->desc = NULL;
	if (ring->count == 0 || len % 128) {
		p->t.desc_errors++;   /* 8.2.3.8.3: length must be a multiple of 128 */
		ring->miss_gen = ~0u; /* never retry */
		return;
	}
	ring->desc = dma_virt(ring->base_phys, len);
	if (!ring->desc) {
		dma_maybe_scan(now, 1);
		ring->desc = dma_virt(ring->base_phys, len);
	}
	if (!ring->desc) {
		p->t.desc_errors++;
		ring->miss_gen = (uint32_t)M.dma_gen; /* retry silently after the next rescan */
	}
}

/* A queue enabled earlier whose ring was not mapped yet: retry after a rescan. */
static void ring_retry(struct ring *ring)
{
	if (ring->enabled && !ring->desc && !ring->released && ring->miss_gen != ~0u &&
	    ring->miss_gen != (uint32_t)M.dma_gen) {
		ring->desc = dma_virt(ring->base_phys, ring->count * 16);
		ring->miss_gen = ring->desc ? 0 : (uint32_t)M.dma_gen;
	}
}

/* RX queue q as the driver set it up (8.2.3.8.1-8.2.3.8.7) into x: queue 0
 * here, queues 1..63 from rss.c.  Without bus mastering the NIC stops all
 * DMA: a released ring is forgotten (dma.c). */
void rxq_scan(struct port *p, int q, struct rxq *x, uint64_t now)
{
	if (!p->bus_master && x->ring.released)
		memset(&x->ring, 0, sizeof x->ring);
	int en = (REG(p, RXDCTL(q)) & XDCTL_ENABLE) != 0;
	if (en && !x->ring.enabled)
		ring_start(p, &x->ring, REG(p, RDBAL(q)), REG(p, RDBAH(q)), REG(p, RDLEN(q)),
			   REG(p, RDH(q)), now);
	else if (!en && x->ring.enabled)
		memset(&x->ring, 0, sizeof x->ring);
	ring_retry(&x->ring);
	/* 8.2.3.8.7: BSIZEPACKET 1..16 KiB; 0 is not allowed (rx.c counts it). */
	uint32_t srrctl = REG(p, SRRCTL(q)), bs = srrctl & SRRCTL_BSIZE_MASK;
	x->bufsize = bs >= 1 && bs <= 16 ? bs * 1024 : 0;
	x->drop_en = (srrctl & SRRCTL_DROP_EN) != 0;
}

static void scan_queues(struct port *p, uint64_t now)
{
	rxq_scan(p, 0, &p->rx, now);   /* RX queues 1..63: rss_scan */

	/* TX queues 0..63 (8.2.3.9.10) */
	for (int q = 0; q < NUM_QUEUES; q++) {
		struct ring *t = &p->txq[q];
		int en = (REG(p, TXDCTL(q)) & XDCTL_ENABLE) != 0;
		/* Software may write TDH only while the queue is disabled (8.2.3.9.8). A
		 * TDH the model did not write means the queue went off and on again
		 * between two scans, which a shared file cannot show otherwise (the
		 * NIC would hold ENABLE at 1 until the queue stopped): start it afresh. */
		if (en && t->enabled && t->desc && REG(p, TDH(q)) != t->published)
			memset(t, 0, sizeof *t);
		if (en && !t->enabled)
			ring_start(p, t, REG(p, TDBAL(q)), REG(p, TDBAH(q)), REG(p, TDLEN(q)),
				   REG(p, TDH(q)), now);
		else if (!en && t->enabled)
			memset(t, 0, sizeof *t);
		ring_retry(t);
		if (t->desc)
			p->tx_active |= 1ull << q;
		else
			p->tx_active &= ~(1ull << q);
		if (t->released)
			p->tx_released |= 1ull << q;
		else
			p->tx_released &= ~(1ull << q);
	}
}

/*
 * RAL/RAH 0..15 at their 82598-compatible offsets (0x05400 + 8n) are the
 * same registers as at 0x0A200 + 8n (8.2.3.7.8/9).  A shared file cannot
 * trap an access to make both offsets one register, so the scan copies a
 * value changed at either offset to the other (the new one at 0x0A200 wins
 * if both changed between two scans).
 */
static void sync_ra_aliases(struct port *p)
{
	for (int n = 0; n < NUM_RA_ALIAS; n++) {
		uint32_t *seen = p->ra_seen[n];
		uint32_t lo = REG(p, RAL(n)), hi = REG(p, RAH(n));
		uint32_t alo = REG(p, RAL_82598(n)), ahi = REG(p, RAH_82598(n));
		if (lo != seen[0] || hi != seen[1]) {
			REG(p, RAL_82598(n)) = lo;
			REG(p, RAH_82598(n)) = hi;
		} else if (alo != seen[0] || ahi != seen[1]) {
			REG(p, RAL(n)) = lo = alo;
			REG(p, RAH(n)) = hi = ahi;
		}
		seen[0] = lo;
		seen[1] = hi;
	}
}

/*
 * Link after autonegotiation or a link reset (8.2.3.22.19): it comes up
 * only in the link mode the part's NVM set.  Another AUTOC.LMS (e.g. 10 GbE
 * serial on a XAUI part) tries a link the PHY or module cannot make.
 */
static void link_attempt(struct port *p, uint64_t now)
{
	port_set_link(p, 0);
	p->link_up_at = now + LINK_DELAY;
}

void regs_scan(struct port *p, uint64_t now)
{
	if (p->removed) {
		/* A shared file takes the driver's writes; a removed device drops
		 * them.  Undo them every 10 ms (port_remove). */
		if (now - p->removed_fill_at >= 10 * MS) {
			p->removed_fill_at = now;
			memset((void *)p->regs, 0xff, BAR_SIZE);
			memset((void *)p->config, 0xff, 4096);
		}
		return;
	}
	uint32_t ctrl = REG(p, CTRL);
	if (ctrl & CTRL_RST) {
		regs_reset(p);
		dma_maybe_scan(now, 1); /* drop regions the driver no longer maps */
		return;
	}
	if (ctrl & CTRL_LNK_RST) {      /* link reset: link restarts, registers stay */
		REG(p, CTRL) = ctrl & ~CTRL_LNK_RST;
		link_attempt(p, now);
	}
	/* 8.2.3.22.19: restart autonegotiation self-clears; link follows later. */
	uint32_t autoc = REG(p, AUTOC);
	if (autoc & AUTOC_RESTART_AN) {
		REG(p, AUTOC) = autoc & ~AUTOC_RESTART_AN;
		link_attempt(p, now);
	}
	if (p->link_up_at && now >= p->link_up_at) {
		p->link_up_at = 0;
		uint32_t lms = (REG(p, AUTOC) & AUTOC_LMS_MASK) >> AUTOC_LMS_SHIFT;
		if (!p->link_forced_down && lms == p->nvm_lms)
			port_set_link(p, 1);
	}
	intr_scan(p, now);   /* EICR, EIMS, EIMC, EICS, IVAR, EITR (intr.c) */
	wire_scan(p);        /* TX rate limiters (wire.c) */
	ptp_scan(p, now);    /* IEEE 1588 (ptp.c) */

	p->bus_master = (p->config[4] & 0x4) != 0;   /* PCI command register bit 2 */
	p->rx_en = (REG(p, RXCTRL) & RXCTRL_RXEN) != 0;
	p->tx_en = (REG(p, DMATXCTL) & DMATXCTL_TE) != 0;
	if (!p->bus_master && p->tx_released) {
		/* no bus mastering: the NIC stops all DMA (dma.c, released rings;
		 * RX: rxq_scan) */
		for (uint64_t rel = p->tx_released; rel; rel &= rel - 1)
			memset(&p->txq[__builtin_ctzll(rel)], 0, sizeof p->txq[0]);
		p->tx_released = 0;
	}

	sync_ra_aliases(p);
	p->fctrl = REG(p, FCTRL);
	uint32_t ral = REG(p, RAL0), rah = REG(p, RAH0);
	uint8_t mac[6] = { ral, ral >> 8, ral >> 16, ral >> 24, rah, rah >> 8 };
	if (memcmp(mac, p->filter_mac, 6)) {
		memcpy(p->filter_mac, mac, 6);
		if (p->src.on)
			source_build(p);   /* source frames follow the port's MAC */
	}
	p->filter_valid = (rah & RAH_AV) != 0;

	uint32_t hl = REG(p, HLREG0);
	p->strip_crc = (hl & HLREG0_RXCRCSTRP) && (REG(p, RDRXCTL) & RDRXCTL_CRCSTRIP);
	/* 8.2.3.22.13: MFS (incl. FCS) limits frames when HLREG0.JUMBOEN is set;
	 * without jumbo frames the limit is the standard 1518 bytes. */
	uint32_t mfs = REG(p, MAXFRS) >> 16;
	p->max_frame = ((hl & HLREG0_JUMBOEN) && mfs) ? mfs : 1518;
	if (p->max_frame > MAX_FRAME)
		p->max_frame = MAX_FRAME;         /* the model's limit (README) */
	p->tx_max_len = p->max_frame - 4;       /* TX: DTALEN sum without FCS (7.2.3.2.4) */
	/* 8.2.3.22.8: TXPADEN pads short frames to 64 bytes with the FCS. */
	p->tx_min_wire = (hl & HLREG0_TXPADEN) ? ETH_MIN_LEN : 0;
	scan_queues(p, now);
	rss_scan(p, now);     /* MRQC, RSSRK, RETA, RQSMR and RX queues 1..63 */
}

/*
 * Write what the data path keeps in its own state into the registers: RDH,
 * TDH of the active TX queues and the statistics (8.2.3.23).  Called every
 * 0.5 ms and after 50 us without work, not per batch: RDH and TDH share
 * their cache lines with the RDT/TDT the driver writes, so a write per batch
 * would pull those lines away from the driver every time.  Statistics still
 * pending (a register not yet cleared by the driver) are retried by the slow
 * scan (loop.c).
 */
void port_publish(struct port *p)
{
	if (!(p->rx_dirty | p->tx_dirty) || p->removed)
		return;
	if (p->rx_dirty) {
		p->rx_dirty = 0;
		if (p->rx.ring.desc || p->rx.ring.released)
			__atomic_store_n(&REG(p, RDH(0)), p->rx.ring.head, __ATOMIC_RELEASE);
		rss_publish(p);
	}
	if (p->tx_dirty) {
		p->tx_dirty = 0;
		for (uint64_t act = p->tx_active | p->tx_released; act; act &= act - 1) {
			int q = __builtin_ctzll(act);
			__atomic_store_n(&REG(p, TDH(q)), p->txq[q].head, __ATOMIC_RELEASE);
			p->txq[q].published = p->txq[q].head;
		}
	}
	stats_publish(p);
}

/*
 * Surprise removal: a PCIe device that is gone answers every read with all
 * ones (a completion timeout / unsupported request becomes 0xffffffff), its
 * config space too.  The port stops all DMA; data path and scan leave it.
 */
void port_remove(struct port *p)
{
	p->removed = 1;
	port_drop_queues(p);
	p->src.on = 0;
	p->rep.on = 0;
	p->sink = 0;
	p->rx_en = p->tx_en = p->bus_master = 0;
	p->link_up = 0;
	p->link_up_at = 0;
	memset((void *)p->regs, 0xff, BAR_SIZE);
	memset((void *)p->config, 0xff, 4096);
}
