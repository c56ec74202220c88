'use strict';

// 82576 (and I350) registers used by the driver: byte offsets into BAR0 and the bits we touch,
// named as in the Intel 82576EB GbE Controller Datasheet (rev. 2.x), section 8 unless noted.
// The per-queue names (RDBAL, SRRCTL, RXDCTL, TDBAL, TXDCTL, ...) are also the `layout` the
// shared advanced-descriptor queues (lib/intel) use. Access is RW unless marked: RC
// registers clear when read (see CLEAR_ON_READ).

// Queues 0..15, one 0x40 block each (8.10, 8.12).
const rxQueueReg = (base) => (q) => base + 0x40 * q;
const txQueueReg = (base) => (q) => base + 0x40 * q;

const R = {
  // General (8.2)
  CTRL: 0x00000,
  CTRL_SLU: 1 << 6, // set link up (8.2.1)
  CTRL_RST: 1 << 26, // device reset, self-clearing
  STATUS: 0x00008,
  STATUS_LU: 1 << 1, // link up (8.2.2)
  STATUS_SPEED_MASK: 3 << 6, // 00: 10, 01: 100, 1x: 1000 Mb/s
  STATUS_SPEED_10: 0 << 6,
  STATUS_SPEED_100: 1 << 6,
  STATUS_SPEED_1000: 2 << 6,
  EEC: 0x00010,
  EEC_AUTO_RD: 1 << 9, // EEPROM auto-read done (8.2.3)
  CTRL_EXT: 0x00018,
  // MDI control (8.2.4): reads and writes registers of the internal PHY (address 1)
  MDIC: 0x00020,
  MDIC_REGADD_SHIFT: 16,
  MDIC_PHYADD_SHIFT: 21,
  MDIC_PHY_INTERNAL: 1,
  MDIC_OP_WRITE: 1 << 26,
  MDIC_OP_READ: 2 << 26,
  MDIC_READY: 1 << 28,
  MDIC_ERROR: 1 << 30,
  // PHY control register, PHY register 0 (IEEE 802.3 clause 22.2.4.1)
  PHY_CTRL: 0,
  PHY_CTRL_RESTART_AN: 1 << 9,
  PHY_CTRL_AN_ENABLE: 1 << 12,

  // Interrupts (8.8): masked while ixy polls; with idle 'interrupt' (VFIO only) RX queues
  // raise MSI-X vector 0, which masks itself when it fires (7.3).
  IMC: 0x000d8,
  IMC_ALL: 0xffffffff,
  EIMS: 0x01524, // extended mask set: bit n enables MSI-X vector n
  EIMC: 0x01528,
  EIMC_ALL: 0xffffffff,
  EIAC: 0x0152c, // auto clear: the vector's EICR bit clears when it is sent
  EIAM: 0x01530, // auto mask: the vector's EIMS bit clears when it is sent
  GPIE: 0x01514,
  GPIE_NSICR: 1 << 0, // reading EICR does not clear it
  GPIE_MULTIPLE_MSIX: 1 << 4, // one vector per cause, as IVAR maps them
  GPIE_EIAME: 1 << 30, // EIAM applies to MSI-X vectors too
  GPIE_PBA_SUPPORT: 1 << 31, // MSI-X pending bits in the PBA table
  IVAR_RX: (q) => 0x01700 + 4 * (q & 7), // the IVAR holding RX queue q's entry ...
  IVAR_RX_SHIFT: (q) => 16 * (q >> 3), // ... at this bit
  IVAR_VALID: 0x80,
  EITR: (i) => 0x01680 + 4 * i,

  // Receive (8.10)
  RCTL: 0x00100,
  RCTL_EN: 1 << 1,
  RCTL_UPE: 1 << 3, // unicast promiscuous
  RCTL_MPE: 1 << 4, // multicast promiscuous
  RCTL_BAM: 1 << 15, // accept broadcast
  RCTL_SECRC: 1 << 26, // strip the Ethernet CRC
  RAL: (i) => 0x05400 + 8 * i,
  RAH: (i) => 0x05404 + 8 * i,
  RAH_AV: 1 << 31, // address valid
  // Receive-side scaling (7.1.2; lib/intel/rss.js). With RXCSUM.PCSD the write-back's
  // second dword carries the RSS hash instead of the fragment checksum and IP id.
  RXCSUM: 0x05000,
  RXCSUM_PCSD: 1 << 13,
  MRQC: 0x05818, // multiple receive queues command
  MRQC_ENABLE_RSS: 0x2, // multiple receive queues enable 010b: RSS only (no VMDq), 16 queues
  MRQC_RSS_FIELD_IPV4_TCP: 1 << 16,
  MRQC_RSS_FIELD_IPV4: 1 << 17,
  MRQC_RSS_FIELD_IPV4_UDP: 1 << 22,
  RETA: (i) => 0x05c00 + 4 * i, // 32 registers of 4 one-byte entries
  RETA_COUNT: 32,
  RSSRK: (i) => 0x05c80 + 4 * i, // 10 registers: the 40-byte key
  RSSRK_COUNT: 10,
  RDBAL: rxQueueReg(0x0c000),
  RDBAH: rxQueueReg(0x0c004),
  RDLEN: rxQueueReg(0x0c008),
  SRRCTL: rxQueueReg(0x0c00c),
  SRRCTL_BSIZEPACKET_MASK: 0x7f, // in 1 KiB units
  SRRCTL_DESCTYPE_MASK: 7 << 25,
  SRRCTL_DESCTYPE_ADV_ONEBUF: 1 << 25,
  SRRCTL_DROP_EN: 1 << 31,
  RDH: rxQueueReg(0x0c010),
  RDT: rxQueueReg(0x0c018),
  RXDCTL: rxQueueReg(0x0c028),
  RXDCTL_ENABLE: 1 << 25,
  RQDPC: rxQueueReg(0x0c030), // RC: frames queue q dropped for want of a descriptor (SRRCTL.DROP_EN)

  // Transmit (8.12)
  TCTL: 0x00400,
  TCTL_EN: 1 << 1,
  TCTL_PSP: 1 << 3, // pad short packets
  TDBAL: txQueueReg(0x0e000),
  TDBAH: txQueueReg(0x0e004),
  TDLEN: txQueueReg(0x0e008),
  TDH: txQueueReg(0x0e010),
  TDT: txQueueReg(0x0e018),
  TXDCTL: txQueueReg(0x0e028),
  TXDCTL_ENABLE: 1 << 25,
  // PTHRESH 8, HTHRESH 1, WTHRESH 1 (fields of 5 bits here, 8.12.13): prefetch in bursts,
  // write status back per descriptor so that drained() sees the last one promptly.
  TXDCTL_THRESHOLDS_MASK: 0x1f1f1f,
  TXDCTL_THRESHOLDS: 8 | (1 << 8) | (1 << 16),

  // Statistics (8.19), all RC
  CRCERRS: 0x04000, // frames with a bad FCS
  MPC: 0x04010, // missed packets: no room in the receive FIFO or no descriptor
  GPRC: 0x04074,
  GPTC: 0x04080,
  GORCL: 0x04088,
  GORCH: 0x0408c,
  GOTCL: 0x04090,
  GOTCH: 0x04094,

  // Receive descriptor write-back errors (7.1.5.2, extended error field).
  RXD_ERR_RXE: 1 << 31, // a MAC error (CRC, symbol, sequence, carrier extension)
  RXD_ERR_IPE: 1 << 30, // IPv4 header checksum wrong
  RXD_ERR_L4E: 1 << 29, // TCP/UDP checksum wrong
  // What makes a frame broken, not merely a wrong checksum: RXE and the CE (bit 24), SE
  // (25), SEQ (26) and CXE (28) errors.
  RXD_FRAME_ERRORS: (1 << 31) | (1 << 28) | (1 << 26) | (1 << 25) | (1 << 24),
  // TX frames shorter than this are not allowed with TCTL.PSP (the NIC pads to 64 bytes).
  TX_MIN_LENGTH: 17,
  // The smallest BAR0 that holds every register above (TXDCTL(15) at 0xe3e8, rounded up
  // to a power of two).
  MIN_BAR_BYTES: 64 << 10,
};

// What the shared NIC code (lib/intel/nic.js) reads by role rather than by name.
R.RECEIVER_ENABLE = [R.RCTL, R.RCTL_EN];
R.TRANSMITTER_ENABLE = [R.TCTL, R.TCTL_EN];
R.PROMISCUOUS = [R.RCTL, R.RCTL_UPE | R.RCTL_MPE];
R.LINK = {
  at: R.STATUS, up: R.STATUS_LU, speedMask: R.STATUS_SPEED_MASK,
  mbps: { [R.STATUS_SPEED_10]: 10, [R.STATUS_SPEED_100]: 100, [R.STATUS_SPEED_1000]: 1000, [3 << 6]: 1000 },
};
// With SRRCTL.DROP_EN (several RX queues) a queue without a free descriptor drops at once
// and counts in its RQDPC; MPC counts what overflowed the receive FIFO.
R.MISSED_COUNTERS = [R.MPC, ...Array.from({ length: 16 }, (_, q) => R.RQDPC(q))];
R.QUEUE_DROPS = R.RQDPC; // queue q's own drop counter
R.ERROR_COUNTERS = [R.CRCERRS];
R.CLEAR_ON_READ = [R.GPRC, R.GPTC, R.GORCL, R.GORCH, R.GOTCL, R.GOTCH, ...R.MISSED_COUNTERS, ...R.ERROR_COUNTERS];
// What lib/intel/rss.js writes to MRQC: RSS only, hashing IPv4 addresses and TCP/UDP ports.
R.MRQC_RSS = R.MRQC_ENABLE_RSS | R.MRQC_RSS_FIELD_IPV4 | R.MRQC_RSS_FIELD_IPV4_TCP | R.MRQC_RSS_FIELD_IPV4_UDP;
// What the NIC base's setupInterrupts() sets in GPIE for MSI-X with auto-masking.
R.GPIE_MSIX = R.GPIE_NSICR | R.GPIE_MULTIPLE_MSIX | R.GPIE_EIAME | R.GPIE_PBA_SUPPORT;

module.exports = R;
