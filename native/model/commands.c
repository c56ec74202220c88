/*
 * commands.c - the control commands (see README.md, "Control protocol").
 * Runs on the data thread (or on the main thread before it starts), so it
 * may change any port state.  Replies are one JSON object without newline.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model.h"

#define MAXTOK 16

/* Parse an unsigned decimal number; -1 when it is not one. */
static long long num(const char *s)
{
	char *end;
	if (!s || !*s || *s == '-')
		return -1;
	long long v = strtoll(s, &end, 10);
	return *end ? -1 : v;
}

static int parse_mac(const char *s, uint8_t mac[6])
{
	unsigned m[6];
	if (sscanf(s, "%2x:%2x:%2x:%2x:%2x:%2x", &m[0], &m[1], &m[2], &m[3], &m[4], &m[5]) != 6 ||
	    strlen(s) != 17)
		return -1;
	for (int i = 0; i < 6; i++)
		mac[i] = (uint8_t)m[i];
	return 0;
}

static int stats(char *reply, size_t n, int only)
{
	int o = snprintf(reply, n, "{\"ok\":true,\"ports\":[");
	for (int i = 0; i < M.nports; i++) {
		if (only >= 0 && i != only)
			continue;
		struct port *p = &M.ports[i];
		struct truth *t = &p->t;
		stats_settle(p);
		o += snprintf(reply + o, n - o,
			"%s{\"address\":\"%s\",\"linkUp\":%s,\"rxOffered\":%lu,\"rxDelivered\":%lu,"
			"\"rxBytes\":%lu,\"rxDropNoDesc\":%lu,\"rxDropDisabled\":%lu,\"rxDropFiltered\":%lu,"
			"\"rxDropOversize\":%lu,\"rxDropCrc\":%lu,\"rxDropRunt\":%lu,"
			"\"txFrames\":%lu,\"txBytes\":%lu,\"txDropBadLength\":%lu,\"descErrors\":%lu,"
			"\"sinkFrames\":%lu,\"sinkSeqErrors\":%lu,\"sinkBadFrames\":%lu,\"pcapFrames\":%lu,"
			"\"dmaOwnerPid\":%d,\"busMaster\":%s,\"rxQueueActive\":%s,\"txQueuesActive\":%d,"
			"\"sourceSeq\":%lu,\"sourceBacklog\":%lu,\"rxBuffered\":%lu,\"loopMaxGapUs\":%lu,\"dmaWaits\":%lu,"
			"\"dmaAfterRelease\":%lu,\"rxQueueReleased\":%s,\"txQueuesReleased\":%d,"
			"\"sourcePausedUs\":%lu,\"deviceId\":\"%04x\",\"removed\":%s,",
			o > 20 ? "," : "", p->address, p->link_up ? "true" : "false",
			t->rx_offered, t->rx_delivered, t->rx_bytes, t->rx_drop_nodesc,
			t->rx_drop_disabled, t->rx_drop_filtered, t->rx_drop_oversize, t->rx_drop_crc,
			t->rx_drop_runt, t->tx_frames, t->tx_bytes, t->tx_drop_bad_length,
			t->desc_errors, t->sink_frames, t->sink_seq_errors,
			t->sink_bad_frames, t->pcap_frames, dma_owner_pid(i),
			p->bus_master ? "true" : "false", p->rx.ring.desc ? "true" : "false",
			__builtin_popcountll(p->tx_active), p->src.seq, p->src.backlog, p->pb.frames, M.max_gap_ns / 1000,
			t->dma_waits, t->dma_after_release, p->rx.ring.released ? "true" : "false",
			__builtin_popcountll(p->tx_released), t->source_paused_ns / 1000, p->device_id, p->removed ? "true" : "false");
		o += rss_json(p, reply + o, n - o);
		o += sink_flows_json(p, reply + o, n - o);
		o += wire_stats(p, reply + o, n - o);
		o += lat_stats(p, reply + o, n - o);
		o += snprintf(reply + o, n - o,
			"\"tap\":\"%s\",\"tapRxFrames\":%lu,\"tapRxBytes\":%lu,\"tapTxFrames\":%lu,"
			"\"tapTxBytes\":%lu,\"tapTxDropped\":%lu,\"rxLastNs\":%lu,\"txLastNs\":%lu,\"interrupts\":[",
			p->tap.name, t->tap_rx_frames, t->tap_rx_bytes, t->tap_tx_frames, t->tap_tx_bytes,
			t->tap_tx_dropped, t->rx_last_ns, t->tx_last_ns);
		for (int v = 0; v < IRQ_VECTORS; v++)
			o += snprintf(reply + o, n - o, "%s%lu", v ? "," : "", t->irq[v]);
		o += snprintf(reply + o, n - o, "]}");
	}
	snprintf(reply + o, n - o, "]}");
	return 0;
}

static int cmd_source(struct port *p, char **tok, int nt, char *reply, size_t n)
{
	struct source *s = &p->src;
	if (nt == 3 && !strcmp(tok[2], "off")) {
		s->on = 0;
		return reply_ok(reply, n);
	}
	struct source ns = { .on = 1, .rate = 0, .size = 60, .count = 0, .flows = 1,
		.sip = 10u << 24 | (uint32_t)p->idx << 8 | 1u, .dip = 10u << 24 | 1u << 16 | (uint32_t)p->idx << 8 | 1u,
		.sport = 1024, .dport = 5000, .vary = FLOW_VARY_SIP | FLOW_VARY_SPORT };
	int r;
	static const char *const sums[] = { "zero", "good", "bad" };
	for (int i = 2; i < nt; i++) {
		char *eq = strchr(tok[i], '=');
		if (!eq)
			return reply_fail(reply, n, "expected key=value", tok[i]);
		*eq = 0;
		const char *k = tok[i], *v = eq + 1;
		long long x = num(v);
		if (!strcmp(k, "rate") && x >= 0)
			ns.rate = (uint64_t)x;
		else if (!strcmp(k, "size") && x >= SRC_MIN && x <= SRC_MAX)
			ns.size = (uint32_t)x;   /* runts and oversize frames too (rx.c) */
		else if (!strcmp(k, "count") && x >= 0)
			ns.count = (uint64_t)x;
		else if (!strcmp(k, "flows") && x >= 1 && x <= 65536)
			ns.flows = (uint32_t)x;
		else if (!strcmp(k, "dst") && !strcmp(v, "broadcast")) {
			ns.dst_kind = 1;
			memset(ns.dst, 0xff, 6);
		} else if (!strcmp(k, "dst") && x >= 0 && x < M.nports) {
			ns.dst_kind = 1;
			memcpy(ns.dst, M.ports[x].filter_mac, 6);
		} else if (!strcmp(k, "dst") && parse_mac(v, ns.dst) == 0)
			ns.dst_kind = 1;
		else if (!strcmp(k, "ipsum") && (!strcmp(v, "good") || !strcmp(v, "bad")))
			ns.ip_bad = !strcmp(v, "bad");
		else if (!strcmp(k, "fcs") && (!strcmp(v, "good") || !strcmp(v, "bad")))
			ns.fcs_bad = !strcmp(v, "bad");
		else if (!strcmp(k, "udpsum") && (!strcmp(v, sums[0]) || !strcmp(v, sums[1]) ||
						  !strcmp(v, sums[2])))
			ns.udp_mode = !strcmp(v, sums[1]) ? 1 : !strcmp(v, sums[2]) ? 2 : 0;
		else if ((r = source_option(&ns, k, v)) > 0)
			;                /* proto, sip, dip, sport, dport, vary, zipf, tcpsum (flows.c) */
		else
			return reply_fail(reply, n, r < 0 ? "bad source value" : "bad source option", k);
	}
	ns.last_ns = now_ns();
	source_flows_free(s);
	*s = ns;
	char err[128];
	if (source_flows_build(p, err, sizeof err) < 0) {
		s->on = 0;
		return reply_fail(reply, n, err, NULL);
	}
	return reply_ok(reply, n);
}

static int cmd_pcap_in(struct port *p, char **tok, int nt, char *reply, size_t n)
{
	struct replay *r = &p->rep;
	if (nt < 3)
		return reply_fail(reply, n, "usage: pcap-in PORT FILE [loop=0|1] [rate=PPS]", NULL);
	if (!strcmp(tok[2], "off")) {
		r->on = 0;
		return reply_ok(reply, n);
	}
	int loop = 0;
	long long rate = 0;
	for (int i = 3; i < nt; i++) {
		if (!strncmp(tok[i], "loop=", 5) && num(tok[i] + 5) >= 0 && num(tok[i] + 5) <= 1)
			loop = (int)num(tok[i] + 5);
		else if (!strncmp(tok[i], "rate=", 5) && (rate = num(tok[i] + 5)) >= 0)
			;
		else
			return reply_fail(reply, n, "bad pcap-in option", tok[i]);
	}
	char err[300];
	r->on = 0;
	if (pcap_load(r, tok[2], err, sizeof err) < 0)
		return reply_fail(reply, n, err, NULL);
	r->loop = loop;
	r->rate = (uint64_t)rate;
	r->tokens = 0;
	r->last_ns = now_ns();
	r->on = 1;
	return reply_ok(reply, n);
}

/* tap PORT IFNAME [netns=NAME|PATH] | tap PORT off (tap.c) */
static int cmd_tap(struct port *p, char **tok, int nt, char *reply, size_t n)
{
	if (nt == 3 && !strcmp(tok[2], "off")) {
		tap_detach(p);
		return reply_ok(reply, n);
	}
	const char *netns = nt == 4 && !strncmp(tok[3], "netns=", 6) ? tok[3] + 6 : NULL;
	if (nt != 3 && !netns)
		return reply_fail(reply, n, "usage: tap PORT IFNAME [netns=NAME|PATH] | tap PORT off", NULL);
	if (p->cable >= 0)
		return reply_fail(reply, n, "port is cabled to another port (cable PORT off first)", tok[1]);
	char err[300];
	if (tap_attach(p, tok[2], netns, err, sizeof err) < 0)
		return reply_fail(reply, n, err, NULL);
	return reply_ok(reply, n);
}

static void uncable(int a)
{
	int b = M.ports[a].cable;
	if (b >= 0)
		M.ports[b].cable = -1;
	M.ports[a].cable = -1;
}

/* Where the model is: "pid":..,"dir":..,"socket":..,"ports":[{"address":..,"mac":..},..]
 * (no braces), for the ready line and the `info` command. */
int model_info(char *out, size_t n)
{
	int o = snprintf(out, n, "\"pid\":%d,\"dir\":\"%s\",\"socket\":\"%s\",\"ports\":[",
			 getpid(), M.dir, M.sock_path);
	for (int i = 0; i < M.nports; i++) {
		const uint8_t *m = M.ports[i].mac;
		o += snprintf(out + o, n - o, "%s{\"address\":\"%s\",\"mac\":\"%02x:%02x:%02x:%02x:%02x:%02x\"}",
			      i ? "," : "", M.ports[i].address, m[0], m[1], m[2], m[3], m[4], m[5]);
	}
	return o + snprintf(out + o, n - o, "]");
}

/* Execute one command line; returns 0 on success. */
int command_exec(char *line, char *reply, size_t n)
{
	char *tok[MAXTOK], *save = NULL;
	int nt = 0;
	for (char *t = strtok_r(line, " \t", &save); t && nt < MAXTOK; t = strtok_r(NULL, " \t", &save))
		tok[nt++] = t;
	if (nt == 0)
		return reply_fail(reply, n, "empty command", NULL);
	const char *c = tok[0];
	if (!strcmp(c, "quit")) {
		control_quit_after_reply();   /* control.c: once this reply is written */
		return reply_ok(reply, n);
	}
	if (!strcmp(c, "info") && nt == 1) {
		int o = snprintf(reply, n, "{\"ok\":true,");
		o += model_info(reply + o, n - o);
		snprintf(reply + o, n - o, "}");
		return 0;
	}
	if (!strcmp(c, "irqfd"))    /* by address, with an fd (irqfd.c) */
		return irqfd_command(tok, nt, control_take_fd(), reply, n);
	if (!strcmp(c, "wire"))
		return wire_command(tok, nt, reply, n);
	if (!strcmp(c, "latency"))
		return lat_command(tok, nt, reply, n);
	long long pi = nt > 1 ? num(tok[1]) : -1;
	if (!strcmp(c, "stats") && nt == 1)
		return stats(reply, n, -1);
	if (nt < 2 || pi < 0 || pi >= M.nports)
		return nt < 2 && strcmp(c, "stats") ? reply_fail(reply, n, "unknown command or missing port", c)
						    : reply_fail(reply, n, "bad port", nt > 1 ? tok[1] : c);
	struct port *p = &M.ports[pi];
	if (!strcmp(c, "stats"))
		return stats(reply, n, (int)pi);
	if (p->removed && strcmp(c, "clear"))
		return reply_fail(reply, n, "port removed", tok[1]);
	if (!strcmp(c, "remove") && nt == 2) {
		port_remove(p);
		return reply_ok(reply, n);
	}
	if (!strcmp(c, "source"))
		return cmd_source(p, tok, nt, reply, n);
	if (!strcmp(c, "sink")) {
		if (nt == 3 && !strcmp(tok[2], "off")) {
			p->sink = 0;
			return reply_ok(reply, n);
		}
		if (nt > 3 || (nt == 3 && strcmp(tok[2], "check=0") && strcmp(tok[2], "check=1")))
			return reply_fail(reply, n, "usage: sink PORT [check=0|1]", NULL);
		p->sink = 1;
		p->sink_check = nt == 3 && !strcmp(tok[2], "check=1");
		p->sink_last_seq = -1;
		if (!p->sink_check)
			sink_flows_off(p);
		else if (sink_flows_on(p) < 0)
			return reply_fail(reply, n, "out of memory", NULL);
		return reply_ok(reply, n);
	}
	if (!strcmp(c, "cable")) {
		long long b = nt == 3 ? num(tok[2]) : -1;
		if (nt == 3 && !strcmp(tok[2], "off")) {
			uncable((int)pi);
			return reply_ok(reply, n);
		}
		if (b < 0 || b >= M.nports)
			return reply_fail(reply, n, "usage: cable A B", NULL);
		if (p->tap.fd >= 0 || M.ports[b].tap.fd >= 0)
			return reply_fail(reply, n, "port has a TAP (tap PORT off first)", p->tap.fd >= 0 ? tok[1] : tok[2]);
		uncable((int)pi);
		uncable((int)b);
		p->cable = (int)b;
		M.ports[b].cable = (int)pi;
		return reply_ok(reply, n);
	}
	if (!strcmp(c, "pcap-out")) {
		int nano = nt == 4 && !strcmp(tok[3], "ts=ns");
		if (nt != 3 && !nano && !(nt == 4 && !strcmp(tok[3], "ts=us")))
			return reply_fail(reply, n, "usage: pcap-out PORT FILE|off [ts=us|ns]", NULL);
		if (p->pcap_out)
			fclose(p->pcap_out);
		p->pcap_out = NULL;
		if (strcmp(tok[2], "off") && !(p->pcap_out = pcap_open_out(tok[2], nano)))
			return reply_fail(reply, n, errno == EINVAL ? "holds the other timestamp precision" : "cannot open", tok[2]);
		p->pcap_nano = nano;
		return reply_ok(reply, n);
	}
	if (!strcmp(c, "hash"))
		return rss_command(p, tok, nt, reply, n);
	if (!strcmp(c, "pcap-in"))
		return cmd_pcap_in(p, tok, nt, reply, n);
	if (!strcmp(c, "tap"))
		return cmd_tap(p, tok, nt, reply, n);
	if (!strcmp(c, "link") && nt == 3 && (!strcmp(tok[2], "up") || !strcmp(tok[2], "down"))) {
		int up = !strcmp(tok[2], "up");
		p->link_forced_down = !up;
		p->link_up_at = 0;
		port_set_link(p, up);
		return reply_ok(reply, n);
	}
	if (!strcmp(c, "stall") && nt == 3 && num(tok[2]) >= 0) {
		p->stall_until = now_ns() + (uint64_t)num(tok[2]) * 1000000ull;
		return reply_ok(reply, n);
	}
	if (!strcmp(c, "clear") && nt == 2) {
		memset(&p->t, 0, sizeof p->t);
		lat_clear(p);
		p->sink_last_seq = -1;
		if (p->sink_flows)
			sink_flows_on(p);
		M.max_gap_ns = 0;
		return reply_ok(reply, n);
	}
	return reply_fail(reply, n, "unknown command or bad arguments", c);
}
