/*
 * rx.c - receive: frames from the wire into the driver's RX ring
 * (datasheet 7.1; advanced receive descriptors 7.1.6).
 *
 * Only RX queue 0 receives (no RSS, no pools).  Free descriptors are
 * those from the model's head up to, not including, RDT.  For a frame the
 * model reads the read-format descriptor (packet buffer address at byte 0),
 * copies the frame into that buffer and writes the write-back format:
 * PKT_LEN at byte 12 and the extended status DD|EOP at byte 8, both in one
 * 8-byte release store, so a driver that sees DD sees length and data.
 * RDH and the statistics registers are not written per batch but published
 * by port_publish() (loop.c: every 0.5 ms and after 50 us without work):
 * RDH shares a cache line with the RDT the driver writes, and ixy-style
 * drivers learn of completions from DD, never from RDH.
 */
#include <string.h>

#include "model.h"
#include "regs.h"

#define STAT_DD  (1u << 0)
#define STAT_EOP (1u << 1)

int rx_active(const struct port *p)
{
	return p->rxq.desc && p->rx_en && p->bus_master && p->link_up;
}

/* Start a batch: read RDT once.  Returns the number of free descriptors. */
uint32_t rx_begin(struct port *p)
{
	p->rx_ok = rx_active(p);
	p->rx_free = 0;
	if (!p->rx_ok)
		return 0;
	uint32_t tail = __atomic_load_n(&REG(p, RDT(0)), __ATOMIC_ACQUIRE);
	uint32_t n = p->rxq.count;
	if (tail < n)
		p->rx_free = (tail + n - p->rxq.head) % n;
	return p->rx_free;
}

/* Write the running totals into the statistics registers (8.2.3.23). */
void rx_stats_regs(struct port *p)
{
	REG(p, GPRC) = (uint32_t)p->gprc;
	REG(p, TPR) = (uint32_t)(p->gprc + p->mpc);
	REG(p, QPRC(0)) = (uint32_t)p->gprc;
	REG(p, GORCL) = (uint32_t)p->gorc;
	REG(p, GORCH) = (uint32_t)(p->gorc >> 32) & 0xf;    /* 36-bit counter */
	REG(p, MPC(0)) = (uint32_t)p->mpc;
	REG(p, QPRDC(0)) = (uint32_t)p->mpc;
}

/* End a batch: the head and the counters are published later (port_publish). */
void rx_end(struct port *p)
{
	(void)p;
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

/* Checks shared by every frame; returns 0 and counts the drop if refused. */
static int rx_admit(struct port *p, const uint8_t *dst, uint32_t len)
{
	if (!p->rx_ok) {
		p->t.rx_drop_disabled++;
		return 0;
	}
	if (!rx_accept(p, dst)) {
		p->t.rx_drop_filtered++;
		return 0;
	}
	uint32_t out = len + (p->strip_crc ? 0 : 4);
	if (len + 4 > p->max_frame || out > p->rx_bufsize) {
		p->t.rx_drop_oversize++;
		return 0;
	}
	return 1;
}

static void rx_no_desc(struct port *p, uint64_t n)
{
	p->t.rx_drop_nodesc += n;
	p->mpc += n;           /* 8.2.3.23: missed packets; QPRDC as with DROP_EN */
	p->rx_dirty = 1;
}

/*
 * Buffer of the descriptor at the head, or NULL.  A buffer outside every
 * DMA mapping first triggers a rescan of the driver's memory; if it is still
 * unknown after that, it is a descriptor error and the descriptor is
 * completed with length 0 so the ring keeps moving.
 */
static uint8_t *rx_buffer(struct port *p, uint32_t out)
{
	struct ring *r = &p->rxq;
	uint8_t *d = r->desc + (size_t)r->head * 16;
	uint8_t *v = dma_virt(*(volatile uint64_t *)d, out);
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
	*(volatile uint64_t *)d = 0;
	__atomic_store_n((uint64_t *)(d + 8), (uint64_t)(STAT_DD | STAT_EOP), __ATOMIC_RELEASE);
	r->head = r->head + 1 == r->count ? 0 : r->head + 1;
	p->rx_free--;
	p->rx_dirty = 1;
	return NULL;
}

/* Write-back (7.1.6.2) of the descriptor d: length, DD and EOP. */
static inline void rx_writeback(uint8_t *d, uint32_t out)
{
	*(volatile uint64_t *)d = 0;  /* packet type / RSS hash: none */
	__atomic_store_n((uint64_t *)(d + 8), (uint64_t)out << 32 | STAT_DD | STAT_EOP,
			 __ATOMIC_RELEASE);
}

/* Count n delivered frames of `out` bytes each (truth and statistics registers). */
static inline void rx_count(struct port *p, uint64_t n, uint32_t out)
{
	p->rx_dirty = 1;
	p->t.rx_delivered += n;
	p->t.rx_bytes += n * out;
	p->gprc += n;
	p->gorc += n * (out + (p->strip_crc ? 4 : 0));   /* GORC counts the FCS */
}

/* Write-back of the descriptor at the head, then advance (one frame). */
static inline void rx_complete(struct port *p, uint32_t out)
{
	struct ring *r = &p->rxq;
	rx_writeback(r->desc + (size_t)r->head * 16, out);
	r->head = r->head + 1 == r->count ? 0 : r->head + 1;
	p->rx_free--;
	rx_count(p, 1, out);
}

/* Offer one frame (from a cable or a pcap file).  Returns 1 if delivered. */
int rx_put(struct port *p, const uint8_t *f, uint32_t len)
{
	p->t.rx_offered++;
	if (!rx_admit(p, f, len))
		return 0;
	uint32_t out = len + (p->strip_crc ? 0 : 4);
	uint8_t *v = NULL;
	while (p->rx_free && !(v = rx_buffer(p, out)))
		if (p->rxq.miss_gen)
			break;                /* waiting for a rescan: no usable descriptor */
	if (!p->rx_free || p->rxq.miss_gen) {
		rx_no_desc(p, 1);
		return 0;
	}
	memcpy(v, f, len);
	if (!p->strip_crc) {
		uint32_t crc = crc32_eth(f, len);
		memcpy(v + len, &crc, 4);
	}
	rx_complete(p, out);
	return 1;
}

/*
 * How many frames of `size` bytes the RX packet buffer (RXPBSIZE(0),
 * 8.2.3.8.9, 512 KiB by default) holds while the ring has no free
 * descriptor; a rate-limited source waits there, like frames on a real NIC.
 */
static uint64_t packet_buffer_frames(struct port *p, uint32_t size)
{
	uint32_t bytes = REG(p, RXPBSIZE(0));
	if (bytes == 0 || bytes > (512u << 10))
		bytes = 512u << 10;
	return bytes / (size + 24);
}

/* Frames from the port's source: generated straight into the buffers. */
static int rx_source(struct port *p, uint64_t now)
{
	struct source *s = &p->src;
	uint64_t fresh;
	if (s->rate == 0) {
		fresh = p->rx_free;                   /* unlimited: exactly what fits */
	} else {
		s->tokens += (double)(now - s->last_ns) * s->rate / 1e9;
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
	if (!rx_admit(p, s->tmpl, s->size)) {
		/* rx_admit counted one frame; every waiting frame shares its fate */
		uint64_t *c = !p->rx_ok ? &p->t.rx_drop_disabled
			    : s->size + 4 > p->max_frame || s->size + (p->strip_crc ? 0 : 4) > p->rx_bufsize
			    ? &p->t.rx_drop_oversize : &p->t.rx_drop_filtered;
		*c += s->backlog - 1;
		s->seq += s->backlog;
		s->backlog = 0;
		return 0;
	}
	uint32_t out = s->size + (p->strip_crc ? 0 : 4);
	uint64_t done = 0, n = s->backlog;
	struct ring *r = &p->rxq;
	/* The ring state lives in locals for the loop; the slow path (rx_buffer)
	 * works on the struct, so it is synced around that call. */
	uint32_t head = r->head, count = r->count, free = p->rx_free;
	while (done < n && free) {
		uint32_t ahead = head + 16 < count ? head + 16 : head + 16 - count;
		__builtin_prefetch(r->desc + (size_t)ahead * 16, 1);   /* 4 lines ahead */
		uint8_t *d = r->desc + (size_t)head * 16;
		uint8_t *v = dma_virt_fast(*(volatile uint64_t *)d, out);
		if (!v) {
			r->head = head;
			p->rx_free = free;
			v = rx_buffer(p, out);
			head = r->head;
			free = p->rx_free;
			if (!v) {
				if (r->miss_gen)
					break;
				continue;
			}
		}
		source_fill(p, v, s->seq + done);
		if (!p->strip_crc) {
			uint32_t crc = crc32_eth(v, s->size);
			memcpy(v + s->size, &crc, 4);
		}
		rx_writeback(d, out);
		head = head + 1 == count ? 0 : head + 1;
		free--;
		done++;
	}
	r->head = head;
	p->rx_free = free;
	if (done) {
		r->miss_gen = 0;
		rx_count(p, done, out);
	}
	s->seq += done;
	s->backlog -= done;
	uint64_t cap = packet_buffer_frames(p, s->size);
	if (s->backlog > cap) {          /* packet buffer overflow: oldest frames lost */
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
		n = p->rx_free;
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

/* One visit of a port's RX side: source and replay. */
int rx_visit(struct port *p, uint64_t now)
{
	if (!p->src.on && !p->rep.on)
		return 0;
	rx_begin(p);
	int work = 0;
	if (p->src.on)
		work |= rx_source(p, now);
	if (p->rep.on)
		work |= rx_replay(p, now);
	rx_end(p);
	return work;
}
