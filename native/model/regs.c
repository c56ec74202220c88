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

/* Forget every ring of the port (reset, or the driver went away). */
void port_drop_queues(struct port *p)
{
	memset(&p->rxq, 0, sizeof p->rxq);
	memset(p->txq, 0, sizeof p->txq);
	p->tx_active = 0;
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

	port_drop_queues(p);
	p->link_up = 0;
	p->link_up_at = 0;
	p->gprc = p->gptc = p->gorc = p->gotc = p->mpc = 0;
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
	/* 8.2.3.7.8/9: receive address 0 is loaded from the EEPROM at reset. */
	REG(p, RAL0) = p->mac[0] | p->mac[1] << 8 | p->mac[2] << 16 | (uint32_t)p->mac[3] << 24;
	REG(p, RAH0) = p->mac[4] | p->mac[5] << 8 | RAH_AV;
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
	if (ring->enabled && !ring->desc && ring->miss_gen != ~0u &&
	    ring->miss_gen != (uint32_t)M.dma_gen) {
		ring->desc = dma_virt(ring->base_phys, ring->count * 16);
		ring->miss_gen = ring->desc ? 0 : (uint32_t)M.dma_gen;
	}
}

static void scan_queues(struct port *p, uint64_t now)
{
	/* RX queue 0 (8.2.3.8.6): the only queue frames are delivered to. */
	int en = (REG(p, RXDCTL(0)) & XDCTL_ENABLE) != 0;
	if (en && !p->rxq.enabled)
		ring_start(p, &p->rxq, REG(p, RDBAL(0)), REG(p, RDBAH(0)), REG(p, RDLEN(0)),
			   REG(p, RDH(0)), now);
	else if (!en && p->rxq.enabled)
		memset(&p->rxq, 0, sizeof p->rxq);
	ring_retry(&p->rxq);

	/* TX queues 0..63 (8.2.3.9.10) */
	for (int q = 0; q < NUM_QUEUES; q++) {
		struct ring *t = &p->txq[q];
		en = (REG(p, TXDCTL(q)) & XDCTL_ENABLE) != 0;
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
	}
}

void regs_scan(struct port *p, uint64_t now)
{
	uint32_t ctrl = REG(p, CTRL);
	if (ctrl & CTRL_RST) {
		regs_reset(p);
		dma_maybe_scan(now, 1); /* drop regions the driver no longer maps */
		return;
	}
	if (ctrl & CTRL_LNK_RST) {      /* link reset: link restarts, registers stay */
		REG(p, CTRL) = ctrl & ~CTRL_LNK_RST;
		port_set_link(p, 0);
		p->link_up_at = now + LINK_DELAY;
	}
	/* 8.2.3.22.19: restart autonegotiation self-clears; link follows later. */
	uint32_t autoc = REG(p, AUTOC);
	if (autoc & AUTOC_RESTART_AN) {
		REG(p, AUTOC) = autoc & ~AUTOC_RESTART_AN;
		port_set_link(p, 0);
		p->link_up_at = now + LINK_DELAY;
	}
	if (p->link_up_at && now >= p->link_up_at) {
		p->link_up_at = 0;
		if (!p->link_forced_down)
			port_set_link(p, 1);
	}
	/* EIMC (8.2.3.5): a write clears the bits in EIMS. */
	uint32_t eimc = REG(p, EIMC);
	if (eimc) {
		REG(p, EIMS) &= ~eimc;
		REG(p, EIMC) = 0;
	}

	p->bus_master = (p->config[4] & 0x4) != 0;   /* PCI command register bit 2 */
	p->rx_en = (REG(p, RXCTRL) & RXCTRL_RXEN) != 0;
	p->tx_en = (REG(p, DMATXCTL) & DMATXCTL_TE) != 0;

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
	uint32_t bs = REG(p, SRRCTL(0)) & SRRCTL_BSIZE_MASK;
	p->rx_bufsize = (bs ? bs : 2) * 1024;   /* 0 is not allowed; treat as default */

	scan_queues(p, now);
}

/*
 * Write what the data path keeps in its own state into the registers: RDH,
 * TDH of the active TX queues and the statistics (8.2.3.23).  Called every
 *  0.5 ms and after 50 us without work, not per batch: RDH
 * and TDH share their cache lines with the RDT/TDT the driver writes, so a
 * write per batch would pull those lines away from the driver every time.
 */
void port_publish(struct port *p)
{
	if (p->rx_dirty) {
		p->rx_dirty = 0;
		if (p->rxq.desc)
			__atomic_store_n(&REG(p, RDH(0)), p->rxq.head, __ATOMIC_RELEASE);
		rx_stats_regs(p);
	}
	if (p->tx_dirty) {
		p->tx_dirty = 0;
		for (uint64_t act = p->tx_active; act; act &= act - 1) {
			int q = __builtin_ctzll(act);
			__atomic_store_n(&REG(p, TDH(q)), p->txq[q].head, __ATOMIC_RELEASE);
		}
		REG(p, GPTC) = (uint32_t)p->gptc;
		REG(p, TPT) = (uint32_t)p->gptc;
		REG(p, GOTCL) = (uint32_t)p->gotc;
		REG(p, GOTCH) = (uint32_t)(p->gotc >> 32) & 0xf;
	}
}
