'use strict';

// What the machine (or IXY_PCI_ROOT) has: every PCI function with its identity, its kernel
// driver, the kernel's interfaces of it (lib/host/iface.js) and who holds it (lib/host/claim.js).
// require('ixy').listDevices() and `ixy list` show it.
const fs = require('fs');
const pci = require('./pci');
const { IxyError } = require('./errors');
const { interfacesOf, readTables } = require('./iface');
const { deviceHolder, readLocks } = require('./claim');

// Every PCI function under the root, with what sysfs says of it: its kernel driver, the
// kernel's interfaces of it (lib/host/iface.js) and who holds it.
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
    .map((address) => {
      const dir = pci.deviceDir(address);
      return {
        ...pci.readIdentity(address, dir),
        driver: pci.boundDriver(address, dir),
        interfaces: interfacesOf(dir, tables),
        holder: deviceHolder(address, { locks, dir }),
      };
    });
}

module.exports = { listDevices };
