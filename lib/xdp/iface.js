'use strict';

// Kernel network interfaces as AF_XDP opens them: names `xdp:<ifname>[@queue]`, their index,
// whether they are up, how many RX queues they have (sysfs, /sys/class/net).
const fs = require('fs');
const path = require('path');
const { IxyError, shown } = require('../host/errors');

const NET = '/sys/class/net';
const IFF_UP = 0x1;
const PREFIX = 'xdp:';

function isXdpName(name) {
  return typeof name === 'string' && name.startsWith(PREFIX);
}

// 'xdp:eth1' -> { iface: 'eth1', queue: null }; 'xdp:eth1@3' -> { iface: 'eth1', queue: 3 }.
function parseName(name) {
  const m = /^xdp:([^\s/@:]{1,15})(?:@(\d{1,4}))?$/.exec(name);
  if (m === null) {
    throw new IxyError('EINVAL', `${shown(name)} is not an AF_XDP interface name: xdp:<interface> or xdp:<interface>@<queue>, e.g. xdp:eth0 or xdp:eth0@3`);
  }
  return { iface: m[1], queue: m[2] === undefined ? null : Number(m[2]) };
}

function read(iface, file) {
  return fs.readFileSync(path.join(NET, iface, file), 'utf8').trim();
}

// The interface's index, its RX queue count and its MAC; ENODEV or ENETDOWN otherwise.
function describe(iface) {
  if (!fs.existsSync(path.join(NET, iface))) {
    throw new IxyError('ENODEV', `there is no network interface '${iface}' in this namespace ('ip link' lists them)`);
  }
  if ((Number(read(iface, 'flags')) & IFF_UP) === 0) {
    throw new IxyError('ENETDOWN', `${iface} is down: bring it up first (ip link set ${iface} up)`);
  }
  return { ifindex: Number(read(iface, 'ifindex')), rxQueues: queueCount(iface), mac: read(iface, 'address') };
}

function queueCount(iface) {
  try {
    return Math.max(1, fs.readdirSync(path.join(NET, iface, 'queues')).filter((q) => q.startsWith('rx-')).length);
  } catch {
    return 1;
  }
}

// Mb/s as the driver reports it; 0 when the link is down, a nominal 10000 when it is up and
// the driver tells no speed (veth tells 10000 itself).
function linkSpeed(iface) {
  try {
    if (read(iface, 'operstate') === 'down' || read(iface, 'carrier') !== '1') return 0;
  } catch {
    return 0;
  }
  try {
    const speed = Number(read(iface, 'speed'));
    return speed > 0 ? speed : 10000;
  } catch {
    return 10000;
  }
}

// What `ixy list` shows: every interface of this namespace but loopback, with its driver,
// queues and state.
function listInterfaces() {
  let names;
  try {
    names = fs.readdirSync(NET);
  } catch {
    return [];
  }
  return names.filter((n) => n !== 'lo').sort().map((iface) => {
    let driver = '';
    try {
      driver = path.basename(fs.readlinkSync(path.join(NET, iface, 'device', 'driver')));
    } catch {
      try {
        driver = /DEVTYPE=(\S+)/.exec(read(iface, 'uevent'))?.[1] || 'virtual';
      } catch {
        driver = 'virtual';
      }
    }
    let up = false;
    try {
      up = (Number(read(iface, 'flags')) & IFF_UP) !== 0;
    } catch { /* gone meanwhile */ }
    return { name: `${PREFIX}${iface}`, iface, driver, queues: queueCount(iface), up };
  });
}

module.exports = { PREFIX, isXdpName, parseName, describe, linkSpeed, listInterfaces };
