'use strict';

// compileFilter against tcpdump on random expressions and random frames
// (test/support/filter-diff.js), and one test per class of difference found before: each
// compares with the program tcpdump compiles, and states the verdict it expects.
const assert = require('assert');
const { compileFilter, filterSource } = require('../../lib/filter');
const { suiteTmpDir } = require('../support/helpers');
const { differential } = require('../support/filter-diff');
const { compileBpf, emptyEthernetPcap, runBpf } = require('../support/bpf');

const hex = (s) => Buffer.from(s.replace(/\s/g, ''), 'hex');
const MACS = '02000000000b 001122334455';
// A frame: MACs, then the rest in hex.
const frame = (rest) => hex(MACS + rest);
const IP4_UDP80 = '0800 4500001c 00010000 40110000 0a000001 0a000002 3039 0050 0008 0000';
const IP4_TCP80 = '0800 45000028 00010000 40060000 0a000001 0a000002 3039 0050 00000001 00000000 5002ffff 00000000';
const IP4_UDP123 = '0800 4500001c 00010000 40110000 0a000001 0a000002 3039 007b 0008 0000';
const IP6_UDP = '86dd 60000000 00081140 20010db8000000000000000000000001 20010db8000000000000000000000002 3039 0050 0008 0000';
// IPv6, a fragment header, then an ICMPv6 echo request.
const IP6_FRAG_ICMP6 = '86dd 60000000 00102c40 20010db8000000000000000000000001 20010db8000000000000000000000002 3a000001 00000007 80000000 00010001';
const SNAP = (oui, type) => `0020 aaaa03 ${oui} ${type} ${'00'.repeat(24)}`;

describe('capture filters against tcpdump: random expressions and frames, and each class of difference', function () {
  this.timeout(120000);
  const tmp = suiteTmpDir('ixy-filter-diff-');
  let linkFile;

  before(function () {
    linkFile = emptyEthernetPcap(tmp());
  });

  // The verdicts of ixy and of tcpdump's program on each frame ([bytes, wire length]).
  function verdicts(expression, frames) {
    const ref = compileBpf(expression, linkFile);
    assert.strictEqual(ref.error, undefined, `tcpdump refuses '${expression}': ${ref.error}`);
    const keep = compileFilter(expression);
    const ixy = frames.map(([b, wire = b.length]) => keep(b, b.length, wire));
    const tcpdump = frames.map(([b, wire = b.length]) => runBpf(ref.program, b, b.length, wire));
    assert.deepStrictEqual(ixy, tcpdump, `'${expression}': ixy ${ixy}, tcpdump ${tcpdump}`);
    return ixy;
  }

  function refusedByBoth(expression) {
    assert.throws(() => compileFilter(expression), { code: 'EFILTER' }, expression);
    assert.notStrictEqual(compileBpf(expression, linkFile).error, undefined, `tcpdump accepts '${expression}'`);
  }

  it('agrees with tcpdump on 250 random expressions over 500 random frames', function () {
    const r = differential({ seed: 48, expressions: 250, frames: 500, dir: tmp() });
    assert.deepStrictEqual(r.mismatches, []);
    // The sample must exercise both sides: many accepted, some refused.
    assert.ok(r.bothAccept >= 120 && r.bothRefuse >= 40, JSON.stringify(r));
  });

  it('a shift by 32 or more still loads its operand: a load past the end rejects', function () {
    const short = frame(IP4_UDP80);
    assert.deepStrictEqual(verdicts('ether[100] >> len = 0', [[short]]), [false]);
    assert.deepStrictEqual(verdicts('ether[0] << (len + 40) = 0', [[short]]), [true]);
  });

  it('an IPv4 byte above 255 is refused, as tcpdump does', function () {
    for (const e of ['host 10.0.0.256', 'host 256.0.0.1', 'host 10.256', 'net 300.1']) refusedByBoth(e);
  });

  it('port names: a tcp-only or udp-only name restricts the protocol, as libpcap does', function () {
    const frames = [[frame(IP4_TCP80)], [frame(IP4_UDP80)], [frame(IP4_UDP123)]];
    assert.deepStrictEqual(verdicts('port http', frames), [true, false, false]);
    assert.deepStrictEqual(verdicts('port ntp', frames), [false, false, true]);
    assert.deepStrictEqual(verdicts('port 80', frames), [true, true, false]);
    verdicts('sctp port domain', frames);
    verdicts('tcp portrange domain-tftp', frames);
    verdicts('portrange ssh-http', frames);
    verdicts('port bootps or tftp', frames);
    refusedByBoth('udp port http');
    refusedByBoth('tcp port ntp');
  });

  it('802.3: AppleTalk and AARP also over SNAP, IPX raw, over LLC and over SNAP', function () {
    const frames = [
      [frame(SNAP('080007', '809b'))], [frame(SNAP('000000', '80f3'))], [frame(SNAP('000000', '8137'))],
      [frame(`0020 ffff ${'00'.repeat(30)}`)], [frame(`0020 e0e003 ${'00'.repeat(30)}`)], [frame(`8137 ${'00'.repeat(30)}`)],
      [frame(`809b ${'00'.repeat(30)}`)], [frame(IP4_UDP80)],
    ];
    assert.deepStrictEqual(verdicts('ether proto \\atalk', frames), [true, false, false, false, false, false, true, false]);
    assert.deepStrictEqual(verdicts('ether proto 0x80f3', frames), [false, true, false, false, false, false, false, false]);
    assert.deepStrictEqual(verdicts('ether proto \\ipx', frames), [false, false, true, true, true, true, false, false]);
    verdicts('ether proto \\aarp or ether proto 0x809b', frames);
    verdicts('llc', frames);
    verdicts('ether proto \\iso or ether proto \\netbeui or ether proto 0x42', frames);
  });

  it('icmp6[...] behind a fragment header: not ICMPv6, as libpcap reads it', function () {
    const frames = [[frame(IP6_FRAG_ICMP6)]];
    assert.deepStrictEqual(verdicts('icmp6[0] = 58', frames), [false]);
    assert.deepStrictEqual(verdicts('icmp6', frames), [true]);
  });

  // The choice: as libpcap, an arithmetic operator keeps its left operand's protocol
  // tests only (docs/api.md says so).
  it("arithmetic keeps the left operand's protocol tests only, as libpcap", function () {
    const frames = [[frame(IP6_UDP)], [frame(IP4_UDP80)]];
    assert.deepStrictEqual(verdicts('0 + ip[0] = 0x60', frames), [true, false]);
    assert.deepStrictEqual(verdicts('ip[0] + 0 = 0x60', frames), [false, false]);
    assert.deepStrictEqual(verdicts('ip[0] = 0x60 + 0', frames), [false, false]);
  });

  it('len, less and greater read the wire length, not the captured one', function () {
    const cut = frame(IP4_UDP80).subarray(0, 30);
    const frames = [[cut, 200], [cut, 30]];
    assert.deepStrictEqual(verdicts('greater 100', frames), [true, false]);
    assert.deepStrictEqual(verdicts('less 100', frames), [false, true]);
    assert.deepStrictEqual(verdicts('len - 14 > 100 and ip', frames), [true, false]);
    assert.strictEqual(compileFilter('greater 100')(cut, 30), false); // the wire length defaults to the captured one
  });

  it("refuses what tcpdump refuses, accepts what it accepts (outside docs/api.md's unsupported list)", function () {
    for (const e of ['src 10.0.0.0/8', 'port 08', 'dst 2001:db8::/32', 'len % ip[0] = 1', 'len >> tcp[40] = 0',
      'host 10.0.0.1 or ((10.0.0.2))']) {
      refusedByBoth(e);
    }
    const frames = [[frame(IP4_TCP80)], [hex(`001122334455 ${MACS.slice(0, 12)} 0800 ${IP4_UDP80.slice(5)}`)], [frame(SNAP('000000', '0800'))]];
    for (const e of ['ether host 001122334455', 'ether src 0011.2233.4455', 'ah', 'esp', 'pim', 'vrrp', 'carp', 'igrp',
      'llc', 'byte 9 = 6', 'byte 0 < 2', 'byte 0 > 1', 'not esp and not ah', 'pim[0] = 0x30',
      'host 10.0.0.1 or (not 10.0.0.2)', 'ip[0] >> 31 ^ 1 = 0']) {
      verdicts(e, frames);
    }
  });
});

describe('capture filters: expression size', function () {
  this.timeout(60000);
  // CPU time, not wall time: a busy machine stretches the one and not the other.
  const timed = (expression) => {
    const start = process.cpuUsage();
    let outcome = 'compiled';
    try {
      compileFilter(expression)(Buffer.alloc(64), 64);
    } catch (err) {
      assert.strictEqual(err.code, 'EFILTER', err.stack); // never a RangeError
      outcome = err.message.replace(/^filter '.*', /s, '');
    }
    const used = process.cpuUsage(start);
    return { ms: (used.user + used.system) / 1000, outcome };
  };
  const hosts = (n) => Array.from({ length: n }, (_, i) => `host 10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`).join(' or ');

  it('100,000 or-joined hosts and 10,000 nested parentheses: EFILTER within 1 s of CPU', function () {
    for (const e of [hosts(100000), `${'('.repeat(10000)}tcp${')'.repeat(10000)}`, `${'not '.repeat(2000)}tcp`]) {
      const r = timed(e);
      assert.match(r.outcome, /at most 65536 characters|nests more than 500 levels/);
      assert.ok(r.ms < 1000, `${r.ms} ms`);
    }
  });

  it('500 levels of parentheses, not, arithmetic or and/or alternations compile without a stack overflow', function () {
    const cases = [`${'('.repeat(499)}tcp${')'.repeat(499)}`, `${'not '.repeat(499)}tcp`,
      `${Array.from({ length: 490 }, () => 'ip[1]').join(' + ')} = 5`,
      Array.from({ length: 490 }, (_, i) => `port ${i}`).map((p, i) => (i === 0 ? p : `${i % 2 ? 'and' : 'or'} ${p}`)).join(' '),
      Array.from({ length: 1000 }, (_, i) => `port ${i}`).join(' and ')];
    for (const e of cases) assert.strictEqual(timed(e).outcome, 'compiled', e.slice(0, 40));
    assert.match(timed(`${'('.repeat(501)}tcp${')'.repeat(501)}`).outcome, /nests more than 500 levels/);
  });

  it('repeated tests stay small: 1,000 `tcp and` compile to what one `tcp` does', function () {
    const once = filterSource('tcp');
    assert.strictEqual(filterSource(Array.from({ length: 1000 }, () => 'tcp').join(' and ')), once);
    assert.ok(filterSource(`${Array.from({ length: 1000 }, () => 'tcp').join(' and ')} and port 80`).length < 4 * once.length + 2000);
  });
});
