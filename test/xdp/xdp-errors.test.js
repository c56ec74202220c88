'use strict';
// The AF_XDP backend's ways out and errors on the real kernel (lib/xdp/): whatever ends the
// process, the kernel detaches the XDP program (a BPF link dies with its last fd) and the
// interface's frames reach the kernel's stack again; each error a user can meet has its code.

const assert = require('assert');
const path = require('path');
const { spawn } = require('child_process');
const veth = require('../support/veth');

const CHILD = path.join(__dirname, '..', 'support', 'xdp-child.js');

describe('AF_XDP: every way out, and every error', function () {
  this.timeout(60000);
  let ns1, ns2;

  before(function () {
    veth.skipWithoutXdp(this);
    ns1 = veth.namespace('e1');
    ns2 = veth.namespace('e2');
    veth.vethPair(ns1, 'w1', ns2, 'w2', { addresses: { a: '10.79.0.1/24', b: '10.79.0.2/24' } });
    veth.vethPair(ns1, 'd1', ns2, 'd2', { up: false });
  });

  after(() => veth.removeAll());

  // The child in ns2 with `devices` ([[name, options]]); resolves its first line (parsed)
  // and the child, whose run ends with `done`.
  async function start(devices, then, prefix = []) {
    let child;
    const done = veth.runIn(ns2, prefix.length ? prefix[0] : process.execPath, [...prefix.slice(1), ...(prefix.length ? [process.execPath] : []), CHILD, JSON.stringify(devices), then], { onStart: (c) => { child = c; } });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    await veth.until(() => out.includes('\n') || child.exitCode !== null, 20000, 'the child\'s first line');
    const r = out.includes('\n') ? JSON.parse(out.split('\n')[0]) : { exit: (await done).stderr };
    return { first: r, child, done };
  }

  const ping = async () => (await veth.runIn(ns1, 'ping', ['-c', '1', '-W', '1', '10.79.0.2'])).code === 0;

  for (const way of ['SIGINT', 'SIGTERM', 'an exception', 'SIGKILL']) {
    it(`${way}: afterwards no XDP program on the interface, and ping works again (a reply within ping's one-second wait)`, async () => {
      const { first, child, done } = await start([['xdp:w2', {}]], way === 'an exception' ? 'throw' : 'hold');
      try {
        assert.ok(first.opened, JSON.stringify(first));
        assert.ok(veth.xdpAttached(ns2, 'w2'), 'no XDP program while open');
        assert.strictEqual(await ping(), false, 'ping answered while ixy had the queue');
        if (way !== 'an exception') child.kill(way);
        const r = await done;
        if (way === 'an exception') assert.match(r.stderr, /an exception nobody catches/);
        assert.strictEqual(veth.xdpAttached(ns2, 'w2'), false, 'the XDP program is still attached');
        // Each ping waits a second for its reply (-W 1); starting one may take longer on a busy
        // machine, which is not the kernel's answer being late, so the bound is ping's own.
        let ok = false;
        for (let attempt = 0; attempt < 3 && !ok; attempt++) ok = await ping();
        assert.ok(ok, 'no ping reply within a second, three times, after the end');
      } finally {
        if (child.exitCode === null) child.kill('SIGKILL');
      }
    });
  }

  async function error(devices, prefix) {
    const { first, child } = await start(devices, 'close', prefix);
    if (child.exitCode === null) child.kill('SIGKILL');
    return first;
  }

  it('rxDropWhenFull: left out, null or true (what the kernel does) opens, anything but false is EINVAL', async () => {
    assert.deepStrictEqual((await error([['xdp:w2', { rxDropWhenFull: true }]])).opened, [['copy', 'native']]);
    assert.deepStrictEqual((await error([['xdp:w2', { rxDropWhenFull: null }]])).opened, [['copy', 'native']]);
    assert.strictEqual((await error([['xdp:w2', { rxDropWhenFull: 'no' }]])).code, 'EINVAL');
  });

  it('modes: native XDP and copy by default on veth, generic when asked, zero-copy refused with EUNSUPPORTED', async () => {
    assert.deepStrictEqual((await error([['xdp:w2', {}]])).opened, [['copy', 'native']]);
    assert.deepStrictEqual((await error([['xdp:w2', { xdpMode: 'generic', mode: 'copy' }]])).opened, [['copy', 'generic']]);
    const zc = await error([['xdp:w2', { mode: 'zerocopy' }]]);
    assert.strictEqual(zc.code, 'EUNSUPPORTED', JSON.stringify(zc));
    assert.strictEqual(veth.xdpAttached(ns2, 'w2'), false);
  });

  it('the commands pass --xdp-mode and --xdp-bind to open(): generic XDP shows as xdpgeneric, zero-copy on veth is refused', async () => {
    let child;
    const run = veth.runIxyIn(ns2, ['pcap', 'xdp:w2', '/dev/null', '--xdp-mode', 'generic', '--xdp-bind', 'copy', '--seconds', '3'], { onStart: (c) => { child = c; } });
    let out = '';
    await veth.until(() => child !== undefined, 5000, 'the capture to start');
    child.stderr.on('data', (d) => { out += d; });
    child.stdout.on('data', (d) => { out += d; });
    await veth.until(() => /capturing/.test(out) || child.exitCode !== null, 20000, 'the capture to start');
    assert.match(veth.ip('-n', ns2, 'link', 'show', 'dev', 'w2'), /\bxdpgeneric\b/);
    const done = await run;
    assert.strictEqual(done.code, 0, done.stderr);
    const zc = await veth.runIxyIn(ns2, ['generate', 'xdp:w2', '--xdp-bind', 'zerocopy', '--count', '1']);
    assert.strictEqual(zc.code, 1);
    assert.match(zc.stderr, /^ixy: w2: cannot bind the AF_XDP socket .*does not offer this XDP mode.*\n$/);
    assert.doesNotMatch(zc.stderr, /\n\s+at /);
    assert.strictEqual(veth.xdpAttached(ns2, 'w2'), false);
  });

  it('without free hugepages the UMEM is plain pages, and frames still come', async () => {
    assert.deepStrictEqual((await error([['xdp:w2', {}]])).pages, ['huge']);
    // A hugetlbfs of 4 MiB at /mnt/huge, in a mount namespace of the child's own: the
    // UMEM's 32 MiB do not fit there.
    const script = `umount /mnt/huge && mount -t hugetlbfs -o size=4M nodev /mnt/huge && exec ip netns exec ${ns2} "${process.execPath}" "${CHILD}" '[["xdp:w2",{}]]' count`;
    const child = spawn('unshare', ['-m', 'sh', '-c', script], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d) => { out += d; });
    const closed = new Promise((resolve) => child.on('close', resolve));
    try {
      await veth.until(() => out.includes('\n') || child.exitCode !== null, 20000, 'the child to open');
      const first = JSON.parse(out.split('\n')[0]);
      assert.deepStrictEqual(first.pages, ['plain'], out);
      veth.ip('-n', ns1, 'neigh', 'replace', '10.79.0.2', 'lladdr', veth.mac(ns2, 'w2'), 'dev', 'w1');
      await veth.runIn(ns1, 'ping', ['-c', '3', '-i', '0.2', '-W', '1', '10.79.0.2']);
      await closed;
      assert.ok(JSON.parse(out.split('\n')[1]).received >= 3, out);
    } finally {
      child.kill('SIGKILL');
      veth.ip('-n', ns1, 'neigh', 'del', '10.79.0.2', 'dev', 'w1');
    }
  });

  it('ENODEV: no such interface', async () => {
    const r = await error([['xdp:nonesuch0', {}]]);
    assert.strictEqual(r.code, 'ENODEV', JSON.stringify(r));
    assert.match(r.message, /no network interface 'nonesuch0'/);
  });

  it('ENETDOWN: an interface that is down', async () => {
    const r = await error([['xdp:d2', {}]]);
    assert.strictEqual(r.code, 'ENETDOWN', JSON.stringify(r));
    assert.match(r.message, /ip link set d2 up/);
  });

  it('EINVAL: a name that is no interface name, a queue the interface lacks', async () => {
    assert.strictEqual((await error([['xdp:', {}]])).code, 'EINVAL');
    assert.strictEqual((await error([['xdp:w2@x', {}]])).code, 'EINVAL');
    const r = await error([['xdp:w2@5', {}]]);
    assert.strictEqual(r.code, 'EINVAL');
    assert.match(r.message, /w2 has no queue 5/);
  });

  it('EBUSY: a queue already bound, in this process or by another', async () => {
    const same = await error([['xdp:w2', {}], ['xdp:w2@0', {}]]);
    assert.strictEqual(same.code, 'EBUSY', JSON.stringify(same));
    const holder = await start([['xdp:w2', {}]], 'hold');
    try {
      const other = await error([['xdp:w2', {}]]);
      assert.strictEqual(other.code, 'EBUSY', JSON.stringify(other));
      assert.match(other.message, /another XDP program/);
    } finally {
      holder.child.kill('SIGKILL');
      await holder.done;
    }
  });

  it('EPERM naming CAP_NET_RAW, CAP_BPF and CAP_NET_ADMIN, without them', async () => {
    const r = await error([['xdp:w2', {}]], ['setpriv', '--bounding-set', '-net_raw,-net_admin,-bpf,-sys_admin,-perfmon']);
    assert.strictEqual(r.code, 'EPERM', JSON.stringify(r));
    assert.match(r.message, /CAP_NET_RAW.*CAP_BPF.*CAP_NET_ADMIN/);
    assert.strictEqual(veth.xdpAttached(ns2, 'w2'), false);
  });

  it('EMEMLOCK: a locked-memory limit below the UMEM, with what to do', async () => {
    const r = await error([['xdp:w2', {}]], ['prlimit', '--memlock=65536', 'setpriv', '--bounding-set', '-ipc_lock']);
    assert.strictEqual(r.code, 'EMEMLOCK', JSON.stringify(r));
    assert.match(r.message, /64 KiB.*ulimit -l/);
    assert.strictEqual(veth.xdpAttached(ns2, 'w2'), false);
  });

  it('EUNSUPPORTED for what AF_XDP cannot serve, naming what to use instead', async () => {
    const r = await error([['xdp:w2', { rssKey: Buffer.alloc(40) }]]);
    assert.strictEqual(r.code, 'EUNSUPPORTED');
    assert.match(r.message, /ethtool -X/);
    const nic = await veth.runIxyIn(ns2, ['generate', 'xdp:w2', '-r', '1k', '--pacing', 'nic']);
    assert.strictEqual(nic.code, 1);
    assert.match(nic.stderr, /^ixy: pacing 'nic': .*use --pacing software\n$/);
    const lat = await veth.runIxyIn(ns2, ['latency', 'xdp:w2', 'xdp:d2']);
    assert.strictEqual(lat.code, 1);
    assert.match(lat.stderr, /^ixy: latency reads the 82599's IEEE 1588 timestamps, which AF_XDP does not give: .*\n$/);
    for (const [key, value, hint] of [['promiscuous', true, /promisc on/], ['bufferSize', 4096, /2 KiB/], ['debug', true, /model/], ['rxDropWhenFull', false, /kernel drops.*leave the option out/]]) {
      const r = await error([['xdp:w2', { [key]: value }]]);
      assert.strictEqual(r.code, 'EUNSUPPORTED', key);
      assert.match(r.message, hint);
    }
  });
});
