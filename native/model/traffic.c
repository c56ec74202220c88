/*
 * traffic.c - what is on the other end of the wire: the source's frames,
 * the sink's checks, pcap files and the Ethernet FCS.
 *
 * Source frame layout (shared with the JS packet builder and the tests):
 *   0  dst MAC (the port's RAL0/RAH0, or dst=)   6  src 02:00:00:00:ee:0<port>
 *  12  ethertype 0x0800
 *  14  IPv4: 20 bytes, TTL 64, proto 17, total length = size - 14,
 *      src 10.0.<port>.1 + flow, dst 10.1.<port>.1, checksum correct
 *      (ipsum=bad: off by one bit)
 *  34  UDP: src port 1024 + flow, dst port 5000, length size - 34,
 *      checksum 0 (udpsum=zero), correct (good) or off by one bit (bad)
 *  42  32-bit big-endian sequence number; then byte k = k & 0xff
 * Frames shorter than 46 bytes (size= down to 14) are the first `size`
 * bytes of this layout.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model.h"

/* Internet checksum (RFC 1071): add n bytes as big-endian 16-bit words. */
uint32_t csum_add(const uint8_t *b, uint32_t n, uint32_t sum)
{
	uint32_t i = 0;
	for (; i + 1 < n; i += 2)
		sum += (uint32_t)b[i] << 8 | b[i + 1];
	if (i < n)
		sum += (uint32_t)b[i] << 8;             /* odd length: pad with zero */
	return sum;
}

/* Fold to 16 bits and complement: the checksum field for a sum. */
uint16_t csum_fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t sum16(const uint8_t *b, int n)
{
	return csum_add(b, (uint32_t)n, 0);
}

static uint16_t fold(uint32_t s)
{
	return csum_fold(s);
}

/* A checksum that is wrong for sure: one bit off (never the other zero). */
static uint16_t spoil(uint16_t c)
{
	return c == 1 ? 2 : c ^ 1;
}

static uint32_t src_ip(int port, uint32_t flow)
{
	return (10u << 24 | (uint32_t)port << 8 | 1u) + flow;
}

/* UDP checksum of a source frame with source address ip, port sport, number seq. */
static uint16_t udp_sum(const struct source *s, uint32_t ip, uint32_t sport, uint32_t seq)
{
	uint32_t m = seq & s->seq_mask;
	uint16_t c = fold(s->udp_base + (ip >> 16) + (ip & 0xffff) + sport + (m >> 16) + (m & 0xffff));
	if (c == 0)
		c = 0xffff;                             /* RFC 768: 0 means "no checksum" */
	return s->udp_mode == 2 ? spoil(c) : c;
}

/* (Re)build the template of flow 0, sequence 0, and what every frame reports. */
void source_build(struct port *p)
{
	struct source *s = &p->src;
	uint8_t *t = s->tmpl;
	uint32_t size = s->size;
	for (uint32_t k = 0; k < sizeof s->tmpl; k++)
		t[k] = (uint8_t)k;
	memcpy(t, s->dst_kind ? s->dst : p->filter_mac, 6);
	const uint8_t src[6] = { 0x02, 0, 0, 0, 0xee, (uint8_t)p->idx };
	memcpy(t + 6, src, 6);
	t[12] = 0x08; t[13] = 0x00;
	uint8_t *ip = t + 14;
	memset(ip, 0, 20);
	ip[0] = 0x45;
	ip[2] = (uint8_t)((size - 14) >> 8); ip[3] = (uint8_t)(size - 14);
	ip[8] = 64;                                 /* TTL */
	ip[9] = 17;                                 /* UDP */
	uint32_t dst = 10u << 24 | 1u << 16 | (uint32_t)p->idx << 8 | 1u;
	uint32_t be = htonl(dst);
	memcpy(ip + 16, &be, 4);
	s->ip_sum = sum16(ip, 20);                 /* without the source address */
	be = htonl(src_ip(p->idx, 0));
	memcpy(ip + 12, &be, 4);
	uint16_t c = fold(sum16(ip, 20));
	c = htons(s->ip_bad ? spoil(c) : c);
	memcpy(ip + 10, &c, 2);
	uint8_t *udp = t + 34;
	udp[0] = 1024 >> 8; udp[1] = 1024 & 0xff;
	udp[2] = 5000 >> 8; udp[3] = 5000 & 0xff;
	udp[4] = (uint8_t)((size - 34) >> 8); udp[5] = (uint8_t)(size - 34);
	udp[6] = udp[7] = 0;
	memset(t + 42, 0, 4);

	/* The UDP checksum changes with the flow and the sequence number: the
	 * rest of its sum is taken once here (pseudo header without the source
	 * address, UDP header without source port and checksum, payload with the
	 * sequence number as 0); source_fill_extra adds the changing words. */
	int udp_on = s->udp_mode && size >= 42;
	if (udp_on) {
		uint32_t sum = (dst >> 16) + (dst & 0xffff) + 17 + (size - 34);
		sum = csum_add(t + 36, 4, sum);
		sum = csum_add(t + 42, size - 42, sum);
		s->udp_base = sum;
		uint32_t in = size >= 46 ? 4 : size - 42;   /* sequence bytes in the frame */
		s->seq_mask = in ? ~0u << (8 * (4 - in)) : 0;
		c = htons(udp_sum(s, src_ip(p->idx, 0), 1024, 0));
		memcpy(udp + 6, &c, 2);
	}
	s->fill_extra = s->flows > 1 || udp_on;
	s->fcs_xor = s->fcs_bad ? 0xffffffffu : 0;
	/* Status of every frame: only checksummed fields change from frame to
	 * frame, so the template's status holds for all (rx.c, 7.1.6.2). */
	rx_classify(t, size, &s->wb_lo, &s->wb_st);
}

/* The per-frame fields beyond the sequence number (source_fill, model.h). */
void source_fill_extra(struct port *p, uint8_t *buf, uint64_t seq)
{
	struct source *s = &p->src;
	uint32_t flow = s->flows > 1 ? (uint32_t)(seq % s->flows) : 0;
	uint32_t ip = src_ip(p->idx, flow);
	if (s->flows > 1) {
		uint32_t be = htonl(ip);
		memcpy(buf + 26, &be, 4);
		uint16_t c = fold(s->ip_sum + (ip >> 16) + (ip & 0xffff));
		c = htons(s->ip_bad ? spoil(c) : c);
		memcpy(buf + 24, &c, 2);
		uint16_t sport = htons((uint16_t)(1024 + flow));
		memcpy(buf + 34, &sport, 2);
	}
	if (s->udp_mode && s->size >= 42) {
		uint16_t c = htons(udp_sum(s, ip, 1024 + flow, (uint32_t)seq));
		memcpy(buf + 40, &c, 2);
	}
}

/* Sink with check=1: IPv4/UDP with a valid header checksum, seq + 1. */
void sink_check(struct port *p, const uint8_t *f, uint32_t len)
{
	if (len < 46 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4) {
		p->t.sink_bad_frames++;
		return;
	}
	uint32_t ihl = (f[14] & 0xf) * 4u;
	if (ihl < 20 || 14 + ihl + 12 > len || f[23] != 17 || fold(sum16(f + 14, (int)ihl)) != 0) {
		p->t.sink_bad_frames++;
		return;
	}
	uint32_t seq;
	memcpy(&seq, f + 14 + ihl + 8, 4);
	seq = ntohl(seq);
	if (p->sink_last_seq >= 0 && seq != (uint32_t)(p->sink_last_seq + 1))
		p->t.sink_seq_errors++;
	p->sink_last_seq = seq;
}

/* Ethernet FCS: CRC-32 (IEEE 802.3), reflected, as appended on the wire.
 * crc32_update continues a CRC over more data (start with 0). */
uint32_t crc32_update(uint32_t crc, const uint8_t *data, uint32_t len)
{
	static uint32_t table[256];
	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	crc = ~crc;
	for (uint32_t i = 0; i < len; i++)
		crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

uint32_t crc32_eth(const uint8_t *data, uint32_t len)
{
	return crc32_update(0, data, len);
}

/*
 * Classic pcap, linktype 1 = Ethernet: microsecond timestamps (magic
 * 0xa1b2c3d4) or, with nano, nanosecond ones (0xa1b23c4d).  Appending to a
 * file of the other kind fails with errno EINVAL.
 */
FILE *pcap_open_out(const char *file, int nano)
{
	FILE *f = fopen(file, "a+b");
	if (!f)
		return NULL;
	uint32_t magic = nano ? 0xa1b23c4du : 0xa1b2c3d4u, had;
	fseek(f, 0, SEEK_END);
	if (ftell(f) == 0) {
		uint32_t hdr[6] = { magic, 2 | 4u << 16, 0, 0, 65535, 1 };
		fwrite(hdr, sizeof hdr, 1, f);
	} else if (fseek(f, 0, SEEK_SET) || fread(&had, 4, 1, f) != 1 || had != magic) {
		fclose(f);
		errno = EINVAL;
		return NULL;
	}
	return f;
}

/* One record; ns = CLOCK_REALTIME of the frame in nanoseconds. */
void pcap_write(FILE *f, const uint8_t *frame, uint32_t len, uint64_t ns, int nano)
{
	uint32_t rec[4] = { (uint32_t)(ns / 1000000000u),
			    (uint32_t)(nano ? ns % 1000000000u : ns % 1000000000u / 1000u), len, len };
	fwrite(rec, sizeof rec, 1, f);
	fwrite(frame, len, 1, f);
}

/* Load a whole classic little-endian pcap file for replay. */
int pcap_load(struct replay *r, const char *file, char *err, size_t errlen)
{
	int fd = open(file, O_RDONLY);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot open %s", file);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	uint8_t *data = malloc(st.st_size ? (size_t)st.st_size : 1);
	ssize_t n = data ? read(fd, data, st.st_size) : -1;
	close(fd);
	uint32_t magic = 0;
	if (n >= 24)
		memcpy(&magic, data, 4);
	if (n != st.st_size || n < 24 || (magic != 0xa1b2c3d4u && magic != 0xa1b23c4du)) {
		snprintf(err, errlen, "%s is not a little-endian classic pcap file", file);
		free(data);
		return -1;
	}
	free(r->data);
	r->data = data;
	r->len = (size_t)n;
	r->pos = 24;
	return 0;
}
