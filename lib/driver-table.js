'use strict';

// Which driver serves which PCI device, by vendor and device ID. `ixy.open`, `ixy list`
// and every app decide through this table only.
const INTEL = 0x8086;
const VIRTIO = 0x1af4;

// ixgbe family: the 82599. How its link is set up depends on the port's media (4.6.4):
// the SFP+ parts (`sfp`) take a 10 GbE serial link (AUTOC.LMS = SFI); the backplane,
// CX4 and XAUI parts keep the link mode their NVM loaded into AUTOC. ixy has run on the
// 82599ES SFP+ (0x10fb) in the family's C driver and on the device model here, which also
// stands in for the other IDs' link modes; on real hardware those are untested. X540 and
// X550 are not listed: their copper PHYs need a link setup ixy does not do.
const IXGBE_DEVICES = new Map([
  [0x10f7, { name: '82599 10G KX4', sfp: false }],
  [0x10f8, { name: '82599 10G backplane', sfp: false }],
  [0x10f9, { name: '82599 10G CX4', sfp: false }],
  [0x10fb, { name: '82599ES 10G SFI/SFP+', sfp: true }],
  [0x10fc, { name: '82599 10G XAUI', sfp: false }],
  [0x1514, { name: '82599 10G KX4 mezzanine', sfp: false }],
  [0x1517, { name: '82599 10G KR', sfp: false }],
  [0x151c, { name: '82599 10G T3 LOM', sfp: false }],
  [0x1529, { name: '82599 10G SFP+ FCoE', sfp: true }],
  [0x152a, { name: '82599 10G backplane FCoE', sfp: false }],
  [0x154d, { name: '82599 10G SFP+ SF2', sfp: true }],
  [0x1557, { name: '82599EN 10G SFP+', sfp: true }],
]);

// Whether an 82599 device ID is an SFP+ part (see IXGBE_DEVICES).
function isSfp(deviceId) {
  const entry = IXGBE_DEVICES.get(deviceId);
  return entry !== undefined && entry.sfp;
}

// igb family: 82576 (tested against QEMU's igb model) and I350 (same registers for what
// ixy uses; untested).
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

const DRIVERS = [
  {
    name: 'ixgbe',
    matches: (id) => id.vendor === INTEL && IXGBE_DEVICES.has(id.device),
    describe: (id) => `Intel ${IXGBE_DEVICES.get(id.device).name}${id.device === 0x10fb ? '' : ' (untested on hardware)'}`,
    load: () => require('./intel/ixgbe/device').IxgbeDevice,
  },
  {
    name: 'igb',
    matches: (id) => id.vendor === INTEL && IGB_DEVICES.has(id.device),
    describe: (id) => `Intel ${IGB_DEVICES.get(id.device)}`,
    load: () => require('./intel/igb/device').IgbDevice,
  },
  {
    // virtio 1.1, 4.1.2: 1000 is the transitional (legacy-capable) network device,
    // 1041 (0x1040 + device type 1) the modern-only one.
    name: 'virtio',
    matches: (id) => id.vendor === VIRTIO && (id.device === 0x1000 || id.device === 0x1041),
    describe: (id) => (id.device === 0x1000 ? 'virtio-net (legacy/transitional)' : 'virtio-net (modern)'),
    load: () => require('./virtio/device').VirtioDevice,
  },
];

// The driver for a device identity ({vendor, device}), or null.
function driverFor(id) {
  return DRIVERS.find((d) => d.matches(id)) || null;
}

const hex4 = (n) => n.toString(16).padStart(4, '0');

function describeId(id) {
  const driver = driverFor(id);
  return driver ? driver.describe(id) : `${hex4(id.vendor)}:${hex4(id.device)} (class ${id.class.toString(16).padStart(6, '0')})`;
}

module.exports = { driverFor, describeId, hex4, isSfp };
