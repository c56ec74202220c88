'use strict';

// Received frames as Node code expects them: each one its own Buffer, so nothing a caller
// keeps can change under it, for tools that value convenience over speed (a copy and an
// object per frame). Built on receive() (lib/device/receive-iterator.js), so the event loop, idle
// modes, `signal` and close() behave the same.
//
//   for await (const f of dev.frames(0)) console.log(f.length, f.timestamp, f.data);
//   pipeline(dev.createReadStream(0), transform, sink, done);
//
// A frame is { data, length, timestamp }: data a Buffer of exactly `length` bytes,
// timestamp when the driver took it off the ring, in milliseconds since 1970 with
// fractions (performance.timeOrigin + performance.now(); one clock read per batch).
// The stream pulls: while nobody reads, frames stay in the ring, and what overflows it
// is dropped by the NIC and counted in stats().rxMissed.
const { Readable, addAbortSignal } = require('stream');
const { checkOptionNames } = require('../host/option-names');
const { RECEIVE_OPTIONS } = require('./receive-iterator');

async function* frames(dev, queue, options) {
  for await (const batch of dev.receive(queue, options)) {
    const timestamp = performance.timeOrigin + performance.now();
    const n = batch.count;
    const taken = [];
    for (let i = 0; i < n; i++) {
      const length = batch.lengths[i];
      const data = Buffer.allocUnsafe(length);
      data.set(batch.data(i).subarray(0, length));
      taken.push({ data, length, timestamp });
    }
    // Copied before the first yield: the batch goes back to the pool at the next step.
    for (let i = 0; i < n; i++) yield taken[i];
  }
}

// An object-mode Readable of frames; destroying it ends the receive loop. Readable.from()
// ends its generator with return(), which waits for the generator's pending step, and a
// receive() with nothing to receive never finishes one: so destroying the stream first
// aborts the receive loop through its signal. The caller's `signal`, as for Node's own
// streams (stream.addAbortSignal), destroys the stream with an AbortError.
function createReadStream(dev, queue, options = {}) {
  const { highWaterMark = 256, signal, ...receiveOptions } = checkOptionNames('createReadStream()', options, [...RECEIVE_OPTIONS, 'highWaterMark']);
  const stop = new AbortController();
  const ours = signal instanceof AbortSignal;
  // A signal that is not an AbortSignal goes on to receive(), which refuses it (EINVAL).
  const stream = Readable.from(frames(dev, queue, { ...receiveOptions, signal: ours ? stop.signal : (signal ?? stop.signal) }), { objectMode: true, highWaterMark });
  const destroy = stream._destroy;
  stream._destroy = function (err, callback) {
    stop.abort();
    destroy.call(this, err, callback);
  };
  if (ours) addAbortSignal(signal, stream);
  return stream;
}

module.exports = { frames, createReadStream };
