'use strict';
// Any Linux NIC through AF_XDP (lib/xdp/): `ixy forward xdp:a2 xdp:b2` in one network
// namespace between two veth pairs whose far ends sit in two others, so that the kernel's
// own ping, curl and python3's http.server talk through the forwarder, on the real kernel.

const assert = require('assert');
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const veth = require('../support/veth');

const FILE_BYTES = 8 << 20;

describe('AF_XDP: ixy forward between two veth pairs, the kernel on both sides', function () {
  this.timeout(120000);
  let ns1, ns2, nsf, forwarder, run, tmp;

  before(async function () {
    veth.skipWithoutXdp(this);
    ns1 = veth.namespace('c1');
    ns2 = veth.namespace('c2');
    nsf = veth.namespace('fw');
    veth.vethPair(ns1, 'a1', nsf, 'a2', { addresses: { a: '10.77.0.1/24' } });
    veth.vethPair(ns2, 'b1', nsf, 'b2', { addresses: { a: '10.77.0.2/24' } });
    run = veth.runIxyIn(nsf, ['forward', 'xdp:a2', 'xdp:b2'], { onStart: (c) => { forwarder = c; }, timeoutMs: 110000 });
    await veth.until(() => veth.xdpAttached(nsf, 'a2') && veth.xdpAttached(nsf, 'b2'), 20000, 'the forwarder\'s XDP programs');
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-xdp-'));
  });

  after(async () => {
    try {
      if (forwarder && forwarder.exitCode === null) forwarder.kill('SIGKILL');
      if (run) await run;
    } finally {
      veth.removeAll();
      if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
    }
  });

  it('ping (ARP first) across the forwarder, every reply back', async () => {
    const r = await veth.runIn(ns1, 'ping', ['-c', '5', '-i', '0.2', '-W', '2', '10.77.0.2']);
    assert.match(r.stdout, /5 packets transmitted, 5 received/, r.stdout + r.stderr);
  });

  it(`a ${FILE_BYTES >> 20} MiB file from python3 -m http.server, fetched with curl: SHA-256 equal`, async () => {
    const file = path.join(tmp, 'big.bin');
    fs.writeFileSync(file, crypto.randomBytes(FILE_BYTES));
    const server = veth.spawnIn(ns2, 'python3', ['-m', 'http.server', '8077', '--bind', '10.77.0.2', '--directory', tmp]);
    try {
      let fetched = null;
      for (let attempt = 0; attempt < 20 && fetched === null; attempt++) {
        const r = await veth.runIn(ns1, 'curl', ['-sS', '--fail', '-m', '60', '-o', path.join(tmp, 'got.bin'), 'http://10.77.0.2:8077/big.bin']);
        if (r.code === 0) fetched = r;
        else await new Promise((resolve) => setTimeout(resolve, 100)); // the server is still starting
      }
      assert.ok(fetched, 'curl never fetched the file');
      const sum = (f) => crypto.createHash('sha256').update(fs.readFileSync(f)).digest('hex');
      assert.strictEqual(fs.statSync(path.join(tmp, 'got.bin')).size, FILE_BYTES);
      assert.strictEqual(sum(path.join(tmp, 'got.bin')), sum(file));
    } finally {
      server.kill('SIGKILL');
    }
  });

  it('SIGINT stops it with totals, and the XDP programs are gone', async () => {
    forwarder.kill('SIGINT');
    const r = await run;
    assert.strictEqual(r.code, 0, r.stderr);
    assert.match(r.stdout, /\[xdp:a2\] total RX \d+ packets/);
    assert.ok(!veth.xdpAttached(nsf, 'a2') && !veth.xdpAttached(nsf, 'b2'), 'an XDP program is still attached');
  });
});
