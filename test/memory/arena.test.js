'use strict';

// The index arena (lib/memory/arena.js): spans are views of one array, never overlap, and come
// back, zeroed and merged with their free neighbours, once their views are collected.
const assert = require('assert');
const { execFileSync } = require('child_process');
const path = require('path');
const { words, allocWords, offsetOf, freeWords, WORDS } = require('../../lib/memory/arena');
const { PacketBatch } = require('../../lib/memory/batch');

const ARENA = path.join(__dirname, '..', '..', 'lib', 'memory', 'arena.js');

// Runs `body` in a child node that can force garbage collection; returns its JSON output.
function inGcChild(body) {
  const script = `
    const { allocWords, offsetOf, freeWords } = require(${JSON.stringify(ARENA)});
    const collect = async () => {
      // The registry's callbacks run as tasks after a full collection.
      for (let i = 0; i < 5; i++) { global.gc(); await new Promise((r) => setImmediate(r)); }
    };
    (async () => { ${body} })().then((r) => process.stdout.write(JSON.stringify(r)));`;
  return JSON.parse(execFileSync(process.execPath, ['--expose-gc', '-e', script], { encoding: 'utf8' }));
}

describe('index arena', () => {
  it('gives each span its own words, seen both through its view and through the arena', () => {
    const a = new PacketBatch(64);
    const b = new PacketBatch(64);
    const spans = [a.ids, a.lengths, b.ids, b.lengths].map((v) => [offsetOf(v), offsetOf(v) + v.length]);
    spans.sort((x, y) => x[0] - y[0]);
    for (let k = 1; k < spans.length; k++) assert.ok(spans[k - 1][1] <= spans[k][0], `spans ${spans[k - 1]} and ${spans[k]} overlap`);
    b.ids[5] = 1234;
    assert.strictEqual(words[b.idsAt + 5], 1234);
    words[a.lengthsAt + 63] = 60;
    assert.strictEqual(a.lengths[63], 60);
    assert.strictEqual(a.ids.buffer, words.buffer);
  });

  it('refuses a span larger than what is free with ENOMEM, and loses nothing', () => {
    const before = freeWords();
    assert.throws(() => allocWords(WORDS), (err) => err.code === 'ENOMEM' && /index arena/.test(err.message));
    assert.strictEqual(freeWords(), before);
  });

  it('takes a span back when its view is collected, zeroed and merged with free neighbours', function () {
    this.timeout(20000);
    const r = inGcChild(`
      const start = freeWords();
      let a = allocWords(1000);
      let b = allocWords(3000);
      const c = allocWords(10);
      const atA = offsetOf(a);
      a.fill(7); b.fill(7);
      a = null; b = null;
      await collect();
      const afterDrop = freeWords();
      // a and b were neighbours: merged, the first 4000-word request fits where a was.
      const d = allocWords(4000);
      let nonZero = 0;
      for (let i = 0; i < d.length; i++) if (d[i] !== 0) nonZero++;
      // c and d are used here so that they stay reachable (and their spans held) until now.
      return { start, afterDrop, atA, atD: offsetOf(d), nonZero, held: c.length + d.length };`);
    assert.strictEqual(r.afterDrop, r.start - 10, 'the 4000 words of the two dropped spans came back');
    assert.strictEqual(r.atD, r.atA, 'a 4000-word span was carved from the merged free space');
    assert.strictEqual(r.nonZero, 0, 'a reused span starts zeroed');
  });

  it('keeps the spans of batches an application drops from filling the arena', function () {
    this.timeout(60000);
    // 2100 batches of 4096 (ids and lengths) take 17.2 M words: more than the arena
    // holds, unless the dropped ones come back.
    const r = inGcChild(`
      const { PacketBatch } = require(${JSON.stringify(path.join(__dirname, '..', '..', 'lib', 'memory', 'batch.js'))});
      const start = freeWords();
      for (let i = 0; i < 2100; i++) {
        new PacketBatch(4096);
        if (i % 100 === 99) await collect();
      }
      await collect();
      return { start, end: freeWords() };`);
    assert.strictEqual(r.end, r.start);
  });
});
