/*
 * rx.c - receive: frames from the wire into the driver's RX ring
 * (datasheet 7.1; advanced receive descriptors 7.1.6).
 *
 * RX queue 0 receives, or with RSS the queue its hash names (rss.c, which
 * swaps that queue's state into p->rx.ring; no pools).  Free descriptors are
 * those from the model's head up to, not including, RDT.  For a frame the
 * model reads the read-format descriptor (packet buffer address at byte 0),
 * copies the frame into that buffer and writes the write-back format
 * (7.1.6.2): packet type at byte 0, then extended status/errors and PKT_LEN
 * at bytes 8..15 in one 8-byte release store, so a driver that sees DD sees
 * length and data.  A frame larger than one buffer (SRRCTL.BSIZEPACKET)
 * fills consecutive descriptors: each gets DD and the bytes of its buffer,
 * only the last one EOP, the packet type and the checksum status.
 * RDH and the statistics registers are not written per batch but published
 * by port_publish() (loop.c: every 0.5 ms and after 50 us without work):
 * RDH shares a cache line with the RDT the driver writes, and ixy-style
 * drivers learn of completions from DD, never from RDH.
 */
#include <string.h>

#include "model.h"
#include "regs.h"
#include "wire.h"

#define STAT_DD  RXD_STAT_DD
#define STAT_EOP RXD_STAT_EOP
#define MAX_SEGS (MAX_FRAME / 1024 + 2)   /* descriptors of the largest frame */

/* Frame classes by length and FCS (8.2.3.23: which counter a frame lands in). */
enum { RXC_GOOD, RXC_CRC, RXC_RUNT, RXC_FRAG, RXC_OVER, RXC_JABBER };

static uint8_t scratch[MAX_FRAME + 64];   /* one multi-buffer source frame */

int rx_active(const struct port *p)
{
	return (p->rx.ring.desc || p->rx.ring.released || p->rss.active) && p->rx_en && p->bus_master &&
	       p->link_up;
}

/* Start a batch: read RDT once.  Returns the number of free descriptors. */
uint32_t rx_begin(struct port *p)
{
	p->rx_ok = rx_active(p);
	p->rx.free = p->rx.free_begin = 0;
	if (!p->rx_ok)
		return 0;
	uint32_t tail = __atomic_load_n(&REG(p, RDT(0)), __ATOMIC_ACQUIRE);
	uint32_t n = p->rx.ring.count;
	/* With RSS queue 0 may be here without a ring (rx_active): it has none free. */
	if (tail < n && (p->rx.ring.desc || p->rx.ring.released))
		p->rx.free = (tail + n - p->rx.ring.head) % n;
	p->rx.free_begin = p->rx.free;
	if (p->rss.active)
		rss_begin(p);
	if (p->pb.frames)
		pb_drain(p);                    /* frames waiting in the packet buffer first */
	return p->rx.free;
}

/* End a batch: descriptors written back are queue 0's interrupt cause (intr.c)
 * and the time of the last write-back (truth); the head and the counters are
 * published later (port_publish). */
void rx_end(struct port *p, uint64_t now)
{
	if (p->rss.active || p->rss.cur)   /* cur: a frame went to a queue without a ring */
		rss_end(p, now);
	if (p->rx.free < p->rx.free_begin) {
		p->t.rx_last_ns = now;
		if (p->irq.rx_vec[0] >= 0)
			intr_cause(p, p->irq.rx_vec[0]);
	}
}

/*
 * Receive checksum offload as the 82599 reports it (chapter 7.1, "Receive
 * Checksum Offloading"; write-back fields 7.1.6.2).  The 82599 always
 * checks IPv4 headers and TCP/UDP over IPv4 (RXCSUM, 8.2.3.7.5, has no
 * enable bits for that), so this does not depend on any register.
 *   IPv4 (the whole header in the frame): packet type IPV4, IPCS, and IPE
 *   when the header checksum is wrong.
 *   TCP or UDP in an unfragmented IPv4 packet (the segment inside the frame):
 *   packet type TCP/UDP, L4CS (and UDPCS for UDP), TCPE (L4E) when the
 *   checksum is wrong.  A UDP checksum of 0 ("none", RFC 768) is reported
 *   with L4E too: an 82599 erratum (82599 Specification Update; Linux ixgbe
 *   ignores L4E for UDP on the 82599, __IXGBE_RX_CSUM_UDP_ZERO_ERR, and DPDK
 *   does the same, rx_udp_csum_zero_err).
 * lo: the first dword (packet type); st: the status/errors dword with DD|EOP.
 */
void rx_classify(const uint8_t *f, uint32_t len, uint32_t *lo, uint32_t *st)
{
	*lo = 0;
	*st = STAT_DD | STAT_EOP;
	if (len < 34 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4)
		return;
	const uint8_t *ip = f + 14;
	uint32_t ihl = (ip[0] & 0xf) * 4u;
	if (ihl < 20 || 14 + ihl > len)
		return;
	*lo |= RXD_PKT_IPV4;
	*st |= RXD_STAT_IPCS;
	if (csum_fold(csum_add(ip, ihl, 0)) != 0)
		*st |= RXD_ERR_IPE;
	uint32_t total = (uint32_t)ip[2] << 8 | ip[3];
	int frag = (ip[6] & 0x3f) || ip[7];             /* MF or a fragment offset */
	uint32_t proto = ip[9];
	if (frag || (proto != 6 && proto != 17) || total < ihl || 14 + total > len)
		return;
	uint32_t l4len = total - ihl;
	const uint8_t *l4 = ip + ihl;
	if (l4len < (proto == 6 ? 20u : 8u))
		return;
	*lo |= proto == 6 ? RXD_PKT_TCP : RXD_PKT_UDP;
	*st |= RXD_STAT_L4CS | (proto == 17 ? RXD_STAT_UDPCS : 0);
	if (proto == 17 && l4[6] == 0 && l4[7] == 0) {
		*st |= RXD_ERR_TCPE;                         /* the erratum above */
		return;
	}
	uint32_t sum = csum_add(ip + 12, 8, proto + l4len);   /* pseudo header */
	if (csum_fold(csum_add(l4, l4len, sum)) != 0)
		*st |= RXD_ERR_TCPE;
}

/* Destination address filter (7.1.1.1, FCTRL 8.2.3.7.1). */
static int rx_accept(const struct port *p, const uint8_t *dst)
{
	if (dst[0] & 1) {
		static const uint8_t bcast[6] = { 0xff, 0xff, 0xff, 0xff, 0xff, 0xff };
		if (!memcmp(dst, bcast, 6))
			return (p->fctrl & (FCTRL_BAM | FCTRL_MPE)) != 0;
		return (p->fctrl & FCTRL_MPE) != 0;
	}
	if (p->fctrl & FCTRL_UPE)
		return 1;
	return p->filter_valid && !memcmp(dst, p->filter_mac, 6);
}

/*
 * Length and FCS (8.2.3.23): frames under 64 bytes with FCS are undersize
 * (RUC; RFC with a bad FCS), over the maximum frame size oversize (ROC; RJC
 * with a bad FCS), in between with a bad FCS CRC errors (CRCERRS).
 */
static int rx_class(const struct port *p, uint32_t len, int fcs_bad)
{
	uint32_t wire = len + 4;
	if (wire > p->max_frame)
		return fcs_bad ? RXC_JABBER : RXC_OVER;
	if (wire < 64)
		return fcs_bad ? RXC_FRAG : RXC_RUNT;
	return fcs_bad ? RXC_CRC : RXC_GOOD;
}

/* Count n frames of class cls in their statistics register. */
static void rx_class_count(struct port *p, int cls, uint64_t n)
{
	static const int reg[] = { -1, C_CRCERRS, C_RUC, C_RFC, C_ROC, C_RJC };
	if (reg[cls] >= 0)
		p->cnt[reg[cls]] += n;
	p->rx_dirty = 1;
}

/*
 * Fate of n frames of len bytes (without FCS) before any descriptor is
 * looked at.  Returns -1 when they are dropped (counted here), otherwise
 * the extra error bits of their write-back: 0, or RXE for bad frames kept
 * because FCTRL.SBP (store bad packets, 8.2.3.7.1) is set.
 */
static int rx_admit(struct port *p, const uint8_t *dst, uint32_t len, int fcs_bad, uint64_t n)
{
	if (!p->rx_ok) {
		p->t.rx_drop_disabled += n;
		return -1;
	}
	if (!rx_accept(p, dst)) {
		p->t.rx_drop_filtered += n;
		return -1;
	}
	int cls = rx_class(p, len, fcs_bad);
	p->rx_cls = cls;
	if (cls == RXC_OVER || cls == RXC_JABBER) {
		rx_class_count(p, cls, n);
		p->t.rx_drop_oversize += n;      /* never stored, not even with SBP */
		return -1;
	}
	if (cls != RXC_GOOD && !(p->fctrl & FCTRL_SBP)) {
		rx_class_count(p, cls, n);
		if (cls == RXC_CRC)
			p->t.rx_drop_crc += n;
		else
			p->t.rx_drop_runt += n;
		return -1;
	}
	if (p->rx.bufsize == 0) {
		/* 8.2.3.8.7: BSIZEPACKET 0 (or over 16 KiB) is not allowed: a
		 * programming error; nothing is written. */
		p->t.desc_errors += n;
		return -1;
	}
	return cls == RXC_GOOD ? 0 : (int)RXD_ERR_RXE;
}

/*
 * n frames found no descriptor (8.2.3.8.7, 8.2.3.23): with SRRCTL.DROP_EN
 * the queue drops them (QPRDC), otherwise they were lost when the packet
 * buffer overflowed (MPC).
 */
static void rx_no_desc(struct port *p, uint64_t n)
{
	p->t.rx_drop_nodesc += n;
	p->cnt[p->rx.drop_en ? C_QPRDC : C_MPC] += n;
	if (p->rss.cur && p->rx.drop_en)
		p->rss.drops[p->rss.cur] += n;
	if (p->rx_cls != RXC_GOOD)
		rx_class_count(p, p->rx_cls, n);
	p->rx_dirty = 1;
}

/*
 * Buffer of descriptor head+k (len bytes), or NULL.  A buffer outside every
 * DMA mapping first triggers a rescan of the driver's memory (NULL with
 * miss_gen set: wait); if it is still unknown after that, it is a
 * descriptor error and descriptors head..head+k are completed with length
 * 0 so the ring keeps moving (NULL, miss_gen clear: try again).
 */
static uint8_t *rx_buffer(struct port *p, uint32_t k, uint32_t len)
{
	struct ring *r = &p->rx.ring;
	uint32_t i = (r->head + k) % r->count;
	uint8_t *d = r->desc + (size_t)i * 16;
	uint8_t *v = dma_virt(*(volatile uint64_t *)d, len);
	if (v) {
		r->miss_gen = 0;
		return v;
	}
	if (r->miss_gen == 0 || (uint32_t)M.dma_gen < r->miss_gen) {
		if (r->miss_gen == 0) {
			r->miss_gen = (uint32_t)M.dma_gen + 1;
			p->t.dma_waits++;
		}
		dma_request_scan();
		return NULL;
	}
	r->miss_gen = 0;
	p->t.desc_errors++;
	for (uint32_t j = 0; j <= k; j++) {
		d = r->desc + (size_t)r->head * 16;
		*(volatile uint64_t *)d = 0;
		__atomic_store_n((uint64_t *)(d + 8), (uint64_t)(STAT_DD | STAT_EOP), __ATOMIC_RELEASE);
		r->head = r->head + 1 == r->count ? 0 : r->head + 1;
		p->rx.free--;
	}
	p->rx_dirty = 1;
	return NULL;
}

/* Write-back (7.1.6.2) of descriptor d: packet and RSS type, RSS hash (lo bits
 * 63:32), status/errors, length. */
static inline void rx_writeback(uint8_t *d, uint64_t lo, uint32_t st, uint32_t out)
{
	*(volatile uint64_t *)d = lo;
	__atomic_store_n((uint64_t *)(d + 8), (uint64_t)out << 32 | st, __ATOMIC_RELEASE);
}

/* Count n delivered frames of `out` bytes each (truth and statistics totals). */
static inline void rx_count(struct port *p, uint64_t n, uint32_t out)
{
	p->rx_dirty = 1;
	p->t.rx_delivered += n;
	p->t.rx_bytes += n * out;
	if (p->rss.cur) {
		p->t.rxq_frames[p->rss.cur] += n;
		if (p->rx_cls == RXC_GOOD)
			p->rss.frames[p->rss.cur] += n;
	}
	if (p->rx_cls == RXC_GOOD) {
		p->cnt[C_GPRC] += n;
		p->cnt[C_GORC] += n * (out + (p->strip_crc ? 4 : 0));   /* GORC counts the FCS */
	} else {
		rx_class_count(p, p->rx_cls, n);
	}
}

/* Descriptors a frame of `out` bytes (FCS included if kept) needs. */
static inline uint32_t rx_segs(const struct port *p, uint32_t out)
{
	return (out + p->rx.bufsize - 1) / p->rx.bufsize;
}

/*
 * The driver's memory behind the ring is gone but the queue still runs
 * (dma.c): the NIC would go on writing up to n frames into the free
 * descriptors.  The model writes nothing and counts them.  Returns how many.
 */
static uint64_t rx_released(struct port *p, uint64_t n, uint32_t out)
{
	struct ring *r = &p->rx.ring;
	uint32_t segs = rx_segs(p, out);
	uint64_t fit = p->rx.free / segs;
	if (n > fit)
		n = fit;
	p->rx.free -= (uint32_t)(n * segs);
	r->head = (uint32_t)((r->head + n * segs) % r->count);
	p->t.dma_after_release += n;
	if (n && p->rx_cls == RXC_GOOD) {
		p->cnt[C_GPRC] += n;
		p->cnt[C_GORC] += n * (out + (p->strip_crc ? 4 : 0));
	}
	p->rx_dirty = 1;
	return n;
}

/*
 * Write one frame: len bytes at f, then (unless the FCS is stripped) the
 * 4 FCS bytes fcs, over as many descriptors as it needs.  Returns 1 when
 * written, 0 when the ring has too few free descriptors (or waits for a
 * DMA rescan): the caller counts that.
 */
static int rx_frame(struct port *p, const uint8_t *f, uint32_t len, uint32_t fcs,
		    uint64_t lo, uint32_t st)
{
	struct ring *r = &p->rx.ring;
	uint32_t bs = p->rx.bufsize, out = len + (p->strip_crc ? 0 : 4);
	uint32_t segs = rx_segs(p, out);
	if (r->released)
		return rx_released(p, 1, out) == 1;
	uint8_t *v[MAX_SEGS];
	for (uint32_t k = 0; k < segs;) {
		if (p->rx.free < segs)
			return 0;
		uint32_t chunk = k + 1 < segs ? bs : out - k * bs;
		v[k] = rx_buffer(p, k, chunk);
		if (v[k])
			k++;
		else if (r->miss_gen)
			return 0;                   /* waiting for a rescan */
		else
			k = 0;                      /* bad descriptors skipped: again */
	}
	uint8_t tail[4];
	memcpy(tail, &fcs, 4);
	uint32_t pos = 0;                           /* byte of the output stream */
	for (uint32_t k = 0; k < segs; k++) {
		uint32_t chunk = k + 1 < segs ? bs : out - k * bs;
		uint32_t from_f = pos < len ? (len - pos < chunk ? len - pos : chunk) : 0;
		memcpy(v[k], f + pos, from_f);
		if (from_f < chunk)
			memcpy(v[k] + from_f, tail + (pos + from_f - len), chunk - from_f);
		pos += chunk;
	}
	/* Non-last descriptors first: a driver that sees EOP sees them all done. */
	for (uint32_t k = 0; k < segs; k++) {
		uint8_t *d = r->desc + (size_t)r->head * 16;
		if (k + 1 < segs)
			rx_writeback(d, 0, STAT_DD, bs);
		else
			rx_writeback(d, lo, st, out - k * bs);
		r->head = r->head + 1 == r->count ? 0 : r->head + 1;
	}
	p->rx.free -= segs;
	r->miss_gen = 0;
	rx_count(p, 1, out);
	return 1;
}

/* A frame written into the ring: the latency truth times PTP frames from when
 * they were in whole at the MAC (a cable's due time; else now), so that a wait
 * in the packet buffer counts, as on the way through a NIC (latency.c). */
static void lat_arrived(struct port *p, const uint8_t *f, uint32_t len)
{
	uint64_t due = p->w.rx_due_ps;
	lat_rx_frame(p, f, len, due ? wire_to_ns(due) : now_ns());
}

/* Write an admitted frame (its queue chosen: rss) into the ring; 1 if written. */
static int rx_write(struct port *p, const uint8_t *f, uint32_t len, uint64_t rss, uint32_t err)
{
	uint32_t lo, st;
	rx_classify(f, len, &lo, &st);
	uint32_t fcs = p->strip_crc ? 0 : crc32_eth(f, len);
	if (rx_frame(p, f, len, fcs, lo | rss, st | err)) {
		if (p->lat)
			lat_arrived(p, f, len);
		return 1;
	}
	/* A buffer in memory the driver mapped after the model's last scan: a NIC's
	 * DMA does not wait for the model to find it, so scan now and try again
	 * instead of keeping the frame as if the ring were full. */
	if (p->rx.ring.miss_gen) {
		dma_maybe_scan(now_ns(), 1);
		if (rx_frame(p, f, len, fcs, lo | rss, st | err)) {
			if (p->lat)
				lat_arrived(p, f, len);
			return 1;
		}
	}
	return 0;
}

/*
 * Offer one frame (from a cable, a pcap file or a TAP).  Returns 1 if
 * delivered.  Without a free descriptor it waits in the packet buffer
 * (pbuf.c) behind the frames already there, or is dropped at once with
 * SRRCTL.DROP_EN (QPRDC); a full packet buffer loses it (MPC).
 */
int rx_put(struct port *p, const uint8_t *f, uint32_t len)
{
	p->t.rx_offered++;
	if (p->pb.frames)
		pb_drain(p);                    /* frames that came first go first */
	uint64_t rss = p->rss.on ? rss_route(p, f, len) : 0;   /* to the frame's queue */
	int err = rx_admit(p, f, len, 0, 1);
	if (err < 0)
		return 0;
	if (p->ptp.rx_on)
		ptp_rx(p, f, len, p->w.rx_ps);   /* 1588 latch at the MAC (ptp.c) */
	uint64_t due = p->w.rx_due_ps;       /* from a cable: when it is in whole */
	int arrived = due <= p->w.rx_now_ps;
	if (arrived && !p->pb.frames && rx_write(p, f, len, rss, (uint32_t)err))
		return 1;
	if ((arrived && p->rx.drop_en) || !pb_push(p, f, len, due))
		rx_no_desc(p, 1);
	return 0;
}

/* A frame from the packet buffer (pbuf.c), admitted when it came: 1 written,
 * 0 dropped (its queue has DROP_EN now), -1 its queue is full: it waits. */
int rx_from_buffer(struct port *p, const uint8_t *f, uint32_t len)
{
	uint64_t rss = p->rss.on ? rss_route(p, f, len) : 0;
	p->rx_cls = rx_class(p, len, 0);
	if (p->rx.bufsize == 0) {
		p->t.desc_errors++;             /* as rx_admit: BSIZEPACKET 0 */
		return 0;
	}
	if (rx_write(p, f, len, rss, p->rx_cls == RXC_GOOD ? 0 : RXD_ERR_RXE))
		return 1;
	if (!p->rx.drop_en)
		return -1;
	rx_no_desc(p, 1);
	return 0;
}

/*
 * How many frames of `size` bytes the RX packet buffer (RXPBSIZE(0),
 * 8.2.3.8.9, 512 KiB by default) holds for a rate-limited source while the
 * ring has no free descriptor, next to the frames waiting there already.
 */
static uint64_t packet_buffer_frames(struct port *p, uint32_t size)
{
	uint64_t size_bytes = pb_size(p), used = p->pb.used;
	return used < size_bytes ? (size_bytes - used) / pb_cost(size) : 0;
}

/* Source frames seq.. of one buffer each: generated straight into the buffers. */
static uint64_t rx_source_fast(struct port *p, uint64_t seq, uint64_t n, uint32_t out,
			       uint64_t lo, uint32_t st)
{
	struct source *s = &p->src;
	struct ring *r = &p->rx.ring;
	uint32_t fcs_xor = s->fcs_xor;
	uint64_t done = 0;
	/* The ring state lives in locals for the loop; the slow path (rx_buffer)
	 * works on the struct, so it is synced around that call. */
	uint32_t head = r->head, count = r->count, free = p->rx.free;
	while (done < n && free) {
		uint32_t ahead = head + 16 < count ? head + 16 : head + 16 - count;
		__builtin_prefetch(r->desc + (size_t)ahead * 16, 1);   /* 4 lines ahead */
		uint8_t *d = r->desc + (size_t)head * 16;
		uint8_t *v = dma_virt_fast(*(volatile uint64_t *)d, out);
		if (!v) {
			r->head = head;
			p->rx.free = free;
			v = rx_buffer(p, 0, out);
			head = r->head;
			free = p->rx.free;
			if (!v) {
				if (r->miss_gen)
					break;
				continue;
			}
		}
		source_fill(p, v, seq + done);
		if (!p->strip_crc) {
			uint32_t crc = crc32_eth(v, s->size) ^ fcs_xor;
			memcpy(v + s->size, &crc, 4);
		}
		rx_writeback(d, lo, st, out);
		head = head + 1 == count ? 0 : head + 1;
		free--;
		done++;
	}
	r->head = head;
	p->rx.free = free;
	if (done) {
		r->miss_gen = 0;
		rx_count(p, done, out);
	}
	return done;
}

/* Source frames seq.. larger than one buffer: built whole, then spread (rx_frame). */
static uint64_t rx_source_segs(struct port *p, uint64_t seq, uint64_t n, uint64_t lo, uint32_t st)
{
	struct source *s = &p->src;
	uint64_t done = 0;
	while (done < n && p->rx.free) {
		source_fill(p, scratch, seq + done);
		uint32_t fcs = p->strip_crc ? 0 : crc32_eth(scratch, s->size) ^ s->fcs_xor;
		if (!rx_frame(p, scratch, s->size, fcs, lo, st))
			break;
		done++;
	}
	return done;
}

/*
 * Source frames one at a time, each with its own flow's packet type and,
 * with RSS, to the queue its flow's hash names (rss.c): for RSS and for
 * mixed protocols.  A frame whose queue has no free descriptor is dropped
 * (QPRDC) when that queue has SRRCTL.DROP_EN; otherwise it waits in the
 * packet buffer and holds up the frames behind it, as in the 82599, whose
 * packet buffer is one FIFO for all queues.  An unlimited source (rate 0)
 * offers only what fits: it skips a frame whose queue is full.  Returns
 * the frames taken (delivered, dropped or skipped).
 */
static uint64_t rx_source_each(struct port *p, uint64_t n, uint32_t out, uint32_t err)
{
	struct source *s = &p->src;
	uint64_t done = 0;
	while (done < n) {
		uint64_t seq = s->seq + done;
		struct flow *fl = source_flow(s, seq);
		uint64_t lo = s->wb_lo[fl->tcp];
		uint32_t st = s->wb_st[fl->tcp] | err;
		if (p->rss.on)
			lo |= rss_flow(p, fl, (uint32_t)lo);
		if (p->rx.bufsize == 0) {
			p->t.desc_errors++;     /* 8.2.3.8.7: this queue's BSIZEPACKET 0, as rx_admit */
			done++;
			continue;
		}
		uint32_t segs = rx_segs(p, out);
		if (p->rx.free < segs && !p->rx.ring.released) {
			if (s->rate == 0) {
				/* unlimited is what fits: a frame for a full queue is not
				 * offered (its number is skipped), so that no queue waits
				 * for another; all full: the visit ends */
				if (rss_free(p) < segs)
					break;
				s->offered--;
				p->t.rx_offered--;
				done++;
				continue;
			}
			if (!p->rx.drop_en)
				break;
			rx_no_desc(p, 1);
			done++;
			continue;
		}
		if (p->rx.ring.released) {
			if (!rx_released(p, 1, out) && !p->rx.drop_en)
				break;
			done++;
			continue;
		}
		if (!(segs == 1 ? rx_source_fast(p, seq, 1, out, lo, st) : rx_source_segs(p, seq, 1, lo, st)))
			break;
		done++;
	}
	return done;
}

/* The longest a rate-limited source runs on without the model looking. */
#define SOURCE_MAX_GAP_NS 100000ull

/* Frames from the port's source. */
static int rx_source(struct port *p, uint64_t now)
{
	struct source *s = &p->src;
	uint64_t fresh, lat_t0 = p->lat ? now_ns() : 0;
	if (s->rate == 0) {
		/* unlimited: exactly what fits */
		uint32_t out = s->size + (p->strip_crc ? 0 : 4);
		fresh = p->rx.bufsize && out > p->rx.bufsize ? p->rx.free / rx_segs(p, out) : p->rx.free;
		if (p->rss.on)
			fresh = rss_free(p);   /* at most; rx_source_each stops at a full queue */
	} else {
		/* A real NIC never stops looking at the wire; the model's thread
		 * can be descheduled. Frames for the time it was away beyond
		 * SOURCE_MAX_GAP_NS are not offered at all, so that a stall of the
		 * model is not counted as frames the driver lost. */
		uint64_t gap = now - s->last_ns;
		if (gap > SOURCE_MAX_GAP_NS) {
			p->t.source_paused_ns += gap - SOURCE_MAX_GAP_NS;
			gap = SOURCE_MAX_GAP_NS;
		}
		s->tokens += (double)gap * s->rate / 1e9;
		s->last_ns = now;
		fresh = (uint64_t)s->tokens;
		s->tokens -= fresh;
	}
	if (s->count && fresh > s->count - s->offered)
		fresh = s->count - s->offered;
	s->offered += fresh;
	p->t.rx_offered += fresh;
	s->backlog += fresh;
	if (s->backlog == 0)
		return 0;
	int err = rx_admit(p, s->tmpl, s->size, s->fcs_bad, s->backlog);
	if (err < 0) {
		/* every waiting frame shares the fate (rx_admit counted them all) */
		s->seq += s->backlog;
		s->backlog = 0;
		return 0;
	}
	uint32_t out = s->size + (p->strip_crc ? 0 : 4);
	int tcp = s->proto == 1;   /* one protocol (mixed: rx_source_each) */
	uint32_t lo = s->wb_lo[tcp], st = s->wb_st[tcp] | (uint32_t)err;
	uint64_t done, n = s->backlog;
	if (p->rss.on || s->proto == 2)
		done = rx_source_each(p, n, out, (uint32_t)err);
	else if (p->rx.ring.released)
		done = rx_released(p, n, out);
	else if (out <= p->rx.bufsize)
		done = rx_source_fast(p, s->seq, n, out, lo, st);
	else
		done = rx_source_segs(p, s->seq, n, lo, st);
	if (p->lat && done)
		lat_rx(p, s->seq, done, lat_t0, now_ns());   /* latency.c */
	s->seq += done;
	s->backlog -= done;
	if (s->rate == 0 && p->rss.on) {
		/* unlimited is what fits: frames for a full queue are not offered yet */
		s->offered -= s->backlog;
		p->t.rx_offered -= s->backlog;
		s->backlog = 0;
	}
	/* 8.2.3.8.7: with DROP_EN a frame without a descriptor is dropped at
	 * once; without it, it waits in the packet buffer until that overflows. */
	uint64_t cap = p->rx.drop_en ? 0 : packet_buffer_frames(p, s->size);
	if (s->backlog > cap) {          /* oldest frames lost */
		rx_no_desc(p, s->backlog - cap);
		s->seq += s->backlog - cap;
		s->backlog = cap;
	}
	return done > 0;
}

/* Frames replayed from a pcap file (classic format, 16-byte record headers). */
static int rx_replay(struct port *p, uint64_t now)
{
	struct replay *r = &p->rep;
	uint64_t n;
	if (r->rate == 0) {
		n = p->rss.on ? rss_free(p) : p->rx.free;   /* what the queues hold */
	} else {
		r->tokens += (double)(now - r->last_ns) * r->rate / 1e9;
		if (r->tokens > 1024)
			r->tokens = 1024;
		r->last_ns = now;
		n = (uint64_t)r->tokens;
		r->tokens -= n;
	}
	int work = 0;
	while (n--) {
		if (r->pos + 16 > r->len) {
			if (!r->loop || r->len <= 40) {
				r->on = 0;
				break;
			}
			r->pos = 24;
		}
		uint32_t incl;
		memcpy(&incl, r->data + r->pos + 8, 4);
		const uint8_t *f = r->data + r->pos + 16;
		r->pos += 16 + incl;
		if (r->pos > r->len || incl < 14)
			continue;
		work |= rx_put(p, f, incl);
	}
	return work;
}

/* One visit of a port's RX side: source, replay and TAP. */
int rx_visit(struct port *p, uint64_t now)
{
	if (!p->src.on && !p->rep.on && p->tap.fd < 0 && !p->pb.frames)
		return 0;
	uint64_t waiting = p->pb.frames;
	p->w.rx_now_ps = wire_ps(now);
	rx_begin(p);
	int work = p->pb.frames < waiting;
	if (p->src.on)
		work |= rx_source(p, now);
	if (p->rep.on)
		work |= rx_replay(p, now);
	if (p->tap.fd >= 0)
		work |= tap_rx(p);
	rx_end(p, now);
	return work;
}
