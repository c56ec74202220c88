'use strict';

// The kernel's network interfaces of a PCI device, and whether the machine uses them.
// Unbinding the kernel driver from a NIC whose interface is up, or carries addresses or
// routes, cuts the machine off that network (perhaps its only uplink, and the user's ssh
// session with it), so ixy refuses unless forced, as dpdk-devbind does.
//
// Everything comes from the kernel's own files: the interfaces are the `net/` directory
// of the device (`virtio*/net/` for virtio, whose netdev hangs off the virtio device), their
// state is that directory's `flags` and `operstate`, IPv6 addresses come from
// /proc/net/if_inet6 and routes from /proc/net/route and /proc/net/ipv6_route. IXY_PROC_NET
// names another directory of that shape (for tests, as IXY_PCI_ROOT does for sysfs). IPv4
// addresses are in no /proc file by interface: they come from `ip -o -4 addr show` when
// `ip` is there (an address on an interface that is up also shows as its subnet's route).
const fs = require('fs');
const path = require('path');
const { execFileSync } = require('child_process');
const { IxyError } = require('./errors');

const IFF_UP = 0x1; // include/uapi/linux/if.h

function procNet() {
  return process.env.IXY_PROC_NET || '/proc/net';
}

// The interface directories of the device directory `dir`: [{ name, dir }].
function interfaceDirs(dir) {
  const parents = [path.join(dir, 'net')];
  for (const name of readdir(dir)) if (/^virtio\d+$/.test(name)) parents.push(path.join(dir, name, 'net'));
  return parents.flatMap((parent) => readdir(parent).sort().map((name) => ({ name, dir: path.join(parent, name) })));
}

function readdir(dir) {
  try {
    return fs.readdirSync(dir);
  } catch {
    return [];
  }
}

function readText(file) {
  try {
    return fs.readFileSync(file, 'latin1');
  } catch {
    return '';
  }
}

// What the machine's tables say, read once for all the interfaces of a listing:
// name -> count, for addresses and for routes.
function readTables() {
  const addresses = new Map();
  const routes = new Map();
  const add = (map, name) => map.set(name, (map.get(name) || 0) + 1);
  // if_inet6: address index prefix-length scope flags name
  for (const line of lines(path.join(procNet(), 'if_inet6'))) add(addresses, line[5]);
  // route: a header, then Iface Destination Gateway ...
  for (const line of lines(path.join(procNet(), 'route')).slice(1)) add(routes, line[0]);
  // ipv6_route: the device is the last of ten fields
  for (const line of lines(path.join(procNet(), 'ipv6_route'))) add(routes, line[9]);
  for (const name of ipv4Interfaces()) add(addresses, name);
  return { addresses, routes };
}

function lines(file) {
  return readText(file).split('\n').map((l) => l.trim().split(/\s+/)).filter((f) => f.length > 1);
}

// The interface of each IPv4 address, from `ip -o -4 addr show` ("2: eth0    inet
// 192.0.2.2/24 ..."); none when `ip` is missing or fails.
function ipv4Interfaces() {
  let out;
  try {
    out = execFileSync('ip', ['-o', '-4', 'addr', 'show'], { encoding: 'latin1', stdio: ['ignore', 'pipe', 'ignore'], timeout: 5000 });
  } catch {
    return [];
  }
  return out.split('\n').map((l) => l.split(/\s+/)).filter((f) => f[2] === 'inet').map((f) => f[1].replace(/@.*$/, ''));
}

// The interfaces of the device directory `dir`, each { name, up, operstate, addresses,
// routes, active }. `tables()` gives readTables()'s answer: a listing of many devices
// passes one that reads them once, and only if some device has an interface.
function interfacesOf(dir, tables = readTables) {
  const found = interfaceDirs(dir);
  if (found.length === 0) return [];
  const t = tables();
  return found.map(({ name, dir: ifDir }) => {
    const flags = parseInt(readText(path.join(ifDir, 'flags')).trim(), 16);
    const up = Number.isInteger(flags) && (flags & IFF_UP) !== 0;
    const addresses = t.addresses.get(name) || 0;
    const routes = t.routes.get(name) || 0;
    return { name, up, operstate: readText(path.join(ifDir, 'operstate')).trim() || 'unknown', addresses, routes, active: up || addresses > 0 || routes > 0 };
  });
}

// "eth0: up, 2 addresses, 3 routes"
function describeInterface(i) {
  const counts = i.addresses + i.routes === 0 ? 'no addresses or routes' : `${plural(i.addresses, 'address', 'addresses')}, ${plural(i.routes, 'route', 'routes')}`;
  const state = i.up ? 'up' : 'down';
  return `${i.name}: ${state}${i.operstate === state ? '' : ` (operstate ${i.operstate})`}, ${counts}`;
}

function plural(n, one, many) {
  return `${n} ${n === 1 ? one : many}`;
}

// Throws EACTIVE when a kernel interface of the device at `dir` is in use; `force` skips
// the check. Called before the kernel driver is unbound.
function checkInactive(address, dir, force) {
  if (force) return;
  const busy = interfacesOf(dir).filter((i) => i.active);
  if (busy.length === 0) return;
  const names = busy.map((i) => i.name).join(', ');
  throw new IxyError('EACTIVE', `${address} is the kernel's interface ${busy.map(describeInterface).join('; ')}: taking it from the kernel would cut this machine off that network; take it down and remove its addresses first (ip link set ${busy[0].name} down; ip addr flush dev ${busy[0].name}), or pass --force (ixy.open(address, { force: true })) if ${names} may go`);
}

module.exports = { interfacesOf, readTables, describeInterface, checkInactive };
