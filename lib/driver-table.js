'use strict';

// Which driver serves which PCI device, by vendor and device ID. `ixy.open`, `ixy list`
// and every app decide through this table only. Each Intel driver owns its list of IDs.
const { IXGBE_DEVICES, TESTED_ON_HARDWARE } = require('./intel/ixgbe/ids');
const { IGB_DEVICES } = require('./intel/igb/ids');

const INTEL = 0x8086;
const VIRTIO = 0x1af4;

const DRIVERS = [
  {
    name: 'ixgbe',
    matches: (id) => id.vendor === INTEL && IXGBE_DEVICES.has(id.device),
    describe: (id) => `Intel ${IXGBE_DEVICES.get(id.device).name}${id.device === TESTED_ON_HARDWARE ? '' : ' (untested on hardware)'}`,
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

module.exports = { driverFor, describeId, hex4 };
