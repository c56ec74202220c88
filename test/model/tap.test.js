'use strict';
// Model ports wired to Linux TAP interfaces (native/model/tap.c): the `tap` command, the
// carrier, frames from the kernel into RX and from TX to the kernel. The kernel's side is
// a TAP in a network namespace of its own; frames are sent and captured there with a raw
// packet socket (python3), and the minimal test driver (model-driver.js) plays the NIC's
// driver. Real traffic through the real driver: real-traffic.test.js.

const assert = require('assert');
const childProcess = require('child_process');
const { Model } = require('../../lib/model');
const { checkTools, namespaceName, makeNamespace, deleteNamespace, tapCounters, TAP } = require('../../lib/apps/demo/netns');
const d = require('../support/model-driver');

const NS = namespaceName('t');
const PORT_MAC = [0x02, 0, 0, 0, 0xff, 0]; // port 0's MAC (RAL0/RAH0 after reset)

const ip = (...args) => childProcess.execFileSync('ip', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
const cpuSeconds = (pid) => {
  const f = require('fs').readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
};

// A raw packet socket on the TAP inside the namespace: `send HEX...` sends each frame
// (it leaves the kernel on the TAP, towards the model); `capture N SECONDS` prints the hex
// of up to N frames the kernel received on it (from the model), one per line.
const PACKET_SOCKET = `
import socket, sys
s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW, socket.htons(3))
s.bind((sys.argv[1], 0))
if sys.argv[2] == 'send':
    for h in sys.argv[3:]:
        s.send(bytes.fromhex(h))
else:
    s.settimeout(float(sys.argv[4]))
    print('ready', flush=True)
    got = 0
    try:
        while got < int(sys.argv[3]):
            data, addr = s.recvfrom(65536)
            if addr[2] != socket.PACKET_OUTGOING:
                print(data.hex(), flush=True)
                got += 1
    except socket.timeout:
        pass
`;

function sendFromKernel(frames, tap = TAP) {
  ip('netns', 'exec', NS, 'python3', '-c', PACKET_SOCKET, tap, 'send', ...frames.map((f) => f.toString('hex')));
}

// Starts a capture; resolves with a function that waits for its end and returns the frames.
function captureInKernel(count, seconds = 2) {
  const child = childProcess.spawn('ip', ['netns', 'exec', NS, 'python3', '-c', PACKET_SOCKET, TAP, 'capture', String(count), String(seconds)]);
  let out = '';
  child.stdout.on('data', (x) => { out += x; });
  const done = new Promise((resolve) => child.on('close', () => resolve(out.split('\n').slice(1).filter(Boolean).map((h) => Buffer.from(h, 'hex')))));
  return new Promise((resolve) => {
    child.stdout.on('data', () => { if (out.startsWith('ready')) resolve(() => done); });
  });
}

// An IPv4/UDP frame to port 0 with correct IPv4 and UDP checksums (size without FCS).
function udpFrame(size, { badIp = false } = {}) {
  const f = Buffer.alloc(size);
  d.buildFrame(f, { size, dst: PORT_MAC });
  const udp = ~d.csumFold(d.csumAdd(f, 34, size, d.csumAdd(f, 26, 34, 17 + size - 34))) & 0xffff;
  f.writeUInt16BE(udp || 0xffff, 40);
  if (badIp) f[24] ^= 1;
  return f;
}

async function waitUp(up, timeoutMs = 3000) {
  const end = Date.now() + timeoutMs;
  while (tapCounters(NS).up !== up) {
    if (Date.now() > end) throw new Error(`TAP never became ${up ? 'up' : 'down'}`);
    await d.sleep(20);
  }
}

const carrier = (tap = TAP) => JSON.parse(ip('-n', NS, '-j', 'link', 'show', 'dev', tap))[0].flags.includes('LOWER_UP');

describe('TAP ports (device model)', function () {
  this.timeout(20000);
  let model, dev, mem;

  before(() => {
    checkTools(['ip', 'python3']);
    makeNamespace(NS, '198.18.1.1');
    ip('-n', NS, 'tuntap', 'add', 'dev', 'ixy1', 'mode', 'tap');
  });
  after(() => deleteNamespace(NS));

  beforeEach(async () => { ({ model, dev, mem } = await d.startPort(0)); });
  afterEach(() => d.stopPort({ model, mem }));

  // Port 0 attached to the TAP, link up, RX and TX rings running; the TAP up.
  async function wired() {
    await model.tap(0, TAP, { netns: NS });
    await d.readyRx(dev, mem);
    await d.setupTx(dev, mem);
    await waitUp(true);
  }

  it('attaches to a TAP made with ip tuntap and refuses anything else in one line', async () => {
    await model.tap(0, TAP, { netns: NS });
    assert.strictEqual((await model.stats(0)).tap, TAP);
    const refused = {
      [`tap 1 ${TAP} netns=${NS}`]: /^TAP ixy0 is attached elsewhere \(one reader per TAP\)$/,
      [`tap 1 nosuch netns=${NS}`]: /^no interface nosuch \(make one with: ip tuntap add dev nosuch mode tap\)$/,
      [`tap 1 lo netns=${NS}`]: /^lo is not a TAP interface$/,
      [`tap 1 ${TAP} netns=nope-${process.pid}`]: /^no network namespace nope-\d+ \(\/run\/netns\/nope-\d+: No such file or directory\)$/,
      [`tap 1 ${TAP} netns=a/b`]: /^bad netns/,
      'tap 1 an-interface-name-too-long': /^interface name must be 1\.\.15 characters/,
      'tap 1': /^usage: tap PORT IFNAME/,
      'tap 1 a b c': /^usage: tap PORT IFNAME/,
      'cable 1 0': /^port has a TAP \(tap PORT off first\): 0$/,
    };
    for (const [line, message] of Object.entries(refused)) {
      await assert.rejects(model.command(line), (err) => message.test(err.message), line);
    }
    assert.throws(() => ip('-n', NS, 'link', 'show', 'nosuch'), /does not exist/, 'no interface made on the way');
    await model.tapOff(0);
    assert.strictEqual((await model.stats(0)).tap, '');
    await model.command(`tap 1 ${TAP} netns=${NS}`); // free again
    await model.command('tap 1 off');
    const r = childProcess.spawnSync(Model.binaryPath(), ['--config', `tap 0 nosuch netns=${NS}`], { encoding: 'utf8' });
    assert.strictEqual(r.status, 2);
    assert.match(r.stderr, /^ixy-model: --config 'tap 0 nosuch netns=[^']+': no interface nosuch .+\n$/);
  });

  it("the TAP's carrier follows the port's link, as the far end of a cable does", async () => {
    await model.tap(0, TAP, { netns: NS });
    assert.strictEqual(carrier(), false, 'link down after reset: no carrier');
    await d.resetLinkUp(dev);
    await model.waitFor(0, () => carrier(), 1000);
    await model.link(0, false);
    await model.waitFor(0, () => !carrier(), 1000);
    await model.link(0, true);
    await model.waitFor(0, () => carrier(), 1000);
    await model.tapOff(0);
    assert.strictEqual(carrier(), false, 'no reader: no carrier');
  });

  it('offers what the kernel sends to RX like frames off the wire: padded to 60 bytes, filtered, checksums checked', async () => {
    await wired();
    const before = tapCounters(NS);
    const arp = Buffer.alloc(42, 0xab); // the size of an ARP request, which the NIC pads
    Buffer.from([...PORT_MAC, 2, 0, 0, 0, 0xee, 1, 0x08, 0x06]).copy(arp);
    const good = udpFrame(100);
    const badIp = udpFrame(100, { badIp: true });
    const foreign = udpFrame(100);
    foreign[5] = 0x77; // another station's MAC: the address filter drops it
    sendFromKernel([arp, good, badIp, foreign]);
    const s = await model.waitFor(0, (x) => x.tapRxFrames === 4);
    assert.strictEqual(s.rxOffered, 4);
    assert.strictEqual(s.rxDelivered, 3);
    assert.strictEqual(s.rxDropFiltered, 1);
    assert.strictEqual(s.tapRxBytes, 42 + 300, 'the bytes the kernel sent');
    const after = tapCounters(NS);
    assert.strictEqual(after.txPackets - before.txPackets, 4, "the kernel's count");
    assert.strictEqual(after.txBytes - before.txBytes, s.tapRxBytes);

    const [r0, r1, r2] = [0, 1, 2].map((i) => d.rxDesc(mem, i));
    assert.strictEqual(r0.length, 60);
    assert.deepStrictEqual(Buffer.from(r0.data.subarray(0, 60)), Buffer.concat([arp, Buffer.alloc(18)]), 'zero padding');
    assert.strictEqual(r0.pktType, 0, 'not IP: no checksum status');
    assert.deepStrictEqual(Buffer.from(r1.data.subarray(0, 100)), good);
    assert.strictEqual(r1.pktType, d.RXD.PKT_IPV4 | d.RXD.PKT_UDP);
    assert.strictEqual(r1.status & (d.RXD.IPCS | d.RXD.L4CS | d.RXD.UDPCS), d.RXD.IPCS | d.RXD.L4CS | d.RXD.UDPCS);
    assert.strictEqual(r1.errors, 0);
    assert.strictEqual(r2.errors, d.RXD.IPE, 'bad IPv4 header checksum');
    assert.strictEqual(d.rxDesc(mem, 3).dd, false);
  });

  it('delivers a frame into a buffer the driver mapped after the model last looked (no drop)', async () => {
    await wired();
    // New hugepage memory, unknown to the model until it rescans the driver's mappings; a
    // NIC's DMA would not notice, so the frame must arrive, not count as missed.
    const late = d.dmaMemory();
    try {
      const addr = late.phys(0);
      mem.u32[0] = addr % 2 ** 32;
      mem.u32[1] = Math.floor(addr / 2 ** 32);
      const frame = udpFrame(200);
      sendFromKernel([frame]);
      const s = await model.waitFor(0, (x) => x.tapRxFrames === 1);
      assert.strictEqual(s.rxDropNoDesc, 0, 'lost while the model looked for the memory');
      assert.strictEqual(s.rxDelivered, 1);
      assert.deepStrictEqual(Buffer.from(late.bytes.subarray(0, 200)), frame);
    } finally {
      late.free();
    }
  });

  it('writes what the driver transmits to the TAP, short frames padded (HLREG0.TXPADEN)', async () => {
    await wired();
    const before = tapCounters(NS);
    const finish = await captureInKernel(2);
    d.buildFrame(mem.bytes.subarray(d.txBuf(0)), { size: 100, seq: 7 });
    d.txDesc(mem, 0, 100);
    d.buildFrame(mem.bytes.subarray(d.txBuf(1)), { size: 40, seq: 8 });
    d.txDesc(mem, 1, 40);
    dev.write(d.R.TDT, 2);
    const frames = await finish();
    const s = await model.stats(0);
    assert.strictEqual(s.txFrames, 2);
    assert.strictEqual(s.tapTxFrames, 2);
    assert.strictEqual(s.tapTxBytes, 160);
    assert.deepStrictEqual(frames[0], Buffer.from(mem.bytes.subarray(d.txBuf(0), d.txBuf(0) + 100)));
    assert.deepStrictEqual(frames[1], Buffer.concat([Buffer.from(mem.bytes.subarray(d.txBuf(1), d.txBuf(1) + 40)), Buffer.alloc(20)]));
    const after = tapCounters(NS);
    assert.strictEqual(after.rxPackets - before.rxPackets, 2);
    assert.strictEqual(after.rxBytes - before.rxBytes, 160);
  });

  it('a TAP that is down refuses frames: tapTxDropped, and the kernel counts them dropped', async () => {
    await wired();
    ip('-n', NS, 'link', 'set', TAP, 'down');
    try {
      const before = tapCounters(NS);
      d.queueTxFrames(mem, 3, 80);
      dev.write(d.R.TDT, 3);
      const s = await model.waitFor(0, (x) => x.txFrames === 3);
      assert.strictEqual(s.tapTxFrames, 0);
      assert.strictEqual(s.tapTxDropped, 3);
      assert.strictEqual(tapCounters(NS).rxDropped - before.rxDropped, 3);
      assert.strictEqual(s.tap, TAP, 'still attached');
    } finally {
      ip('-n', NS, 'link', 'set', TAP, 'up');
    }
  });

  it('sleeps while the TAP is quiet, and lets go of a TAP that is deleted', async () => {
    await wired();
    await model.tap(1, 'ixy1', { netns: NS });
    await d.sleep(200); // idle long enough for the model's longest naps
    const cpu = cpuSeconds(model.pid);
    await d.sleep(2000);
    const used = cpuSeconds(model.pid) - cpu;
    // An idle model still wakes every millisecond (loop.c's naps): about 0.1 s in 2 s with
    // a driver mapped and two TAPs. A loop that spun on a quiet TAP would take all 2 s.
    assert.ok(used < 0.2, `an idle model with two TAPs used ${used} s of CPU in 2 s`);
    ip('-n', NS, 'link', 'del', 'ixy1');
    try {
      const s = await model.waitFor(1, (x) => x.tap === '', 1000);
      assert.strictEqual(s.tap, '');
      const cpu2 = cpuSeconds(model.pid);
      await d.sleep(1000);
      assert.ok(cpuSeconds(model.pid) - cpu2 < 0.2, 'no busy loop on a dead descriptor');
    } finally {
      ip('-n', NS, 'tuntap', 'add', 'dev', 'ixy1', 'mode', 'tap');
    }
  });
});
