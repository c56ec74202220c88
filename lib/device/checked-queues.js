'use strict';

// Buffer ownership checks on a device's queues (the checks themselves, and what `owner`
// records, are in lib/memory/ownership-checks.js): what the RX queues hand out becomes the
// application's, what the TX queues take becomes the NIC's. open() installs them when the
// device is opened with `debug` (or IXY_DEBUG_BUFFERS=1); otherwise none of this runs.
const { asDriver, POOL, APP, NIC } = require('../memory/ownership-checks');

// Checks a device's buffers from now on: what its RX queues hand out and what its TX
// queues take, in its pools, which the driver made checked (the `debug` option it was
// opened with). Works for any driver whose queues have receive(batch), send(batch) and
// close(); wraps them on this instance only.
function checkDevice(dev) {
  if (dev.checked) return dev;
  dev.checked = true;
  // Right after open, the application holds none of the device's buffers (those on the RX
  // rings are the NIC's), whatever a checked pool recorded while the driver filled them.
  for (const pool of dev.pools || []) if (pool.owner) pool.owner.fill(POOL);
  for (const q of dev.rxQueues) {
    const receive = q.receive;
    q.receive = function checkedReceive(batch) {
      const n = receive.call(this, batch);
      const owner = batch.pool.owner;
      if (owner) for (let i = 0; i < n; i++) owner[batch.ids[i]] = APP;
      return n;
    };
    returnsBuffersItself(q);
  }
  for (const q of dev.txQueues) {
    const send = q.send;
    q.send = function checkedSend(batch) {
      const pool = batch.pool;
      if (!pool || !pool.owner) return send.call(this, batch);
      const ids = batch.ids;
      for (let i = 0; i < batch.count; i++) {
        try {
          pool.release(ids[i], 'send', NIC);
        } catch (err) {
          for (let k = 0; k < i; k++) pool.owner[ids[k]] = APP;
          throw err;
        }
      }
      const sent = send.call(this, batch);
      for (let i = sent; i < batch.count; i++) pool.owner[ids[i]] = APP; // still the caller's
      return sent;
    };
    returnsBuffersItself(q);
  }
  return dev;
}

// A queue's close() gives back buffers the driver holds (on the ring, or sent but not yet
// reclaimed): those are not the application's, and freeing them is right.
function returnsBuffersItself(queue) {
  const close = queue.close;
  queue.close = function closeChecked() {
    return asDriver(() => close.call(this));
  };
}

module.exports = { checkDevice };
