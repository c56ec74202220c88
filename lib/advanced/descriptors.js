'use strict';

// Advanced descriptors, 16 bytes each, seen as four 32-bit words (the rings are Uint32Arrays,
// and the queues index word k of descriptor i as ring[(i << 2) + k]).
// Receive: 82599 datasheet 7.1.6, 82576 datasheet 7.1.5; transmit: 82599 7.2.3.2.4, 82576
// 7.2.2.3. The fields used here sit at the same bits on both. The driver writes the "read" format and
// the NIC overwrites it with the "write-back" format.

module.exports = {
  DESCRIPTOR_BYTES: 16,

  // RX read format: words 0-1 packet buffer address, words 2-3 header buffer address (0).
  // RX write-back format: word 2 extended status (bits 19:0) and errors (31:20),
  // word 3 packet length (15:0) and VLAN tag (31:16). The error bits differ between the
  // two NICs: each register layout names them (RXD_ERR_*).
  RXD_STAT_DD: 1 << 0, // descriptor done
  RXD_STAT_EOP: 1 << 1, // end of packet
  RXD_STAT_UDPCS: 1 << 4, // the frame is UDP and its checksum was checked
  RXD_STAT_L4CS: 1 << 5, // the TCP/UDP checksum was checked
  RXD_STAT_IPCS: 1 << 6, // the IPv4 header checksum was checked

  // TX advanced data descriptor: words 0-1 buffer address, word 2 DTALEN (15:0), DTYP
  // (23:20) and DCMD (31:24), word 3 PAYLEN (31:14). Write-back: word 3 bit 0 is STA.DD.
  TXD_DTYP_DATA: 3 << 20,
  TXD_DCMD_EOP: 1 << 24, // end of packet
  TXD_DCMD_IFCS: 1 << 25, // insert FCS
  TXD_DCMD_RS: 1 << 27, // report status: write back DD
  TXD_DCMD_DEXT: 1 << 29, // advanced descriptor
  TXD_PAYLEN_SHIFT: 14,
  TXD_STAT_DD: 1 << 0,
};
