'use strict';

// Traffic for the guest tests: a generator that sends numbered IPv4/UDP frames from its own
// mempool, and a checker that takes received batches and verifies every frame (valid
// header, expected length and UDP port, sequence numbers in order, pattern intact).
const path = require('path');
const { spawn } = require('child_process');
const packet = require('../../../lib/packet');
const { Mempool } = require('../../../lib/memory/mempool');
const { PacketBatch } = require('../../../lib/memory/batch');

class Generator {
  // Frames of `size` bytes from `src` (a MAC) with UDP source port `srcPort`.
  constructor({ size, src, srcPort, batchSize = 32 }) {
    this.size = size;
    this.pool = new Mempool({ entries: 1024, bufferSize: 2048 });
    const template = new Uint8Array(size);
    packet.writeUdpFrame(template, { size, src, srcPort });
    for (const b of this.pool.buffers) b.set(template);
    this.batch = new PacketBatch(batchSize, this.pool);
    this.seq = 0;
  }

  // Sends up to `max` more frames on txQueue; returns how many went.
  send(txQueue, max) {
    const batch = this.batch;
    const want = Math.min(max, batch.capacity);
    if (want <= 0) return 0;
    const got = this.pool.allocMany(batch.ids, want);
    for (let i = 0; i < got; i++) {
      packet.writeSeq(this.pool.buffers[batch.ids[i]], this.seq + i);
      batch.lengths[i] = this.size;
    }
    batch.count = got;
    batch.pool = this.pool;
    const sent = txQueue.send(batch);
    if (sent < got) batch.freeFrom(sent);
    this.seq += sent;
    return sent;
  }

  close() {
    this.pool.close();
  }
}

class Checker {
  constructor({ size, srcPort }) {
    this.size = size;
    this.srcPort = srcPort;
    this.received = 0;
    this.problems = [];
  }

  // Checks and frees every frame of a received batch.
  take(batch) {
    for (let i = 0; i < batch.count; i++) this.check(batch.data(i), batch.lengths[i]);
    batch.freeFrom(0);
  }

  check(b, length) {
    const n = this.received++;
    if (this.problems.length >= 5) return;
    const port = (b[34] << 8) | b[35];
    if (!packet.isValidUdp(b, length)) this.problems.push(`frame ${n}: not a valid IPv4/UDP frame`);
    else if (port !== this.srcPort) this.problems.push(`frame ${n}: UDP source port ${port}, expected ${this.srcPort}`);
    else if (length !== this.size) this.problems.push(`frame ${n}: ${length} bytes, expected ${this.size}`);
    else if (packet.readSeq(b) !== n) this.problems.push(`frame ${n}: sequence number ${packet.readSeq(b)}`);
    else {
      for (let i = packet.SEQ_OFFSET + 4; i < length; i++) {
        if (b[i] !== (i & 0xff)) {
          this.problems.push(`frame ${n}: byte ${i} is ${b[i]}`);
          break;
        }
      }
    }
  }
}

// What the host checks against QEMU's pcap of `nic` (see test/vm/vm.test.js).
function reportSent(nic, what, { srcPort, size, count, src }) {
  const record = { pcapCheck: true, nic, what, srcPort, size, count, src };
  console.log(`@@ixy data ${JSON.stringify(record)}`);
}

// A file written in the guest, sent to the host on the console (base64, one line) with
// what it should hold; the host saves it and checks it with tshark.
function reportFile(name, bytes, what, { srcPort, size, count, src }) {
  console.log(`@@ixy file ${name} ${bytes.toString('base64')}`);
  const record = { pcapCheck: true, file: name, what, srcPort, size, count, src };
  console.log(`@@ixy data ${JSON.stringify(record)}`);
}

const IXY = path.join(__dirname, '..', '..', '..', 'bin', 'ixy.js');

// `ixy ARGS` in a child process (spawn `options`, e.g. another uid): { child, exited (a
// promise of its exit), said() (what it printed so far) }.
function spawnIxy(args, options = {}) {
  const child = spawn(process.execPath, [IXY, ...args], { stdio: ['ignore', 'pipe', 'pipe'], ...options });
  let said = '';
  child.stdout.on('data', (d) => { said += d; });
  child.stderr.on('data', (d) => { said += d; });
  const exited = new Promise((resolve) => child.on('exit', resolve));
  return { child, exited, said: () => said };
}

module.exports = { Generator, Checker, reportSent, reportFile, spawnIxy, IXY };
