'use strict';

// `ixy pcap`: capture received frames to a pcap file, like tcpdump -w. Stops after `count`
// frames, after `seconds`, or on SIGINT/SIGTERM; in every case the file is closed whole.
//
// Human-readable output (progress, rates, the final line) goes to stderr, so that the file
// may be stdout ('-'): `ixy pcap 0000:03:00.0 - | tshark -r -`. To a pipe (or with
// packetBuffered, like tcpdump -U) every batch is written at once, so that the reader sees
// frames as they come; a reader that goes away (EPIPE) ends the capture like Ctrl-C.
//
// filter: a tcpdump filter expression (lib/filter/); frames it rejects go back to the
// pool as soon as they are received, and `count` counts the frames kept.
const fs = require('fs');
const { open } = require('../open');
const { PacketBatch } = require('../memory/batch');
const { PcapWriter, CaptureClock } = require('../pcap-file');
const { runLoop } = require('../loop');
const { idleMode } = require('../device/idle');
const { noTraffic } = require('../loop/rates');
const { Report } = require('../loop/report');
const { ProgressBar } = require('./progress');
const { compileFilter } = require('../filter');
const { ownFifo, openFifoForWriting } = require('./fifo');

async function pcap(address, file, {
  count = 0, batchSize = 32, nanoseconds = true, seconds = 0, packetBuffered = false, err = process.stderr, deviceOptions = {}, idle, filter = '', stop,
  json = false, jsonOut = file === '-' ? err : process.stdout,
} = {}) {
  // --json: the records on stdout, or on stderr while the capture itself goes to stdout.
  const report = new Report({ json, out: json ? jsonOut : err });
  const keep = filter === '' ? null : compileFilter(filter); // EFILTER before the device is touched
  const idleAs = idleMode(idle, deviceOptions.idle); // null: the best the port can do (lib/device/idle.js)
  const batch = new PacketBatch(batchSize);
  const interrupted = (before) => {
    const stats = noTraffic();
    report.total(address, stats);
    report.line('end', `captured 0 frames (interrupted before ${before}; no file written)`, { reason: 'signal', frames: 0, bytes: 0, file: null });
    return { reason: 'signal', frames: 0, bytes: 0, stats, pools: [] };
  };
  // A FIFO waits for its reader before the NIC is opened, and Ctrl-C ends the wait
  // (lib/apps/fifo.js).
  let fifo = null;
  if (file !== '-' && ownFifo(file)) {
    fifo = await openFifoForWriting(file, stop);
    if (fifo === null) return interrupted('a reader opened the FIFO');
  }
  // The device first: a bad address or a link that stays down must not leave an empty file.
  let dev;
  try {
    dev = await open(address, { txQueues: 0, ...deviceOptions, signal: stop });
  } catch (e) {
    if (fifo !== null) fs.closeSync(fifo);
    if (e.code !== 'EABORTED') throw e;
    return interrupted('the link came up'); // stopped (SIGINT) while waiting for link
  }
  let writer;
  try {
    writer = new PcapWriter(fifo !== null ? fifo : file === '-' ? 1 : file, { nanoseconds });
    if (fifo !== null) writer.name = `'${file}'`; // its messages name the FIFO, not the descriptor
  } catch (e) {
    if (fifo !== null) fs.closeSync(fifo);
    dev.close();
    throw e;
  }
  const name = file === '-' ? 'stdout' : file;
  const flushEachBatch = packetBuffered || writer.isPipe;
  const rxQueue = dev.rxQueues[0];
  const clock = new CaptureClock();
  const progress = count > 0 && err.isTTY && !json ? new ProgressBar(err, count) : null;
  const ticker = progress ? setInterval(() => progress.draw(writer.frames), 100) : null;
  const what = `${count ? `, ${count} frames` : ''}${keep ? ` matching '${filter}'` : ''}`;
  if (!progress) {
    report.line('start', `capturing on ${dev.address} (${dev.mac}) to ${name}${what}; Ctrl-C stops`,
      { command: 'pcap', devices: [{ address: dev.address, mac: dev.mac }], file: name, count, filter });
  }

  const step = () => {
    if (rxQueue.receive(batch) === 0) return false;
    const n = keep === null ? batch.count : batch.keepIf(keep);
    if (n === 0) return false;
    clock.now(); // one clock read per batch: its frames left the ring in this poll
    // With a count, write only what is still wanted; the rest of the batch is dropped.
    const wanted = count > 0 && count - writer.frames < n ? count - writer.frames : n;
    const b = batch;
    const frames = b.count;
    b.count = wanted;
    writer.writeBatch(b, clock.sec, clock.nsec);
    if (flushEachBatch) writer.flush();
    b.count = frames;
    b.freeFrom(0);
    return count > 0 && writer.frames >= count;
  };

  let reason;
  let stats;
  try {
    // The per-second rate report only when no progress bar shares the terminal.
    reason = await captureUntilDone({ devices: [dev], step, seconds, idle: idleAs, report: progress === null && (count === 0 || json), out: report.out, stop, json }, writer);
    stats = dev.stats();
  } finally {
    if (ticker) clearInterval(ticker);
    try {
      writer.close();
    } finally {
      if (fifo !== null) fs.closeSync(fifo);
      dev.close();
    }
  }
  if (progress) progress.finish(writer.frames);
  report.total(dev.address, stats);
  const why = { signal: ' (interrupted)', 'pipe closed': ' (the reader closed the pipe)' }[reason] || '';
  report.line('end', `captured ${writer.frames} frames (${writer.bytes} bytes) to ${name}${why}`, { reason, frames: writer.frames, bytes: writer.bytes, file: name });
  return { reason, frames: writer.frames, bytes: writer.bytes, stats, pools: dev.pools };
}

// Runs the capture loop and writes the last frames; resolves with why it ended. A reader
// that closed the pipe (EPIPE) ends it as Ctrl-C does: 'pipe closed'. Any other write
// error (a full disk) rejects with the writer's message, which names the file and how many
// frames it holds.
async function captureUntilDone(loopOptions, writer) {
  try {
    const reason = await runLoop(loopOptions);
    writer.flush();
    return reason;
  } catch (err) {
    if (err === writer.failure && err.code === 'EPIPE') return 'pipe closed';
    throw err;
  }
}

module.exports = { pcap };
