'use strict';

// A packet generator on one TX queue: a mempool whose buffers each hold a frame of the
// recipe (recipe.js), and send(), which stamps frames and hands them to the queue. Frame k
// of the run (k = 0, 1, ...; k counts frames sent) carries sequence number k mod 2^32,
// belongs to flow k mod flows and has size sizes[k mod sizes.length].
//
// The default frames (one flow, one size, UDP) differ only in their sequence number, so
// they stay on the TX ring: the queue keeps one buffer of the pool in each of its slots
// (TxQueue.holdBuffers()), and sending frame k writes k's number into the buffer of the
// next free slot and hands the slot to the NIC again (TxQueue.sendHeld(),
// lib/intel/held-frames.js). No buffer id moves and nothing is allocated per frame.
// Otherwise (many flows or sizes, TCP, or a queue that cannot hold buffers) frames go as
// a batch through the queue's send(): buffers off the pool's free stack, the flow's
// header, the lengths and the checksums written too. These loops index the pool's one
// view of every buffer at offsets taken from the index arena.
const { Mempool, popIds } = require('../memory/mempool');
const arena = require('../memory/arena');
const { IPPROTO_UDP, MAX_FRAME } = require('../packet');
const { FrameRecipe } = require('./recipe');

const BUFFER_SIZE = 2048;

// The default frames: only the 32-bit big-endian sequence number at seqAt changes. Takes
// the n buffers on top of the free stack (words[topAt - i]) into the batch as it stamps
// them: one pass over the frames, not one to allocate and one to stamp.
function stampSeq(bytes, shift, topAt, idsAt, lengthsAt, n, seq, size, seqAt) {
  const words = arena.words; // a local, so TurboFan folds it (lib/memory/arena.js)
  for (let i = 0; i < n; i++) {
    const id = words[topAt - i];
    words[idsAt + i] = id;
    const at = (id << shift) + seqAt;
    const s = (seq + i) | 0;
    bytes[at] = s >>> 24; // a Uint8Array store keeps the low 8 bits
    bytes[at + 1] = s >>> 16;
    bytes[at + 2] = s >>> 8;
    bytes[at + 3] = s;
    words[lengthsAt + i] = size;
  }
}

// Many flows or sizes, or TCP: the flow's header bytes, then lengths and checksums.
function stampFlows(recipe, bytes, shift, idsAt, lengthsAt, n, seq, flow, sizeAt) {
  const words = arena.words;
  const headers = recipe.headers;
  const H = recipe.headerLength;
  const sizes = recipe.sizes;
  const flows = recipe.flows;
  const seqAt = recipe.seqAt;
  let f = flow;
  let z = sizeAt;
  for (let i = 0; i < n; i++) {
    const at = words[idsAt + i] << shift;
    const size = sizes[z];
    const s = (seq + i) | 0;
    if (flows > 1) for (let j = 0, h = f * H; j < H; j++) bytes[at + j] = headers[h + j];
    recipe.writeLengths(bytes, at, f, size, s);
    bytes[at + seqAt] = s >>> 24;
    bytes[at + seqAt + 1] = s >>> 16;
    bytes[at + seqAt + 2] = s >>> 8;
    bytes[at + seqAt + 3] = s;
    words[lengthsAt + i] = size;
    if (++f === flows) f = 0;
    if (++z === sizes.length) z = 0;
  }
}

class Generator {
  // options: the recipe's (recipe.js), or recipe: a FrameRecipe; entries: buffers in the
  // pool (more than the TX ring holds, or the ring is never full; the default frames take
  // one for each of its descriptors).
  constructor({ recipe = null, entries = 4096, ...frameOptions } = {}) {
    this.recipe = recipe || new FrameRecipe(frameOptions);
    const r = this.recipe;
    this.simple = r.flows === 1 && r.sizes.length === 1 && r.protocol === IPPROTO_UDP;
    this.size = r.sizes[0];
    this.seq = 0; // frames sent so far
    this.pool = new Mempool({ entries, bufferSize: BUFFER_SIZE });
    try {
      const first = new Uint8Array(MAX_FRAME);
      r.writeFrame(first, 0, 0, this.size);
      for (const b of this.pool.buffers) b.set(first);
    } catch (err) {
      this.pool.close();
      throw err;
    }
  }

  // Fills batch with up to n stamped frames (the next ones of the run); returns how many.
  fill(batch, n) {
    const pool = this.pool;
    const seq = this.seq;
    batch.pool = pool;
    if (this.simple) {
      let got = n < batch.capacity ? n : batch.capacity;
      if (got > pool.freeCount) got = pool.freeCount;
      const topAt = popIds(pool, got);
      stampSeq(pool.bytes, pool.bufferShift, topAt, batch.idsAt, batch.lengthsAt, got, seq | 0, this.size, this.recipe.seqAt);
      batch.count = got;
      return got;
    }
    const got = pool.allocMany(batch.ids, n);
    batch.count = got;
    const r = this.recipe;
    stampFlows(r, pool.bytes, pool.bufferShift, batch.idsAt, batch.lengthsAt, got, seq | 0, seq % r.flows, seq % r.sizes.length);
    return got;
  }

  // Sends up to n frames on txQueue through batch (at most its capacity); returns how many
  // went. The default frames stay on a queue that can hold them (sendHeld()); otherwise it
  // fills no more frames than the queue has room for (where the queue says, room()), and
  // frames it could not take go back to the pool and are stamped again next time.
  send(txQueue, batch, n) {
    if (this.simple && txQueue.holdBuffers !== undefined) return this.sendHeld(txQueue, n < batch.capacity ? n : batch.capacity);
    const room = txQueue.room === undefined ? n : txQueue.room();
    const got = this.fill(batch, n < room ? n : room);
    const sent = txQueue.send(batch);
    if (sent < got) batch.freeFrom(sent);
    this.seq += sent;
    return sent;
  }

  // send() of the default frames: they stay on the ring (see the top of this file).
  sendHeld(txQueue, n) {
    if (!txQueue.holds(this.pool)) txQueue.holdBuffers(this.pool, this.recipe.seqAt);
    const sent = txQueue.sendHeld(n, this.size, this.seq | 0);
    this.seq += sent;
    return sent;
  }

  close() {
    this.pool.close();
  }
}

module.exports = { Generator };
