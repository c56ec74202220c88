'use strict';

// The filter compiler against tcpdump: for each expression, the frames of a mixed capture
// (test/support/filter-traffic.js) that compileFilter keeps must be exactly those that
// `tcpdump -r file -w out expression` keeps. Frame i carries timestamp i + 1 s, which
// names it in tcpdump's output. No expected list is written by hand.
const assert = require('assert');
const path = require('path');
const { spawnSync } = require('child_process');
const { PcapWriter, readPcap } = require('../../lib/pcap-file');
const { compileFilter, filterSource } = require('../../lib/filter');
const { assertIxyError, suiteTmpDir } = require('../support/helpers');
const { frames } = require('../support/filter-traffic');

const EXPRESSIONS = [
  // protocols
  'ip', 'ip6', 'arp', 'rarp', 'tcp', 'udp', 'icmp', 'icmp6', 'igmp', 'sctp', 'not ip', '!tcp',
  // hosts and nets, with directions and protocols, IPv4 (ARP included) and IPv6
  'host 10.0.0.1', 'src host 10.0.0.1', 'dst host 10.0.0.1', 'ip host 10.0.0.1', 'arp host 10.0.0.1',
  'src or dst host 172.16.0.5', 'src and dst net 10.0.0.0/8', 'host 10.0.0.1 or 172.16.0.5',
  'net 10.0.0.0/8', 'net 192.168.0.0 mask 255.255.0.0', 'dst net 172.16', 'net 10', 'src net 10.0.0.0/24',
  'host 2001:db8::1', 'ip6 dst host 2001:db8::2', 'net 2001:db8::/32', 'src net fe80::/10', 'ip6 net 2001:db8:1::/48',
  // ports: tcpdump's default is tcp, udp and sctp over IPv4 and IPv6; only first fragments
  'port 80', 'port 5000', 'tcp port 80', 'udp port 53', 'src port 5000', 'dst port 5000', 'sctp port 80',
  'port 53 or 80', 'tcp port 80 or 443', 'not port 80', 'tcp dst port 80 or 22 and not src host 172.16.0.5',
  'portrange 1000-2000', 'tcp portrange 1-1999', 'dst portrange 5000-6000', 'udp src portrange 1000-1234',
  'port domain', 'tcp port http', 'udp and dst port 5000 and src net 10.0.0.0/8',
  // Ethernet
  'ether host 00:11:22:33:44:55', 'ether src 00:11:22:33:44:55', 'ether dst 02:00:00:00:00:0b',
  'ether dst ff:ff:ff:ff:ff:ff', 'ether broadcast', 'broadcast', 'ether multicast', 'multicast',
  'ip multicast', 'ip broadcast', 'ip6 multicast', 'ether proto 0x88cc', 'ether proto \\arp', 'ether[0] & 1 != 0',
  // protocol numbers
  'ip proto 1', 'ip proto \\udp', 'ip6 proto 58', 'proto 132', 'proto \\tcp', 'ip6 proto \\tcp',
  // lengths
  'less 60', 'greater 100', 'len > 64', 'len - 14 >= 50 and udp', 'len < 20',
  // byte offsets and arithmetic, over each protocol
  'ip[8] < 64', 'ip[8] >= 128', 'ip[9] = 17', 'ip[0] & 0xf > 5', 'ip[6:2] & 0x1fff != 0', 'ip[16:4] = 0xe0000001',
  'tcp[tcpflags] & tcp-syn != 0', 'tcp[tcpflags] & (tcp-syn|tcp-ack) = tcp-syn', 'tcp[13] = 0x12',
  'tcp[tcpflags] & (tcp-fin|tcp-rst) != 0', 'tcp[tcpflags] & (tcp-ece|tcp-cwr) = tcp-ece|tcp-cwr',
  'tcp[2:2] = 80', 'tcp[0:4] = 0x9c400050', 'udp[2:2] = 5000', 'udp[4:2] > 20', 'icmp[icmptype] = icmp-echo',
  'icmp[icmptype] != icmp-echo and icmp[icmptype] != icmp-echoreply', 'icmp[icmpcode] = 3', 'icmp[0] = 11',
  'ip6[6] = 58', 'icmp6[icmp6type] = icmp6-echoreply', 'arp[7] = 2', 'ether[12:2] = 0x0806', 'ether[14] & 0xf0 = 0x40',
  'ip[2:2] - ip[0] % 16 * 4 > 20', 'ip[8] * 2 + 1 > 100', '(ip[8] >> 1) & 0x3f = 32', 'ip[1] | ip[8] = 64',
  'ip[8] ^ 0xff = 0xbf', '- ip[8] > 0xffffff00', 'ip[ip[0] & 0xf] = 0', 'tcp[tcp[12] >> 4 << 2] = 0x47',
  'ip[8] / ip[1] = 0', 'ip[8] % ip[1] = 8', 'ether[len - 1] = 7',
  // VLAN: the tag check, and every test after `vlan` 4 bytes further
  'vlan', 'vlan 100', 'vlan 200 and tcp', 'vlan and udp port 5000', 'vlan and arp', 'vlan and ip6', 'not vlan',
  'vlan and vlan 100 and udp', 'ip or vlan', 'vlan 100 or ip', '(vlan and ip) or ip', 'vlan and host 10.0.0.1',
  'vlan and ether[14:2] & 0xfff = 100',
  // boolean structure
  'tcp and (port 80 or port 22)', 'udp or icmp and host 10.0.0.1', 'not (tcp or udp)', 'not tcp and not udp and ip',
  'host 10.0.0.1 and not (port 80 or 22)', 'host 10.0.0.1 && !icmp || arp', '(tcp) and ((((port 80))))', '',
];

// Frames tcpdump keeps for expression, as indexes into the capture. options: ['-O'] turns
// libpcap's optimiser off.
function tcpdumpKeeps(file, out, expression, options = []) {
  const args = [...options, '-r', file, '-w', out];
  if (expression !== '') args.push('--', expression);
  const r = spawnSync('tcpdump', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tcpdump ${expression}: ${r.stderr}`);
  return readPcap(out).frames.map((f) => f.sec - 1);
}

describe('capture filters (tcpdump language)', function () {
  this.timeout(60000);
  const captured = frames();
  const tmp = suiteTmpDir('ixy-filter-');
  let dir;
  let file;

  before(function () {
    if (spawnSync('tcpdump', ['--version']).status !== 0) throw new Error('tcpdump is needed (.ci/run installs it)');
    dir = tmp();
    file = path.join(dir, 'mixed.pcap');
    const writer = new PcapWriter(file, { nanoseconds: false });
    captured.forEach((f, i) => writer.write(f, f.length, i + 1, 0));
    writer.close();
  });

  // libpcap's optimiser may test fields in another order than the expression's (`port 53
  // or 80` compares the source port with 80 before it loads the destination port), which
  // changes the verdict on a frame that ends inside the header: there a load beyond the
  // end rejects the frame in one order and is never reached in the other. On such frames,
  // where tcpdump and tcpdump -O disagree, we keep what tcpdump -O keeps (the expression's
  // order); on all others, what both keep.
  it(`keeps the frames tcpdump keeps, for ${EXPRESSIONS.length} expressions`, function () {
    const wrong = [];
    const reordered = [];
    for (const expression of EXPRESSIONS) {
      const optimised = tcpdumpKeeps(file, path.join(dir, 'out.pcap'), expression);
      const unoptimised = tcpdumpKeeps(file, path.join(dir, 'out.pcap'), expression, ['-O']);
      const differ = captured.map((f, i) => i).filter((i) => optimised.includes(i) !== unoptimised.includes(i));
      if (differ.length > 0) reordered.push(`'${expression}': frames ${differ.join(',')}`);
      const expected = unoptimised;
      const keep = compileFilter(expression);
      // The frames lie in bigger buffers, as in a packet pool: only [0, length) may count.
      const got = captured.map((f, i) => {
        const b = Buffer.alloc(2048, 0x5a);
        f.copy(b);
        return keep(b, f.length) ? i : -1;
      }).filter((i) => i >= 0);
      if (got.join() !== expected.join()) wrong.push(`'${expression}': tcpdump ${expected.join(',')}, ixy ${got.join(',')}`);
    }
    assert.deepStrictEqual(wrong, []);
    // Only frames cut short can differ between the two, and only a few expressions do it.
    for (const r of reordered) assert.match(r, /frames (4[1-9]|5\d)(,(4[1-9]|5\d))*$/, r);
    assert.ok(reordered.length <= 5, reordered.join('; '));
  });

  // Expressions drawn from a fixed seed: primitives of every kind, nested in and/or/not
  // and parentheses, so that combinations nobody wrote above are compared too.
  it('keeps the frames tcpdump -O keeps, for 300 generated expressions', function () {
    const wrong = [];
    const random = seeded(38);
    for (let n = 0; n < 300; n++) {
      const expression = generated(random, 3);
      const expected = tcpdumpKeeps(file, path.join(dir, 'out.pcap'), expression, ['-O']);
      const keep = compileFilter(expression);
      const got = captured.map((f, i) => (keep(f, f.length) ? i : -1)).filter((i) => i >= 0);
      if (got.join() !== expected.join()) wrong.push(`'${expression}': tcpdump ${expected.join(',')}, ixy ${got.join(',')}`);
    }
    assert.deepStrictEqual(wrong, []);
  });

  it('the capture exercises the expressions: each but the empty one keeps some frames and drops others', function () {
    const out = path.join(dir, 'out.pcap');
    const partial = EXPRESSIONS.filter((e) => {
      const n = tcpdumpKeeps(file, out, e).length;
      return n > 0 && n < captured.length;
    });
    assert.deepStrictEqual(EXPRESSIONS.filter((e) => !partial.includes(e)), ['']);
  });

  const ERRORS = [
    ['udp and dst prot 53', 13, /'prot'/],
    ['tcp or 80', 8, /needs a qualifier/],
    ['host 10.0.0.1/8', 6, /networks only/],
    ['net 10.0.0.1/8', 5, /non-network bits/],
    ['ip port 53', 1, /'ip' cannot qualify a port/],
    ['port 70000', 6, /illegal port number 70000/],
    ['ip[2:3] = 1', 6, /data size must be 1, 2, or 4/],
    ['ip[0] / (1 - 1) = 0', 7, /division by zero/],
    ['ip[0] << 40 = 0', 7, /shift by more than 31 bits/],
    ['vlan 5000', 6, /VLAN tag 5000 greater than maximum 4095/],
    ['tcp and (', 10, /end of the expression/],
    ['(tcp', 5, /expected '\)'/],
    ['tcp and', 8, /end of the expression/],
    ['host example.com', 6, /names are not resolved/],
    ['ether host 10.0.0.1', 12, /not an Ethernet address/],
    ['host 00:11:22:33:44:55', 6, /needs 'ether host'/],
    ['ip host ::1', 1, /'ip' cannot qualify an IPv6 address/],
    ['tcp $ udp', 5, /unexpected character '\$'/],
    ['mpls 100', 1, /'mpls' is not supported/],
    ['TCP', 1, /needs a qualifier/],
    ['ip[8] < ', 9, /end of the expression/],
  ];
  for (const [expression, column, pattern] of ERRORS) {
    it(`refuses '${expression}' with EFILTER at column ${column}`, function () {
      assert.throws(() => compileFilter(expression), (err) => assertIxyError(err, 'EFILTER', pattern) &&
        assert.match(err.message, new RegExp(`, column ${column}:`)) === undefined);
      // tcpdump refuses it too (our messages are our own).
      if (!/example|mpls/.test(expression)) {
        assert.notStrictEqual(spawnSync('tcpdump', ['-r', file, '-d', '--', expression]).status, 0, 'tcpdump accepts it');
      }
    });
  }

  it('refuses a filter that is not a string', function () {
    assert.throws(() => compileFilter(42), (err) => assertIxyError(err, 'EFILTER', /is a string, got 42/));
  });

  // The predicate must not allocate: its body builds no object, array, closure or string,
  // and a million calls run without a garbage collection and leave the young generation
  // as it was. The same measurement of a predicate that keeps one small array per call
  // must see it, or the measurement proves nothing.
  it('allocates nothing per frame', async function () {
    const expression = 'udp and dst port 5000 and src net 10.0.0.0/8 or tcp[tcpflags] & tcp-syn != 0 or ip[ip[0] & 0xf] = 0';
    const source = filterSource(expression);
    assert.doesNotMatch(source, /new |\[\s*[^\]\s]*\s*,|\{|=>|function|`|'|"/, source);
    const b = Buffer.alloc(2048);
    captured[8].copy(b);
    const ours = await allocationOf(compileFilter(expression), b, captured[8].length);
    const control = await allocationOf((bytes, len) => { sink = [len]; return true; }, b, captured[8].length);
    assert.ok(control.gcs > 0 || control.grew > 1e6, `the measurement misses an allocating predicate: ${JSON.stringify(control)}`);
    assert.deepStrictEqual(ours, { gcs: 0, grew: ours.grew < 65536 ? ours.grew : 'over 64 KiB' });
  });
});

// A linear congruential generator: the same expressions on every run.
function seeded(seed) {
  let state = seed;
  return (n) => {
    state = (Math.imul(state, 1103515245) + 12345) & 0x7fffffff;
    return (state >>> 16) % n; // the high bits: the low ones of this generator repeat quickly
  };
}

function generated(random, depth) {
  const pick = (list) => list[random(list.length)];
  const primitive = () => pick([
    () => pick(['ip', 'ip6', 'arp', 'rarp', 'tcp', 'udp', 'icmp', 'icmp6', 'sctp', 'igmp', 'vlan']),
    () => `${pick(['', 'tcp ', 'udp '])}${pick(['', 'src ', 'dst ', 'src or dst ', 'src and dst '])}port ${pick([22, 53, 80, 443, 1234, 5000, 40000])}`,
    () => `${pick(['', 'tcp ', 'udp '])}${pick(['', 'src ', 'dst '])}portrange ${pick(['1-1000', '1000-5000', '5000-65535', '22-80'])}`,
    () => `${pick(['', 'ip ', 'arp '])}${pick(['', 'src ', 'dst '])}${pick(['host 10.0.0.1', 'host 192.168.1.1', 'host 172.16.0.5', 'net 10.0.0.0/8', 'net 172.16', 'net 192.168.0.0/16'])}`,
    () => `${pick(['', 'src ', 'dst '])}${pick(['host 2001:db8::1', 'host 2001:db8::2', 'net 2001:db8::/32'])}`,
    () => `vlan ${pick([10, 100, 200, 300])}`,
    () => pick(['less 60', 'greater 80', 'len > 70', 'len <= 64', 'ether broadcast', 'ether multicast', 'ip multicast', 'ip6 multicast', 'ip broadcast']),
    () => `${pick(['ip proto', 'ip6 proto', 'proto'])} ${pick(['6', '17', '58', '\\tcp'])}`,
    () => `ether proto ${pick(['0x800', '0x86dd', '\\arp', '0x88cc'])}`,
    () => `${pick(['ip[8]', 'ip[9]', 'ip[0] & 0xf', 'ip[6:2] & 0x1fff', 'tcp[13]', 'tcp[tcpflags] & tcp-syn', 'udp[2:2]', 'icmp[0]', 'ether[0] & 1', 'ip6[6]', 'arp[7]', 'tcp[2:2]', 'ip[16:4] & 0xff000000', 'ether[12:2]', 'len - 14'])} ${pick(['=', '!=', '>', '<', '>=', '<='])} ${pick([0, 1, 2, 6, 17, 60, 64, 80, 5000, 0x0800, 0x0a000000])}`,
  ])();
  if (depth === 0 || random(3) === 0) return primitive();
  switch (random(4)) {
    case 0: return `not ${random(2) ? `(${generated(random, depth - 1)})` : primitive()}`;
    case 1: return `(${generated(random, depth - 1)})`;
    default: return `${generated(random, depth - 1)} ${pick(['and', 'or'])} ${generated(random, depth - 1)}`;
  }
}

let sink = null; // where the control predicate's arrays escape to, so that V8 must allocate them
const keepSink = () => sink;

// Garbage collections during, and growth of the young generation over, a million calls.
async function allocationOf(predicate, b, length) {
  for (let i = 0; i < 1e5; i++) predicate(b, length); // optimised by now
  const { PerformanceObserver } = require('perf_hooks');
  const v8 = require('v8');
  const newSpace = () => v8.getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_used_size;
  let gcs = 0;
  let window = null;
  const observer = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) if (window && e.startTime >= window[0] && e.startTime <= window[1]) gcs++;
  });
  observer.observe({ entryTypes: ['gc'] });
  const start = performance.now();
  const before = newSpace();
  for (let i = 0; i < 1e6; i++) predicate(b, length);
  const grew = newSpace() - before;
  window = [start, performance.now()];
  await new Promise((resolve) => setTimeout(resolve, 50)); // gc entries arrive asynchronously
  observer.disconnect();
  if (keepSink() !== null) sink = null;
  return { gcs, grew };
}
