'use strict';

// The control virtqueue of a virtio-net device (virtio 1.1, 5.1.6.5): one command at a
// time, as a chain of three descriptors in the scratch area: { class, command } and the
// command's data (device-readable), then the one-byte ack (device-writable). The driver
// waits for the device to use the chain. Control path only: never called per packet.
const C = require('./constants');
const { IxyError } = require('../host/errors');
const { sleepSync } = require('../host/register-access');

const CMD = 0;
const ACK = 8;
const DATA = 16;

class VirtioCtrlQueue {
  constructor(vq, notify) {
    this.vq = vq;
    this.notify = notify;
    this.maxData = vq.scratch.length - DATA;
  }

  // Sends class/command with its data: one byte (a number) or the bytes of a Uint8Array;
  // throws unless the device answers VIRTIO_NET_OK.
  command(cls, cmd, data, what) {
    const vq = this.vq;
    const s = vq.scratch;
    const length = typeof data === 'number' ? 1 : data.length;
    if (length > this.maxData) throw new IxyError('EINVAL', `a virtio control command of ${length} bytes does not fit the ${this.maxData} the queue holds (${what})`);
    s[CMD] = cls;
    s[CMD + 1] = cmd;
    if (typeof data === 'number') s[DATA] = data;
    else s.set(data, DATA);
    s[ACK] = 0xff;
    vq.setDescriptor(0, vq.scratchPhys(CMD), 2, C.DESC_F_NEXT, 1);
    vq.setDescriptor(1, vq.scratchPhys(DATA), length, C.DESC_F_NEXT, 2);
    vq.setDescriptor(2, vq.scratchPhys(ACK), 1, C.DESC_F_WRITE, 0);
    vq.avail[2 + (vq.availIdx & vq.mask)] = 0;
    vq.publish((vq.availIdx + 1) & 0xffff);
    this.notify();
    const deadline = Date.now() + 2000;
    while (Atomics.load(vq.usedHead, 1) === vq.lastUsed) {
      if (Date.now() > deadline) throw new IxyError('ETIMEDOUT', `the virtio device did not answer the control command (${what})`);
      sleepSync(1);
    }
    vq.lastUsed = (vq.lastUsed + 1) & 0xffff;
    if (s[ACK] !== C.NET_OK) throw new IxyError('EIO', `the virtio device refused ${what}`);
  }

  close() {
    this.vq.free();
  }
}

module.exports = { VirtioCtrlQueue };
