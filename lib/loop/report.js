'use strict';

// What the commands print, as lines for people or, with --json, one JSON object per line
// for programs (jq, a log shipper, a test). Every record has `type` and `time` (ms since
// 1970); the human lines say the same in words.
//   start:  { command, devices: [{ address, mac }], ... }   the first line
//   rates:  { device, rxPps, rxMbits, txPps, txMbits, rxMissed }   each second, per device;
//           rxMissed is what was dropped in that second
//   event:  { device, event: 'link' | 'txhang', text, ... }   what check() found
//   total:  { device, rxPackets, rxBytes, txPackets, txBytes, rxErrors, rxMissed, ... }
//   end:    { reason, ... }   the last line, where a command has one
//
// A report stream that fails (its reader went away: EPIPE from `| head`; a full disk; an
// `out` whose write() throws) does not end the process: the Report keeps the error in
// `failure` (an IxyError with the system's code, EREPORT for one without), tells its
// listeners (the loops end, lib/loop/index.js), writes nothing more to it and sends the
// totals lines, in words, to `fallback` (stderr) instead, so that a command still says
// what it did before it fails with that error.
const { IxyError } = require('../host/errors');
const { formatRates, formatTotals } = require('./rates');

// The error each stream has failed with. A stream gets one 'error' listener, for good
// (watchStream()): an error it emits after a command has ended must not end the process
// either.
const streamFailures = new WeakMap();
const streamReports = new WeakMap();   // stream -> the Reports writing to it now

function watchStream(out) {
  if (typeof out.on !== 'function' || streamReports.has(out)) return;
  streamReports.set(out, new Set());
  out.on('error', (err) => {
    if (!streamFailures.has(out)) streamFailures.set(out, err);
    for (const report of streamReports.get(out)) report.fail(err);
  });
}

function reportError(err) {
  const code = err && typeof err.code === 'string' && /^E[A-Z0-9]+$/.test(err.code) ? err.code : 'EREPORT';
  const why = err && err.message ? err.message : String(err);
  return new IxyError(code, `cannot write the report: ${why.split('\n')[0]}${code === 'EPIPE' ? ' (its reader went away)' : ''}`);
}

class Report {
  constructor({ json = false, out = process.stdout, fallback = process.stderr } = {}) {
    this.json = json;
    this.out = out;
    this.fallback = fallback;
    this.failure = null;
    this.listeners = [];
    watchStream(out);
    if (streamReports.has(out)) streamReports.get(out).add(this);
    if (streamFailures.has(out)) this.fail(streamFailures.get(out));
  }

  // One line: `text` for people, `record` (with type and time added) for --json.
  line(type, text, record) {
    if (this.failure !== null) {
      if (type === 'total' && this.fallback !== this.out) this.fallback.write(`${text}\n`);
      return;
    }
    try {
      this.out.write(this.json ? `${JSON.stringify({ type, time: Date.now(), ...record })}\n` : `${text}\n`);
    } catch (err) {
      this.fail(err);
      if (type === 'total') this.line(type, text, record);
    }
  }

  // The stream failed with `err`: nothing more goes to it. Listeners hear of it once.
  fail(err) {
    if (this.failure !== null) return;
    this.failure = reportError(err);
    for (const listener of this.listeners) listener(this.failure);
  }

  // listener(failure) when the stream fails (at once if it has); returns a function that
  // stops listening.
  onFailure(listener) {
    if (this.failure !== null) {
      listener(this.failure);
      return () => {};
    }
    this.listeners.push(listener);
    return () => { this.listeners = this.listeners.filter((l) => l !== listener); };
  }

  // Done writing: the stream's errors from now on are no longer this report's.
  close() {
    if (streamReports.has(this.out)) streamReports.get(this.out).delete(this);
  }

  rates(address, r) {
    this.line('rates', formatRates(address, r), {
      device: address, rxPps: Math.round(r.rxMpps * 1e6), rxMbits: r.rxMbits, txPps: Math.round(r.txMpps * 1e6), txMbits: r.txMbits, rxMissed: r.rxMissed,
    });
  }

  event(address, e) {
    const { type, ...rest } = e;
    this.line('event', `[${address}] ${e.text}`, { device: address, event: type, ...rest });
  }

  // `extra`: more fields ({ txDropped }) and the words that follow the human line.
  total(address, stats, extra = {}, words = '') {
    this.line('total', `${formatTotals(address, stats)}${words}`, { device: address, ...stats, ...extra });
  }
}

// The error `out` has failed with as a report stream, or null.
function streamFailure(out) {
  return streamFailures.has(out) ? reportError(streamFailures.get(out)) : null;
}

module.exports = { Report, streamFailure, watchStream };
