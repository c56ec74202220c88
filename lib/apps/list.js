'use strict';

// `ixy list`: the network devices the machine (or IXY_PCI_ROOT) has, which ixy drives, the
// kernel's interfaces of each (in use or not: ixy takes none in use without --force) and
// who holds it.
const fs = require('fs');
const pci = require('../pci');
const { IxyError } = require('../errors');
const { driverFor, describeId, hex4 } = require('../drivers');
const { describeInterface, interfacesOf, readTables } = require('../iface');
const { deviceHolder, readLocks } = require('../claim');

const NETWORK_CLASS = 0x02;

// Every PCI function under the root, with what sysfs says of it: its kernel driver, the
// kernel's interfaces of it (lib/iface.js) and who holds it.
function listDevices() {
  let names;
  try {
    names = fs.readdirSync(pci.pciRoot());
  } catch (err) {
    throw new IxyError('ENODEV', `cannot list PCI devices in ${pci.pciRoot()}: ${err.code}`);
  }
  let read = null;
  const tables = () => read || (read = readTables());
  const locks = readLocks();
  return names
    .filter((name) => pci.ADDRESS_FORMAT.test(name))
    .sort()
    .map((address) => ({
      ...pci.readIdentity(address),
      driver: pci.boundDriver(address),
      interfaces: interfacesOf(pci.deviceDir(address), tables),
      holder: deviceHolder(address, locks),
    }));
}

function list({ all = false, out = process.stdout } = {}) {
  const devices = listDevices().filter((d) => all || (d.class >> 16) === NETWORK_CLASS || driverFor(d));
  if (devices.length === 0) {
    out.write(`no network devices in ${pci.pciRoot()}\n`);
    return devices;
  }
  out.write(`${'address'.padEnd(14)}${'id'.padEnd(11)}${'kernel driver'.padEnd(15)}${'ixy'.padEnd(8)}name\n`);
  for (const d of devices) {
    const driver = driverFor(d);
    out.write(`${d.address.padEnd(14)}${`${hex4(d.vendor)}:${hex4(d.device)}`.padEnd(11)}${(d.driver || '-').padEnd(15)}${(driver ? driver.name : 'no').padEnd(8)}${describeId(d)}\n`);
    const indent = ' '.repeat(14);
    for (const i of d.interfaces) {
      out.write(`${indent}interface ${describeInterface(i)}${i.active ? ': in use, ixy takes it only with --force' : ''}\n`);
    }
    if (d.holder) out.write(`${indent}held by pid ${d.holder.pid}: ${d.holder.command}\n`);
  }
  return devices;
}

module.exports = { list, listDevices };
