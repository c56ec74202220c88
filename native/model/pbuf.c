/*
 * pbuf.c - the RX packet buffer (82599 datasheet 8.2.3.8.9, RXPBSIZE(0):
 * 512 KiB by default) for frames from a cable, a pcap file or a TAP.
 *
 * A frame that passed the MAC (address filter, length, FCS: rx.c rx_put)
 * and finds no free descriptor in its queue waits here when the queue has
 * no SRRCTL.DROP_EN; frames leave in the order they came (one FIFO for all
 * queues, as on the 82599), each as soon as its queue has descriptors, and
 * a frame for a full queue holds up those behind it.  Only a frame that
 * finds the buffer full is lost, and counted where the NIC counts it (MPC).
 * A source's waiting frames (rx.c, s->backlog) take room in the same
 * buffer: pb_room() is what is left for either.
 *
 * A frame from a cable is here before it has arrived: it enters when the
 * sender's model thread sends it, with the wire time at which it is in
 * whole at this port (due), and leaves no earlier than that (the cable's
 * delay line; wire.h).  Frames of one cable arrive in the order of their
 * wire times, which is not always the order the sender fetched them in (a
 * rate-limited queue's frames are fetched ahead of their time, another
 * queue's go out in its gaps): a drain looks past frames still on the
 * cable for ones that have arrived, and marks those it takes out of turn.
 * Frames that have arrived leave in the order they were stored.
 *
 * Storage: a byte ring of records (4-byte length, 4 spare, 8-byte due time,
 * then the frame, rounded up to 8 bytes); a record that does not fit before
 * the end of the ring leaves a wrap mark (length PB_WRAP) and starts again
 * at 0.  What a frame
 * costs against RXPBSIZE is pb_cost(), more than its record, so the ring
 * (the largest RXPBSIZE plus one largest frame) never overruns.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "regs.h"

#define PB_MAX   (512u << 10)                  /* RXPBSIZE(0) at reset, the most it may hold */
#define PB_RING  (PB_MAX + MAX_FRAME + 64)     /* bytes of the record ring */
#define PB_WRAP  0xffffffffu

#define PB_HEAD  16u                           /* length, spare, due */
#define PB_DONE  0x80000000u                   /* length flag: delivered out of turn */
#define PB_PASS  1024                          /* frames still on the cable a drain looks past */

static uint32_t rec_len(uint32_t len) { return PB_HEAD + ((len + 7) & ~7u); }

/* The buffer's size as RXPBSIZE(0) says (bytes, bits 19:10), the reset value if invalid. */
uint32_t pb_size(const struct port *p)
{
	uint32_t bytes = REG(p, RXPBSIZE(0));
	return bytes == 0 || bytes > PB_MAX ? PB_MAX : bytes;
}

/* Room left in the buffer, in bytes, with the source's waiting frames counted. */
uint64_t pb_room(const struct port *p)
{
	uint64_t used = p->pb.used + p->src.backlog * pb_cost(p->src.size);
	uint64_t size = pb_size(p);
	return used < size ? size - used : 0;
}

void pb_clear(struct port *p)
{
	p->pb.rpos = p->pb.wpos = 0;
	p->pb.frames = p->pb.recs = 0;
	p->pb.used = 0;
}

/* Store a frame that found no descriptor or is still on its way (due_ps: when
 * it is in whole); 0 if the buffer is full (the caller counts it). */
int pb_push(struct port *p, const uint8_t *f, uint32_t len, uint64_t due_ps)
{
	struct pbuf *b = &p->pb;
	if (pb_cost(len) > pb_room(p))
		return 0;
	if (!b->data && !(b->data = malloc(PB_RING)))
		return 0;
	uint32_t need = rec_len(len);
	if (b->recs && b->wpos <= b->rpos && b->wpos + need > b->rpos)
		return 0;                       /* cannot happen with pb_cost >= need; be safe */
	if (b->wpos + need > PB_RING) {
		if (b->recs && need > b->rpos)
			return 0;
		if (b->wpos + 4 <= PB_RING)   /* records are 8-aligned: always room */
			memcpy(b->data + b->wpos, &(uint32_t){ PB_WRAP }, 4);
		b->wpos = 0;
		if (!b->recs)
			b->rpos = 0;
	}
	memcpy(b->data + b->wpos, &len, 4);
	memcpy(b->data + b->wpos + 8, &due_ps, 8);
	memcpy(b->data + b->wpos + PB_HEAD, f, len);
	b->wpos += need;
	b->frames++;
	b->recs++;
	b->used += pb_cost(len);
	return 1;
}

/* Frames leave in order, once they have arrived (p->w.rx_now_ps), while their
 * queues take them (rx.c rx_from_buffer). */
int pb_drain(struct port *p)
{
	struct pbuf *b = &p->pb;
	uint64_t offered_due = p->w.rx_due_ps;   /* of a frame rx_put is offering now */
	uint32_t pos = b->rpos;
	uint64_t left = b->recs;
	int head = 1, work = 0, passed = 0;       /* head: no frame left behind before pos */
	while (left && p->rx_ok) {
		uint32_t len;
		uint64_t due;
		if (pos + 4 > PB_RING || (memcpy(&len, b->data + pos, 4), len == PB_WRAP)) {
			pos = 0;
			if (head)
				b->rpos = 0;
			continue;
		}
		uint32_t next = pos + rec_len(len & ~PB_DONE);
		left--;
		if (len & PB_DONE) {                 /* taken out of turn before */
			if (head) {
				b->rpos = next;
				b->recs--;
			}
			pos = next;
			continue;
		}
		memcpy(&due, b->data + pos + 8, 8);
		if (due > p->w.rx_now_ps) {
			/* still on the cable; a frame behind it may have arrived first
			 * (one that left in a rate-limited queue's gap, wire.h) */
			head = 0;
			pos = next;
			if (++passed > PB_PASS)
				break;
			continue;
		}
		p->w.rx_due_ps = due;               /* when it came (latency truth, rx.c) */
		int r = rx_from_buffer(p, b->data + pos + PB_HEAD, len);
		p->w.rx_due_ps = offered_due;
		if (r < 0)
			break;                      /* its queue is full: it and those behind it wait */
		b->frames--;
		b->used -= pb_cost(len);
		work = 1;
		if (head) {
			b->rpos = next;
			b->recs--;
		} else {
			len |= PB_DONE;
			memcpy(b->data + pos, &len, 4);
		}
		pos = next;
	}
	if (!b->recs)
		b->rpos = b->wpos = 0;
	return work;
}
