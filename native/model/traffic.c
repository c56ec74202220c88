/*
 * traffic.c - what is on the other end of the wire: the source's frames,
 * the sink's checks, pcap files and the Ethernet FCS.
 *
 * Source frame layout (shared with the JS packet builder and the tests):
 *   0  dst MAC (the port's RAL0/RAH0, or dst=)   6  src 02:00:00:00:ee:0<port>
 *  12  ethertype 0x0800
 *  14  IPv4: 20 bytes, TTL 64, proto 17, total length = size - 14,
 *      src 10.0.<port>.1 + flow, dst 10.1.<port>.1, correct checksum
 *  34  UDP: src port 1024 + flow, dst port 5000, checksum 0
 *  42  32-bit big-endian sequence number; then byte k = k & 0xff
 */
#include <arpa/inet.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <unistd.h>

#include "model.h"

static uint32_t sum16(const uint8_t *b, int n)
{
	uint32_t s = 0;
	for (int i = 0; i < n; i += 2)
		s += (uint32_t)b[i] << 8 | b[i + 1];
	return s;
}

static uint16_t fold(uint32_t s)
{
	while (s >> 16)
		s = (s & 0xffff) + (s >> 16);
	return (uint16_t)~s;
}

static uint32_t src_ip(int port, uint32_t flow)
{
	return (10u << 24 | (uint32_t)port << 8 | 1u) + flow;
}

/* (Re)build the template of flow 0, sequence 0. */
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
	uint16_t c = htons(fold(sum16(ip, 20)));
	memcpy(ip + 10, &c, 2);
	uint8_t *udp = t + 34;
	udp[0] = 1024 >> 8; udp[1] = 1024 & 0xff;
	udp[2] = 5000 >> 8; udp[3] = 5000 & 0xff;
	udp[4] = (uint8_t)((size - 34) >> 8); udp[5] = (uint8_t)(size - 34);
	udp[6] = udp[7] = 0;
	memset(t + 42, 0, 4);
}

/* The parts of frame number seq that depend on its flow (source_fill, model.h). */
void source_fill_flow(struct port *p, uint8_t *buf, uint64_t seq)
{
	struct source *s = &p->src;
	uint32_t flow = (uint32_t)(seq % s->flows);
	uint32_t ip = src_ip(p->idx, flow);
	uint32_t be = htonl(ip);
	memcpy(buf + 26, &be, 4);
	uint16_t c = htons(fold(s->ip_sum + (ip >> 16) + (ip & 0xffff)));
	memcpy(buf + 24, &c, 2);
	uint16_t sport = htons((uint16_t)(1024 + flow));
	memcpy(buf + 34, &sport, 2);
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

/* Ethernet FCS: CRC-32 (IEEE 802.3), reflected, as appended on the wire. */
uint32_t crc32_eth(const uint8_t *data, uint32_t len)
{
	static uint32_t table[256];
	if (!table[1])
		for (uint32_t i = 0; i < 256; i++) {
			uint32_t c = i;
			for (int k = 0; k < 8; k++)
				c = c & 1 ? 0xEDB88320u ^ (c >> 1) : c >> 1;
			table[i] = c;
		}
	uint32_t crc = ~0u;
	for (uint32_t i = 0; i < len; i++)
		crc = table[(crc ^ data[i]) & 0xff] ^ (crc >> 8);
	return ~crc;
}

/* Classic pcap (microsecond timestamps, linktype 1 = Ethernet). */
FILE *pcap_open_out(const char *file)
{
	FILE *f = fopen(file, "ab");
	if (!f)
		return NULL;
	if (ftell(f) == 0) {
		uint32_t hdr[6] = { 0xa1b2c3d4u, 2 | 4u << 16, 0, 0, 65535, 1 };
		fwrite(hdr, sizeof hdr, 1, f);
	}
	return f;
}

void pcap_write(FILE *f, const uint8_t *frame, uint32_t len)
{
	struct timeval tv;
	gettimeofday(&tv, NULL);
	uint32_t rec[4] = { (uint32_t)tv.tv_sec, (uint32_t)tv.tv_usec, len, len };
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
