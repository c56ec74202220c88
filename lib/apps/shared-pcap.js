'use strict';

// One pcap file written by several threads (the workers of pcap-workers.js): the main
// thread writes the file header (a PcapWriter), then each worker appends whole records
// through its own SharedPcapAppender. A worker fills its own buffer without any lock and
// takes the file's lock only to write that buffer out, so records never interleave inside
// a write, whatever the file is (a pipe may take a large write in pieces). The lock, the
// count of frames taken and the frames in the file live in one SharedArrayBuffer
// (sharedState()).
const fs = require('fs');
const { PcapWriter } = require('../pcap-file');

const LOCK = 0; // Int32 word: 0 free, 1 held
const TAKEN = 1; // Uint32 word: frames the workers have taken of `count` (reserve())
const FAILED = 2; // Int32 word: 1 once a write failed; changed under the lock
const IN_FILE = 2; // Float64 (bytes 16..23): frames in the file, changed under the lock

function sharedState() {
  return new SharedArrayBuffer(24);
}

class SharedPcapAppender extends PcapWriter {
  // fd: the file the main thread's PcapWriter opened and wrote the header to (file
  // descriptors are the process's, shared by its threads); name: that writer's name for it,
  // for messages. state: sharedState().
  constructor(fd, name, state, { nanoseconds = true, bufferSize } = {}) {
    super(fd, { nanoseconds, bufferSize, header: false });
    this.name = name;
    this.words = new Int32Array(state);
    this.taken = new Uint32Array(state);
    this.inFile = new Float64Array(state);
    this.isFile = this.start !== null;
    this.flushFrom = null;
    this.mineBefore = 0; // framesWritten when the flush under way began
  }

  // Writes the buffer out while holding the file's lock. A write that fails part-way cuts
  // the file back to the end of the last whole record, which is where this flush began
  // plus what it wrote whole (PcapWriter.writeFailed): under the lock nobody else moved it.
  // Once one worker's write failed, the others write nothing more: the file stays what that
  // failure's message says, and the capture is ending.
  flush() {
    if (this.used === 0 && this.failure === null) return;
    const words = this.words;
    while (Atomics.compareExchange(words, LOCK, 0, 1) !== 0) Atomics.wait(words, LOCK, 1);
    try {
      if (words[FAILED] === 1 && this.failure === null) {
        this.used = 0; // dropped: the capture ends with another worker's error
        this.frames = this.framesWritten;
        this.bytes = this.bytesWritten;
        return;
      }
      this.flushFrom = this.isFile ? fs.fstatSync(this.fd).size : null;
      this.mineBefore = this.framesWritten;
      try {
        super.flush();
      } catch (err) {
        words[FAILED] = 1;
        throw err;
      } finally {
        this.inFile[IN_FILE] += this.framesWritten - this.mineBefore;
      }
    } finally {
      Atomics.store(words, LOCK, 0);
      Atomics.notify(words, LOCK, 1);
    }
  }

  flushOffset() {
    return this.flushFrom;
  }

  // Every worker's frames in the file, this flush's whole records included (for the
  // message of a failed write, made under the lock).
  framesInFile() {
    return this.inFile[IN_FILE] + this.framesWritten - this.mineBefore;
  }

  // Takes up to n of the `count` frames all workers may write together; returns how many
  // it got (0 once they are all taken).
  reserve(n, count) {
    const taken = this.taken;
    for (;;) {
      const before = Atomics.load(taken, TAKEN);
      if (before >= count) return 0;
      const got = count - before < n ? count - before : n;
      if (Atomics.compareExchange(taken, TAKEN, before, before + got) === before) return got;
    }
  }

  // Whether the workers have taken all `count` frames between them.
  takenAll(count) {
    return Atomics.load(this.taken, TAKEN) >= count;
  }
}

// Frames taken so far of a `count` (the progress bar's figure).
function framesTaken(state) {
  return Atomics.load(new Uint32Array(state), TAKEN);
}

module.exports = { SharedPcapAppender, sharedState, framesTaken };
