/*
 * sink-flows.c - the sink's check of order per flow (sink check=1): frames of
 * one flow must arrive in the order they were sent, whatever happens to
 * frames of different flows (RSS queues and workers may reorder those).
 */
#include <stdlib.h>
#include <string.h>

#include "model.h"

#define SINK_SLOTS (1u << 17)   /* twice the most flows of a source */

/*
 * The sink's check per flow: a flow is its 5-tuple; each frame's sequence
 * number must be above the last one of its flow (gaps are other flows'
 * frames, or losses).  Open addressing, no removal; a full table leaves
 * further flows unchecked.
 */
struct sink_flows {
	uint32_t flows;
	struct { uint64_t a, b; uint32_t last; } slot[SINK_SLOTS];
};

int sink_flows_on(struct port *p)
{
	sink_flows_off(p);
	p->sink_flows = calloc(1, sizeof *p->sink_flows);
	return p->sink_flows ? 0 : -1;
}

void sink_flows_off(struct port *p)
{
	free(p->sink_flows);
	p->sink_flows = NULL;
}

void sink_flow_check(struct port *p, const uint8_t *f, uint32_t len, uint32_t seq)
{
	struct sink_flows *t = p->sink_flows;
	uint32_t ihl = (f[14] & 0xf) * 4u;
	if (!t || 14 + ihl + 4 > len)
		return;
	uint32_t sip, dip, ports;
	memcpy(&sip, f + 26, 4);
	memcpy(&dip, f + 30, 4);
	memcpy(&ports, f + 14 + ihl, 4);
	uint64_t a = (uint64_t)sip << 32 | dip, b = (uint64_t)f[23] << 32 | ports | 1ull << 40;
	uint32_t i = (uint32_t)((a * 0x9e3779b97f4a7c15ull ^ b * 0xc2b2ae3d27d4eb4full) >> 47);
	for (uint32_t k = 0; k < SINK_SLOTS; k++, i = (i + 1) & (SINK_SLOTS - 1)) {
		if (t->slot[i].b == 0) {
			t->slot[i].a = a;
			t->slot[i].b = b;
			t->slot[i].last = seq;
			t->flows++;
			return;
		}
		if (t->slot[i].a == a && t->slot[i].b == b) {
			if ((int32_t)(seq - t->slot[i].last) <= 0)
				p->t.sink_flow_errors++;
			t->slot[i].last = seq;
			return;
		}
	}
}

/* "sinkFlows":N, for stats. */
int sink_flows_json(const struct port *p, char *out, size_t n)
{
	return snprintf(out, n, "\"sinkFlows\":%u,\"sinkFlowErrors\":%lu,",
			p->sink_flows ? p->sink_flows->flows : 0, p->t.sink_flow_errors);
}
