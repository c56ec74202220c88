'use strict';

// `ixy list`: the network devices the machine (or IXY_PCI_ROOT) has, and which ixy drives.
const pci = require('../pci');
const { driverFor, describeId, hex4 } = require('../drivers');

const NETWORK_CLASS = 0x02;

function list({ all = false, out = process.stdout } = {}) {
  const devices = pci.listDevices().filter((d) => all || (d.class >> 16) === NETWORK_CLASS || driverFor(d));
  if (devices.length === 0) {
    out.write(`no network devices in ${pci.pciRoot()}\n`);
    return devices;
  }
  out.write(`${'address'.padEnd(14)}${'id'.padEnd(11)}${'kernel driver'.padEnd(15)}${'ixy'.padEnd(8)}name\n`);
  for (const d of devices) {
    const driver = driverFor(d);
    out.write(`${d.address.padEnd(14)}${`${hex4(d.vendor)}:${hex4(d.device)}`.padEnd(11)}${(d.driver || '-').padEnd(15)}${(driver ? driver.name : 'no').padEnd(8)}${describeId(d)}\n`);
  }
  return devices;
}

module.exports = { list };
