'use strict';

// Which driver serves which PCI device, by vendor and device ID. `ixy.open`, `ixy list`
// and every app decide through this table only.
const INTEL = 0x8086;
const VIRTIO = 0x1af4;

// ixgbe family: 82599 (tested on the device model), X540 and X550 (same queues and
// descriptors; link setup differs and is untested here). Device IDs as Intel assigns them.
const IXGBE_DEVICES = new Map([
  [0x10f7, '82599 10G KX4'],
  [0x10f8, '82599 10G backplane'],
  [0x10f9, '82599 10G CX4'],
  [0x10fb, '82599ES 10G SFI/SFP+'],
  [0x10fc, '82599 10G XAUI'],
  [0x1514, '82599 10G KX4 mezzanine'],
  [0x1517, '82599 10G KR'],
  [0x151c, '82599 10G T3 LOM'],
  [0x1529, '82599 10G SFP+ FCoE'],
  [0x152a, '82599 10G backplane FCoE'],
  [0x154d, '82599 10G SFP+ SF2'],
  [0x1557, '82599EN 10G SFP+'],
  [0x1528, 'X540-AT2 10GBASE-T'],
  [0x1560, 'X540 10GBASE-T'],
  [0x1563, 'X550-T 10GBASE-T'],
  [0x15d1, 'X550-T1 10GBASE-T'],
]);

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
    describe: (id) => `Intel ${IXGBE_DEVICES.get(id.device)}`,
    load: () => require('./ixgbe/device').IxgbeDevice,
  },
  {
    name: 'igb',
    matches: (id) => id.vendor === INTEL && IGB_DEVICES.has(id.device),
    describe: (id) => `Intel ${IGB_DEVICES.get(id.device)}`,
    load: () => require('./igb/device').IgbDevice,
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

module.exports = { driverFor, describeId, hex4 };
