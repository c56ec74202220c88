/*
 * flows.c - the source's flows: 5-tuples, protocols and weights, and the
 * frame templates they are built from.
 *
 * Flow f (0 <= f < flows) has the 5-tuple of flow 0 (sip=, dip=, sport=,
 * dport=) with f added to each field named in vary= (default sip,sport:
 * 10.0.<port>.1 + f, port 1024 + f); its
 * protocol is proto= (udp, tcp, or mixed: odd flows TCP).  Frame seq belongs
 * to flow seq % flows, or with zipf=S to a flow drawn with weight
 * 1/(f+1)^S from a fixed schedule of 65536 draws (the same every run).
 * Every frame carries its sequence number at offset 42 (UDP: the payload's
 * first bytes; TCP: the acknowledgment number, flags PSH|ACK), so that one
 * reader serves both.  Per flow the IPv4 checksum and the part of the L4
 * checksum that depends on the tuple are computed once; per frame only the
 * sequence number is added (source_fill_extra).
 */
#include <arpa/inet.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define TCP_HDR 20

static uint16_t spoil(uint16_t c)
{
	return c == 1 ? 2 : c ^ 1;   /* wrong for sure: one bit off, never the other zero */
}

static uint32_t sum32(uint32_t v)
{
	return (v >> 16) + (v & 0xffff);
}

static void put16(uint8_t *b, uint16_t v)
{
	b[0] = (uint8_t)(v >> 8);
	b[1] = (uint8_t)v;
}

static void put32(uint8_t *b, uint32_t v)
{
	uint32_t be = htonl(v);
	memcpy(b, &be, 4);
}

/* The IPv4 address in s ("a.b.c.d"), host order; -1 when it is not one. */
static int parse_ip(const char *s, uint32_t *ip)
{
	struct in_addr a;
	if (inet_pton(AF_INET, s, &a) != 1)
		return -1;
	*ip = ntohl(a.s_addr);
	return 0;
}

/* Options of `source` beyond rate/size/count/flows/dst/checksums (commands.c):
 * 1 taken, 0 not a flow option, -1 a bad value. */
int source_option(struct source *s, const char *k, const char *v)
{
	char *end;
	if (!strcmp(k, "proto")) {
		static const char *const names[] = { "udp", "tcp", "mixed" };
		for (int i = 0; i < 3; i++)
			if (!strcmp(v, names[i])) {
				s->proto = i;
				return 1;
			}
		return -1;
	}
	if (!strcmp(k, "tcpsum")) {
		if (strcmp(v, "good") && strcmp(v, "bad"))
			return -1;
		s->tcp_bad = !strcmp(v, "bad");
		return 1;
	}
	if (!strcmp(k, "sip") || !strcmp(k, "dip"))
		return parse_ip(v, k[0] == 's' ? &s->sip : &s->dip) == 0 ? 1 : -1;
	if (!strcmp(k, "sport") || !strcmp(k, "dport")) {
		long x = strtol(v, &end, 10);
		if (!*v || *end || x < 0 || x > 65535)
			return -1;
		*(k[0] == 's' ? &s->sport : &s->dport) = (uint16_t)x;
		return 1;
	}
	if (!strcmp(k, "vary")) {
		static const char *const names[] = { "sip", "dip", "sport", "dport" };
		uint32_t vary = 0;
		char buf[64];
		snprintf(buf, sizeof buf, "%s", v);
		char *save = NULL;
		for (char *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			int i = 0;
			while (i < 4 && strcmp(t, names[i]))
				i++;
			if (i == 4)
				return -1;
			vary |= 1u << i;
		}
		if (strcmp(v, "none") && !vary)
			return -1;
		s->vary = vary;
		return 1;
	}
	if (!strcmp(k, "zipf")) {
		double x = strtod(v, &end);
		if (!*v || *end || !(x > 0) || x > 10)
			return -1;
		s->zipf = x;
		return 1;
	}
	return 0;
}

/* One frame template (flow 0, sequence 0) of protocol tcp into t. */
static void build_template(struct port *p, uint8_t *t, int tcp)
{
	struct source *s = &p->src;
	uint32_t size = s->size;
	for (uint32_t k = 0; k < SRC_MAX + 64; k++)
		t[k] = (uint8_t)k;
	memcpy(t, s->dst_kind ? s->dst : p->filter_mac, 6);
	const uint8_t src[6] = { 0x02, 0, 0, 0, 0xee, (uint8_t)p->idx };
	memcpy(t + 6, src, 6);
	t[12] = 0x08; t[13] = 0x00;
	uint8_t *ip = t + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	put16(ip + 2, (uint16_t)(size - 14));
	ip[8] = 64;                                 /* TTL */
	ip[9] = tcp ? 6 : 17;
	uint8_t *l4 = t + 34;
	if (tcp) {
		memset(l4, 0, TCP_HDR);
		l4[12] = 5 << 4;                    /* data offset: 20 bytes */
		l4[13] = 0x18;                      /* PSH | ACK */
		put16(l4 + 14, 0xffff);             /* window */
	} else {
		put16(l4 + 4, (uint16_t)(size - 34));
		l4[6] = l4[7] = 0;
	}
	memset(t + 42, 0, 4);                       /* sequence number 0 */
}

/* Sum of the L4 checksum of template t without addresses, ports and sequence number. */
static uint32_t l4_base(const struct source *s, const uint8_t *t, int tcp)
{
	uint32_t size = s->size;
	if (size < (tcp ? 34u + TCP_HDR : 42u))
		return 0;                                   /* no L4 checksum (l4_on) */
	uint32_t sum = (tcp ? 6u : 17u) + (size - 34);   /* pseudo header: protocol, length */
	if (tcp) {
		sum = csum_add(t + 38, 4, sum);             /* sequence field */
		sum = csum_add(t + 46, 4, sum);             /* offset, flags, window */
		sum = csum_add(t + 52, size - 52, sum);     /* urgent pointer, payload */
	} else {
		sum = csum_add(t + 38, 2, sum);             /* length */
		sum = csum_add(t + 42, size - 42, sum);     /* payload, sequence number 0 */
	}
	return sum;
}

/* The L4 checksum field of flow fl's frame number seq (source_fill_extra). */
static uint16_t l4_sum(const struct source *s, const struct flow *fl, uint32_t seq)
{
	uint32_t m = seq & s->seq_mask;
	uint16_t c = csum_fold(s->l4_base[fl->tcp] + fl->l4_part + (m >> 16) + (m & 0xffff));
	if (fl->tcp)
		return s->tcp_bad ? spoil(c) : c;
	if (c == 0)
		c = 0xffff;                             /* RFC 768: 0 means "no checksum" */
	return s->udp_mode == 2 ? spoil(c) : c;
}

/* Whether frames of protocol tcp carry a computed L4 checksum. */
static int l4_on(const struct source *s, int tcp)
{
	return tcp ? s->size >= 34 + TCP_HDR : s->udp_mode && s->size >= 42;
}

/* Write flow fl's tuple and checksums into frame buf (a copy of its template). */
static void put_flow(const struct source *s, uint8_t *buf, const struct flow *fl, uint32_t seq)
{
	put32(buf + 26, fl->sip);
	put32(buf + 30, fl->dip);
	memcpy(buf + 24, &fl->ip_csum, 2);
	put16(buf + 34, fl->sport);
	put16(buf + 36, fl->dport);
	if (l4_on(s, fl->tcp))
		put16(buf + (fl->tcp ? 50 : 40), l4_sum(s, fl, seq));
}

/* fl's IPv4 header checksum field from its template's sum without addresses. */
static void set_ip_csum(const struct source *s, struct flow *fl, uint32_t ip_base)
{
	uint16_t c = csum_fold(ip_base + sum32(fl->sip) + sum32(fl->dip));
	c = htons(s->ip_bad ? spoil(c) : c);
	memcpy(&fl->ip_csum, &c, 2);
}

/*
 * (Re)build the templates and the per-flow values, and what every frame of
 * a protocol reports in the write-back (computed once: only checksummed
 * fields change from frame to frame, rx.c 7.1.6.2).  The main template is
 * flow 0's frame 0, complete; `alt` the other protocol's for mixed.
 */
void source_build(struct port *p)
{
	struct source *s = &p->src;
	int tcp0 = s->proto == 1;
	uint8_t *tm[2] = { tcp0 ? s->alt : s->tmpl, tcp0 ? s->tmpl : s->alt };
	uint32_t ip_base[2];
	for (int tcp = 0; tcp < 2; tcp++) {
		build_template(p, tm[tcp], tcp);
		ip_base[tcp] = csum_add(tm[tcp] + 14, 20, 0);   /* addresses and checksum still 0 */
		s->l4_base[tcp] = l4_base(s, tm[tcp], tcp);
	}
	uint32_t in = s->size >= 46 ? 4 : s->size > 42 ? s->size - 42 : 0;   /* sequence bytes */
	s->seq_mask = in ? ~0u << (8 * (4 - in)) : 0;
	for (uint32_t f = 0; f < s->flows; f++) {
		struct flow *fl = &s->flow[f];
		fl->sip = s->sip + (s->vary & FLOW_VARY_SIP ? f : 0);
		fl->dip = s->dip + (s->vary & FLOW_VARY_DIP ? f : 0);
		fl->sport = (uint16_t)(s->sport + (s->vary & FLOW_VARY_SPORT ? f : 0));
		fl->dport = (uint16_t)(s->dport + (s->vary & FLOW_VARY_DPORT ? f : 0));
		fl->tcp = s->proto == 2 ? f & 1 : (uint8_t)tcp0;
		set_ip_csum(s, fl, ip_base[fl->tcp]);
		fl->l4_part = sum32(fl->sip) + sum32(fl->dip) + fl->sport + fl->dport;
		fl->rss_gen = 0;
	}
	for (int tcp = 0; tcp < 2; tcp++) {
		struct flow f0 = s->flow[0];
		f0.tcp = (uint8_t)tcp;
		set_ip_csum(s, &f0, ip_base[tcp]);
		put_flow(s, tm[tcp], &f0, 0);
		rx_classify(tm[tcp], s->size, &s->wb_lo[tcp], &s->wb_st[tcp]);
	}
	s->fill_extra = s->flows > 1 || s->proto == 2 || l4_on(s, tcp0);
	s->fcs_xor = s->fcs_bad ? 0xffffffffu : 0;
}

/* Zipf schedule: FLOW_SCHED draws, flow f with weight 1/(f+1)^S, fixed seed. */
static int build_schedule(struct source *s)
{
	double *cdf = malloc(sizeof *cdf * s->flows);
	s->sched = malloc(sizeof *s->sched * FLOW_SCHED);
	if (!cdf || !s->sched) {
		free(cdf);
		return -1;
	}
	double total = 0;
	for (uint32_t f = 0; f < s->flows; f++)
		cdf[f] = total += pow(f + 1.0, -s->zipf);
	uint64_t x = 0x9e3779b97f4a7c15ull;         /* splitmix64 */
	for (uint32_t k = 0; k < FLOW_SCHED; k++) {
		uint64_t z = (x += 0x9e3779b97f4a7c15ull);
		z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
		z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
		z ^= z >> 31;
		double u = (double)(z >> 11) / 9007199254740992.0 * total;
		uint32_t lo = 0, hi = s->flows - 1;
		while (lo < hi) {
			uint32_t mid = (lo + hi) / 2;
			if (cdf[mid] <= u)
				lo = mid + 1;
			else
				hi = mid;
		}
		s->sched[k] = (uint16_t)lo;
	}
	free(cdf);
	return 0;
}

/* Tables and templates of a new source (commands.c); 0, or -1 with err. */
int source_flows_build(struct port *p, char *err, size_t n)
{
	struct source *s = &p->src;
	if (s->proto && s->size < 34 + TCP_HDR) {
		snprintf(err, n, "proto=%s needs size >= 54", s->proto == 1 ? "tcp" : "mixed");
		return -1;
	}
	s->flow = calloc(s->flows, sizeof *s->flow);
	if (!s->flow || (s->zipf > 0 && s->flows > 1 && build_schedule(s) < 0)) {
		source_flows_free(s);
		snprintf(err, n, "out of memory");
		return -1;
	}
	source_build(p);
	return 0;
}

void source_flows_free(struct source *s)
{
	free(s->flow);
	free(s->sched);
	s->flow = NULL;
	s->sched = NULL;
}

/* The per-frame fields beyond the sequence number (source_fill, model.h). */
void source_fill_extra(struct port *p, uint8_t *buf, uint64_t seq)
{
	struct source *s = &p->src;
	struct flow *fl = source_flow(s, seq);
	if (s->proto == 2 && fl->tcp) {           /* mixed: flow 0 is UDP, the template */
		memcpy(buf, s->alt, s->size);
		uint32_t be = htonl((uint32_t)seq);
		memcpy(buf + 42, &be, 4);
	}
	if (s->flows > 1)
		put_flow(s, buf, fl, (uint32_t)seq);
	else if (l4_on(s, fl->tcp))
		put16(buf + (fl->tcp ? 50 : 40), l4_sum(s, fl, (uint32_t)seq));
}
