'use strict';

// One transmit queue: a ring of advanced TX data descriptors (82599 datasheet 7.2, 82576
// datasheet 7.2) and, per descriptor, the buffer it carries and that buffer's pool, so the
// buffer can go home once the NIC reports it sent. The pool is a small number in the top
// bits of the buffer's entry in bufferIds (id | k << ID_BITS for this.pools[k]): one array
// per packet in send(), no object stores. send() is the hot path: it allocates nothing.
// Shared by ixgbe and igb through their register `layout`; sections cited are the 82599's.
// The ring, bufferIds and TXDCTL.ENABLE are RingQueue's (ring-queue.js). bufferIds, the
// pools' physical addresses and the batch's arrays are spans of the index arena: send()
// indexes `words` at offsets named ...At. Held frames (holdBuffers(), sendHeld(), for a
// packet generator): each slot keeps one buffer for good (held-frames.js); reclaim() then
// frees nothing.
const rings = require('./rings');
const { RingQueue } = require('./ring-queue');
const { ID_BITS, pushIds, pushId } = require('../memory/mempool');
const { IxyError } = require('../host/errors');
const { PACKETS, BYTES } = require('../device/device');
const { setField, setReg } = require('../host/register-access');
const { HeldFrames } = require('./held-frames');
const arena = require('../memory/arena');

const TWO_32 = 2 ** 32;
const HANG_LOOKS = 2; // hung(): looks in a row without a completion before a queue counts as hung
const CLEAN_BATCH = 32; // buffers are reclaimed 32 at a time: one status read per 32 sends
const ID_MASK = (1 << ID_BITS) - 1;
const MAX_POOLS = 1 << (31 - ID_BITS); // tagged ids stay below 2^31: small integers in V8
const { TXD_STAT_DD, TXD_PAYLEN_SHIFT, DESCRIPTOR_BYTES, writeTail } = rings;
const SEND_COMMAND = rings.TXD_DCMD_EOP | rings.TXD_DCMD_RS | rings.TXD_DCMD_IFCS | rings.TXD_DCMD_DEXT | rings.TXD_DTYP_DATA;

class TxQueue extends RingQueue {
  constructor(regs, layout, index, ringSize) {
    super('TX', regs, layout, index, ringSize, layout.TXDCTL(index), layout.TXDCTL_ENABLE);
    // Every pool whose buffers this queue has sent, by number k, its slots made once: an
    // array grown from empty would change its map, and V8's compiled send() with it.
    this.pools = new Array(MAX_POOLS).fill(null);
    this.poolCount = 0;
    this.lastPool = null; // the pool of the last batch and its tag: the usual case
    this.lastTag = 0;
    this.tail = 0; // the next descriptor we fill
    this.clean = 0; // the oldest descriptor whose buffer we have not reclaimed
    // send() reclaims once this many descriptors are in flight (a quarter of the ring
    // free), as DPDK's tx_free_thresh: most sends skip the DD read, buffers come back in runs.
    this.reclaimAt = ringSize - ringSize / 4;
    this.tailIndex = layout.TDT(index) >> 2;
    // The command bits of every descriptor (stampFrames() adds the 82599's MAC 1588 bit).
    this.command = SEND_COMMAND;
    this.minLength = layout.TX_MIN_LENGTH;
    this.headIndex = layout.TDH(index) >> 2;
    this.lastHead = -1; // TDH at the last hung() call
    // [0]: frames the NIC had completed at the last hung() call (completed()). A typed array
    // as the totals are: a number field that took a double would change this queue's map
    // under the send() V8 compiled for it (a deoptimisation as traffic starts).
    this.lastDone = new Float64Array([-1]);
    this.stalls = 0; // hung() calls in a row that saw frames pending and none completed
    this.held = null; // a HeldFrames in held mode (holdBuffers()), else null
  }

  // 4.6.8: ring address and length; prefetch/host/write-back thresholds from the layout
  // (82599: PTHRESH 36, HTHRESH 8, WTHRESH 4, as recommended for throughput, 8.2.3.9.10).
  configure() {
    const regs = this.regs;
    const R = this.layout;
    const q = this.index;
    const base = this.span.phys;
    setReg(regs, R.TDBAL(q), base % TWO_32);
    setReg(regs, R.TDBAH(q), Math.floor(base / TWO_32));
    setReg(regs, R.TDLEN(q), this.size * DESCRIPTOR_BYTES);
    setField(regs, R.TXDCTL(q), R.TXDCTL_THRESHOLDS_MASK, R.TXDCTL_THRESHOLDS);
  }

  // 4.6.8.1: empty ring (head == tail), then enable.
  start() {
    const R = this.layout;
    const q = this.index;
    setReg(this.regs, R.TDH(q), 0);
    setReg(this.regs, R.TDT(q), 0);
    this.enable();
  }

  // Frees the buffers of sent packets, CLEAN_BATCH at a time. The NIC completes in order,
  // so DD on the last descriptor of a group means the whole group is done. A group never
  // wraps around the ring: clean moves in steps of CLEAN_BATCH from 0, and the ring size
  // is a power of two of at least 64.
  reclaim() {
    const ring = rings.words; // a local, so TurboFan folds it (lib/intel/rings.js); this ring starts at ringAt
    const ringAt = this.ringAt;
    const mask = this.mask;
    let clean = this.clean;
    while (((this.tail - clean) & mask) >= CLEAN_BATCH) {
      const last = clean + CLEAN_BATCH - 1;
      if ((ring[ringAt + (last << 2) + 3] & TXD_STAT_DD) === 0) break;
      const fromAt = this.bufferIdsAt + clean; // the group's entries: words[fromAt..fromAt + 32)
      if (this.poolCount === 1) {
        // The usual case, one pool ever sent from: its tag is 0, entries are plain ids.
        pushIds(this.pools[0], fromAt, CLEAN_BATCH);
      } else if (this.held === null) {
        this.reclaimMixed(fromAt);
      } // held buffers stay in their slots
      clean = (last + 1) & mask;
    }
    this.clean = clean;
  }

  // reclaim() for a group whose buffers may come from several pools: each id goes back to
  // the pool its entry's tag names.
  reclaimMixed(fromAt) {
    const words = arena.words;
    for (let j = 0; j < CLEAN_BATCH; j++) {
      const entry = words[fromAt + j];
      pushId(this.pools[entry >>> ID_BITS], entry & ID_MASK);
    }
  }

  // k << ID_BITS for this.pools[k], the pool's number on this queue (see the top of this
  // file); a pool seen for the first time gets the next number.
  tagOf(pool) {
    if (pool === this.lastPool) return this.lastTag;
    if (this.held !== null) throw new IxyError('EBUSY', 'this TX queue holds a generator\'s buffers (holdBuffers()): send() would take their slots');
    let k = 0;
    while (k < this.poolCount && this.pools[k] !== pool) k++;
    if (k === this.poolCount) {
      if (k === MAX_POOLS) throw new IxyError('EINVAL', `a TX queue takes buffers of at most ${MAX_POOLS} mempools`);
      this.pools[k] = pool;
      this.poolCount = k + 1;
      if (pool.rings) pool.rings.add(this); // Mempool.close() asks it (ringBuffersOf)
    }
    this.lastPool = pool;
    this.lastTag = k << ID_BITS;
    return this.lastTag;
  }

  // Queues batch.ids[0..) for sending; returns how many fit. The rest stay the caller's:
  // free them (batch.freeFrom(sent)) or try again. The caller vouches for every frame: an
  // id of batch.pool and a length the NIC takes (batch.checkForSend() checks both, and
  // Device.txBatch() calls it); frames straight from receive() always qualify. So the
  // descriptor loop carries no per-frame check: it has no register to spare for one.
  send(batch) {
    const words = arena.words; // a local, so TurboFan folds it (see lib/memory/arena.js)
    const mask = this.mask;
    const pool = batch.pool;
    // Before the reclaim's call, after which TurboFan would check what the pool is again.
    const tag = this.tagOf(pool);
    // Reclaim when the ring is filling up, and also whenever the pool being sent from has
    // less than a ring's worth of buffers free: a small pool must not wait for buffers
    // that sit on a ring that will never fill.
    if (this.inFlight >= this.reclaimAt || pool.freeCount < this.size) this.reclaim();
    const ring = rings.words; // a local too; this ring starts at ringAt
    const ringAt = this.ringAt;
    // Offsets into the arena: batch.ids[k] is words[idsAt + k], and so on.
    const bufferIdsAt = this.bufferIdsAt;
    const addresses = arena.doubles; // buffer id's address is addresses[addressesAt + id]
    const addressesAt = pool.physAt >> 1;
    const descriptors = rings.doubles; // ring[2d] and ring[2d + 1] as one 64-bit element, descriptors[d]
    const idsAt = batch.idsAt;
    const lengthsAt = batch.lengthsAt;
    const room = this.mask - ((this.tail - this.clean) & mask); // one slot stays empty
    const count = batch.count;
    // Past its capacity a batch's arrays hold other spans of the arena: never send those.
    if (count > batch.capacity) batch.checkForSend(this.minLength);
    const n = count < room ? count : room;
    const command = this.command;
    let t = this.tail;
    let bytes = 0;
    // Offsets, ids and lengths are int32s (`| 0`; offsets below 2^24, ids below 2^20,
    // bytes below 2^28): TurboFan then adds without overflow checks and keeps fewer values
    // alive for deoptimisation.
    const halvesAt = ringAt >> 1; // descriptor t's first 64-bit half is descriptors[halvesAt + 2t]
    for (let k = 0; k < n; k = (k + 1) | 0) {
      const id = words[(idsAt + k) | 0] | 0;
      const length = words[(lengthsAt + k) | 0] | 0;
      const d = (halvesAt + (t << 1)) | 0; // its words are ring[2d ...]
      descriptors[d] = addresses[(addressesAt + id) | 0]; // words 0-1 in one copy (held-frames.js)
      ring[((d << 1) + 2) | 0] = command | length;
      ring[((d << 1) + 3) | 0] = length << TXD_PAYLEN_SHIFT;
      words[(bufferIdsAt + t) | 0] = id | tag;
      bytes = (bytes + length) | 0;
      t = (t + 1) & mask;
    }
    if (n > 0) {
      this.tail = t;
      writeTail(this.regs, this.tailIndex, t); // after the descriptors, and seen after them
      const totals = this.totals;
      totals[PACKETS] += n;
      totals[BYTES] += bytes;
    }
    return n;
  }

  // Held frames, for a packet generator (held-frames.js): each slot keeps a buffer of
  // pool, whose sequence number at byte seqAt sendHeld() rewrites as it sends it again.
  // Only on a queue with nothing in flight; until it is closed or reset, send() refuses
  // other buffers (tagOf()).
  holdBuffers(pool, seqAt) {
    this.reclaim();
    if (this.tail !== this.clean && !this.drained()) throw new IxyError('EBUSY', 'a TX queue can hold buffers only while it has nothing in flight');
    const held = new HeldFrames(pool, seqAt, this.size);
    this.freeRing(); // buffers of frames the NIC has sent
    this.pools.fill(null);
    this.poolCount = 0;
    this.lastPool = null;
    this.bufferIds.set(held.ids); // as ever, the buffer each descriptor carries
    this.held = held;
    if (pool.rings) pool.rings.add(this); // Mempool.close() asks it (ringBuffersOf)
  }

  // Asks the NIC to timestamp every frame this queue sends from now on (the layout's
  // TXD_MAC_1588 descriptor bit; 82599 7.9.1): for a queue that sends only the frames to time.
  stampFrames() {
    if (this.layout.TXD_MAC_1588 === undefined) throw new IxyError('EUNSUPPORTED', 'this NIC\'s TX descriptors take no timestamp request (IEEE 1588 is the 82599\'s here)');
    this.command |= this.layout.TXD_MAC_1588;
  }

  // Whether this queue holds buffers of `pool` (holdBuffers()).
  holds(pool) {
    return this.held !== null && this.held.pool === pool;
  }

  // Sends the held buffers of the next `want` slots again, or of as many as are free
  // (reclaiming first, as send() does), as frames of `length` bytes numbered from seq.
  // Returns how many it sent.
  sendHeld(want, length, seq) {
    const room = this.room();
    const n = want < room ? want : room;
    if (n > 0) {
      this.tail = this.held.write(this.ringAt / 2, this.tail, n, this.command, length, seq);
      writeTail(this.regs, this.tailIndex, this.tail); // after the descriptors and frames, seen after them
      const totals = this.totals;
      totals[PACKETS] += n;
      totals[BYTES] += n * length;
    }
    return n;
  }

  // How many frames send() would take now, after the reclaim send() would do first: a
  // sender that fills frames before it sends (a generator) asks, so that it fills none
  // while the ring is full.
  room() {
    if (this.inFlight >= this.reclaimAt) this.reclaim();
    return this.mask - ((this.tail - this.clean) & this.mask);
  }

  get inFlight() {
    return (this.tail - this.clean) & this.mask;
  }

  // Whether the NIC has sent everything queued (DD on the newest descriptor).
  drained() {
    if (this.tail === this.clean) return true;
    return (this.ring[(((this.tail - 1) & this.mask) << 2) + 3] & TXD_STAT_DD) !== 0;
  }

  // For a watchdog that calls it every second or so (while the link is up): true once the
  // NIC has had frames to send and completed none of them over HANG_LOOKS whole intervals
  // in a row, as Linux's ixgbe judges a transmit hang (completions since the last look, and
  // frames pending). A head position alone proves nothing: with the ring kept full TDH
  // cycles through few values and matches an earlier sample while frames keep leaving.
  // So progress is any completion, or TDH having moved; and a NIC that has fetched every
  // descriptor (TDH at our tail) is not hung, whatever it has yet to write back.
  hung() {
    const pending = this.pending();
    const done = this.completed(pending);
    const head = this.regs[this.headIndex];
    const progress = pending === 0 || head === this.tail || done !== this.lastDone[0] || head !== this.lastHead;
    this.lastDone[0] = done;
    this.lastHead = head;
    if (progress) {
      this.stalls = 0;
      return false;
    }
    this.stalls++;
    return this.stalls >= HANG_LOOKS;
  }

  // Frames on the ring the NIC has not completed (no DD). It completes in order, so they
  // are the newest ones: counted back from the tail to the first descriptor with DD.
  pending() {
    const ring = this.ring;
    let n = 0;
    for (let i = this.tail; i !== this.clean; n++) {
      i = (i - 1) & this.mask;
      if ((ring[(i << 2) + 3] & TXD_STAT_DD) !== 0) break;
    }
    return n;
  }

  // Frames the NIC has completed since this queue began: every frame send() took, less
  // those still pending; frames a stop or reset discarded count in `dropped`, not in the
  // totals, and are added back. Never decreases.
  completed(pending = this.pending()) {
    return this.totals[PACKETS] + this.dropped - pending;
  }

  // Recovers from a hang: disables the queue, takes back the buffers of every frame still
  // on the ring (the unsent ones are dropped and no longer counted as sent, see stop()) and
  // starts the queue again, empty (4.6.8.1). Returns how many frames were dropped.
  reset() {
    const dropped = this.stop();
    this.freeRing();
    this.ring.fill(0);
    this.tail = 0;
    this.clean = 0;
    this.lastHead = -1;
    this.lastDone[0] = -1;
    this.stalls = 0;
    this.start();
    return dropped;
  }

  // Stops the queue (RingQueue.stop(), 4.6.8.1.2). What is still on the ring without DD
  // the NIC never sent: those frames no longer count as sent (they are discarded with the
  // ring). Returns how many there were.
  stop() {
    super.stop();
    return this.uncountUnsent();
  }

  // Takes the frames between clean and tail whose descriptor has no DD out of the packet
  // and byte totals, into the dropped count. (A descriptor the NIC has not written back
  // still holds our length.)
  uncountUnsent() {
    let frames = 0;
    let bytes = 0;
    for (let i = this.clean; i !== this.tail; i = (i + 1) & this.mask) {
      if ((this.ring[(i << 2) + 3] & TXD_STAT_DD) !== 0) continue;
      frames++;
      bytes += this.ring[(i << 2) + 2] & 0xffff;
    }
    this.totals[PACKETS] -= frames;
    this.totals[BYTES] -= bytes;
    this.dropped += frames;
    return frames;
  }

  // Gives every buffer still on the ring back to its pool; held buffers, all of them.
  freeRing() {
    if (this.held !== null) {
      this.held.free();
      this.held = null;
      this.clean = this.tail;
      return;
    }
    for (let i = this.clean; i !== this.tail; i = (i + 1) & this.mask) {
      const entry = this.bufferIds[i];
      this.pools[entry >>> ID_BITS].free(entry & ID_MASK);
    }
    this.clean = this.tail;
  }

  // Gives every buffer still on the ring back to its pool and releases the ring memory.
  // Buffers of `pool` between clean and tail (sent, not yet reclaimed), and its held ones.
  buffersOf(pool) {
    if (this.held !== null) return this.held.pool === pool ? this.size : 0;
    let k = 0;
    while (k < this.poolCount && this.pools[k] !== pool) k++;
    if (k === this.poolCount) return 0;
    let n = 0;
    for (let i = this.clean; i !== this.tail; i = (i + 1) & this.mask) {
      if (this.poolCount === 1 || this.bufferIds[i] >>> ID_BITS === k) n++;
    }
    return n;
  }

  close() {
    this.freeRing();
    super.close();
  }
}

// The event of a hung TX queue reset (hung(), reset()), as Device.check() tells it.
function hangEvent(queue, dropped) {
  return { type: 'txhang', queue, dropped, text: `TX queue ${queue} hung (frames pending, none sent for 2 s with the link up): reset it, ${dropped} frames dropped` };
}

module.exports = { TxQueue, hangEvent };
