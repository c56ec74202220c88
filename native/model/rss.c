/*
 * rss.c - receive-side scaling and RX queues 1..63 (82599 datasheet 7.1.2.8
 * RSS; registers: 8.2.3.7.12 MRQC, RETA and RSSRK in 8.2.3.7, 8.2.3.7.5
 * RXCSUM, 8.2.3.8 the queues' RDBAL..RXDCTL, 8.2.3.23 QPRC/QPRDC and the
 * RQSMR that maps queues to them).
 *
 * With MRQC.MRQE = 0001b (RSS) the NIC hashes each IPv4 frame with the
 * Toeplitz function over the 40-byte key in RSSRK: source and destination
 * address, and for TCP (MRQC TcpIPv4) or UDP (UdpIPv4) also source and
 * destination port, all in network order.  The low 7 bits of the hash index
 * the 128-entry RETA, whose entry (bits 3:0 of each byte) is the RX queue.
 * Frames RSS does not hash (not IPv4, or no matching field enabled) have
 * RSS type 0, hash 0 and go to queue 0.  The write-back (7.1.6.2) reports
 * the RSS type in bits 3:0 of its first dword and, when RXCSUM.PCSD is set,
 * the hash in the second (without PCSD that dword is the fragment checksum,
 * which the model leaves 0).
 *
 * Delivery state: rx.c works on one RX queue at a time, the one in p->rx.
 * That is queue 0 except during a batch, where rss_switch() swaps another
 * queue's state in; rss_end() swaps queue 0 back, so that outside a batch
 * (scan, commands, publish, DMA rescans) p->rx is queue 0 and q[1..63] the
 * rest.
 */
#include <arpa/inet.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"
#include "regs.h"

#define MRQC            0x0EC80                 /* 8.2.3.7.12 */
#define MRQC_MRQE_MASK  0xfu
#define MRQC_MRQE_RSS   0x1u
#define MRQC_TCPIPV4    (1u << 16)
#define MRQC_IPV4       (1u << 17)
#define MRQC_UDPIPV4    (1u << 22)
#define RETA(n)         (0x0EB00 + 4 * (n))     /* 8.2.3.7, n < 32: 4 entries each */
#define RSSRK(n)        (0x0EB80 + 4 * (n))     /* 8.2.3.7, n < 10: the 40-byte key */
#define RQSMR(n)        (0x02300 + 4 * (n))     /* 8.2.3.23, n < 32: queue -> counter */
#define RXCSUM_PCSD     (1u << 13)              /* 8.2.3.7.5 */

/* RSS types of the write-back (7.1.6.2) */
#define RSS_TCP_IPV4 0x1u
#define RSS_IPV4     0x2u
#define RSS_UDP_IPV4 0x7u

/* Toeplitz table: tab[i][v] is the hash of input byte i = v, other bytes 0. */
static void build_table(struct rss *r)
{
	uint8_t k[48] = { 0 };
	for (int i = 0; i < 40; i++)
		k[i] = (uint8_t)(r->key[i / 4] >> (8 * (i % 4)));   /* byte 0 in RSSRK(0) bits 7:0 */
	for (int i = 0; i < 12; i++) {
		uint32_t w[8];                              /* key bits 8i+b .. 8i+b+31 */
		for (int b = 0; b < 8; b++) {
			uint64_t x = (uint64_t)k[i] << 32 | (uint64_t)k[i + 1] << 24 |
				     (uint64_t)k[i + 2] << 16 | (uint64_t)k[i + 3] << 8 | k[i + 4];
			w[b] = (uint32_t)(x >> (8 - b));
		}
		for (int v = 0; v < 256; v++) {
			uint32_t h = 0;
			for (int b = 0; b < 8; b++)
				if (v & (0x80 >> b))
					h ^= w[b];
			r->tab[i][v] = h;
		}
	}
}

/* Toeplitz hash of n <= 12 input bytes with the key as last scanned. */
static uint32_t rss_hash(const struct rss *r, const uint8_t *in, uint32_t n)
{
	uint32_t h = 0;
	for (uint32_t i = 0; i < n; i++)
		h ^= r->tab[i][in[i]];
	return h;
}

/* The hash input of an IPv4 tuple (host order): addresses, then ports, all
 * in network order (7.1.2.8.1). */
static void tuple_bytes(uint8_t in[12], uint32_t sip, uint32_t dip, uint16_t sport, uint16_t dport)
{
	uint32_t be = htonl(sip);
	memcpy(in, &be, 4);
	be = htonl(dip);
	memcpy(in + 4, &be, 4);
	in[8] = (uint8_t)(sport >> 8); in[9] = (uint8_t)sport;
	in[10] = (uint8_t)(dport >> 8); in[11] = (uint8_t)dport;
}

/* Hash and type of an IPv4 tuple (l4: ports present, 6 or 17; 0 none). */
static uint32_t tuple_hash(const struct rss *r, uint32_t sip, uint32_t dip, uint16_t sport,
			   uint16_t dport, int l4, uint32_t *type)
{
	uint8_t in[12];
	tuple_bytes(in, sip, dip, sport, dport);
	if (l4 == 6 && (r->fields & MRQC_TCPIPV4))
		*type = RSS_TCP_IPV4;
	else if (l4 == 17 && (r->fields & MRQC_UDPIPV4))
		*type = RSS_UDP_IPV4;
	else if (r->fields & MRQC_IPV4)
		*type = RSS_IPV4;
	else
		*type = 0;
	return *type == 0 ? 0 : rss_hash(r, in, *type == RSS_IPV4 ? 8 : 12);
}

/* Make queue q the one rx.c delivers to (see the header). */
static void rss_switch(struct port *p, int q)
{
	struct rss *r = &p->rss;
	r->q[r->cur] = p->rx;
	p->rx = r->q[q];
	r->cur = q;
}

/* Write-back bits (hash << 32 | RSS type) of a frame of type/hash; to its queue. */
static uint64_t route(struct port *p, uint32_t type, uint32_t hash)
{
	struct rss *r = &p->rss;
	int q = type ? r->reta[hash & 127] : 0;
	if (q != r->cur)
		rss_switch(p, q);
	return (r->pcsd ? (uint64_t)hash << 32 : 0) | type;
}

/* RSS for a frame from a cable, pcap file or TAP (rx_put). */
uint64_t rss_route(struct port *p, const uint8_t *f, uint32_t len)
{
	struct rss *r = &p->rss;
	uint32_t type = 0, hash = 0;
	if (len >= 34 && f[12] == 0x08 && f[13] == 0x00 && (f[14] >> 4) == 4) {
		const uint8_t *ip = f + 14;
		uint32_t ihl = (ip[0] & 0xf) * 4u, sip, dip;
		memcpy(&sip, ip + 12, 4);
		memcpy(&dip, ip + 16, 4);
		int frag = (ip[6] & 0x3f) || ip[7];
		int l4 = !frag && ihl >= 20 && 14 + ihl + 4 <= len ? ip[9] : 0;
		const uint8_t *ports = ip + ihl;
		if (ihl >= 20 && 14 + ihl <= len)
			hash = tuple_hash(r, ntohl(sip), ntohl(dip), l4 ? (uint16_t)(ports[0] << 8 | ports[1]) : 0,
					  l4 ? (uint16_t)(ports[2] << 8 | ports[3]) : 0, l4, &type);
	}
	return route(p, type, hash);
}

/* RSS for a source frame of flow fl (packet type wb_lo): hashed once per flow. */
uint64_t rss_flow(struct port *p, struct flow *fl, uint32_t wb_lo)
{
	struct rss *r = &p->rss;
	if (fl->rss_gen != r->gen) {
		int l4 = wb_lo & RXD_PKT_TCP ? 6 : wb_lo & RXD_PKT_UDP ? 17 : 0;
		uint32_t type = 0;
		fl->hash = wb_lo & RXD_PKT_IPV4 ? tuple_hash(r, fl->sip, fl->dip, fl->sport, fl->dport, l4, &type) : 0;
		fl->rss_type = (uint8_t)type;
		fl->rss_gen = r->gen;
	}
	return route(p, fl->rss_type, fl->hash);
}

/*
 * Queues 1..63 (rxq_scan, regs.c); one without a ring drops what RSS sends
 * it.  A queue outside `active` has no free descriptor: rss_begin counts
 * them for active queues only, so a count left from when the queue still
 * had its ring would send rx.c into a ring that is gone (count 0 after
 * RXDCTL.ENABLE was cleared, desc NULL).
 */
static void scan_rx_queues(struct port *p, uint64_t now)
{
	struct rss *r = &p->rss;
	for (int q = 1; q < NUM_QUEUES; q++) {
		struct rxq *s = &r->q[q];
		rxq_scan(p, q, s, now);
		int ring = s->ring.desc || s->ring.released;
		s->drop_en |= !ring;
		if (ring) {
			r->active |= 1ull << q;
		} else {
			r->active &= ~(1ull << q);
			s->free = s->free_begin = 0;
		}
	}
}

/* Slow scan (regs_scan): MRQC, RXCSUM, RSSRK, RETA, RQSMR and queues 1..63. */
void rss_scan(struct port *p, uint64_t now)
{
	struct rss *r = &p->rss;
	uint32_t mrqc = REG(p, MRQC), key[10];
	r->on = (mrqc & MRQC_MRQE_MASK) == MRQC_MRQE_RSS;
	r->pcsd = (REG(p, RXCSUM) & RXCSUM_PCSD) != 0;
	for (int i = 0; i < 10; i++)
		key[i] = REG(p, RSSRK(i));
	if (memcmp(key, r->key, sizeof key) || (mrqc & 0xffff0000u) != r->fields || r->gen == 0) {
		memcpy(r->key, key, sizeof key);
		r->fields = mrqc & 0xffff0000u;
		build_table(r);
		r->gen = r->gen + 1 ? r->gen + 1 : 1;
	}
	for (int n = 0; n < 32; n++) {
		uint32_t reta = REG(p, RETA(n)), map = REG(p, RQSMR(n));
		for (int j = 0; j < 4; j++) {
			r->reta[4 * n + j] = (reta >> (8 * j)) & 0xf;   /* 82599: 16 RSS queues */
			r->map[4 * n + j] = (map >> (8 * j)) & 0xf;
		}
	}
	scan_rx_queues(p, now);
}

/* Forget queues 1..63 (port_drop_queues). */
void rss_drop(struct port *p)
{
	struct rss *r = &p->rss;
	memset(r->q, 0, sizeof r->q);
	r->active = 0;
	r->cur = 0;
}

/* Start of a batch (rx_begin, queue 0 done): free descriptors of queues 1..63. */
void rss_begin(struct port *p)
{
	struct rss *r = &p->rss;
	for (uint64_t a = r->active; a; a &= a - 1) {
		int q = __builtin_ctzll(a);
		struct rxq *s = &r->q[q];
		uint32_t tail = __atomic_load_n(&REG(p, RDT(q)), __ATOMIC_ACQUIRE), n = s->ring.count;
		s->free = tail < n ? (tail + n - s->ring.head) % n : 0;
		s->free_begin = s->free;
	}
}

/* End of a batch (rx_end): queue 0 back in place; written queues raise their cause. */
void rss_end(struct port *p, uint64_t now)
{
	struct rss *r = &p->rss;
	if (r->cur)
		rss_switch(p, 0);
	for (uint64_t a = r->active; a; a &= a - 1) {
		int q = __builtin_ctzll(a);
		if (r->q[q].free < r->q[q].free_begin) {
			r->q[q].free_begin = r->q[q].free;
			p->t.rx_last_ns = now;
			if (p->irq.rx_vec[q] >= 0)
				intr_cause(p, p->irq.rx_vec[q]);
		}
	}
}

/* RDH of queues 1..63 (port_publish). */
void rss_publish(struct port *p)
{
	struct rss *r = &p->rss;
	for (uint64_t a = r->active; a; a &= a - 1) {
		int q = __builtin_ctzll(a);
		__atomic_store_n(&REG(p, RDH(q)), r->q[q].ring.head, __ATOMIC_RELEASE);
	}
}

/* Frames (drops = 0) or QPRDC drops (1) of the queues RQSMR maps to counter c;
 * queue 0's are the port's totals less queues 1..63's. */
uint64_t rss_qstat(const struct port *p, int c, int drops)
{
	const struct rss *r = &p->rss;
	const uint64_t *v = drops ? r->drops : r->frames;
	uint64_t sum = 0, rest = 0;
	for (int q = 1; q < NUM_QUEUES; q++) {
		rest += v[q];
		if (r->map[q] == c)
			sum += v[q];
	}
	if (r->map[0] == c)
		sum += p->cnt[drops ? C_QPRDC : C_GPRC] - rest;
	return sum;
}

/* "rxQueues":[frames delivered to queues 0..15], for stats. */
int rss_json(const struct port *p, char *out, size_t n)
{
	const struct rss *r = &p->rss;
	uint64_t rest = 0;
	for (int q = 1; q < NUM_QUEUES; q++)
		rest += p->t.rxq_frames[q];
	int o = snprintf(out, n, "\"rss\":%s,\"rxQueues\":[%lu", r->on ? "true" : "false",
			 p->t.rx_delivered - rest);
	for (int q = 1; q < 16; q++)
		o += snprintf(out + o, n - o, ",%lu", p->t.rxq_frames[q]);
	return o + snprintf(out + o, n - o, "],");
}

/* `hash PORT SIP DIP [SPORT DPORT]`: the Toeplitz hash of that tuple with the
 * port's key as last scanned (8 input bytes, or 12 with ports), and the
 * queue RETA names for it. */
int rss_command(struct port *p, char **tok, int nt, char *reply, size_t n)
{
	struct rss *r = &p->rss;
	struct in_addr a, b;
	char *end = NULL;
	long sport = 0, dport = 0;
	int bad = (nt != 4 && nt != 6) || inet_pton(AF_INET, tok[2], &a) != 1 ||
		  inet_pton(AF_INET, tok[3], &b) != 1;
	if (!bad && nt == 6) {
		sport = strtol(tok[4], &end, 10);
		bad |= !*tok[4] || *end || sport < 0 || sport > 65535;
		dport = strtol(tok[5], &end, 10);
		bad |= !*tok[5] || *end || dport < 0 || dport > 65535;
	}
	if (bad)
		return reply_fail(reply, n, "usage: hash PORT SIP DIP [SPORT DPORT]", NULL);
	uint8_t in[12];
	tuple_bytes(in, ntohl(a.s_addr), ntohl(b.s_addr), (uint16_t)sport, (uint16_t)dport);
	uint32_t h = rss_hash(r, in, nt == 6 ? 12 : 8);
	snprintf(reply, n, "{\"ok\":true,\"hash\":%u,\"queue\":%d}", h, r->reta[h & 127]);
	return 0;
}

/* Free descriptors of all RX queues in this batch (an unlimited source's most). */
uint64_t rss_free(const struct port *p)
{
	const struct rss *r = &p->rss;
	uint64_t sum = p->rx.free;          /* queue cur */
	for (uint64_t a = r->active | 1; a; a &= a - 1) {
		int q = __builtin_ctzll(a);
		if (q != r->cur)
			sum += r->q[q].free;     /* queue 0's is saved there while cur != 0 */
	}
	return sum;
}
