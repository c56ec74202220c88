'use strict';

// The generator's loops at a rate (pacing.js says which is which). Each runs until a
// signal (SIGINT, SIGTERM), `seconds`, or `count` frames sent, prints the device's rates
// once a second, and turns the event loop between its steps, as lib/loop/index.js does for
// the loops at full speed.
const { Watch } = require('../loop/watch');
const { endOnReportFailure } = require('../loop');
const { SoftwarePacer } = require('../traffic/pacing');

const SLICE_MS = 2; // software pacing: run at most this long before the event loop's turn
const TOP_UP_MIN_MS = 1;
const TOP_UP_MAX_MS = 20;

// The longest sleep between ticks: a longer gap (a replayed capture's, up to days) is slept
// in chunks, the tick asked again after each, so that a signal or a failed report ends the
// run within a chunk, and no timer is asked for more than setTimeout's 2^31 - 1 ms (a longer
// one warned, TimeoutOverflowWarning, and fired after 1 ms, over and over).
const MAX_SLEEP_MS = 100;

function sleep(ms) {
  return new Promise((resolve) => { setTimeout(resolve, ms < MAX_SLEEP_MS ? ms : MAX_SLEEP_MS); });
}

function turn() {
  return new Promise((resolve) => { setImmediate(resolve); });
}

// Runs `tick` until it returns -1 or the run is stopped; tick returns how many ms to wait
// before it is called again (0: at the next turn of the event loop). Resolves with the
// reason: 'signal', 'time', 'done' or 'failed' (a device check threw, or the report stream
// failed: rejects with that error).
// report: a Report (lib/loop/report.js); stop: an AbortSignal that stops the run as
// SIGINT does (lib/apps/stop-signal.js). lib/loop/watch.js watches both, and the device.
async function pacedRun({ dev, tick, seconds, report, stop = null }) {
  const watch = new Watch({ devices: [dev], lines: report, stop });
  const unlisten = endOnReportFailure(report, watch);
  const end = seconds > 0 ? performance.now() + seconds * 1000 : Infinity;
  try {
    while (watch.reason === null) {
      const wait = tick();
      if (wait < 0) {
        watch.reason = 'done';
        break;
      }
      const left = end - performance.now();
      if (left <= 0) {
        watch.reason = 'time';
        break;
      }
      await (wait >= 1 ? sleep(Math.min(wait, left)) : turn());
    }
  } finally {
    watch.close();
    unlisten();
  }
  if (watch.failure) throw watch.failure;
  return watch.reason;
}

// The NIC spaces the frames: keep queue 0 full, then sleep a quarter of the time the
// ring lasts at this rate (1..20 ms). With `count`, the run ends when the last frame
// has left (DD on the newest descriptor); stopped otherwise, it waits for the frames
// on the ring to leave at the rate (drain()).
function nicPacing({ dev, gen, batch, count, seconds, report, pps, stop }) {
  const txQueue = dev.txQueues[0];
  const quarter = (txQueue.size / pps) * 250;
  const sleepMs = quarter < TOP_UP_MIN_MS ? TOP_UP_MIN_MS : quarter > TOP_UP_MAX_MS ? TOP_UP_MAX_MS : quarter;
  const tick = () => {
    for (;;) {
      let want = batch.capacity;
      if (count > 0 && count - gen.seq < want) want = count - gen.seq;
      if (want <= 0) {
        txQueue.reclaim();
        return txQueue.drained() ? -1 : sleepMs;
      }
      if (gen.send(txQueue, batch, want) < want) return sleepMs;
    }
  };
  return pacedRun({ dev, tick, seconds, report, stop }).then((reason) => drain(txQueue, quarter * 4 + 100, reason));
}

// After a run the NIC paces: the frames still on the ring leave at the rate. Waits for
// them (at most maxMs), so that stopping the queue then drops none the NIC is sending (a
// stop seen while a rate-limited queue still sends would race its last frames).
async function drain(txQueue, maxMs, reason) {
  const deadline = performance.now() + maxMs;
  while (!txQueue.drained() && performance.now() < deadline) await sleep(1);
  txQueue.reclaim();
  return reason;
}

// Software spacing, as a pacedRun() tick: each frame goes to the NIC when it falls due.
// Within a slice the pacer sleeps (or, with spin, spins) until the next frame's time; a
// gap longer than the slice goes back to the event loop on a timer. next(): the number of
// the next frame to send, -1 once all are sent; dueAt(j): when frame j is due
// (performance.now() time); sendDue(now): sends the next frame and every later one due by
// `now` (frames that fell due while the process was not running go together).
function softwareTick(txQueue, pacer, next, dueAt, sendDue) {
  return () => {
    const sliceEnd = performance.now() + SLICE_MS;
    for (;;) {
      const j = next();
      if (j < 0) {
        txQueue.reclaim();
        return txQueue.drained() ? -1 : 1;
      }
      const due = dueAt(j);
      const now = performance.now();
      if (due - now > SLICE_MS) {
        txQueue.reclaim();
        return due - now - SLICE_MS / 2; // wake within the slice before it
      }
      if (now >= sliceEnd) return 0;
      const woke = pacer.waitUntil(due, sliceEnd);
      if (woke < due) return 0;
      sendDue(woke);
    }
  };
}

// Software spacing for the generator: frame n is due at start + n / pps; what fell due
// together goes as one batch at most, so the rate holds.
function softwarePacing({ dev, gen, batch, count, seconds, report, pps, spin, stop }) {
  const txQueue = dev.txQueues[0];
  const pacer = new SoftwarePacer(pps, { spin });
  const next = () => (count > 0 && gen.seq >= count ? -1 : gen.seq);
  const dueAt = (j) => pacer.dueAt(j);
  const sendDue = (now) => {
    let want = Math.floor((now - pacer.start) / pacer.gapMs) + 1 - gen.seq;
    if (want > batch.capacity) want = batch.capacity;
    if (count > 0 && count - gen.seq < want) want = count - gen.seq;
    gen.send(txQueue, batch, want);
  };
  return pacedRun({ dev, tick: softwareTick(txQueue, pacer, next, dueAt, sendDue), seconds, report, stop });
}

// 'burst' pacing, a runLoop step: what fell due since the last step, as one batch.
function burstStep(gen, txQueue, batch, count, pps) {
  const start = performance.now();
  return () => {
    let want = batch.capacity;
    if (count > 0 && count - gen.seq < want) want = count - gen.seq;
    const allowed = Math.floor(((performance.now() - start) / 1000) * pps) - gen.seq;
    if (allowed < want) want = allowed;
    if (count > 0 && gen.seq >= count) return txQueue.drained();
    if (want > 0) gen.send(txQueue, batch, want);
    else txQueue.reclaim();
    return false;
  };
}

module.exports = { nicPacing, softwarePacing, softwareTick, burstStep, pacedRun };
