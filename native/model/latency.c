/*
 * latency.c - the model's truth of latency through a driver: for each frame
 * of a port's source, when the model wrote it back into the driver's RX ring,
 * and, when a driver hands a frame back on any port's TX, how long after
 * that.  Each TX port keeps a histogram of those times (ns, log-linear:
 * exact below 32 ns, then 32 buckets per power of two, ~3% wide).
 *
 * A source frame is recognised by what the source writes (traffic.c, flows.c):
 * IPv4, UDP or TCP, a destination address of the source's flows (10.1.<port>.1
 * by default) and the 32-bit sequence number at byte 42; forwarders may
 * rewrite the MAC addresses.  The RX side keeps the time of
 * the last LAT_SLOTS sequence numbers; a frame handed back later than that,
 * twice, or not from a source counts as unmatched.
 *
 * PTP event frames (EtherType 0x88F7, as `ixy latency`'s probes) are timed
 * too, from whatever brought them (a cable, a TAP, a pcap file), from when
 * they were in whole at the port's MAC (before any wait in the packet buffer:
 * the NIC is part of the way through a forwarder): the RX port
 * keeps the time of each sequenceId (PTP header byte 30, frame byte 44), and
 * the frame is matched by it when a driver hands it back.  So `ixy latency`
 * through a forwarder has the forwarder's truth in the same run.
 *
 * RX time: the frames of one batch are written between two clock reads and
 * get times spread evenly between them.  TX time: when the model fetched the
 * frame's descriptors (the visit that found TDT past them); a frame that
 * waited in the ring for the line or a rate limiter (wire.h) counts that
 * wait too.
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define LAT_SLOTS (1u << 18)          /* in-flight frames remembered per source */
#define LAT_SUB 5                     /* 2^LAT_SUB buckets per power of two */
#define LAT_MAXEXP 40                 /* values from 2^41 ns share the last bucket */
#define LAT_NB ((LAT_MAXEXP - LAT_SUB + 2) << LAT_SUB)

struct lat_slot {
	uint32_t seq;
	uint32_t t;                   /* low 32 bits of the ns, bit 0 set; 0 = empty */
};

#define PTP_ETYPE_HI 0x88
#define PTP_ETYPE_LO 0xf7
#define PTP_SEQ_AT 44                 /* sequenceId: byte 30 of the PTP header */

struct lat {
	struct lat_slot slot[LAT_SLOTS];
	uint32_t probe[65536];        /* PTP frames: low 32 bits of the ns of each sequenceId, bit 0 set */
	uint64_t hist[LAT_NB];
	uint64_t count, unmatched, sum, min, max;
};

static int bucket(uint64_t v)
{
	if (v < (1u << LAT_SUB))
		return (int)v;
	int e = 63 - __builtin_clzll(v);
	if (e > LAT_MAXEXP)
		return LAT_NB - 1;
	return ((e - LAT_SUB + 1) << LAT_SUB) + (int)((v >> (e - LAT_SUB)) & ((1u << LAT_SUB) - 1));
}

static uint64_t bucket_low(int i, uint64_t *width)
{
	if (i < (1 << LAT_SUB)) {
		*width = 1;
		return (uint64_t)i;
	}
	int e = (i >> LAT_SUB) + LAT_SUB - 1;
	*width = 1ull << (e - LAT_SUB);
	return ((uint64_t)(1u << LAT_SUB) + (i & ((1 << LAT_SUB) - 1))) << (e - LAT_SUB);
}

/* n source frames from sequence number seq were written back between t0 and t1. */
void lat_rx(struct port *p, uint64_t seq, uint64_t n, uint64_t t0, uint64_t t1)
{
	struct lat *l = p->lat;
	uint64_t step = n ? (t1 - t0) / n : 0;
	for (uint64_t k = 0; k < n; k++) {
		struct lat_slot *s = &l->slot[(seq + k) & (LAT_SLOTS - 1)];
		s->seq = (uint32_t)(seq + k);
		s->t = (uint32_t)(t0 + step * (k + 1)) | 1u;
	}
}

static int is_ptp(const uint8_t *f, uint32_t len)
{
	return len >= PTP_SEQ_AT + 2 && f[12] == PTP_ETYPE_HI && f[13] == PTP_ETYPE_LO;
}

/* A frame not from a source (rx.c) was written back; it had arrived at now: PTP frames are timed. */
void lat_rx_frame(struct port *p, const uint8_t *f, uint32_t len, uint64_t now)
{
	if (is_ptp(f, len))
		p->lat->probe[f[PTP_SEQ_AT] << 8 | f[PTP_SEQ_AT + 1]] = (uint32_t)now | 1u;
}

/* The RX time of PTP frame f on any recording port (and forget it), or 0. */
static uint32_t lat_probe(const uint8_t *f)
{
	uint32_t k = f[PTP_SEQ_AT] << 8 | f[PTP_SEQ_AT + 1];
	for (int i = 0; i < M.nports; i++) {
		struct lat *q = M.ports[i].lat;
		uint32_t t = q ? q->probe[k] : 0;
		if (t) {
			q->probe[k] = 0;
			return t;
		}
	}
	return 0;
}

/* Whether IPv4 destination ip is one of port q's source flows (flows.c: dip=, vary=dip). */
static int from_source(const struct port *q, uint32_t ip)
{
	const struct source *s = &q->src;
	if (s->vary & FLOW_VARY_DIP)
		return ip - s->dip < s->flows;
	return ip == s->dip;
}

/* The slot of source frame f, or NULL: IPv4 UDP or TCP, a destination one of a
 * recording port's source sends to, and that port's slot for its sequence number
 * holds it (the first such port, if two sources share addresses). */
static struct lat_slot *lat_find(const uint8_t *f, uint32_t len)
{
	if (len < 46 || f[12] != 0x08 || f[13] != 0x00 || (f[23] != 17 && f[23] != 6))
		return NULL;
	uint32_t ip = (uint32_t)f[30] << 24 | f[31] << 16 | f[32] << 8 | f[33];
	uint32_t seq = (uint32_t)f[42] << 24 | f[43] << 16 | f[44] << 8 | f[45];
	for (int i = 0; i < M.nports; i++) {
		struct lat *q = M.ports[i].lat;
		if (!q || !from_source(&M.ports[i], ip))
			continue;
		struct lat_slot *s = &q->slot[seq & (LAT_SLOTS - 1)];
		if (s->seq == seq && s->t)
			return s;
	}
	return NULL;
}

/* A driver handed frame f back on p's TX; the model fetched it at now. */
void lat_tx(struct port *p, const uint8_t *f, uint32_t len, uint64_t now)
{
	struct lat *l = p->lat;
	uint32_t t = 0;
	if (is_ptp(f, len)) {
		t = lat_probe(f);
	} else {
		struct lat_slot *s = lat_find(f, len);
		if (s) {
			t = s->t;
			s->t = 0;
		}
	}
	if (!t) {
		l->unmatched++;
		return;
	}
	uint64_t d = (uint32_t)((uint32_t)now - t);
	l->hist[bucket(d)]++;
	l->count++;
	l->sum += d;
	if (d > l->max)
		l->max = d;
	if (l->count == 1 || d < l->min)
		l->min = d;
}

void lat_clear(struct port *p)
{
	struct lat *l = p->lat;
	if (!l)
		return;
	memset(l->hist, 0, sizeof l->hist);
	l->count = l->unmatched = l->sum = l->min = l->max = 0;
}

/* The q-quantile: the middle of the bucket that holds it, within min..max. */
static uint64_t quantile(const struct lat *l, double q)
{
	if (!l->count)
		return 0;
	uint64_t want = (uint64_t)(q * (double)l->count + 0.999999), cum = 0;
	if (want < 1)
		want = 1;
	for (int i = 0; i < LAT_NB; i++) {
		cum += l->hist[i];
		if (cum >= want) {
			uint64_t w, v = bucket_low(i, &w) + w / 2;
			return v < l->min ? l->min : v > l->max ? l->max : v;
		}
	}
	return l->max;
}

static int summary(const struct lat *l, char *out, size_t n)
{
	return snprintf(out, n, "\"count\":%lu,\"unmatched\":%lu,\"minNs\":%lu,\"meanNs\":%lu,"
			"\"p50Ns\":%lu,\"p99Ns\":%lu,\"p999Ns\":%lu,\"p9999Ns\":%lu,\"maxNs\":%lu",
			l->count, l->unmatched, l->min, l->count ? l->sum / l->count : 0,
			quantile(l, 0.5), quantile(l, 0.99), quantile(l, 0.999), quantile(l, 0.9999),
			l->max);
}

/* Stats member "latency": the summary, or null while not recording. */
int lat_stats(struct port *p, char *out, size_t n)
{
	if (!p->lat)
		return snprintf(out, n, "\"latency\":null,");
	int o = snprintf(out, n, "\"latency\":{");
	o += summary(p->lat, out + o, n - o);
	return o + snprintf(out + o, n - o, "},");
}

/* latency on|off | latency PORT (histogram of the frames that left PORT) */
int lat_command(char **tok, int nt, char *reply, size_t n)
{
	if (nt == 2 && !strcmp(tok[1], "on")) {
		for (int i = 0; i < M.nports; i++) {
			if (!M.ports[i].lat && !(M.ports[i].lat = calloc(1, sizeof(struct lat))))
				return reply_fail(reply, n, "out of memory", NULL);
			lat_clear(&M.ports[i]);
		}
		return reply_ok(reply, n);
	}
	if (nt == 2 && !strcmp(tok[1], "off")) {
		for (int i = 0; i < M.nports; i++) {
			free(M.ports[i].lat);
			M.ports[i].lat = NULL;
		}
		return reply_ok(reply, n);
	}
	char *end = NULL;
	long pi = nt == 2 ? strtol(tok[1], &end, 10) : -1;
	if (!end || *end || pi < 0 || pi >= M.nports)
		return reply_fail(reply, n, "usage: latency on|off|PORT", NULL);
	const struct lat *l = M.ports[pi].lat;
	if (!l)
		return reply_fail(reply, n, "latency is not recorded (latency on)", NULL);
	int o = snprintf(reply, n, "{\"ok\":true,\"port\":%ld,", pi);
	o += summary(l, reply + o, n - o);
	o += snprintf(reply + o, n - o, ",\"buckets\":[");
	int first = 1;
	for (int i = 0; i < LAT_NB && o < (int)n - 64; i++) {
		if (!l->hist[i])
			continue;
		uint64_t w, low = bucket_low(i, &w);
		o += snprintf(reply + o, n - o, "%s[%lu,%lu,%lu]", first ? "" : ",", low, w, l->hist[i]);
		first = 0;
	}
	snprintf(reply + o, n - o, "]}");
	return 0;
}
