'use strict';

// What the kernel does when sysfs's PCI files are written, done to a fake tree (the root's
// parent stands for /sys/bus/pci: devices/, drivers/, drivers_probe), so that `ixy bind`
// and `ixy unbind` can be tested without a NIC. Loaded in-process (install()) or into a
// child with NODE_OPTIONS=--require test/support/fake-kernel.js (it installs itself when
// IXY_FAKE_KERNEL=1). It follows Linux Documentation/ABI/testing/sysfs-bus-pci:
//   drivers/NAME/unbind <- ADDR  the device leaves the driver: its `driver` link and its
//                                network interfaces (`net/`) go
//   drivers_probe <- ADDR         an unbound device is bound to the driver its
//                                driver_override names, or, when that is empty, to the
//                                driver whose `ids` file lists its vendor and device
//                                ("8086 10fb" per line, as a driver's ID table would)
//   drivers/NAME/bind <- ADDR     an unbound device is bound to NAME, unless its
//                                driver_override names another driver
// A driver whose directory holds a file `refuses` takes no device (its probe fails).
// Every write still lands in its file, so tests can read what was written.
const fs = require('fs');
const path = require('path');

let realWriteSync = null;

function install() {
  if (realWriteSync !== null) return;
  realWriteSync = fs.writeSync;
  fs.writeSync = function fakeKernelWrite(fd, data, ...rest) {
    const n = realWriteSync.call(fs, fd, data, ...rest);
    let file;
    try {
      file = fs.readlinkSync(`/proc/self/fd/${fd}`);
    } catch {
      return n;
    }
    react(file, String(data).trim());
    return n;
  };
}

function uninstall() {
  if (realWriteSync === null) return;
  fs.writeSync = realWriteSync;
  realWriteSync = null;
}

function react(file, text) {
  const root = process.env.IXY_PCI_ROOT;
  if (!root) return;
  const bus = path.dirname(fs.realpathSync(root));
  const device = path.join(root, text);
  if (path.basename(file) === 'unbind' && path.dirname(path.dirname(file)) === path.join(bus, 'drivers')) {
    fs.rmSync(path.join(device, 'driver'), { force: true });
    fs.rmSync(path.join(device, 'net'), { recursive: true, force: true });
  } else if (file === path.join(bus, 'drivers_probe') && !fs.existsSync(path.join(device, 'driver'))) {
    const driver = matchingDriver(bus, device);
    if (driver !== null) bindTo(bus, device, driver);
  } else if (path.basename(file) === 'bind' && path.dirname(path.dirname(file)) === path.join(bus, 'drivers') && !fs.existsSync(path.join(device, 'driver'))) {
    const driver = path.basename(path.dirname(file));
    const override = fs.existsSync(path.join(device, 'driver_override')) ? fs.readFileSync(path.join(device, 'driver_override'), 'latin1').trim() : '';
    if (override === '' || override === '(null)' || override === driver) bindTo(bus, device, driver);
  }
}

function bindTo(bus, device, driver) {
  if (fs.existsSync(path.join(bus, 'drivers', driver, 'refuses'))) return;
  fs.symlinkSync(path.relative(device, path.join(bus, 'drivers', driver)), path.join(device, 'driver'));
}

function matchingDriver(bus, device) {
  const read = (f) => (fs.existsSync(f) ? fs.readFileSync(f, 'latin1').trim() : '');
  const override = read(path.join(device, 'driver_override'));
  const drivers = path.join(bus, 'drivers');
  if (override !== '') return fs.existsSync(path.join(drivers, override)) ? override : null;
  const id = `${read(path.join(device, 'vendor')).slice(2)} ${read(path.join(device, 'device')).slice(2)}`;
  for (const name of fs.readdirSync(drivers)) {
    if (read(path.join(drivers, name, 'ids')).split('\n').includes(id)) return name;
  }
  return null;
}

if (process.env.IXY_FAKE_KERNEL === '1') install();

module.exports = { install, uninstall };
