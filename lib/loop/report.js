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
const { formatRates, formatTotals } = require('./rates');

class Report {
  constructor({ json = false, out = process.stdout } = {}) {
    this.json = json;
    this.out = out;
  }

  // One line: `text` for people, `record` (with type and time added) for --json.
  line(type, text, record) {
    this.out.write(this.json ? `${JSON.stringify({ type, time: Date.now(), ...record })}\n` : `${text}\n`);
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

module.exports = { Report };
