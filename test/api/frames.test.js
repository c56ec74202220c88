'use strict';

// Received frames as Node code expects them: copies through dev.frames() and
// dev.createReadStream() that a stream pipeline cannot corrupt, and a debug mode in which
// a batch from receive() used after its turn throws instead of showing later frames.
const assert = require('assert');
const { Readable, Writable } = require('stream');
const { pipeline } = require('stream/promises');
const ixy = require('../../lib');
const { modelForSuite } = require('../support/helpers');
const { packet } = ixy;

describe('frames as Node expects them', function () {
  const model = modelForSuite(1);

  // A test that ends before its source has sent everything must not leave frames for the
  // next one, whose checks start from the first sequence number it sees.
  afterEach(async function () {
    if (model()) await model().sourceOff(0);
  });

  const openPort = (options = {}) => ixy.open(model().addresses[0], { rxRingSize: 4096, mempoolEntries: 8192, ...options });

  // A Writable that records each frame's sequence number after a turn of the event loop,
  // as a sink doing I/O would, and ends the pipeline after n frames.
  function sequenceSink(n, seqOf, controller) {
    const seqs = [];
    return {
      seqs,
      sink: new Writable({
        objectMode: true,
        write(item, _enc, done) {
          setImmediate(() => {
            try {
              for (const s of seqOf(item)) seqs.push(s);
            } catch (err) {
              done(err);
              return;
            }
            if (seqs.length >= n) controller.abort();
            done();
          });
        },
      }),
    };
  }

  it('createReadStream() through pipeline(): every frame arrives intact and in order, as a Buffer with length and timestamp', async function () {
    this.timeout(30000);
    const N = 5000;
    const dev = await openPort();
    const controller = new AbortController();
    const before = Date.now();
    let first = null;
    try {
      await model().clear(0);
      await model().source(0, { rate: 50000, size: 80, count: N });
      const { seqs, sink } = sequenceSink(N, (f) => {
        if (first === null) first = f;
        return [packet.readSeq(f.data)];
      }, controller);
      await assert.rejects(pipeline(dev.createReadStream(0), sink, { signal: controller.signal }), { name: 'AbortError' });
      assert.deepStrictEqual(seqs.slice(0, N), Array.from({ length: N }, (_, i) => i));
      assert.ok(Buffer.isBuffer(first.data));
      assert.strictEqual(first.length, 80);
      assert.strictEqual(first.data.length, 80);
      assert.ok(first.timestamp >= before - 1 && first.timestamp <= Date.now() + 1, `timestamp ${first.timestamp} is not when it arrived`);
    } finally {
      dev.close();
    }
  });

  // Issue 46, 11: as Node's own streams do (stream.addAbortSignal); it ended quietly.
  it('createReadStream(q, { signal }): aborting destroys the stream with an AbortError', async function () {
    const dev = await openPort();
    try {
      const controller = new AbortController();
      const stream = dev.createReadStream(0, { signal: controller.signal });
      const ended = new Promise((resolve) => {
        stream.once('error', (err) => resolve(err));
        stream.once('close', () => resolve(null));
      });
      stream.resume();
      setTimeout(() => controller.abort(), 200);
      const err = await ended;
      assert.ok(err !== null, 'closed without an error');
      assert.strictEqual(err.name, 'AbortError');
      assert.strictEqual(stream.destroyed, true);
    } finally {
      dev.close();
    }
  });

  it('Readable.from(receive()) with debug: a batch read after its turn throws ESTALEBATCH instead of showing later frames', async function () {
    this.timeout(30000);
    const N = 2000;
    const dev = await openPort();
    const controller = new AbortController();
    try {
      await model().clear(0);
      await model().source(0, { rate: 50000, size: 60, count: N });
      const seqsOf = (batch) => {
        const out = [];
        for (let i = 0; i < batch.count; i++) out.push(packet.readSeq(batch.data(i)));
        return out;
      };
      const { sink } = sequenceSink(N, seqsOf, controller);
      await assert.rejects(
        pipeline(Readable.from(dev.receive(0, { batchSize: 8, debug: true })), sink, { signal: controller.signal }),
        { name: 'IxyError', code: 'ESTALEBATCH', message: /batch \d+ from receive\(\) was used after its turn .*dev\.frames\(\) yields copies/ },
      );
    } finally {
      dev.close();
    }
  });

  it('debug batches work as usual during their turn, and throw once the loop has ended', async function () {
    const dev = await openPort({ debug: true });
    let kept = null;
    try {
      await model().clear(0);
      await model().source(0, { rate: 0, size: 60, count: 40 });
      let got = 0;
      let base = null;
      for await (const batch of dev.receive(0, { batchSize: 16 })) {
        if (base === null) base = packet.readSeq(batch.data(0));
        for (let i = 0; i < batch.count; i++) assert.strictEqual(packet.readSeq(batch.data(i)), base + got + i);
        got += batch.count;
        kept = batch;
        if (got >= 40) break;
      }
      assert.throws(() => kept.count, { code: 'ESTALEBATCH', message: /the loop is at its end/ });
    } finally {
      dev.close();
    }
  });
});
