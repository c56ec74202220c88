/*
 * tx.c - transmit: the model consumes the driver's TX rings
 * (datasheet 7.2; advanced transmit data descriptor 7.2.3.2.4, context
 * descriptor 7.2.3.2.3).
 *
 * Per visit the model reads TDT once, walks the descriptors from its head
 * to TDT, hands each complete frame (up to EOP) to the port's wiring
 * (sink, pcap file, cable, TAP), writes DD back into descriptors that ask for it
 * (RS).  TDH and the statistics registers are published by port_publish()
 * (every 0.5 ms and when idle, see rx.c).  Legacy descriptors (DEXT = 0)
 * have CMD/EOP/RS at the same bit positions and are handled alike.
 *
 * Frame length (7.2.3.2.4, DTALEN; 8.2.3.22.13 MAXFRS): the data of a frame,
 * summed over its descriptors up to EOP, must be at least 17 bytes and at
 * most the maximum frame size without FCS (1514 bytes, MFS - 4 with
 * HLREG0.JUMBOEN).  Other frames are not sent; their descriptors are
 * completed as usual (DD for RS) and counted in tx_drop_bad_length.  (This
 * is why Linux ixgbe pads frames to 17 bytes.)  TSO is not modelled, so
 * a TSO descriptor chain longer than that counts there too.
 */
#define TX_MIN_LEN 17
#include <string.h>
#include <time.h>

#include "model.h"
#include "regs.h"
#include "wire.h"

#define CMD_EOP  (1u << 24)
#define CMD_RS   (1u << 27)
#define CMD_DEXT (1u << 29)
#define DTYP_CONTEXT 0x2u
#define DTYP_MASK (0xfu << 20)
#define DTYP_DATA (0x3u << 20)
#define STA_DD   (1u << 0)
#define MAC_TSTAMP (1u << 19)   /* 7.2.3.2.4: IEEE 1588 timestamp this frame */

static uint8_t gather[MAX_FRAME];   /* a frame spread over several descriptors */

/* CLOCK_REALTIME - CLOCK_MONOTONIC in ns, for pcap timestamps. */
static int64_t real_offset(void)
{
	struct timespec r, m;
	clock_gettime(CLOCK_REALTIME, &r);
	clock_gettime(CLOCK_MONOTONIC, &m);
	return ((int64_t)r.tv_sec - m.tv_sec) * 1000000000 + (r.tv_nsec - m.tv_nsec);
}

/* A complete frame left the port at wire time ps (counting is done per visit);
 * tsreq: its descriptors asked for a 1588 timestamp; fetched: when the model
 * took it from the ring (latency truth). */
static void tx_deliver(struct port *p, struct port *peer, const uint8_t *f, uint32_t len,
		       uint64_t ps, int tsreq, uint64_t fetched)
{
	if (p->sink_check)
		sink_check(p, f, len);
	if (p->pcap_out) {
		if (!p->w.real_off_ns)
			p->w.real_off_ns = real_offset();
		pcap_write(p->pcap_out, f, len, wire_to_ns(ps) + (uint64_t)p->w.real_off_ns, p->pcap_nano);
		p->t.pcap_frames++;
	}
	if (tsreq)
		ptp_tx(p, ps);
	if (p->lat)
		lat_tx(p, f, len, fetched);
	if (peer) {
		/* its first byte at the peer's MAC after both ports' latency, in whole
		 * one frame time later (wire.h); a line without pacing takes no time */
		uint64_t at = p->w.unlimited ? ps : ps + CABLE_LATENCY_PS;
		peer->w.rx_ps = at;
		peer->w.rx_due_ps = p->w.unlimited ? 0 : at + wire_frame_ps(len);
		rx_put(peer, f, len);
		peer->w.rx_ps = peer->w.rx_due_ps = 0;
	}
	if (p->tap.fd >= 0)
		tap_tx(p, f, len);
}

/* The length of a frame of len bytes on the wire (without FCS): with
 * HLREG0.TXPADEN (8.2.3.22.8) the MAC pads a short frame to 60 bytes, 64
 * with the FCS it appends, the minimum of IEEE 802.3 (4.4.2). */
static inline uint32_t tx_wire_len(const struct port *p, uint32_t len)
{
	return len < p->tx_min_wire ? p->tx_min_wire : len;
}

/* The frame at f, len bytes, as it leaves the MAC: padded with zeros in
 * gather (where a gathered frame already is) when it is short. */
static const uint8_t *tx_pad(const struct port *p, const uint8_t *f, uint32_t len)
{
	if (len >= p->tx_min_wire)
		return f;
	if (f != gather)
		memcpy(gather, f, len);
	memset(gather + len, 0, p->tx_min_wire - len);
	return gather;
}

/* DD write-back (7.2.3.5) for the descriptors of one frame that have RS;
 * returns whether it wrote any. */
static int tx_writeback(struct ring *r, uint32_t from, uint32_t to)
{
	int wrote = 0;
	for (uint32_t i = from; i != to; i = i + 1 == r->count ? 0 : i + 1) {
		uint8_t *d = r->desc + (size_t)i * 16;
		if (*(volatile uint32_t *)(d + 8) & CMD_RS) {
			*(volatile uint32_t *)(d + 12) = STA_DD;   /* write-back: STA in 35:32, rest reserved */
			wrote = 1;
		}
	}
	return wrote;
}

static int tx_ring(struct port *p, int q, struct port *peer, uint64_t now)
{
	struct ring *r = &p->txq[q];
	uint32_t tail = __atomic_load_n(&REG(p, TDT(q)), __ATOMIC_ACQUIRE);
	uint32_t head = r->head, count = r->count;
	if (tail >= count || head == tail)
		return 0;
	/* A queue being disabled fetches nothing more (4.6.8.1.2): the driver
	 * reads ENABLE back as 0 at once and takes what has no DD as unsent. */
	if (!(__atomic_load_n(&REG(p, TXDCTL(q)), __ATOMIC_ACQUIRE) & XDCTL_ENABLE))
		return 0;
	/* a limited queue, 1588 and latency truth need the general loop too */
	int need_data = p->sink_check || p->pcap_out || peer || p->tap.fd >= 0 || p->lat ||
			p->ptp.tx_on || ((p->w.limited >> q) & 1);
	uint64_t now_ps = wire_ps(now), fetched = now;
	int tsreq = 0;
	uint32_t start = head, glen = 0, nsegs = 0;
	/* lengths outside TX_MIN_LEN..tx_max_len: len - TX_MIN_LEN > span (unsigned) */
	uint32_t span = p->tx_max_len > TX_MIN_LEN ? p->tx_max_len - TX_MIN_LEN : 0;
	uint64_t frames = 0, bytes = 0;
	int bad = 0;
	int wrote_dd = 0;   /* a DD write-back: the queue's interrupt cause (intr.c) */
	const uint8_t *single = NULL;

	/* Fast path while nobody needs the frame data (a sink without check): one
	 * advanced data descriptor per frame, in memory we know.  Anything else
	 * leaves the loop for the general one below, at the same descriptor. */
	if (!need_data) {
		while (head != tail) {
			uint8_t *d = r->desc + (size_t)head * 16;
			uint32_t ahead = head + 16 < count ? head + 16 : head + 16 - count;
			__builtin_prefetch(r->desc + (size_t)ahead * 16, 1);
			uint64_t addr = *(volatile uint64_t *)d;
			uint32_t cmd = *(volatile uint32_t *)(d + 8);
			uint32_t len = cmd & 0xffff;
			if ((cmd & (CMD_EOP | CMD_DEXT | DTYP_MASK)) != (CMD_EOP | CMD_DEXT | DTYP_DATA) ||
			    len - TX_MIN_LEN > span || wire_hold(p, q, now_ps) || !dma_virt_fast(addr, len))
				break;
			len = tx_wire_len(p, len);
			wire_send(p, q, len, now_ps);
			frames++;
			bytes += len;
			if (cmd & CMD_RS) {
				*(volatile uint32_t *)(d + 12) = STA_DD;
				wrote_dd = 1;
			}
			head = head + 1 == count ? 0 : head + 1;
		}
		start = head;
	}

	while (head != tail) {
		if (nsegs == 0 && wire_hold(p, q, now_ps))
			break;                           /* no room in the TX packet buffer yet */
		uint8_t *d = r->desc + (size_t)head * 16;
		uint32_t ahead = head + 16 < count ? head + 16 : head + 16 - count;
		__builtin_prefetch(r->desc + (size_t)ahead * 16, 1);   /* 4 lines ahead */
		uint64_t addr = *(volatile uint64_t *)d;
		uint32_t cmd = *(volatile uint32_t *)(d + 8);
		uint32_t next = head + 1 == count ? 0 : head + 1;
		if ((cmd & CMD_DEXT) && ((cmd >> 20) & 0xf) == DTYP_CONTEXT) {
			/* offload context: nothing to send */
			head = next;
			if (nsegs == 0)
				start = head;
			continue;
		}
		uint32_t len = cmd & 0xffff;                     /* DTALEN */
		uint8_t *v = dma_virt_fast(addr, len);
		if (!v) {
			if (r->miss_gen == 0 || (uint32_t)M.dma_gen < r->miss_gen) {
				/* unknown memory: rescan the driver first, retry later */
				if (r->miss_gen == 0) {
					r->miss_gen = (uint32_t)M.dma_gen + 1;
					p->t.dma_waits++;
				}
				dma_request_scan();
				break;
			}
			r->miss_gen = 0;
			p->t.desc_errors++;
			bad = 1;
		} else if (need_data && !bad) {
			if (nsegs == 0 && (cmd & CMD_EOP)) {
				single = v;
			} else if (glen + len <= MAX_FRAME) {
				memcpy(gather + glen, v, len);
			} else {
				p->t.desc_errors++;
				bad = 1;
			}
		}
		glen += len;
		nsegs++;
		tsreq |= (cmd & MAC_TSTAMP) != 0;
		head = next;
		if (cmd & CMD_EOP) {
			if (!bad && glen - TX_MIN_LEN > span) {
				p->t.tx_drop_bad_length++;
				bad = 1;
			}
			if (!bad) {
				uint32_t wlen = tx_wire_len(p, glen);
				uint64_t ps = wire_send(p, q, wlen, now_ps);
				frames++;
				bytes += wlen;
				if (need_data)
					tx_deliver(p, peer, tx_pad(p, single ? single : gather, glen),
						   wlen, ps, tsreq && p->ptp.tx_on, fetched);
			}
			if (nsegs == 1) {
				if (cmd & CMD_RS) {
					*(volatile uint32_t *)(d + 12) = STA_DD;
					wrote_dd = 1;
				}
			} else {
				wrote_dd |= tx_writeback(r, start, head);
			}
			start = head;
			glen = nsegs = 0;
			bad = 0;
			tsreq = 0;
			single = NULL;
		}
	}
	if (frames)
		p->t.tx_last_ns = now;
	p->t.tx_frames += frames;
	p->t.tx_bytes += bytes;
	p->cnt[C_GPTC] += frames;
	p->cnt[C_GOTC] += bytes + 4 * frames;     /* GOTC counts the FCS */
	if (p->sink)
		p->t.sink_frames += frames;
	/* A frame without EOP yet (or waiting for a rescan) is retried next visit. */
	head = start;
	if (head == r->head)
		return 0;
	r->head = head;                           /* TDH: published by port_publish() */
	p->tx_dirty = 1;
	if (wrote_dd && p->irq.tx_vec[q] >= 0)
		intr_cause(p, p->irq.tx_vec[q]);
	return 1;
}

/*
 * A queue whose memory was released (dma.c): the NIC would still fetch the
 * descriptors from its head up to TDT; count them, touch nothing.
 */
static int tx_released_ring(struct port *p, int q)
{
	struct ring *r = &p->txq[q];
	uint32_t tail = __atomic_load_n(&REG(p, TDT(q)), __ATOMIC_ACQUIRE);
	if (tail >= r->count || tail == r->head)
		return 0;
	p->t.dma_after_release += (tail + r->count - r->head) % r->count;
	r->head = tail;
	p->tx_dirty = 1;
	return 1;
}

/* One visit of all enabled TX queues of a port. */
int tx_visit(struct port *p, uint64_t now)
{
	if (!(p->tx_active | p->tx_released) || !p->tx_en || !p->bus_master || !p->link_up ||
	    now < p->stall_until)
		return 0;
	if (__builtin_expect(p->tx_released != 0, 0))
		for (uint64_t rel = p->tx_released; rel; rel &= rel - 1)
			tx_released_ring(p, __builtin_ctzll(rel));
	struct port *peer = p->cable >= 0 ? &M.ports[p->cable] : NULL;
	/* Frames leave no earlier than the model fetches them: where their time is
	 * seen (a peer's RX, 1588, the latency truth) the clock is read afresh, not
	 * taken from the top of a loop the thread may have been descheduled in. */
	if (peer || p->lat || p->ptp.tx_on)
		now = now_ns();
	if (peer) {
		peer->w.rx_now_ps = wire_ps(now);
		rx_begin(peer);
	}
	int work = 0;
	for (uint64_t act = p->tx_active; act; act &= act - 1)
		work |= tx_ring(p, __builtin_ctzll(act), peer, now);
	if (peer)
		rx_end(peer, now);
	return work;
}
