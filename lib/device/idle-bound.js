'use strict';

// How long an idle loop may sleep between polls without losing frames ('backoff',
// lib/device/idle.js): while it sleeps, arriving frames wait in the RX ring's armed descriptors
// and in the NIC's RX packet buffer. This is the one place that works that out.
//
// With ixgbe's defaults (a 512-descriptor ring refilled 128 at a time, so at least 384
// armed; packet buffer 0 given all of its 512 KiB, lib/intel/ixgbe/device.js) that is 384 +
// 6,241 = 6,625 frames of 64 bytes: 6.6 ms at 1 Mpps. In bytes the buffer is 0.4 ms of a
// 10 Gb/s line: a burst at line rate after idleness loses its start whatever the sleep.
// A device that says nothing of its packet buffer (rxPacketBufferBytes 0) is held to its
// ring alone.

// Per frame in the packet buffer: the frame as stored (60 bytes, no FCS) and ~24 bytes of
// the buffer's own, as the model counts them (native/model/rx.c).
const MIN_FRAME_BYTES = 60;
const BUFFER_OVERHEAD_BYTES = 24;
// The rate traffic is assumed to start at when the loop has carried no more and the user
// named none: 1 Mpps, 7% of a 10 Gb/s line in 64-byte frames.
const DEFAULT_START_RATE = 1e6;
// A sleep takes at most this share of the hold time: the rest is for the timer firing late
// (a millisecond or two, more on a busy machine) and for the loop's way back.
const SLEEP_SHARE = 0.5;

// Frames RX queue `q` holds while nobody polls it: its armed descriptors (the ring's size
// less the refill threshold; a queue without a threshold keeps its ring full), or Infinity
// for a queue that does not say its size.
function ringHold(q) {
  return typeof q.size === 'number' ? q.size - (q.freeThreshold || 0) : Infinity;
}

// Frames `dev` holds while nobody polls it: its smallest RX ring's (ringHold()) and its RX
// packet buffer.
function framesHeld(dev) {
  let ring = Infinity;
  for (const q of dev.rxQueues) ring = Math.min(ring, ringHold(q));
  const buffer = dev.rxPacketBufferBytes > 0 ? Math.floor(dev.rxPacketBufferBytes / (MIN_FRAME_BYTES + BUFFER_OVERHEAD_BYTES)) : 0;
  return (ring === Infinity ? 0 : ring) + buffer;
}

// How long, in ms, every one of `devices` holds traffic that starts at `rate` frames/s.
function holdMs(devices, rate) {
  let frames = Infinity;
  for (const d of devices) frames = Math.min(frames, framesHeld(d));
  return frames === Infinity ? 0 : (frames / rate) * 1000;
}

// The longest sleep, in ms, for traffic that starts at `rate` frames/s.
function longestSleepMs(devices, rate) {
  return holdMs(devices, rate) * SLEEP_SHARE;
}

module.exports = { ringHold, framesHeld, holdMs, longestSleepMs, DEFAULT_START_RATE, SLEEP_SHARE };
