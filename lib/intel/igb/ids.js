'use strict';

// The PCI device IDs the igb driver serves (vendor 0x8086): the 82576 (tested against
// QEMU's igb model) and the I350 (same registers for what ixy uses; untested).
const IGB_DEVICES = new Map([
  [0x10c9, '82576 1G copper'],
  [0x10e6, '82576 1G fiber'],
  [0x10e7, '82576 1G SerDes'],
  [0x10e8, '82576 1G quad copper'],
  [0x1526, '82576 1G quad copper ET2'],
  [0x150a, '82576NS 1G copper'],
  [0x1518, '82576NS 1G SerDes'],
  [0x1521, 'I350 1G copper'],
  [0x1522, 'I350 1G fiber'],
  [0x1523, 'I350 1G backplane'],
  [0x1524, 'I350 1G SGMII'],
]);

module.exports = { IGB_DEVICES };
