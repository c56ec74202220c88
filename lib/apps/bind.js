'use strict';

// `ixy bind` and `ixy unbind`: lib/rebind.js does the work; these say what it did, in one
// line each (driver and device names come from sysfs: printable() shows them safely).
const { bind, unbind } = require('../rebind');
const { printable } = require('../host/printable');

function bindCommand(address, { driver, force = false, out = process.stdout } = {}) {
  const r = bind(address, { driver, force });
  const group = r.iommuGroup === null ? '' : `; IOMMU group ${r.iommuGroup}: a user given /dev/vfio/${r.iommuGroup} may drive it`;
  out.write(printable(r.from === r.to ? `${address} is already bound to ${r.to}${group}` : `${address}: ${r.from || 'no driver'} -> ${r.to}${group}`) + '\n');
  if (r.groupPeers.length > 0) {
    const peers = printable(r.groupPeers.map((p) => `${p.address} (${p.driver})`).join(', '));
    out.write(`IOMMU group ${r.iommuGroup} also holds ${peers}: VFIO opens none of the group until they are bound to vfio-pci too (ixy bind ADDRESS) or to no driver\n`);
  }
  return r;
}

function unbindCommand(address, { force = false, out = process.stdout } = {}) {
  const r = unbind(address, { force });
  out.write(printable(r.from === r.to ? `${address} is already bound to its kernel driver ${r.to}` : `${address}: ${r.from || 'no driver'} -> ${r.to}`) + '\n');
  return r;
}

module.exports = { bindCommand, unbindCommand };
