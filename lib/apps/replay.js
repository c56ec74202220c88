'use strict';

// `ixy replay PCI file.pcap`: sends the frames of a pcap file, byte for byte, at the times
// they were recorded (scaled by `speed`), or as fast as the NIC takes them (`fast`), `loop`
// times over, as tcpreplay does.
//
// The file is read once into one mempool: buffer i holds frame i and is never handed to
// the NIC itself; a frame is sent from a buffer of the same pool's free stack that it is
// copied into (copyWithin, inside the pool's one view: no allocation), so that a frame can
// be on the ring twice (a short file looped) without its buffer going home twice.
// Frames go out when due as software pacing places them (lib/traffic/pacing.js); several
// that fell due together go as one batch.
const { open } = require('../open');
const { PacketBatch } = require('../memory/batch');
const { Mempool } = require('../memory/mempool');
const { readPcap } = require('../pcap-file');
const { IxyError, checkInteger } = require('../host/errors');
const { SoftwarePacer } = require('../traffic/pacing');
const { noTraffic } = require('../loop/rates');
const { Report } = require('../loop/report');
const { pacedRun, softwareTick } = require('./paced-loop');
const { runLoop } = require('../loop');
const { ownFifo, readFifo } = require('./fifo');

const BUFFER_SIZE = 2048;
const SEND_BUFFERS = 8192; // more than a TX ring holds
const MAX_LENGTH = 1514; // without FCS, as the NIC sends without jumbo frames
const MIN_LENGTH = 17; // the 82599 sends no shorter frame (Linux pads to this)

// Link types (tcpdump.org/linktypes.html) a capture of another medium may have: replay
// sends its frames as Ethernet frames, byte for byte, so it takes only Ethernet's (1).
// Adding an Ethernet header to raw IP would invent addresses: refused too.
const LINKTYPE_ETHERNET = 1;
const LINK_TYPES = {
  0: 'NULL, BSD loopback', 101: 'RAW, raw IP', 105: 'IEEE802_11, 802.11 wireless', 113: 'LINUX_SLL, Linux cooked capture',
  127: 'IEEE802_11_RADIOTAP, 802.11 with radiotap headers', 228: 'IPV4, raw IPv4', 229: 'IPV6, raw IPv6', 276: 'LINUX_SLL2, Linux cooked capture v2',
};

// The frames of `file` (read already: `data`) and their times in ms after the first;
// checks every frame first.
function loadCapture(file, data = null) {
  const { header, frames } = readPcap(data === null ? file : data);
  if (header.linktype !== LINKTYPE_ETHERNET) {
    const known = LINK_TYPES[header.linktype];
    throw new IxyError('EPCAP', `'${file}' holds frames of link type ${header.linktype}${known ? ` (${known})` : ''}: replay sends Ethernet frames only (link type 1)`);
  }
  if (frames.length === 0) throw new IxyError('EINVAL', `'${file}' holds no frames`);
  const t0 = frames[0].sec * 1e3 + frames[0].nsec / 1e6;
  const times = new Float64Array(frames.length);
  frames.forEach((f, i) => {
    if (f.data.length !== f.length) throw new IxyError('EINVAL', `frame ${i + 1} of '${file}' was cut to ${f.data.length} of its ${f.length} bytes when captured (snaplen): it cannot be replayed byte for byte`);
    if (f.length < MIN_LENGTH || f.length > MAX_LENGTH) throw new IxyError('EINVAL', `frame ${i + 1} of '${file}' is ${f.length} bytes; the NIC sends ${MIN_LENGTH}..${MAX_LENGTH} (without FCS)`);
    times[i] = f.sec * 1e3 + f.nsec / 1e6 - t0;
  });
  return { frames, times };
}

// Copies frames [from, from + n) (their stored buffers are ids from..) into fresh buffers
// of the pool, as a batch; returns how many it took (the free stack may run short).
function fillBatch(pool, lengths, batch, from, n) {
  const bytes = pool.bytes;
  const shift = pool.bufferShift;
  const got = pool.allocMany(batch.ids, n);
  batch.count = got;
  batch.pool = pool;
  const batchLengths = batch.lengths;
  for (let k = 0; k < got; k++) {
    const i = from + k;
    bytes.copyWithin(batch.frameAt(k), i << shift, (i << shift) + lengths[i]);
    batchLengths[k] = lengths[i];
  }
  return got;
}

async function replay(address, file, {
  speed = 1, fast = false, loop = 1, batchSize = 32, seconds = 0, out = process.stdout, deviceOptions = {}, stop = null, json = false,
} = {}) {
  const report = new Report({ json, out });
  if (!(typeof speed === 'number' && speed > 0 && Number.isFinite(speed))) throw new IxyError('EINVAL', `--speed must be a number above 0, got ${speed}`);
  checkInteger('--loop', loop, 0, 2 ** 31 - 1, ' (0: until stopped)');
  // A FIFO is read without blocking, so that Ctrl-C ends the wait for its writer
  // (lib/apps/fifo.js).
  const data = ownFifo(file) ? await readFifo(file, stop) : null;
  if (data === null && stop && stop.aborted) {
    const stats = noTraffic();
    report.total(address, stats);
    if (json) report.line('end', '', { reason: 'signal', sent: 0 });
    return { reason: 'signal', sent: 0, stats };
  }
  const { frames, times } = loadCapture(file, data);
  const n = frames.length;
  const pool = new Mempool({ entries: n + SEND_BUFFERS, bufferSize: BUFFER_SIZE });
  const lengths = new Uint16Array(n);
  let dev = null;
  try {
    for (let i = 0; i < n; i++) {
      if (pool.alloc() !== i) throw new IxyError('EINVAL', 'replay: the pool hands out its buffers out of order');
      pool.buffers[i].set(frames[i].data);
      lengths[i] = frames[i].length;
    }
    try {
      dev = await open(address, { rxQueues: 1, ...deviceOptions, signal: stop });
    } catch (err) {
      if (err.code !== 'EABORTED') throw err;
      const stats = noTraffic();
      report.total(address, stats);
      if (report.failure) throw report.failure;
      return { reason: 'signal', sent: 0, stats };
    }
    const txQueue = dev.txQueues[0];
    const batch = new PacketBatch(batchSize);
    // One loop lasts the capture's span and one mean gap more, so the next starts as the
    // capture would have gone on.
    const period = n > 1 ? (times[n - 1] * n) / (n - 1) : 0;
    const total = loop === 0 ? Infinity : n * loop;
    let sent = 0;
    // Sends up to `want` of the next frames (not past a loop's end); returns how many went.
    const sendNext = (want) => {
      const i = sent % n;
      let k = want < n - i ? want : n - i;
      if (total - sent < k) k = total - sent;
      const got = fillBatch(pool, lengths, batch, i, k);
      const went = txQueue.send(batch);
      if (went < got) batch.freeFrom(went);
      sent += went;
      return went;
    };
    report.line('start', `replaying ${n} frames of ${file} on ${dev.address} (${dev.mac}) ${fast ? 'as fast as the NIC takes them' : `at ${speed}x the recorded timing`}` +
      `${loop === 1 ? '' : loop === 0 ? ', looping until stopped' : `, ${loop} times`}`,
    { command: 'replay', devices: [{ address: dev.address, mac: dev.mac }], file, frames: n, speed: fast ? null : speed, loop });
    let reason;
    // A report stream that failed ends the run: the totals still come (to stderr,
    // lib/loop/report.js), then its error.
    const reportFailed = (err) => {
      if (err !== report.failure) throw err;
      return 'failed';
    };
    const finished = () => sent >= total && txQueue.drained();
    if (fast) {
      const step = () => {
        if (sent < total) sendNext(batchSize);
        else txQueue.reclaim();
        return finished();
      };
      reason = await runLoop({ devices: [dev], step, seconds, lines: report, idle: 'spin', stop }).catch(reportFailed);
    } else {
      const pacer = new SoftwarePacer(1);
      const dueAt = (j) => pacer.start + (Math.floor(j / n) * period + times[j % n]) / speed;
      const next = () => (sent < total ? sent : -1);
      const sendDue = () => {
        let k = 1; // and every later frame already due
        const later = performance.now();
        while (k < batchSize && sent + k < total && dueAt(sent + k) <= later) k++;
        sendNext(k);
      };
      reason = await pacedRun({ dev, tick: softwareTick(txQueue, pacer, next, dueAt, sendDue), seconds, report, stop }).catch(reportFailed);
    }
    dev.stop(); // frames the NIC never sent leave the TX totals
    const stats = dev.stats();
    report.total(dev.address, stats);
    if (json) report.line('end', '', { reason, sent });
    if (report.failure) throw report.failure;
    return { reason, sent, stats };
  } finally {
    if (dev) dev.close();
    pool.close();
    report.close();
  }
}

module.exports = { replay };
