'use strict';

// Buffer ownership checks, for debugging applications. A buffer is always held by exactly
// one side: the pool (free), the application (allocated or received), or the NIC (on an RX
// ring, or handed to a TX queue until it is sent). Two mistakes corrupt memory silently in
// any driver that recycles buffers by id: freeing a buffer twice (it then sits twice on the
// free stack and two owners get it), and sending a buffer already freed or sent (the NIC
// then reads memory that someone else is writing). In debug mode both throw an IxyError.
//
// Debug mode costs a byte per buffer and a check per packet, so it is off unless asked for:
//   ixy.open(address, { debug: true })   checks that device's pools and queues
//   new Mempool({ ..., debug: true })     checks that pool
//   IXY_DEBUG_BUFFERS=1 in the environment: every device and pool of the process
// When it is off, none of this code runs: the checked behaviour lives in a subclass of
// Mempool (CheckedMempool, made in mempool.js from withOwnershipChecks below) and in
// per-instance wrappers of the queues' methods (lib/device/checked-queues.js), so the plain
// hot path stays exactly as it is.
const { IxyError } = require('../host/errors');

// What `owner[id]` says about buffer id. Only APP may be freed or sent.
const POOL = 0; // free, or taken by the driver straight from the pool (RX ring refill)
const APP = 1; // allocated or received: the application must free it or send it
const NIC = 2; // handed to a TX queue; the driver frees it once sent

// > 0 while a driver gives back buffers it holds itself (closing its rings).
let driverReturns = 0;

// Runs fn() as the driver giving back buffers it holds (on a ring, or sent but not yet
// reclaimed): those are not the application's, and freeing them is right.
function asDriver(fn) {
  driverReturns++;
  try {
    return fn();
  } finally {
    driverReturns--;
  }
}

function envDebug() {
  return process.env.IXY_DEBUG_BUFFERS === '1';
}

// The checked subclass of Mempool (passed as `Base`, so that this module needs none).
// Every buffer starts as the pool's.
function withOwnershipChecks(Base) {
  return class CheckedMempool extends Base {
    constructor(options = {}) {
      super({ ...options, debug: false });
      this.owner = new Uint8Array(this.entries);
    }

    alloc() {
      const id = super.alloc();
      if (id >= 0) this.owner[id] = APP;
      return id;
    }

    allocMany(ids, n) {
      const got = super.allocMany(ids, n);
      for (let i = 0; i < got; i++) this.owner[ids[i]] = APP;
      return got;
    }

    free(id) {
      this.release(id, 'free');
      super.free(id);
    }

    // All or nothing: if one id is wrong, none is freed.
    freeMany(ids, from, to) {
      for (let i = from; i < to; i++) {
        try {
          this.release(ids[i], 'free');
        } catch (err) {
          for (let k = from; k < i; k++) this.owner[ids[k]] = APP;
          throw err;
        }
      }
      super.freeMany(ids, from, to);
    }

    // Marks buffer `id` as no longer the application's, or throws if it was not.
    release(id, what, next = POOL) {
      if (!Number.isInteger(id) || id < 0 || id >= this.entries) {
        throw new IxyError('EINVAL', `cannot ${what} buffer ${id}: this mempool has buffers 0..${this.entries - 1}`);
      }
      const owner = this.owner[id];
      if (owner !== APP && driverReturns === 0) throw ownershipError(id, what, owner);
      this.owner[id] = next;
    }
  };
}

function ownershipError(id, what, owner) {
  if (what === 'free') {
    return owner === NIC
      ? new IxyError('EDOUBLEFREE', `buffer ${id} freed after it was sent: a sent buffer belongs to the driver, which frees it when the NIC is done`)
      : new IxyError('EDOUBLEFREE', `buffer ${id} freed twice (or freed while the driver holds it): free or send each received or allocated buffer exactly once`);
  }
  return owner === NIC
    ? new IxyError('EUSEAFTERFREE', `buffer ${id} sent twice: after txBatch() took it, it belongs to the driver`)
    : new IxyError('EUSEAFTERFREE', `buffer ${id} sent after it was freed: a freed buffer may already hold another packet`);
}

module.exports = { withOwnershipChecks, asDriver, envDebug, POOL, APP, NIC };
