'use strict';

// `ixy list`: the network devices the machine (or IXY_PCI_ROOT) has, which ixy drives, the
// kernel's interfaces of each (in use or not: ixy takes none in use without --force) and
// who holds it.
const pci = require('../host/pci');
const { driverFor, describeId, hex4 } = require('../driver-table');
const { describeInterface } = require('../host/iface');
const { listDevices } = require('../host/list-devices');
const { printable } = require('../host/printable');
const { listInterfaces } = require('../xdp/iface');

const NETWORK_CLASS = 0x02;

// Every line goes through printable(): driver, interface and holder names come from files
// and processes that anyone may have made.
function list({ all = false, out: stream = process.stdout } = {}) {
  const out = { write: (text) => stream.write(text.split('\n').map(printable).join('\n')) };
  const devices = listDevices().filter((d) => all || (d.class >> 16) === NETWORK_CLASS || driverFor(d));
  if (devices.length === 0) {
    out.write(`no network devices in ${pci.pciRoot()}\n`);
    listXdp(out);
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
  listXdp(out);
  return devices;
}

// The kernel's interfaces in this network namespace, which AF_XDP opens whatever their NIC
// (lib/xdp/): the kernel keeps them, and frames of the queues ixy opens come to ixy.
function listXdp(out) {
  const ifaces = listInterfaces();
  if (ifaces.length === 0) return;
  out.write(`\nthrough AF_XDP (the kernel keeps the NIC; open as xdp:<interface> or xdp:<interface>@<queue>):\n`);
  for (const i of ifaces) {
    out.write(`  ${i.name.padEnd(22)}${i.driver.padEnd(15)}${`${i.queues} queue${i.queues === 1 ? '' : 's'}`.padEnd(11)}${i.up ? 'up' : 'down: ip link set ' + i.iface + ' up first'}\n`);
  }
}

module.exports = { list };
