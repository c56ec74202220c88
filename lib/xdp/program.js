'use strict';

// The XDP program of an interface: loaded, given its XSKMAP and attached through a BPF link
// by the addon (native/xdp.cc), once per interface per thread, however many of its queues
// this thread opens. The link's fd is its only holder: when the last queue closes, or the
// process ends in any way (kill -9 included), the kernel detaches the program.
const { native } = require('../host/native');
const { IxyError } = require('../host/errors');
const { xdpError } = require('./errors');

const attached = new Map(); // ifindex -> { map, prog, link, mode, queues: Set }

// xdpMode: 'native' (the driver's own XDP), 'generic' (the kernel's, after the driver built
// an skb: any interface) or 'auto' (native where the driver has it). Returns the record;
// the queue is then the caller's to bind.
function attach(iface, info, queue, xdpMode) {
  let rec = attached.get(info.ifindex);
  if (rec === undefined) {
    rec = load(iface, info, xdpMode);
    attached.set(info.ifindex, rec);
  } else if (xdpMode !== 'auto' && xdpMode !== rec.mode) {
    throw new IxyError('EBUSY', `${iface} already has ixy's XDP program in ${rec.mode} mode; its queues all share it: open with { xdpMode: '${rec.mode}' }`);
  }
  if (rec.queues.has(queue)) {
    throw new IxyError('EBUSY', `queue ${queue} of ${iface} is already open in this process (one socket per queue): close it first, or open another queue (xdp:${iface}@N)`);
  }
  rec.queues.add(queue);
  return rec;
}

function load(iface, info, xdpMode) {
  const addon = native();
  const modes = xdpMode === 'auto' ? ['native', 'generic'] : [xdpMode];
  let last = null;
  for (const mode of modes) {
    try {
      const fds = addon.xdpAttach(info.ifindex, mode === 'generic', info.rxQueues);
      return { ...fds, mode, queues: new Set() };
    } catch (err) {
      last = err;
      // Another program (or ixy) holds the interface: no other mode changes that.
      if (err.code !== 'EOPNOTSUPP' && err.code !== 'EINVAL') break;
    }
  }
  throw xdpError(last, iface);
}

// The queue has closed; the last one detaches the program.
function detach(rec, queue) {
  rec.queues.delete(queue);
  if (rec.queues.size > 0) return;
  const addon = native();
  for (const [key, value] of attached) if (value === rec) attached.delete(key);
  addon.closeFd(rec.link);
  addon.closeFd(rec.prog);
  addon.closeFd(rec.map);
}

module.exports = { attach, detach };
