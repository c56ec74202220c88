'use strict';

// The differential filter test: random expressions (filter-expressions.js) over random
// frames (filter-frames.js), ixy's compileFilter against the program tcpdump compiles
// (`tcpdump -ddd`, run by bpf.js as libpcap's interpreter runs it). A frame's verdict must
// be tcpdump's, or tcpdump -O's: ixy tests in the expression's order, as libpcap's
// unoptimised program does, and libpcap's optimiser may reorder or drop loads, which
// changes the verdict on frames cut short (docs/api.md says so).
//
// Per expression, one of: both refuse it; ixy refuses it as documented unsupported; both
// accept it and every frame's verdict must agree. Anything else is a mismatch.
const { compileFilter } = require('../../lib/filter');
const { compileBpf, emptyEthernetPcap, runBpf } = require('./bpf');
const { randomFrames } = require('./filter-frames');
const { randomExpressions, seeded } = require('./filter-expressions');

// What docs/api.md lists as not supported: EFILTER "'word' is not supported" for these.
const DOCUMENTED_UNSUPPORTED = new Set(['gateway', 'protochain', 'mpls', 'pppoed', 'pppoes', 'geneve', 'decnet',
  'atalk', 'aarp', 'iso', 'esis', 'isis', 'clnp', 'stp', 'ipx', 'netbeui', 'lat', 'sca', 'moprc', 'mopdl', 'byte', 'llc']);

function unsupported(err) {
  const m = /'([^']+)' is not supported/.exec(err.message);
  return m !== null && DOCUMENTED_UNSUPPORTED.has(m[1].split(' ')[0]);
}

// options: { seed, expressions, frames, dir, bpfOptions }. Returns counts and mismatches.
function differential({ seed = 1, expressions = 300, frames = 600, dir, extra = [] }) {
  const random = seeded(seed);
  const list = randomFrames(random, frames);
  const buffers = list.map((f) => {
    const b = Buffer.alloc(f.caplen + 64, 0x5a); // what lies past the captured bytes must not count
    Buffer.from(f.bytes).copy(b);
    return b;
  });
  const linkFile = emptyEthernetPcap(dir);
  const report = { expressions: 0, frames: list.length, compared: 0, bothAccept: 0, bothRefuse: 0, unsupported: 0, reordered: 0, optimiserRefuses: 0, mismatches: [] };
  for (const expression of [...extra, ...randomExpressions(random, expressions)]) {
    report.expressions++;
    let reference = compileBpf(expression, linkFile);
    // libpcap's optimiser refuses what it proves matches nothing ("expression rejects all
    // packets") or divides by a constant 0 once folded (`x % (y & 0)`); ixy compiles it, and
    // is compared with the unoptimised program, which libpcap would run.
    if (reference.error !== undefined) {
      const unoptimised = compileBpf(expression, linkFile, ['-O']);
      if (unoptimised.error === undefined) {
        reference = unoptimised;
        report.optimiserRefuses++;
      }
    }
    let keep = null;
    let refusal = null;
    try {
      keep = compileFilter(expression);
    } catch (err) {
      if (err.code !== 'EFILTER') {
        report.mismatches.push(`'${expression}': ixy threw ${err.stack}`);
        continue;
      }
      refusal = err;
    }
    if (reference.error !== undefined && refusal !== null) {
      report.bothRefuse++;
    } else if (reference.error !== undefined) {
      report.mismatches.push(`'${expression}': tcpdump refuses it (${reference.error}), ixy accepts it`);
    } else if (refusal !== null) {
      if (unsupported(refusal)) report.unsupported++;
      else report.mismatches.push(`'${expression}': ixy refuses it (${refusal.message}), tcpdump accepts it`);
    } else {
      report.bothAccept++;
      const wrong = [];
      let unoptimised = null;
      list.forEach((f, i) => {
        const got = keep(buffers[i], f.caplen, f.wirelen);
        if (got === runBpf(reference.program, f.bytes, f.caplen, f.wirelen)) return;
        if (unoptimised === null) unoptimised = compileBpf(expression, linkFile, ['-O']).program;
        if (got !== runBpf(unoptimised, f.bytes, f.caplen, f.wirelen)) wrong.push(i);
        else report.reordered++;
      });
      report.compared += list.length;
      if (wrong.length > 0) {
        const f = list[wrong[0]];
        const verdict = runBpf(reference.program, f.bytes, f.caplen, f.wirelen) ? 'keeps' : 'rejects';
        report.mismatches.push(`'${expression}': ${wrong.length} frames differ, e.g. #${wrong[0]} (caplen ${f.caplen}, wire ${f.wirelen}, tcpdump ${verdict}): ${Buffer.from(f.bytes).toString('hex')}`);
      }
    }
  }
  return report;
}

module.exports = { differential };
