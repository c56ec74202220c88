/*
 * wire.h - the line of a port as the TX path sees it (wire.c has the rest).
 *
 * The wire clock counts picoseconds (wire_ps): at 10 Gb/s a byte takes
 * 800 ps, and a frame occupies the line for its bytes, the FCS (4), the
 * preamble with SFD (8) and the inter-frame gap (12): 84 byte times, 67.2 ns,
 * for a 60-byte frame.  A frame's wire time is when its first preamble byte
 * goes out.
 *
 * The model fetches a frame's descriptors (and writes DD back) when the
 * frame enters the TX packet buffer, as the 82599 does (7.2.1.2): while the
 * line's backlog, ahead of now, fits into TXPBSIZE(0), and, for a queue
 * under a rate limiter, while its next frame may start within that time too.
 * Otherwise the frame waits in the ring and the driver sees the ring fill.
 */
#ifndef IXY_MODEL_WIRE_H
#define IXY_MODEL_WIRE_H

#include "model.h"

#define WIRE_PS_PER_BYTE 800ull     /* 10 Gb/s */
#define WIRE_OVERHEAD 24u           /* FCS 4 + preamble/SFD 8 + IFG 12 */
#define WIRE_FRAME_EXTRA 12u        /* FCS 4 + preamble/SFD 8: the frame's time on the line */

/*
 * A cable between two 82599 ports: from the sender's 1588 timestamp point
 * (its MAC, as the frame's first byte leaves) to the receiver's (its MAC, as
 * the first byte arrives) a frame takes the sender's MAC+PHY TX latency, the
 * cable and the receiver's PHY+MAC RX latency.  MoonGen's measurement of
 * two 82599 ports over 2 m of fiber (Emmerich et al., IMC 2015, section on
 * hardware timestamping) gives 320 ns for the whole; the model splits it
 * evenly between the two ports (the split is not measured, only the sum).
 */
#define PORT_TX_LATENCY_PS 160000ull
#define PORT_RX_LATENCY_PS 160000ull
#define CABLE_LATENCY_PS (PORT_TX_LATENCY_PS + PORT_RX_LATENCY_PS)

/* How long a frame of len bytes (without FCS) takes to arrive whole once
 * its first byte has: its bytes, FCS, preamble and SFD at the line rate. */
static inline uint64_t wire_frame_ps(uint32_t len)
{
	return (uint64_t)(len + WIRE_FRAME_EXTRA) * WIRE_PS_PER_BYTE;
}

/* Whether queue q's next frame has to wait (line backlog or its rate limiter). */
static inline int wire_hold(const struct port *p, int q, uint64_t now_ps)
{
	const struct wire *w = &p->w;
	uint64_t lim = now_ps + w->horizon_ps;
	if (!w->unlimited && w->free_ps > lim)
		return 1;
	return ((w->limited >> q) & 1) && w->next_ps[q] > lim;
}

/*
 * Queue q sends a frame of len bytes (without FCS) fetched at now_ps: its
 * wire time is the first moment the line is free and the queue's rate
 * limiter allows; returns it.  The limiter (7.7.2.x, RTTBCNRC) lets the
 * queue's next frame start (len + 4) byte times x the rate factor later.
 * A limited frame fetched ahead for a time when the line is free does not
 * book the line up to then: other queues' frames go out before it (they may
 * overlap it by up to a frame's time, README).
 */
static inline uint64_t wire_send(struct port *p, int q, uint32_t len, uint64_t now_ps)
{
	struct wire *w = &p->w;
	uint64_t start = now_ps;
	int limited = (w->limited >> q) & 1;
	if (limited && w->next_ps[q] > start)
		start = w->next_ps[q];
	int ahead = start > now_ps && start > w->free_ps;   /* a later gap on the line */
	if (!w->unlimited && w->free_ps > start)
		start = w->free_ps;
	if (limited)
		w->next_ps[q] = start + (((uint64_t)(len + 4) * WIRE_PS_PER_BYTE * w->rf[q]) >> 14);
	if (!w->unlimited && !ahead)
		w->free_ps = start + (uint64_t)(len + WIRE_OVERHEAD) * WIRE_PS_PER_BYTE;
	w->last_ps = start;
	return start;
}

#endif
