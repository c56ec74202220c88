'use strict';

// The pcap writer and reader, and `ixy pcap` against the device model. tshark is the
// independent judge: it must read every file without complaint, see the right number of
// frames, valid IPv4 header checksums and UDP; sequence numbers are read from the payload.
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { execFileSync, spawnSync } = require('child_process');
const { PcapWriter, CaptureClock, readPcap, MAGIC_NANOSECONDS, MAGIC_MICROSECONDS } = require('../../lib/pcap-file');
const packet = require('../../lib/packet');
const { Mempool } = require('../../lib/memory/mempool');
const { PacketBatch } = require('../../lib/memory/batch');
const { IXY, runIxy, tsharkFields, suiteTmpDir } = require('../support/helpers');

// tshark exits non-zero (and says why on stderr) for a truncated or corrupt file.
const tsharkCount = (file) => tsharkFields(file, ['frame.number']).length;

// Checks every frame as tshark decodes it: length, IPv4 (checksum verified), UDP to port
// 5000, and sequence numbers first, first + 1, ...
function checkUdpFrames(file, { count, size, firstSeq = 0 }) {
  const rows = tsharkFields(file, ['frame.len', 'ip.proto', 'ip.checksum.status', 'udp.dstport', 'udp.payload']);
  assert.strictEqual(rows.length, count);
  rows.forEach(([len, proto, checksum, dport, payload], i) => {
    assert.strictEqual(len, String(size), `frame ${i}: length`);
    assert.strictEqual(proto, '17', `frame ${i}: IP protocol`);
    assert.ok(checksum === '1' || checksum === 'Good', `frame ${i}: IPv4 checksum status ${checksum}`);
    assert.strictEqual(dport, '5000', `frame ${i}: UDP port`);
    assert.strictEqual(parseInt(payload.replace(/:/g, '').slice(0, 8), 16), firstSeq + i, `frame ${i}: sequence number`);
  });
}

describe('pcap files', function () {
  const tmpDir = suiteTmpDir('ixy-pcap-');

  for (const nanoseconds of [true, false]) {
    it(`writes frames tshark and tcpdump read, with ${nanoseconds ? 'nano' : 'micro'}second timestamps`, function () {
      const file = path.join(tmpDir(), `written-${nanoseconds}.pcap`);
      const frame = new Uint8Array(2048); // like a mempool buffer: longer than its frame
      // A buffer too small for all frames: the writer must flush many times, whole records only.
      const writer = new PcapWriter(file, { nanoseconds, bufferSize: 70000 });
      const clock = new CaptureClock();
      const before = Date.now() / 1000;
      const N = 3000;
      for (let i = 0; i < N; i++) {
        const size = 60 + (i % 1455); // 60..1514
        packet.writeUdpFrame(frame, { size });
        packet.writeSeq(frame, i);
        clock.now();
        writer.write(frame, size, clock.sec, clock.nsec);
      }
      writer.close();
      writer.close(); // twice is fine
      const after = Date.now() / 1000;

      assert.strictEqual(writer.frames, N);
      assert.strictEqual(fs.statSync(file).size, writer.bytes);
      const rows = tsharkFields(file, ['frame.len', 'ip.checksum.status', 'udp.payload', 'frame.time_epoch']);
      assert.strictEqual(rows.length, N);
      let last = 0;
      rows.forEach(([len, checksum, payload, time], i) => {
        assert.strictEqual(Number(len), 60 + (i % 1455));
        assert.strictEqual(checksum, '1', `frame ${i}: IPv4 checksum`);
        assert.strictEqual(parseInt(payload.slice(0, 8), 16), i);
        const t = Number(time);
        assert.ok(t >= last && t >= before - 0.001 && t <= after + 0.001, `frame ${i}: timestamp ${time} outside ${before}..${after}`);
        last = t;
      });
      const dump = execFileSync('tcpdump', ['-nn', '-r', file], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
      assert.strictEqual(dump.trim().split('\n').length, N);

      const { header, frames } = readPcap(file);
      assert.strictEqual(header.nanoseconds, nanoseconds);
      assert.strictEqual(header.linktype, 1);
      assert.strictEqual(header.snaplen, 65535);
      assert.deepStrictEqual([header.versionMajor, header.versionMinor], [2, 4]);
      assert.strictEqual(fs.readFileSync(file).readUInt32LE(0), nanoseconds ? MAGIC_NANOSECONDS : MAGIC_MICROSECONDS);
      assert.strictEqual(frames.length, N);
      assert.strictEqual(frames[7].length, 67);
      assert.strictEqual(frames[7].data.readUInt32BE(packet.SEQ_OFFSET), 7);
    });
  }

  it('writeBatch(): a batch of more frames than one native copy takes, across flushes and the snaplen, byte for byte', function () {
    const file = path.join(tmpDir(), 'batch.pcap');
    const pool = new Mempool({ entries: 512, bufferSize: 2048 });
    const batch = new PacketBatch(300, pool);
    try {
      assert.strictEqual(pool.allocMany(batch.ids, 300), 300);
      batch.count = 300;
      for (let i = 0; i < 300; i++) {
        batch.lengths[i] = 60 + ((i * 37) % 1455); // 60..1514
        packet.writeUdpFrame(pool.buffers[batch.ids[i]], { size: batch.lengths[i] });
        packet.writeSeq(pool.buffers[batch.ids[i]], i);
      }
      // A buffer with room for about 70 records of 1 KiB flushes within the batch, more than
      // once; the default one holds the whole batch, copied in two native calls.
      for (const bufferSize of [70000, undefined]) {
        const writer = new PcapWriter(file, { bufferSize, snaplen: 1000 });
        writer.writeBatch(batch, 1700000000, 123456789, 10);
        writer.close();
        const { frames } = readPcap(file);
        assert.strictEqual(frames.length, 290);
        frames.forEach((f, k) => {
          const i = k + 10;
          const length = batch.lengths[i];
          assert.strictEqual(f.length, length, `frame ${i}: length on the wire`);
          assert.deepStrictEqual(f.data, Buffer.from(pool.buffers[batch.ids[i]].subarray(0, Math.min(length, 1000))), `frame ${i}: its bytes`);
          assert.deepStrictEqual([f.sec, f.nsec], [1700000000, 123456789]);
        });
        assert.strictEqual(tsharkCount(file), 290);
      }
    } finally {
      batch.release();
      pool.close();
    }
  });

  it('cuts frames to the snaplen and keeps the length on the wire', function () {
    const file = path.join(tmpDir(), 'snap.pcap');
    const writer = new PcapWriter(file, { snaplen: 64 });
    const frame = new Uint8Array(1514);
    packet.writeUdpFrame(frame, { size: 1514 });
    writer.write(frame, 1514, 1, 2);
    writer.close();
    const [f] = readPcap(file).frames;
    assert.strictEqual(f.data.length, 64);
    assert.strictEqual(f.length, 1514);
    assert.deepStrictEqual([f.sec, f.nsec], [1, 2]);
    assert.strictEqual(tsharkCount(file), 1);
  });

  it('the reader rejects what is not a whole pcap file', function () {
    const whole = fs.readFileSync(writtenFile());
    assert.throws(() => readPcap(whole.subarray(0, whole.length - 10)), { code: 'EPCAP', message: /cut short/ });
    assert.throws(() => readPcap(Buffer.alloc(40)), { code: 'EPCAP', message: /not a classic pcap/ });
  });

  // Issue 34, 10: a file of empty records (16 bytes each) would cost memory twenty times its
  // size; and the Uint8Array the types promise is read, anything else refused in one line.
  it('the reader refuses a file of more frames than it keeps in memory, instead of growing without bound', function () {
    const empty = Buffer.alloc(24 + 16 * (4 << 20)); // 64 MiB: a header and 4 Mi empty records
    const header = readPcap(writtenFile()).header;
    empty.writeUInt32LE(0xa1b23c4d, 0);
    empty.writeUInt16LE(2, 4);
    empty.writeUInt16LE(4, 6);
    empty.writeUInt32LE(header.snaplen, 16);
    empty.writeUInt32LE(1, 20);
    assert.throws(() => readPcap(empty), { name: 'IxyError', code: 'EPCAP', message: /^buffer holds more than 1048576 frames, which readPcap\(\) keeps in memory at once: pass \{ maxFrames \} for more$/ });
    assert.throws(() => readPcap(empty, { maxFrames: 1000 }), { code: 'EPCAP', message: /more than 1000 frames/ });
    assert.strictEqual(readPcap(empty.subarray(0, 24 + 16 * 1000), { maxFrames: 1000 }).frames.length, 1000);
  });

  it('the reader takes a Uint8Array, and refuses what is neither a name nor bytes with one line', function () {
    const whole = fs.readFileSync(writtenFile());
    const bytes = new Uint8Array(whole.length + 8);
    bytes.set(whole, 8);
    const { frames } = readPcap(bytes.subarray(8));
    assert.strictEqual(frames.length, 1);
    assert.strictEqual(frames[0].length, 100);
    for (const bad of [42, null, { path: 'x' }, '']) {
      assert.throws(() => readPcap(bad), { name: 'IxyError', code: 'EINVAL', message: /^readPcap\(\) takes a file name, a Buffer or a Uint8Array, got / });
    }
    assert.throws(() => readPcap(path.join(tmpDir(), 'none.pcap')), { name: 'IxyError', code: 'EPCAP', message: /^cannot read pcap file '.*none\.pcap': ENOENT$/ });
  });

  // A name in a directory anyone may write to (/tmp) may be another user's link or file,
  // put there for root to write through: refused, as fs.protected_symlinks and
  // fs.protected_regular do where they are on.
  it('in a sticky world-writable directory, writes through no other user\'s link or file', function () {
    const shared = path.join(tmpDir(), 'shared');
    fs.mkdirSync(shared);
    fs.chmodSync(shared, 0o1777);
    const victim = path.join(tmpDir(), 'victim');
    fs.writeFileSync(victim, 'system file\n');
    const link = path.join(shared, 'link.pcap');
    fs.symlinkSync(victim, link);
    fs.lchownSync(link, 65534, 65534);
    assert.throws(() => new PcapWriter(link), { name: 'IxyError', code: 'EPCAP', message: /link\.pcap': it is a symbolic link of another user in .*, which anyone may write to: refusing to follow it$/ });
    const theirs = path.join(shared, 'theirs.pcap');
    fs.writeFileSync(theirs, 'theirs\n');
    fs.chownSync(theirs, 65534, 65534);
    assert.throws(() => new PcapWriter(theirs), { name: 'IxyError', code: 'EPCAP', message: /theirs\.pcap': it exists already and belongs to user 65534, in .*: refusing to write captured traffic into it/ });
    assert.strictEqual(fs.readFileSync(victim, 'utf8'), 'system file\n');
    assert.strictEqual(fs.readFileSync(theirs, 'utf8'), 'theirs\n');
    // This user's own link and file, and a new name, are written as anywhere else.
    fs.lchownSync(link, process.getuid(), process.getgid());
    fs.chownSync(theirs, process.getuid(), process.getgid());
    for (const file of [link, theirs, path.join(shared, 'new.pcap')]) {
      new PcapWriter(file).close();
      assert.strictEqual(readPcap(file).frames.length, 0);
    }
    assert.strictEqual(readPcap(victim).frames.length, 0, 'written through this user\'s link');
  });

  // A pcap file of one 100-byte frame.
  function writtenFile() {
    const file = path.join(tmpDir(), 'one.pcap');
    const writer = new PcapWriter(file);
    const frame = new Uint8Array(100);
    packet.writeUdpFrame(frame, { size: 100 });
    writer.write(frame, 100, 0, 0);
    writer.close();
    return file;
  }

  it('fails with a clear error when the file cannot be created', function () {
    assert.throws(() => new PcapWriter(path.join(tmpDir(), 'no', 'such', 'dir.pcap')), { name: 'IxyError', code: 'EPCAP', message: /cannot create pcap file .*ENOENT/ });
  });

  it('refuses a descriptor that is not open, or a target that is neither name nor descriptor', function () {
    assert.throws(() => new PcapWriter(999), { name: 'IxyError', code: 'EBADF', message: /file descriptor 999: it is not open/ });
    assert.throws(() => new PcapWriter(-1), { name: 'IxyError', code: 'EINVAL', message: /got -1$/ });
    assert.throws(() => new PcapWriter({ fd: 1 }), { name: 'IxyError', code: 'EINVAL', message: /file name or an open file descriptor, got \{ fd: 1 \} \(an object\)/ });
  });

  it('a writer whose header cannot be written says so and keeps no file descriptor', function () {
    const open = () => fs.readdirSync('/proc/self/fd').length;
    const before = open();
    assert.throws(() => new PcapWriter('/dev/full'), { name: 'IxyError', code: 'ENOSPC', message: /^cannot write to '\/dev\/full' \(ENOSPC\): it holds the first 0 frames/ });
    assert.strictEqual(open(), before, 'the writer leaked its file descriptor');
  });

  it('writers with header: false append whole records after the header another writer of the descriptor wrote', function () {
    const file = path.join(tmpDir(), 'appended.pcap');
    const first = new PcapWriter(file);
    const frame = new Uint8Array(2048);
    const others = [new PcapWriter(first.fd, { header: false, snaplen: 1024, bufferSize: 2048 }), new PcapWriter(first.fd, { header: false })];
    for (let i = 0; i < 200; i++) {
      packet.writeUdpFrame(frame, { size: 60 + i });
      packet.writeSeq(frame, i);
      others[i % 2].write(frame, 60 + i, 1, i);
    }
    for (const w of others) w.close();
    first.close();
    assert.deepStrictEqual(others.map((w) => w.bytes), [100, 100].map((n, k) => n * 16 + [...Array(n)].reduce((sum, _, j) => sum + 60 + 2 * j + k, 0)));
    const { frames } = readPcap(file);
    assert.strictEqual(frames.length, 200);
    assert.strictEqual(fs.statSync(file).size, first.bytes + others[0].bytes + others[1].bytes);
    assert.deepStrictEqual(frames.map((f) => f.data.readUInt32BE(packet.SEQ_OFFSET)).sort((a, b) => a - b), [...Array(200).keys()]);
    assert.strictEqual(tsharkCount(file), 200);
  });

  it('a CaptureClock made from another\'s base() tells the same time, in a worker thread too', async function () {
    const { Worker } = require('worker_threads');
    const main = new CaptureClock();
    const ns = (c) => BigInt(c.sec) * 1000000000n + BigInt(c.nsec);
    const here = new CaptureClock(main.base());
    const t = [ns(main.now()), ns(here.now()), ns(main.now())];
    assert.ok(t[0] <= t[1] && t[1] <= t[2], `in order: ${t}`);
    const source = `const { parentPort, workerData } = require('worker_threads');
      const { CaptureClock } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'pcap-file'))});
      const clock = new CaptureClock(workerData);
      parentPort.once('message', () => { clock.now(); parentPort.postMessage([clock.sec, clock.nsec]); });
      parentPort.postMessage('ready');`;
    const worker = new Worker(source, { eval: true, workerData: main.base() });
    try {
      const messages = [];
      worker.on('message', (m) => messages.push(m));
      while (messages.length < 1) await new Promise(setImmediate);
      const before = ns(main.now());
      worker.postMessage('now');
      while (messages.length < 2) await new Promise(setImmediate);
      const after = ns(main.now());
      const there = BigInt(messages[1][0]) * 1000000000n + BigInt(messages[1][1]);
      assert.ok(before <= there && there <= after, `the worker's time ${there} within ${before}..${after}`);
    } finally {
      await worker.terminate();
    }
  });

  it('writeUdpFrame() refuses a wrong size or a missing buffer with IxyError EINVAL', function () {
    assert.throws(() => packet.writeUdpFrame({ size: 10 }), { name: 'IxyError', code: 'EINVAL', message: /writes into a Uint8Array/ });
    assert.throws(() => packet.writeUdpFrame(new Uint8Array(100), { size: 10 }), { name: 'IxyError', code: 'EINVAL', message: /^frame size must be 60\.\.1514, got 10$/ });
    assert.throws(() => packet.writeUdpFrame(new Uint8Array(100), { size: 200 }), { code: 'EINVAL', message: /at least 200 bytes, got 100 bytes/ });
    assert.throws(() => packet.writeUdpFrame(new Uint8Array(100), { dst: 'ff:ff' }), { code: 'EINVAL', message: /not a MAC address/ });
  });
});

describe('ixy pcap on the device model', function () {
  let Model;
  let model;
  let tmp;
  let env;

  before(async function () {
    ({ Model } = require('../../lib/model'));
    model = await Model.start({ ports: 1 });
    env = { IXY_PCI_ROOT: model.dir };
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-pcap-'));
  });

  after(async function () {
    if (model) await model.stop();
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  // Starts `ixy pcap args...`; once it says it is capturing (the driver polls the ring),
  // starts the model's source with `source` and, if given, calls `then(child)`.
  function capture(args, source, then = null) {
    let started = false;
    return runIxy(['pcap', ...args], {
      env,
      onStart: (child) => {
        child.stderr.on('data', (d) => {
          if (started || !/capturing on/.test(String(d))) return;
          started = true;
          model.source(0, source).then(() => then && then(child));
        });
      },
    });
  }

  it('captures exactly n frames: valid IPv4/UDP with consecutive sequence numbers, tshark agrees', async function () {
    const N = 4000;
    const file = path.join(tmp, 'n.pcap');
    await model.clear(0);
    // A rate far below what the driver takes, and a ring holding 200 ms of it: no frame may
    // be lost even on a busy machine. --seconds only stops a broken run from hanging.
    const run = await capture([model.addresses[0], file, String(N), '--ring', '4096', '--seconds', '30'], { rate: 20000, size: 124, count: N + 1000 });
    assert.strictEqual(run.code, 0, run.stderr);
    assert.match(run.stderr, new RegExp(`captured ${N} frames`));
    assert.doesNotMatch(run.stderr, /\r/, 'progress bar drawn although stderr is not a terminal');
    checkUdpFrames(file, { count: N, size: 124 });
    const { frames } = readPcap(file);
    assert.strictEqual(frames.length, N);
    const m = await model.stats(0);
    assert.strictEqual(m.rxDropNoDesc, 0);
  });

  it('microsecond timestamps with --us', async function () {
    const file = path.join(tmp, 'us.pcap');
    await model.clear(0);
    const run = await capture([model.addresses[0], file, '100', '--us', '--seconds', '30'], { rate: 10000, size: 60, count: 100 });
    assert.strictEqual(run.code, 0, run.stderr);
    assert.strictEqual(fs.readFileSync(file).readUInt32LE(0), MAGIC_MICROSECONDS);
    checkUdpFrames(file, { count: 100, size: 60 });
  });

  // SIGHUP (tcpdump takes it as SIGTERM) and SIGQUIT end it as Ctrl-C does (issue 46, 5).
  for (const signal of ['SIGINT', 'SIGHUP', 'SIGQUIT']) {
    it(`${signal === 'SIGINT' ? 'Ctrl-C (SIGINT)' : signal} leaves a complete file with every frame received`, async function () {
      const file = path.join(tmp, `${signal}.pcap`);
      await model.clear(0);
      const run = await capture([model.addresses[0], file, '--ring', '4096', '--seconds', '30'], { rate: 20000, size: 60 }, async (child) => {
        // Interrupt in the middle of the traffic.
        await model.waitFor(0, (s) => s.rxDelivered >= 3000, 20000);
        child.kill(signal);
      });
      await model.sourceOff(0);
      assert.strictEqual(run.code, 0, run.stderr);
      assert.match(run.stderr, /\(interrupted\)/);
      const captured = Number(/captured (\d+) frames/.exec(run.stderr)[1]);
      assert.ok(captured >= 3000, `only ${captured} frames`);
      assert.strictEqual(tsharkCount(file), captured);
      const { frames } = readPcap(file); // throws on a truncated record
      assert.strictEqual(frames.length, captured);
      frames.forEach((f, i) => assert.strictEqual(f.data.readUInt32BE(packet.SEQ_OFFSET), i, `frame ${i}: sequence number`));
    });
  }

  it('to a pipe every batch is written at once, so a reader sees frames as they come', async function () {
    await model.clear(0);
    const stdout = [];
    let seenLive = 0;
    const run = await runIxy(['pcap', model.addresses[0], '-', '--seconds', '30'], {
      env,
      onStart: (child) => {
        child.stdout.on('data', (d) => stdout.push(d));
        child.stderr.once('data', async () => {
          // Frames trickle in at 1 kpps: far from the 1 MiB a file buffers before writing.
          // At that rate 1 MiB takes 13 s: the first 100 frames reach a reader that waits up
          // to 5 s (a busy machine may hold the capture back a while) only if written at once.
          await model.source(0, { rate: 1000, size: 60 });
          await model.waitFor(0, (m) => m.rxDelivered >= 200, 20000);
          const end = Date.now() + 5000;
          while (Buffer.concat(stdout).length < 24 + 100 * 76 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
          seenLive = Buffer.concat(stdout).length;
          child.kill('SIGINT');
        });
      },
    });
    await model.sourceOff(0);
    assert.strictEqual(run.code, 0, run.stderr);
    assert.ok(seenLive >= 24 + 100 * 76, `only ${seenLive} bytes reached the pipe while capturing`);
    const captured = Number(/captured (\d+) frames/.exec(run.stderr)[1]);
    assert.strictEqual(readPcap(Buffer.concat(stdout)).frames.length, captured);
  });

  it('a reader that closes the pipe (| head -c 100) ends the capture quietly, with exit 0', async function () {
    await model.clear(0);
    await model.source(0, { rate: 10000, size: 60 });
    const script = `set -o pipefail; "$NODE" "$IXY" pcap ${model.addresses[0]} - --seconds 30 | head -c 100 > /dev/null`;
    const run = spawnSync('bash', ['-c', script], { env: { ...process.env, ...env, NODE: process.execPath, IXY }, encoding: 'utf8' });
    await model.sourceOff(0);
    assert.strictEqual(run.status, 0, run.stderr);
    assert.match(run.stderr, /captured \d+ frames \(\d+ bytes\) to stdout \(the reader closed the pipe\)/);
    assert.doesNotMatch(run.stderr, /^ixy: /m);
  });

  // Issue 34, 8: every whole record that reached the disk stays, buffered (1 MiB flushes)
  // or not (-U, a flush per batch).
  for (const flags of [[], ['-U']]) {
    it(`a full disk cuts the file back to its last whole record and keeps every one before it${flags.length ? ' (-U)' : ''}; the error names the file and its frames`, async function () {
      await model.clear(0);
      // -U: as fast as the ring takes them, so that a flush (a batch) holds many records
      await model.source(0, { rate: flags.length ? 0 : 200000, size: 60 });
      const kept = path.join(tmp, 'full-disk.pcap');
      // A 1.5 MiB tmpfs in a private mount namespace: the first 1 MiB flush fits, the second
      // stops part-way. The file is copied out before the namespace (and the tmpfs) goes.
      const disk = fs.mkdtempSync(path.join(tmp, 'disk-'));
      const capacity = 1536 << 10;
      const script = `mount -t tmpfs -o size=${capacity} ixy-full "${disk}" && "$NODE" "$IXY" pcap ${model.addresses[0]} "${disk}/x.pcap" --seconds 30 ${flags.join(' ')}; ` +
        `rc=$?; cp "${disk}/x.pcap" "${kept}"; exit $rc`;
      const run = spawnSync('unshare', ['-m', 'sh', '-c', script], { env: { ...process.env, ...env, NODE: process.execPath, IXY }, encoding: 'utf8' });
      await model.sourceOff(0);
      assert.notStrictEqual(run.status, 0);
      const lines = run.stderr.trim().split('\n');
      assert.strictEqual(lines.filter((l) => l.startsWith('ixy: ')).length, 1, run.stderr);
      const m = /^ixy: cannot write to '.*\/x\.pcap' \(ENOSPC\): it holds the first (\d+) frames, ending on a whole record$/m.exec(run.stderr);
      assert.ok(m, run.stderr);
      const { frames } = readPcap(kept); // throws on a record cut in half
      assert.strictEqual(frames.length, Number(m[1]));
      // Less than one record (16 + 60 bytes) of the disk is left unused.
      const size = fs.statSync(kept).size;
      assert.ok(size > capacity - (16 + 60), `${size} bytes of ${capacity} kept: whole records were cut away`);
    });
  }

  it('a bad address or a missing device fails in one line and creates no file', async function () {
    for (const address of ['0000:zz:00.0', '0000:00:1f.7']) {
      const file = path.join(tmp, `bad-${address}.pcap`);
      const run = await runIxy(['pcap', address, file, '10'], { env });
      assert.notStrictEqual(run.code, 0);
      assert.strictEqual(run.stderr.trim().split('\n').length, 1, run.stderr);
      assert.match(run.stderr, /^ixy: /);
      assert.ok(!fs.existsSync(file), `${file} was created`);
    }
  });
});
