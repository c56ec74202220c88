/*
 * model.h - shared declarations of the 82599 device model.
 *
 * The model is one process: a data thread that polls every port's rings,
 * a control thread that serves the UNIX socket, and the main thread that
 * waits for signals (or for the child of `run --`).  All per-port state
 * below is owned by the data thread; the control thread only reads the
 * 64-bit "truth" counters (aligned, so a read never sees a torn value).
 */
#ifndef IXY_MODEL_H
#define IXY_MODEL_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/types.h>

#define MAX_PORTS 8
#define NUM_QUEUES 64
#define BAR_SIZE 0x80000            /* resource0: 512 KiB of registers */
#define HUGE_SIZE (2u << 20)        /* hugepage size we translate in */
#define MAX_FRAME 16384             /* largest gathered TX frame */
#define SRC_MAX 16000               /* largest source frame (without FCS) */
#define SRC_MIN 14                  /* smallest source frame: an Ethernet header */
#define ETH_MIN_LEN 60              /* smallest frame without FCS (IEEE 802.3 4.4.2: 64 with it) */
#define IRQ_VECTORS 16              /* interrupt vectors modelled: EICR bits 15:0 (intr.c) */
#define IRQ_CAUSES 0xffffu          /* their cause bits in EICR */

/* Register access into the shared register file (little-endian dwords). */
#define REG(p, off) ((p)->regs[(off) >> 2])

/* The model's own truth for one port (read by the control thread). */
struct truth {
	uint64_t rx_offered, rx_delivered, rx_bytes;
	uint64_t rx_drop_nodesc, rx_drop_disabled, rx_drop_filtered, rx_drop_oversize;
	uint64_t rx_drop_crc, rx_drop_runt;
	uint64_t tx_frames, tx_bytes, desc_errors, tx_drop_bad_length;
	uint64_t sink_frames, sink_seq_errors, sink_bad_frames, pcap_frames;
	uint64_t dma_waits;   /* translation misses that waited for a rescan */
	uint64_t dma_after_release;  /* frames/descriptors DMA'd into released memory */
	uint64_t source_paused_ns;   /* source time skipped while the model was away */
	uint64_t tap_rx_frames, tap_rx_bytes;   /* read from the TAP (the kernel sent) */
	uint64_t tap_tx_frames, tap_tx_bytes;   /* written to the TAP (the kernel received) */
	uint64_t tap_tx_dropped;                /* refused by the TAP (e.g. it is down) */
	uint64_t irq[IRQ_VECTORS];              /* interrupts the NIC would have sent, per vector */
	uint64_t rx_last_ns, tx_last_ns;        /* CLOCK_MONOTONIC of the last RX write-back / TX frame */
	uint64_t sink_flow_errors;              /* check=1: frames older than their flow's last */
	uint64_t ptp_rx_stamped, ptp_tx_stamped;/* IEEE 1588 timestamps latched (ptp.c) */
	uint64_t rxq_frames[NUM_QUEUES];        /* delivered per RX queue 1..63; queue 0's: the rest (rss.c) */
};

/*
 * Totals since reset behind the statistics registers (8.2.3.23); the data
 * path adds to these, stats_publish() (regs.c) hands them to the registers.
 */
enum { C_GPRC, C_GORC, C_MPC, C_QPRDC, C_CRCERRS, C_RUC, C_RFC, C_ROC, C_RJC,
       C_GPTC, C_GOTC, NCNT };
#define NSTATREG 48                 /* registers fed from the totals (regs.c) */

/* Fast state of one descriptor ring, precomputed when the queue is enabled. */
struct ring {
	uint8_t *desc;       /* model-virtual address of descriptor 0, NULL = inactive */
	uint32_t count;      /* number of 16-byte descriptors */
	uint32_t head;       /* the model's head (written to RDH/TDH once per visit) */
	uint32_t published;  /* RDH/TDH as the model last wrote it, or read it at enable */
	uint32_t enabled;    /* RXDCTL/TXDCTL.ENABLE as last seen */
	uint32_t released;   /* the driver's memory went away while enabled (desc NULL) */
	uint32_t miss_gen;   /* DMA scan generation a translation miss waits for */
	uint64_t base_phys;  /* ring base as read at enable time */
};

/* One flow of a source: its 5-tuple and what is fixed per flow (flows.c). */
struct flow {
	uint32_t sip, dip;   /* IPv4 addresses, host order */
	uint16_t sport, dport;
	uint8_t tcp;         /* 1 TCP, 0 UDP */
	uint8_t rss_type;    /* RSS type of the write-back (rss.c), valid for rss_gen */
	uint16_t ip_csum;    /* IPv4 header checksum field, network order */
	uint32_t l4_part;    /* L4 checksum sum of addresses and ports */
	uint32_t rss_gen;    /* rss.gen the hash was computed for, 0 = none */
	uint32_t hash;       /* RSS hash */
};

/* An RX queue's delivery state: the port's (p->rx) is the queue being
 * delivered to, the others wait in rss.q[] (rss.c). */
struct rxq {
	struct ring ring;
	uint32_t free;       /* free descriptors in the current batch */
	uint32_t free_begin; /* ... when the batch began */
	uint32_t bufsize;    /* SRRCTL.BSIZEPACKET in bytes, 0 = invalid */
	int drop_en;         /* SRRCTL.DROP_EN */
};

/* A traffic source (frames generated into RX). */
struct source {
	int on;
	uint64_t rate;       /* frames per second, 0 = unlimited */
	uint32_t size;       /* frame length without FCS, SRC_MIN..SRC_MAX */
	int ip_bad, fcs_bad; /* ipsum=bad, fcs=bad */
	int udp_mode;        /* udpsum: 0 zero, 1 good, 2 bad */
	int fill_extra;      /* per-frame work beyond the copy: flows > 1, mixed or an L4 checksum */
	uint32_t fcs_xor;    /* fcs=bad: XORed into the appended FCS */
	uint32_t seq_mask;   /* bytes of the sequence number inside the frame */
	uint32_t wb_lo[2];   /* write-back packet type of every UDP, TCP frame (rx_classify) */
	uint32_t wb_st[2];   /* write-back status/errors of every UDP, TCP frame (DD, EOP included) */
	uint64_t count;      /* 0 = endless */
	uint32_t flows;
	int dst_kind;        /* 0 = port's own MAC, 1 = given MAC */
	uint8_t dst[6];
	uint64_t seq;        /* sequence number of the next frame to deliver */
	uint64_t offered;    /* frames offered so far (limited by count) */
	uint64_t backlog;    /* offered frames waiting in the RX packet buffer */
	double tokens;
	uint64_t last_ns;
	uint8_t tmpl[SRC_MAX + 64];  /* frame template (flow 0, seq 0) */
	/* flows (flows.c): tuples, protocols and weights */
	int proto;           /* 0 udp, 1 tcp, 2 mixed (odd flows TCP) */
	int tcp_bad;         /* tcpsum=bad */
	uint32_t sip, dip;   /* flow 0's addresses (host order) */
	uint16_t sport, dport;
	uint32_t vary;       /* FLOW_VARY_* bits: fields that add the flow index */
	double zipf;         /* > 0: flows drawn with Zipf weights of this exponent */
	struct flow *flow;   /* flows entries, NULL for the single default flow */
	uint16_t *sched;     /* zipf: flow of frame seq is sched[seq % FLOW_SCHED] */
	uint32_t l4_base[2]; /* L4 checksum sum without addresses, ports, seq: UDP, TCP */
	uint8_t alt[SRC_MAX + 64];   /* mixed: the template of the other protocol */
};
#define FLOW_VARY_SIP   1u
#define FLOW_VARY_DIP   2u
#define FLOW_VARY_SPORT 4u
#define FLOW_VARY_DPORT 8u
#define FLOW_SCHED      65536u      /* length of a Zipf schedule */


/* RSS and RX queues 1..63 (rss.c; 82599 datasheet 7.1.2.8). */
struct rss {
	int on;                  /* MRQC.MRQE selects RSS */
	uint32_t fields;         /* MRQC hash field enables (bits 31:16) */
	int pcsd;                /* RXCSUM.PCSD: the hash goes into the write-back */
	uint32_t key[10];        /* RSSRK as last read */
	uint32_t gen;            /* bumped when the key or the fields change (never 0) */
	uint8_t reta[128];       /* RETA: RX queue of each hash index (low 7 bits) */
	uint8_t map[128];        /* RQSMR: statistics counter of each RX queue */
	int cur;                 /* queue whose state is in p->rx.ring, p->rx.free, ... */
	uint64_t active;         /* queues 1..63 with a ring or a released one */
	struct rxq q[NUM_QUEUES];       /* queues other than cur */
	uint64_t frames[NUM_QUEUES], drops[NUM_QUEUES];  /* queues 1..63 since reset */
	uint32_t tab[12][256];   /* Toeplitz of each input byte value, from the key */
};

/* Frames replayed from a pcap file into RX. */
struct replay {
	int on, loop;
	uint64_t rate;
	uint8_t *data;       /* whole file */
	size_t len, pos;     /* pos = offset of next record */
	double tokens;
	uint64_t last_ns;
};

/* Interrupt state as the NIC keeps it (intr.c, 82599 7.3 and 8.2.3.5). */
struct irq {
	uint32_t eicr, eims;          /* causes and mask as the NIC has them */
	uint32_t eicr_seen, eims_seen;/* what the model last stored in EICR / EIMS */
	uint32_t unsignalled;         /* cause bits set since their vector last sent */
	uint32_t gpie, eiac, eiam;    /* as last read */
	int8_t rx_vec[NUM_QUEUES];    /* IVAR entry of each RX queue, -1 = none */
	int8_t tx_vec[NUM_QUEUES];    /* and of each TX queue */
	uint64_t itr_ns[IRQ_VECTORS]; /* EITR(v) interval */
	uint64_t last_ns[IRQ_VECTORS];/* when vector v last sent */
};

/* The port's line and its per-queue TX rate limiters (wire.c, 82599 7.7.2.x). */
struct wire {
	int unlimited;                /* `wire PORT unlimited`: frames take no wire time */
	uint64_t free_ps;             /* when the line is free again (ps of the wire clock) */
	uint64_t last_ps;             /* wire time of the last frame sent */
	uint64_t rx_ps;               /* wire time of the frame a cable offers now at this MAC, 0 = none */
	uint64_t rx_due_ps;           /* ... when it is in whole (store and forward), 0 = now */
	uint64_t rx_now_ps;           /* the wire clock of the current RX batch (rx_begin's caller) */
	uint64_t limited;             /* bit q: TX queue q is rate-limited (RTTBCNRC.RS_ENA) */
	uint32_t rf[NUM_QUEUES];      /* rate factor RF_INT.RF_DEC (14 fraction bits) */
	uint64_t next_ps[NUM_QUEUES]; /* earliest start of queue q's next frame */
	uint32_t sel_seen, bcnrc_seen;/* RTTDQSEL / RTTBCNRC as last scanned */
	uint64_t horizon_ps;          /* how far ahead of now frames are fetched (TXPBSIZE) */
	int64_t real_off_ns;          /* CLOCK_REALTIME - CLOCK_MONOTONIC, for pcap-out */
};

/* IEEE 1588 time sync (ptp.c, 82599 7.9, 8.2.3.26). */
struct ptp {
	uint32_t timinca;             /* TIMINCA as last scanned */
	uint64_t base, base_ps;       /* SYSTIM was `base` at wire time base_ps */
	uint32_t pub_l, pub_h;        /* SYSTIML/SYSTIMH as the model last wrote them */
	uint32_t seen_l, seen_h;      /* SYSTIML/SYSTIMH as the last scan read them */
	int publish_due;              /* scanned, SYSTIM not yet published (ptp_publish) */
	int rx_on, tx_on;             /* TSYNCRXCTL.En, TSYNCTXCTL.En */
	uint32_t rx_type, rx_msgt;    /* TSYNCRXCTL.Type, RXMTRL message type */
	uint16_t etype[8];            /* EType of the ETQF filters with the 1588 bit */
	int n_etype;
};

struct lat;                           /* latency.c */

/* A TAP interface wired to the port (tap.c). */
struct tap {
	int fd;              /* -1: none */
	char name[16];       /* IFNAMSIZ */
	int carrier;         /* what the TAP was last told: the port's link */
};

struct sink_flows;

/* The RX packet buffer's frames from cables, pcap files and TAPs, and the
 * frames still on a cable (pbuf.c). */
struct pbuf {
	uint8_t *data;                /* record ring, allocated on first use */
	uint32_t rpos, wpos;          /* next record to deliver / to write */
	uint64_t frames;              /* frames waiting or on the way */
	uint64_t recs;                /* records in the ring: those and ones taken out of turn */
	uint64_t used;                /* their pb_cost() */
};

struct port {
	int idx;
	char address[16];
	uint8_t mac[6];               /* the port's burnt-in MAC (EEPROM) */
	volatile uint32_t *regs;      /* mmap of resource0 */
	volatile uint8_t *config;     /* mmap of config (bus master lives here) */
	uint16_t device_id;           /* PCI device ID (--device) */
	uint32_t nvm_lms;             /* AUTOC.LMS the NVM loads for that part */
	int removed;                  /* `remove`: registers and config read all-ones */
	uint64_t removed_fill_at;     /* ns of the last refill with ones (regs_scan) */
	dev_t res_dev;
	ino_t res_ino;

	/* state derived from registers by the slow scan */
	int bus_master, link_up, link_forced_down, rx_en, tx_en;
	int rx_ok;                    /* RX usable during the current batch */
	uint32_t rx_dirty;            /* RDH/RX statistics to publish (port_publish) */
	uint32_t tx_dirty;            /* TDH/TX statistics to publish */
	uint64_t link_up_at;          /* ns, 0 = no link-up pending */
	uint64_t stall_until;         /* ns, TX consumes nothing before this */
	uint8_t filter_mac[6];        /* RAL0/RAH0 */
	int filter_valid;             /* RAH0.AV */
	uint32_t fctrl;
	int rx_cls;                   /* class of the frames being delivered (rx.c) */
	uint32_t max_frame;           /* largest accepted frame incl. FCS */
	uint32_t tx_max_len;          /* largest frame accepted for TX, without FCS */
	int strip_crc;
	uint32_t tx_min_wire;         /* HLREG0.TXPADEN: short frames leave padded to this (60), else 0 */
	uint32_t ra_seen[16][2];      /* RAL/RAH(n), n < 16, as last synced with their aliases */

	struct rxq rx;                /* RX queue 0, or the queue rss.cur while RSS delivers */
	struct ring txq[NUM_QUEUES];
	uint64_t tx_active;           /* bit q set = txq[q].desc valid */
	uint64_t tx_released;         /* bit q set = txq[q] released (see dma.c) */

	/* wiring */
	struct source src;
	struct replay rep;
	int sink, sink_check, cable;  /* cable = peer port index or -1 */
	struct tap tap;
	struct pbuf pb;               /* frames waiting in the RX packet buffer (pbuf.c) */
	struct irq irq;
	int64_t sink_last_seq;        /* -1 = no base yet */
	struct sink_flows *sink_flows;/* check=1: last sequence number per flow (sink-flows.c) */
	struct rss rss;
	FILE *pcap_out;
	int pcap_nano;                /* pcap_out has nanosecond timestamps (ts=ns) */

	/* statistics: totals since reset and what the registers got of them */
	uint64_t cnt[NCNT];
	uint64_t handed[NSTATREG];
	uint64_t wrote[NSTATREG];     /* what the model last stored in the register */
	uint64_t seen[NSTATREG];      /* the total at the last publish: unchanged, the count is quiet */
	uint64_t reads_seen;          /* watch_reads() at the last publish (watch.c) */
	uint64_t read_seen_at;        /* when a GPRC read not yet answered was seen, 0 = none */
	uint64_t access_at;           /* when watch.c last saw GPRC accessed */
	uint64_t seen_at;             /* when seen[] was taken */
	int takes;                    /* the driver writes 0 after its reads (stats.c) */
	int stats_left;               /* some total not handed over yet */

	/* scratch for a TX frame spread over several descriptors */
	uint32_t gather_len;
	int gather_bad;

	struct truth t;

	struct wire w;                /* wire.c */
	struct ptp ptp;               /* ptp.c */
	struct lat *lat;              /* latency.c: NULL = not recording */
};

struct model {
	int nports;
	struct port ports[MAX_PORTS];
	char dir[256];
	char sock_path[300];
	volatile int stop;
	uint64_t dma_gen;              /* bumped after each DMA rescan */
	uint64_t max_gap_ns;           /* longest pause of the data loop (stats, clear) */
};

extern struct model M;

/* clock.c: CLOCK_MONOTONIC in ns, the model's one clock */
uint64_t now_ns(void);

/* pcidev.c: device directories and register files */
int pcidev_create(struct port *p, const char *dir, const char *iommu);
void pcidev_destroy(struct port *p, const char *dir);
void remove_tree(const char *path);

/* regs.c: defaults, reset and the slow control-register scan */
void regs_reset(struct port *p);
void regs_scan(struct port *p, uint64_t now);
void port_set_link(struct port *p, int up);
void port_drop_queues(struct port *p);
void port_publish(struct port *p);
void stats_publish(struct port *p);
void stats_settle(struct port *p);
void port_remove(struct port *p);
uint32_t nvm_lms_of(uint16_t device_id);

/* intr.c: interrupt causes, masks and moderation */
void intr_reset(struct port *p);
void intr_scan(struct port *p, uint64_t now);
void intr_cause(struct port *p, int vec);

/* dma.c: finding the driver's hugepages and translating physical addresses */
void dma_scan(void);
void dma_maybe_scan(uint64_t now, int force);
void dma_request_scan(void);
void dma_check_owners(uint64_t now);
void dma_unmap_all(void);
uint8_t *dma_virt(uint64_t phys, uint32_t len);
extern uint64_t dma_last_key;       /* (phys >> 21) + 1 of the last page found, 0 = none */
extern uint8_t *dma_last_virt;

/*
 * dma_virt() for the data path: buffers of one batch nearly always lie in the
 * page of the previous one, so that case is a compare and an add here, inline;
 * everything else (other pages, page crossings, misses) goes to dma_virt().
 */
static inline uint8_t *dma_virt_fast(uint64_t phys, uint32_t len)
{
	uint64_t off = phys & (HUGE_SIZE - 1);
	if ((phys >> 21) + 1 == dma_last_key && off + len <= HUGE_SIZE)
		return dma_last_virt + off;
	return dma_virt(phys, len);
}
uint32_t crc32_eth(const uint8_t *data, uint32_t len);
int dma_owner_pid(int port);

/* rss.c: RSS, RX queues 1..63 and their statistics */
void rss_scan(struct port *p, uint64_t now);
void rss_drop(struct port *p);
void rss_begin(struct port *p);
void rss_end(struct port *p, uint64_t now);
uint64_t rss_free(const struct port *p);
void rss_publish(struct port *p);
uint64_t rss_route(struct port *p, const uint8_t *f, uint32_t len);
uint64_t rss_flow(struct port *p, struct flow *fl, uint32_t wb_lo);
uint64_t rss_qstat(const struct port *p, int counter, int drops);
int rss_json(const struct port *p, char *out, size_t n);
int rss_command(struct port *p, char **tok, int nt, char *reply, size_t n);
void rxq_scan(struct port *p, int q, struct rxq *x, uint64_t now);   /* regs.c */

/* flows.c: the source's flows; sink-flows.c: the sink's per-flow check */
int source_flows_build(struct port *p, char *err, size_t n);
void source_flows_free(struct source *s);
int source_option(struct source *s, const char *k, const char *v);
int sink_flows_on(struct port *p);
void sink_flows_off(struct port *p);
void sink_flow_check(struct port *p, const uint8_t *f, uint32_t len, uint32_t seq);
int sink_flows_json(const struct port *p, char *out, size_t n);

/* The flow of source frame seq (flows.c builds the table). */
static inline struct flow *source_flow(struct source *s, uint64_t seq)
{
	uint32_t i = s->sched ? s->sched[seq % FLOW_SCHED] : (uint32_t)(seq % s->flows);
	return &s->flow[i];
}

/* rx.c: delivering frames into an RX ring */
uint32_t rx_begin(struct port *p);
int rx_put(struct port *p, const uint8_t *frame, uint32_t len);
void rx_end(struct port *p, uint64_t now);
void rx_classify(const uint8_t *f, uint32_t len, uint32_t *lo, uint32_t *st);
int rx_active(const struct port *p);
int rx_visit(struct port *p, uint64_t now);

/* watch.c: hardware watchpoints on the drivers' reads of GPRC */
void watch_init(void);
void watch_client(pid_t pid, const unsigned long *regs_va);
void watch_forget(int (*is_client)(pid_t));
uint64_t watch_reads(int port);
int watch_any(int port);

/* pbuf.c: the RX packet buffer (RXPBSIZE(0)) */
/* What a frame of len bytes (without FCS) takes of the packet buffer: its
 * bytes, FCS and the buffer's own per-frame status (the model's estimate). */
static inline uint64_t pb_cost(uint32_t len) { return (uint64_t)len + 24; }
uint32_t pb_size(const struct port *p);
uint64_t pb_room(const struct port *p);
void pb_clear(struct port *p);
int pb_push(struct port *p, const uint8_t *f, uint32_t len, uint64_t due_ps);
int pb_drain(struct port *p);
int rx_from_buffer(struct port *p, const uint8_t *f, uint32_t len);   /* rx.c */

/* tx.c: consuming TX rings */
int tx_visit(struct port *p, uint64_t now);

/* traffic.c: source frames, sink checks, pcap files */
void source_build(struct port *p);
void source_fill_extra(struct port *p, uint8_t *buf, uint64_t seq);
uint32_t csum_add(const uint8_t *b, uint32_t n, uint32_t sum);
uint16_t csum_fold(uint32_t sum);
uint32_t crc32_update(uint32_t crc, const uint8_t *data, uint32_t len);

/*
 * Write frame number seq of the source into buf.  Inline, because it runs for
 * every source frame: frames of up to 64 bytes are copied as a fixed 64-byte
 * block (two or four vector moves instead of a libc call); the bytes past the
 * frame stay inside the buffer, whose size is at least 1 KiB (SRRCTL).
 */
static inline void source_fill(struct port *p, uint8_t *buf, uint64_t seq)
{
	struct source *s = &p->src;
	if (s->size <= 64)
		__builtin_memcpy(buf, s->tmpl, 64);
	else
		memcpy(buf, s->tmpl, s->size);
	uint32_t be = __builtin_bswap32((uint32_t)seq);   /* big-endian at offset 42 */
	memcpy(buf + 42, &be, 4);
	if (s->fill_extra)
		source_fill_extra(p, buf, seq);
}
void sink_check(struct port *p, const uint8_t *f, uint32_t len);
FILE *pcap_open_out(const char *file, int nano);
void pcap_write(FILE *f, const uint8_t *frame, uint32_t len, uint64_t ns, int nano);
int pcap_load(struct replay *r, const char *file, char *err, size_t errlen);

/* tap.c: a port wired to a Linux TAP interface */
struct pollfd;
int tap_attach(struct port *p, const char *name, const char *netns, char *err, size_t n);
void tap_detach(struct port *p);
int tap_rx(struct port *p);
void tap_tx(struct port *p, const uint8_t *f, uint32_t len);
void tap_sync(struct port *p);
int tap_pollfds(struct pollfd *fds);

/* wire.c: the wire clock (ps), line pacing, TX rate limiters, the `wire` command */
uint64_t wire_ps(uint64_t now_ns);
uint64_t wire_to_ns(uint64_t ps);
void wire_reset(struct port *p);
void wire_scan(struct port *p);
int wire_command(char **tok, int nt, char *reply, size_t n);
int wire_stats(struct port *p, char *out, size_t n);

/* ptp.c: SYSTIM and the RX/TX timestamp latches */
void ptp_reset(struct port *p);
void ptp_scan(struct port *p, uint64_t now);
void ptp_publish(struct port *p, uint64_t now);
void ptp_rx(struct port *p, const uint8_t *f, uint32_t len, uint64_t ps);
void ptp_tx(struct port *p, uint64_t ps);

/* latency.c: the model's truth of each source frame's way through a driver */
void lat_rx(struct port *p, uint64_t seq, uint64_t n, uint64_t t0, uint64_t t1);
void lat_tx(struct port *p, const uint8_t *f, uint32_t len, uint64_t now);
void lat_rx_frame(struct port *p, const uint8_t *f, uint32_t len, uint64_t now);
void lat_clear(struct port *p);
int lat_command(char **tok, int nt, char *reply, size_t n);
int lat_stats(struct port *p, char *out, size_t n);

/* reply.c: the replies of every command (JSON, one line) */
int reply_ok(char *reply, size_t n);
int reply_fail(char *reply, size_t n, const char *msg, const char *arg);

/* commands.c: one control command line to its reply; control.c: the fd a
 * command line brought along (SCM_RIGHTS); irqfd.c: interrupts to eventfds;
 * run.c: the command the model runs in its namespace */
int command_exec(char *line, char *reply, size_t n);
int control_take_fd(void);
void control_quit_after_reply(void);   /* quit: SIGTERM once the reply is written */
int irqfd_command(char **tok, int nt, int passed, char *reply, size_t n);
ssize_t irqfd_recv(int sock, char *buf, size_t len, int *passed);
void irqfd_signal(struct port *p, int v);
pid_t runner_start(char **argv, int *go_fd);

/* control.c: the socket and the commands */
int model_info(char *out, size_t n);  /* commands.c: where the model is, as JSON members */
int control_start(void);
void control_poll(void);             /* data thread: run a pending command */
void control_stop(void);

/* loop.c: the data thread */
void *data_thread(void *arg);

#endif
