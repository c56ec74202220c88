'use strict';

// 82599 registers used by the driver: byte offsets into BAR0 and the bits we touch, named as
// in the Intel 82599 10 GbE Controller Datasheet (rev. 3.3), section 8.2.3 unless noted.
// The driver accesses BAR0 as a Uint32Array, so an offset becomes an index with `>> 2`.
// Access is RW unless marked: RC registers clear when read (see CLEAR_ON_READ).

// Per-queue registers: queues 0..63 sit in one block, 64..127 in another (8.2.3.8, 8.2.3.9).
const rxQueueReg = (low, high) => (q) => (q < 64 ? low + 0x40 * q : high + 0x40 * (q - 64));
const txQueueReg = (base) => (q) => base + 0x40 * q;

const R = {
  // General control (8.2.3.1)
  CTRL: 0x00000,
  CTRL_LNK_RST: 1 << 3, // link reset
  CTRL_RST: 1 << 26, // device reset, self-clearing
  STATUS: 0x00008,
  CTRL_EXT: 0x00018,
  CTRL_EXT_NS_DIS: 1 << 16, // no-snoop disable

  // EEPROM (8.2.3.2.1)
  EEC: 0x10010,
  EEC_ARD: 1 << 9, // auto-read done

  // Interrupts (8.2.3.5): masked while ixy polls; with idle 'interrupt' (VFIO only) the RX
  // queues raise MSI-X vector 0, which clears its cause and masks itself when sent (7.3).
  EIAC: 0x00810, // auto clear (MSI-X): the vector's EICR bit clears when it is sent
  EITR: (n) => 0x00820 + 4 * n, // n < 24; ITR_INTERVAL in bits 11:3, 2 us units, 0: none
  EIMS: 0x00880, // mask set: bit n enables vector n
  EIMC: 0x00888, // mask clear
  EIMC_ALL: 0x7fffffff,
  EIAM: 0x00890, // auto mask (GPIE.EIAME): the vector's EIMS bit clears when it is sent
  GPIE: 0x00898,
  GPIE_MULTIPLE_MSIX: 1 << 4, // MSI-X: one vector per cause, as IVAR maps them
  GPIE_EIAME: 1 << 30, // EIAM applies to MSI-X vectors
  GPIE_PBA_SUPPORT: 1 << 31, // MSI-X pending bits in the PBA
  IVAR_RX: (q) => 0x00900 + 4 * (q >> 1), // the IVAR holding RX queue q's entry ...
  IVAR_RX_SHIFT: (q) => 16 * (q & 1), // ... at this bit
  IVAR_VALID: 0x80, // IVAR.INT_ALLOC_VAL: the entry is valid

  // Receive (8.2.3.8)
  RXCTRL: 0x03000,
  RXCTRL_RXEN: 1 << 0,
  RDRXCTL: 0x02f00,
  RDRXCTL_CRCSTRIP: 1 << 1,
  RDRXCTL_DMAIDONE: 1 << 3,
  RXPBSIZE: (i) => 0x03c00 + 4 * i,
  RXPBSIZE_512KB: 512 << 10, // the whole RX packet buffer
  FCTRL: 0x05080,
  FCTRL_MPE: 1 << 8, // multicast promiscuous
  FCTRL_UPE: 1 << 9, // unicast promiscuous
  FCTRL_BAM: 1 << 10, // broadcast accept
  RAL: (i) => 0x0a200 + 8 * i,
  RAH: (i) => 0x0a204 + 8 * i,
  RDBAL: rxQueueReg(0x01000, 0x0d000),
  RDBAH: rxQueueReg(0x01004, 0x0d004),
  RDLEN: rxQueueReg(0x01008, 0x0d008),
  RDH: rxQueueReg(0x01010, 0x0d010),
  RDT: rxQueueReg(0x01018, 0x0d018),
  RXDCTL: rxQueueReg(0x01028, 0x0d028),
  RXDCTL_ENABLE: 1 << 25,
  SRRCTL: rxQueueReg(0x01014, 0x0d014),
  SRRCTL_BSIZEPACKET_MASK: 0x1f, // in 1 KiB units
  SRRCTL_DESCTYPE_MASK: 7 << 25,
  SRRCTL_DESCTYPE_ADV_ONEBUF: 1 << 25,
  SRRCTL_DROP_EN: 1 << 28,
  DCA_RXCTRL: rxQueueReg(0x0100c, 0x0d00c),
  // RSS (7.1.2.8; registers 8.2.3.7): see lib/intel/rss.js
  RXCSUM: 0x05000, // 8.2.3.7.5
  RXCSUM_PCSD: 1 << 13, // the write-back carries the RSS hash, not the fragment checksum
  MRQC: 0x0ec80, // 8.2.3.7.12
  MRQC_MRQE_RSS: 0x1, // MRQE 0001b: RSS only
  MRQC_RSS_FIELD_IPV4_TCP: 1 << 16,
  MRQC_RSS_FIELD_IPV4: 1 << 17,
  MRQC_RSS_FIELD_IPV4_UDP: 1 << 22,
  RETA: (i) => 0x0eb00 + 4 * i, // 32 registers of 4 one-byte entries
  RETA_COUNT: 32,
  RSSRK: (i) => 0x0eb80 + 4 * i, // 10 registers: the 40-byte key
  RSSRK_COUNT: 10,
  DCA_RXCTRL_RESERVED_BIT12: 1 << 12, // reads 1 after reset, must be written 0 (8.2.3.11.1)

  // MAC (8.2.3.22)
  HLREG0: 0x04240,
  HLREG0_TXCRCEN: 1 << 0,
  HLREG0_RXCRCSTRP: 1 << 1,
  HLREG0_TXPADEN: 1 << 10,
  AUTOC: 0x042a0,
  AUTOC_LMS_MASK: 7 << 13,
  AUTOC_LMS_10G_SERIAL: 3 << 13, // 10 GbE serial link (SFI, for SFP+ modules)
  AUTOC_10G_PMA_PMD_MASK: 3 << 7,
  AUTOC_10G_XAUI: 0 << 7,
  AUTOC_AN_RESTART: 1 << 12,
  LINKS: 0x042a4,
  LINKS_UP: 1 << 30,
  LINKS_SPEED_MASK: 3 << 28,
  LINKS_SPEED_100M: 1 << 28,
  LINKS_SPEED_1G: 2 << 28,
  LINKS_SPEED_10G: 3 << 28,

  // Transmit (8.2.3.9)
  DMATXCTL: 0x04a80,
  DMATXCTL_TE: 1 << 0,
  DTXMXSZRQ: 0x08100,
  RTTDCS: 0x04900,
  RTTDCS_ARBDIS: 1 << 6,
  TXPBSIZE: (i) => 0x0cc00 + 4 * i,
  TXPBSIZE_40KB: 40 << 10,
  TDBAL: txQueueReg(0x06000),
  TDBAH: txQueueReg(0x06004),
  TDLEN: txQueueReg(0x06008),
  TDH: txQueueReg(0x06010),
  TDT: txQueueReg(0x06018),
  TXDCTL: txQueueReg(0x06028),
  TXDCTL_ENABLE: 1 << 25,
  // PTHRESH 36, HTHRESH 8, WTHRESH 4: recommended for throughput (8.2.3.9.10)
  TXDCTL_THRESHOLDS_MASK: 0x3f3f3f,
  TXDCTL_THRESHOLDS: 36 | (8 << 8) | (4 << 16),
  // The advanced TX data descriptor's MAC field: timestamp this frame (7.2.3.2.4, 7.9.1).
  TXD_MAC_1588: 1 << 19,
  // The per-queue TX rate limiter (7.7.2.4; DCB transmit registers, 8.2.3.10): RTTDQSEL
  // selects the queue whose RTTBCNRC (RS_ENA, the rate factor RF_INT.RF_DEC) is written.
  RTTDQSEL: 0x04904,
  RTTBCNRC: 0x04984,
  RTTBCNRC_RS_ENA: 1 << 31,

  // IEEE 1588 (7.9; 8.2.3.26): the clock SYSTIM and its increment TIMINCA, the one-deep RX
  // and TX timestamp latches, and an EType queue filter (ETQF, 8.2.3.7.20) for PTP frames.
  TSYNCRXCTL: 0x05188,
  TSYNCRXCTL_RXTT: 1 << 0, // a timestamp is latched
  TSYNCRXCTL_TYPE_EVENT_V2: 5 << 1, // Type 101b: every PTP V2 event message
  TSYNCRXCTL_EN: 1 << 4,
  RXSTMPL: 0x051e8,
  RXSTMPH: 0x051a4,
  TSYNCTXCTL: 0x08c00,
  TSYNCTXCTL_TXTT: 1 << 0, // a timestamp is latched
  TSYNCTXCTL_EN: 1 << 4,
  TXSTMPL: 0x08c04,
  TXSTMPH: 0x08c08,
  SYSTIML: 0x08c0c,
  SYSTIMH: 0x08c10,
  TIMINCA: 0x08c14,
  ETQF: (n) => 0x05128 + 4 * n, // EType queue filters, n < 8
  ETQF_1588: 1 << 30, // timestamp frames this filter matches
  ETQF_FILTER_EN: 1 << 31,

  // Statistics (8.2.3.23), all RC
  CRCERRS: 0x04000, // frames with a bad FCS
  RLEC: 0x04040, // frames whose length field disagrees with their size
  RUC: 0x040a4, // undersize frames: under 64 bytes with a good FCS
  RFC: 0x040a8, // fragments: under 64 bytes with a bad FCS
  ROC: 0x040ac, // oversize frames: over the maximum frame size with a good FCS
  RJC: 0x040b0, // jabbers: over the maximum frame size with a bad FCS
  GPRC: 0x04074,
  GPTC: 0x04080,
  GORCL: 0x04088,
  GORCH: 0x0408c,
  GOTCL: 0x04090,
  GOTCH: 0x04094,
  MPC: (i) => 0x03fa0 + 4 * i, // missed packets: packet buffer i (0..7) overflowed
  QPRDC: (q) => 0x01430 + 0x40 * q, // frames queue q (0..15) dropped for want of a descriptor
  // Which of the 16 per-queue counters (QPRC, QPRDC) counts RX queue 4n + k: bits 8k+3:8k
  // of RQSMR(n), n < 32 (8.2.3.23; all 0 after reset: every queue into counter 0).
  RQSMR: (n) => 0x02300 + 4 * n,

  // Receive descriptor write-back errors (7.1.6.2, extended error field, bits 31:20).
  RXD_ERR_RXE: 1 << 29, // a MAC error: bad FCS, undersize, oversize, length or symbol error
  RXD_ERR_L4E: 1 << 30, // TCP/UDP checksum wrong (by an erratum also for UDP checksum 0: lib/intel/rings.js)
  RXD_ERR_IPE: 1 << 31, // IPv4 header checksum wrong
  RXD_FRAME_ERRORS: 1 << 29, // what makes a frame broken, not merely a wrong checksum: RXE
  // TX frames shorter than this are not allowed; the NIC pads them to 64 bytes itself (7.2.3.2.4).
  TX_MIN_LENGTH: 17,
  // The smallest BAR0 that holds every register above (EEC at 0x10010, rounded up to a power of two).
  MIN_BAR_BYTES: 128 << 10,
};

// What the shared NIC code (lib/intel/nic.js) reads by role rather than by name.
const range = (n, reg) => Array.from({ length: n }, (_, i) => reg(i));
R.RECEIVER_ENABLE = [R.RXCTRL, R.RXCTRL_RXEN];
R.TRANSMITTER_ENABLE = [R.DMATXCTL, R.DMATXCTL_TE];
R.PROMISCUOUS = [R.FCTRL, R.FCTRL_UPE | R.FCTRL_MPE];
R.LINK = {
  at: R.LINKS, up: R.LINKS_UP, speedMask: R.LINKS_SPEED_MASK,
  mbps: { [R.LINKS_SPEED_100M]: 100, [R.LINKS_SPEED_1G]: 1000, [R.LINKS_SPEED_10G]: 10000 },
};
// With SRRCTL.DROP_EN (several RX queues) a queue without a free descriptor drops at once
// and counts in its QPRDC; MPC counts what overflowed a packet buffer (8.2.3.8.7).
R.MISSED_COUNTERS = [...range(8, R.MPC), ...range(16, R.QPRDC)];
// Queue q's own drop counter (once RQSMR maps queue q to counter q: queue-stats.js).
R.QUEUE_DROPS = R.QPRDC;
// A frame with a bad FCS, a wrong length field, too short or too long counts in one of these.
R.ERROR_COUNTERS = [R.CRCERRS, R.RLEC, R.RUC, R.RFC, R.ROC, R.RJC];
R.CLEAR_ON_READ = [R.GPRC, R.GPTC, R.GORCL, R.GORCH, R.GOTCL, R.GOTCH, ...R.MISSED_COUNTERS, ...R.ERROR_COUNTERS];
// What lib/intel/rss.js writes to MRQC: RSS only, hashing IPv4 addresses and TCP/UDP ports.
R.MRQC_RSS = R.MRQC_MRQE_RSS | R.MRQC_RSS_FIELD_IPV4 | R.MRQC_RSS_FIELD_IPV4_TCP | R.MRQC_RSS_FIELD_IPV4_UDP;
// What the NIC base's setupInterrupts() sets in GPIE for MSI-X with auto-masking.
R.GPIE_MSIX = R.GPIE_MULTIPLE_MSIX | R.GPIE_EIAME | R.GPIE_PBA_SUPPORT;

module.exports = R;
