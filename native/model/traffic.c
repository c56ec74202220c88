/*
 * traffic.c - what is on the other end of the wire: the source's frames,
 * the sink's checks, pcap files and the Ethernet FCS.
 *
 * Source frames are built in flows.c (layout in README.md, "Source frames").
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

/* Sink with check=1: IPv4/UDP or TCP with a valid header checksum, seq + 1,
 * and above the last of its flow (flows.c). */
void sink_check(struct port *p, const uint8_t *f, uint32_t len)
{
	if (len < 46 || f[12] != 0x08 || f[13] != 0x00 || (f[14] >> 4) != 4) {
		p->t.sink_bad_frames++;
		return;
	}
	uint32_t ihl = (f[14] & 0xf) * 4u;
	if (ihl < 20 || 14 + ihl + 12 > len || (f[23] != 17 && f[23] != 6) ||
	    csum_fold(csum_add(f + 14, ihl, 0)) != 0) {
		p->t.sink_bad_frames++;
		return;
	}
	uint32_t seq;
	memcpy(&seq, f + 14 + ihl + 8, 4);        /* offset 42: UDP payload, TCP ack number */
	seq = ntohl(seq);
	sink_flow_check(p, f, len, seq);
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

/* Load a whole classic little-endian pcap file for replay.  This runs on the
 * data thread: the open does not block (a FIFO with no writer would stop every
 * port and command), and only a regular file, whose size says what to read,
 * is taken. */
int pcap_load(struct replay *r, const char *file, char *err, size_t errlen)
{
	int fd = open(file, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snprintf(err, errlen, "cannot open %s", file);
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		snprintf(err, errlen, "%s is not a regular file (a FIFO or a device): pcap-in reads a whole capture file", file);
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
