'use strict';

// Classic pcap files (the format of libpcap, tcpdump -w and Wireshark), written and read.
//
// Layout, all fields in the writer's byte order (we write little-endian):
//   file header, 24 bytes: magic, version major 2, minor 4, thiszone 0, sigfigs 0,
//                          snaplen, link type (1 = Ethernet)
//   per frame, 16 bytes:   seconds, fraction (microseconds or nanoseconds, by the magic),
//                          captured length, original length; then the captured bytes
// The magic says the timestamp resolution: 0xa1b2c3d4 microseconds, 0xa1b23c4d nanoseconds.
//
// The writer copies frames into one preallocated Buffer and writes it out only when it is
// full (or on flush/close): one system call per megabyte, not one per packet. Records are
// never split between two flushes, and a flush that fails part-way (a full disk) cuts the
// file back to the end of the last record it wrote whole, so the file on disk always ends
// on a whole record and keeps every whole record that reached it.
const fs = require('fs');
const path = require('path');
const { IxyError, shown } = require('./host/errors');
const { checkOptionNames } = require('./host/option-names');
const { sleepSync } = require('./host/register-access');
const { native } = require('./host/native');
const { clockPair } = require('./loop/clock');

const MAGIC_MICROSECONDS = 0xa1b2c3d4;
const MAGIC_NANOSECONDS = 0xa1b23c4d;
const LINKTYPE_ETHERNET = 1;
const FILE_HEADER = 24;
const RECORD_HEADER = 16;
const DEFAULT_SNAPLEN = 65535;
const DEFAULT_BUFFER = 1 << 20;
const PLAN_FRAMES = 256; // frames writeBatch() copies per native call, at most

class PcapWriter {
  // target: a file name (created or truncated) or an open file descriptor (e.g. 1, stdout).
  // header: false for a writer that appends records after another's file header (the
  // workers of lib/apps/pcap-workers.js).
  constructor(target, options = {}) {
    checkOptionNames('new PcapWriter()', options, ['nanoseconds', 'snaplen', 'bufferSize', 'header']);
    const { nanoseconds = true, snaplen = DEFAULT_SNAPLEN, bufferSize = DEFAULT_BUFFER, header = true } = options || {};
    if (!Number.isInteger(snaplen) || snaplen < 1 || snaplen > 0x3ffff) {
      throw new IxyError('EINVAL', `pcap snaplen must be 1..262143, got ${shown(snaplen)}`);
    }
    if (!Number.isInteger(bufferSize) || bufferSize < FILE_HEADER + RECORD_HEADER + snaplen) {
      throw new IxyError('EINVAL', `pcap buffer must hold at least one whole record (${FILE_HEADER + RECORD_HEADER + snaplen} bytes)`);
    }
    this.nanoseconds = nanoseconds;
    this.snaplen = snaplen;
    this.buffer = Buffer.allocUnsafe(bufferSize);
    this.view = new DataView(this.buffer.buffer, this.buffer.byteOffset, bufferSize); // records' fields, unaligned
    this.plan = new Uint32Array(3 * PLAN_FRAMES); // writeBatch()'s copies: from, to, length
    this.used = 0;
    this.frames = 0;
    this.bytes = 0; // file bytes written or buffered, header included
    this.ownsFd = typeof target !== 'number';
    this.path = typeof target === 'string' ? target : null;
    this.name = describeTarget(target);
    this.fd = this.ownsFd ? createFile(target) : checkFd(target);
    // What is on disk in whole records, to cut the file back to after a failed write.
    // A file we did not create may already hold something: our records start at its end.
    const stat = fs.fstatSync(this.fd);
    this.start = stat.isFile() ? stat.size : null; // null: a pipe or a device, not cut back
    this.isPipe = stat.isFIFO() || stat.isSocket();
    this.framesWritten = 0;
    this.bytesWritten = 0;
    this.failure = null;
    this.headerBytes = header ? FILE_HEADER : 0; // what the first flush begins with
    if (!header) return;
    const b = this.buffer;
    b.writeUInt32LE(nanoseconds ? MAGIC_NANOSECONDS : MAGIC_MICROSECONDS, 0);
    b.writeUInt16LE(2, 4);
    b.writeUInt16LE(4, 6);
    b.writeInt32LE(0, 8); // thiszone: timestamps are UTC
    b.writeUInt32LE(0, 12); // sigfigs: always 0 in practice
    b.writeUInt32LE(snaplen, 16);
    b.writeUInt32LE(LINKTYPE_ETHERNET, 20);
    this.used = FILE_HEADER;
    this.bytes = FILE_HEADER;
    // The header goes to disk at once: from now on the file is a valid (empty) capture,
    // whatever happens to the process. A writer that cannot even do that keeps no fd.
    try {
      this.flush();
    } catch (err) {
      this.close();
      throw err;
    }
  }

  // Appends one frame: bytes[0..length) (cut to snaplen) with a timestamp of `sec` seconds
  // and `nsec` nanoseconds since 1970 (UTC). Copies into the buffer (through a view of the
  // frame's captured bytes when they are fewer than `bytes` holds).
  write(bytes, length, sec, nsec) {
    const captured = length < this.snaplen ? length : this.snaplen;
    if (this.used + RECORD_HEADER + captured > this.buffer.length) this.flush();
    const b = this.buffer;
    const at = this.used;
    this.recordHeader(at, sec, this.nanoseconds ? nsec : Math.floor(nsec / 1000), captured, length);
    b.set(captured === bytes.length ? bytes : bytes.subarray(0, captured), at + RECORD_HEADER);
    this.used = at + RECORD_HEADER + captured;
    this.frames++;
    this.bytes += RECORD_HEADER + captured;
  }

  // The 16-byte record header at byte `at` of the buffer (little-endian, unaligned).
  recordHeader(at, sec, fraction, captured, length) {
    const view = this.view;
    view.setUint32(at, sec, true);
    view.setUint32(at + 4, fraction, true);
    view.setUint32(at + 8, captured, true);
    view.setUint32(at + 12, length, true);
  }

  // Appends batch's frames [from, count), all with the same timestamp (one clock read per
  // batch: the frames of a batch were taken from the ring in the same poll). The records'
  // headers are written here; their frames are copied by one native call per batch (per
  // PLAN_FRAMES), as the plan lists them: a copy per frame through TypedArray.set() would
  // need a view of each frame's length, an allocation per frame.
  writeBatch(batch, sec, nsec, from = 0) {
    const pool = batch.pool;
    const shift = pool.bufferShift; // buffer id's frame is pool.bytes[id << shift ...] (every pool, a UMEM too)
    const ids = batch.ids;
    const lengths = batch.lengths;
    const b = this.buffer;
    const plan = this.plan;
    const fraction = this.nanoseconds ? nsec : Math.floor(nsec / 1000);
    let planned = 0;
    for (let i = from; i < batch.count; i++) {
      const length = lengths[i];
      const captured = length < this.snaplen ? length : this.snaplen;
      const full = this.used + RECORD_HEADER + captured > b.length;
      if (full || planned === PLAN_FRAMES) {
        native().copyFrames(pool.bytes, b, plan, planned);
        planned = 0;
        if (full) this.flush();
      }
      const at = this.used;
      this.recordHeader(at, sec, fraction, captured, length);
      plan[3 * planned] = ids[i] << shift;
      plan[3 * planned + 1] = at + RECORD_HEADER;
      plan[3 * planned + 2] = captured;
      planned++;
      this.used = at + RECORD_HEADER + captured;
      this.frames++;
      this.bytes += RECORD_HEADER + captured;
    }
    if (planned > 0) native().copyFrames(pool.bytes, b, plan, planned);
  }

  // Writes what is buffered to the file. Throws an IxyError with the system's code (ENOSPC,
  // EPIPE, ...) when a write fails; the writer then takes nothing more (see writeFailed).
  flush() {
    if (this.failure !== null) throw this.failure;
    let done = 0;
    while (done < this.used) {
      try {
        done += fs.writeSync(this.fd, this.buffer, done, this.used - done);
      } catch (err) {
        // A pipe left non-blocking by someone else: wait for the reader, as a blocking
        // write would.
        if (err.code === 'EAGAIN') {
          sleepSync(1);
          continue;
        }
        throw this.writeFailed(err, done);
      }
    }
    this.used = 0;
    this.framesWritten = this.frames;
    this.bytesWritten = this.bytes;
  }

  // After a failed write, `done` bytes into this flush: the file is cut back to the end of
  // the last record written whole (a write may have stopped inside one), the rest of the
  // buffer is dropped, and the counts say what the file holds.
  writeFailed(err, done) {
    const from = this.flushOffset();
    let at = this.bytesWritten === 0 ? this.headerBytes : 0; // this flush began with the file header
    if (done < at) at = done = 0; // not even the header: nothing of this flush counts
    while (at + RECORD_HEADER <= done) {
      const next = at + RECORD_HEADER + this.buffer.readUInt32LE(at + 8);
      if (next > done) break;
      at = next;
      this.framesWritten++;
    }
    this.bytesWritten += at;
    this.used = 0;
    this.frames = this.framesWritten;
    this.bytes = this.bytesWritten;
    if (from !== null) {
      try {
        fs.ftruncateSync(this.fd, from + at);
      } catch {
        // the message below still says how many frames were written whole
      }
    }
    const reason = err.code === 'EPIPE' ? 'the reader closed the pipe' : `${err.code || err.message}`;
    this.failure = new IxyError(err.code || 'EIO', `cannot write to ${this.name} (${reason}): it holds the first ${this.framesInFile()} frames, ending on a whole record`);
    return this.failure;
  }

  // Frames the file holds, written whole: this writer's, unless it shares the file.
  framesInFile() {
    return this.framesWritten;
  }

  // Where in the file the flush under way began: null for a pipe or a device, which are not
  // cut back. Here, the file's start and what this writer wrote before; a writer that
  // shares the file with others knows better (SharedPcapAppender).
  flushOffset() {
    return this.start === null ? null : this.start + this.bytesWritten;
  }

  // Flushes and closes the file. Safe to call twice, and after a failed write (which it
  // does not repeat).
  close() {
    if (this.fd === null) return;
    try {
      if (this.failure === null) this.flush();
    } finally {
      if (this.ownsFd) fs.closeSync(this.fd);
      this.fd = null;
    }
  }
}

// How messages name the output: the file name, stdout, or the descriptor.
function describeTarget(target) {
  if (typeof target === 'string') return `'${target}'`;
  if (typeof target !== 'number') return shown(target);
  return target === 1 ? 'stdout' : `file descriptor ${target}`;
}

function createFile(target) {
  if (typeof target !== 'string' || target === '') {
    throw new IxyError('EINVAL', `a pcap file is a file name or an open file descriptor, got ${shown(target)}`);
  }
  if (isShared(path.dirname(path.resolve(target)))) return createShared(target);
  try {
    return fs.openSync(target, 'w');
  } catch (err) {
    throw new IxyError(err.code === 'EACCES' ? 'EACCES' : 'EPCAP', `cannot create pcap file '${target}': ${err.code || err.message}`);
  }
}

// A directory anyone may write to and only owners may delete from (sticky, like /tmp).
function isShared(dir) {
  try {
    const st = fs.statSync(dir);
    return (st.mode & 0o1002) === 0o1002;
  } catch {
    return false; // the open below says what is wrong
  }
}

// In such a directory the name may be another user's link (to /etc/shadow, for root to
// truncate) or file (a FIFO or a file that user reads, for root to write captured traffic
// into). As the kernel's fs.protected_symlinks and fs.protected_regular do where they are
// on: a link is followed, and an existing file written, only when it is this user's.
function createShared(target) {
  const { O_WRONLY, O_CREAT, O_NOFOLLOW, O_NONBLOCK } = fs.constants;
  let fd;
  try {
    fd = fs.openSync(target, O_WRONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK, 0o644);
  } catch (err) {
    // A link there fails with ELOOP (or EACCES, from Linux 6's checks on such directories).
    let link = null;
    try {
      const st = fs.lstatSync(target);
      if (st.isSymbolicLink()) link = st;
    } catch {
      // not there: err says why
    }
    if (link && link.uid === process.geteuid()) return fs.openSync(target, 'w');
    if (link) throw new IxyError('EPCAP', `cannot create pcap file '${target}': it is a symbolic link of another user in ${path.dirname(target)}, which anyone may write to: refusing to follow it`);
    throw new IxyError(err.code === 'EACCES' ? 'EACCES' : 'EPCAP', `cannot create pcap file '${target}': ${err.code || err.message}`);
  }
  const st = fs.fstatSync(fd);
  if (st.uid !== process.geteuid()) {
    fs.closeSync(fd);
    throw new IxyError('EPCAP', `cannot create pcap file '${target}': it exists already and belongs to user ${st.uid}, in ${path.dirname(target)}, which anyone may write to: refusing to write captured traffic into it; remove it or choose another name`);
  }
  if (st.isFile()) fs.ftruncateSync(fd, 0);
  return fd;
}

function checkFd(fd) {
  if (!Number.isInteger(fd) || fd < 0) {
    throw new IxyError('EINVAL', `a pcap file descriptor is an integer of at least 0, got ${shown(fd)}`);
  }
  try {
    fs.fstatSync(fd);
  } catch (err) {
    throw new IxyError('EBADF', `cannot write pcap to file descriptor ${fd}: ${err.code === 'EBADF' ? 'it is not open' : err.code}`);
  }
  return fd;
}

// Wall-clock timestamps for captures without a BigInt or an array per read: the wall time
// is taken once, and the monotonic clock (performance.now(), milliseconds with sub-
// microsecond resolution) measures from there. now() updates `sec` and `nsec` in place.
// Clocks in several threads agree when each is made from the same base(): performance.now()
// counts from each thread's own start, the monotonic clock of process.hrtime is the same in
// all of them.
class CaptureClock {
  constructor(base = null) {
    // performance.now() and process.hrtime's clock (ns) at one instant
    const { perf, other: mono } = clockPair(() => Number(process.hrtime.bigint()));
    this.origin = perf;
    if (base === null) {
      const wallMs = Date.now();
      this.originSec = Math.floor(wallMs / 1000);
      this.originNsec = (wallMs % 1000) * 1e6;
      this.originMono = mono;
    } else {
      this.originSec = base.sec;
      this.originNsec = base.nsec;
      this.originMono = base.mono;
      this.origin -= (mono - base.mono) / 1e6; // this thread's performance.now() at the base's origin
    }
    this.sec = this.originSec;
    this.nsec = this.originNsec;
  }

  // Plain data (for workerData) from which another thread's CaptureClock tells the same time.
  base() {
    return { sec: this.originSec, nsec: this.originNsec, mono: this.originMono };
  }

  // Whole seconds and nanoseconds apart, each below 2^31, and no branch: nanoseconds since
  // the origin pass 2^31 after 2.1 s, and a branch first taken after warm-up is code V8 has
  // no feedback for; either would deoptimise the capture's loop in mid-capture.
  now() {
    const ms = performance.now() - this.origin;
    const sec = Math.floor(ms / 1000);
    const ns = this.originNsec + Math.round((ms - sec * 1000) * 1e6); // below 2e9
    const carry = Math.floor(ns / 1e9); // 0 or 1
    this.sec = this.originSec + sec + carry;
    this.nsec = ns - carry * 1e9;
    return this;
  }
}

// Reads a whole classic pcap file (a file name, or a Buffer or Uint8Array holding one),
// either byte order and either resolution. Meant for tests and tools, not for speed: it
// returns one object per frame, { sec, nsec, length (on the wire), data (a Buffer of the
// captured bytes) }. Each costs a few hundred bytes besides its data, and a record can be
// 16 bytes (an empty frame): past maxFrames frames it refuses (EPCAP) instead of growing
// memory twenty times the file's size. Timestamps: `sec` whole seconds since 1970 (UTC)
// and `nsec` nanoseconds within that second, whatever the file's resolution (a
// microsecond file's fraction times 1000).
const MAX_FRAMES = 1 << 20;

function readPcap(source, { maxFrames = MAX_FRAMES } = {}) {
  const { data, name } = pcapSource(source);
  if (data.length < FILE_HEADER) throw new IxyError('EPCAP', `${name} is too short to be a pcap file`);
  let le;
  let nanoseconds;
  const magicLE = data.readUInt32LE(0);
  const magicBE = data.readUInt32BE(0);
  if (magicLE === MAGIC_MICROSECONDS || magicLE === MAGIC_NANOSECONDS) {
    le = true;
    nanoseconds = magicLE === MAGIC_NANOSECONDS;
  } else if (magicBE === MAGIC_MICROSECONDS || magicBE === MAGIC_NANOSECONDS) {
    le = false;
    nanoseconds = magicBE === MAGIC_NANOSECONDS;
  } else {
    throw new IxyError('EPCAP', `${name} is not a classic pcap file (magic 0x${magicLE.toString(16)}; pcapng is not supported)`);
  }
  const u16 = (at) => (le ? data.readUInt16LE(at) : data.readUInt16BE(at));
  const u32 = (at) => (le ? data.readUInt32LE(at) : data.readUInt32BE(at));
  const header = {
    nanoseconds,
    versionMajor: u16(4),
    versionMinor: u16(6),
    snaplen: u32(16),
    linktype: u32(20) & 0xffff, // the upper bits may carry FCS information
  };
  const frames = [];
  let at = FILE_HEADER;
  while (at + RECORD_HEADER <= data.length) {
    const captured = u32(at + 8);
    if (at + RECORD_HEADER + captured > data.length) {
      throw new IxyError('EPCAP', `${name} is cut short in the middle of frame ${frames.length + 1}`);
    }
    if (frames.length === maxFrames) {
      throw new IxyError('EPCAP', `${name} holds more than ${maxFrames} frames, which readPcap() keeps in memory at once: pass { maxFrames } for more`);
    }
    const fraction = u32(at + 4);
    frames.push({
      sec: u32(at),
      nsec: nanoseconds ? fraction : fraction * 1000,
      length: u32(at + 12),
      data: data.subarray(at + RECORD_HEADER, at + RECORD_HEADER + captured),
    });
    at += RECORD_HEADER + captured;
  }
  if (at !== data.length) throw new IxyError('EPCAP', `${name} ends with ${data.length - at} bytes of a truncated record header`);
  return { header, frames };
}

// The bytes of readPcap()'s source and how messages name it.
function pcapSource(source) {
  if (Buffer.isBuffer(source)) return { data: source, name: 'buffer' };
  if (source instanceof Uint8Array) return { data: Buffer.from(source.buffer, source.byteOffset, source.byteLength), name: 'buffer' };
  if (typeof source !== 'string' || source === '') {
    throw new IxyError('EINVAL', `readPcap() takes a file name, a Buffer or a Uint8Array, got ${shown(source)}`);
  }
  try {
    return { data: fs.readFileSync(source), name: `'${source}'` };
  } catch (err) {
    throw new IxyError(err.code === 'EACCES' ? 'EACCES' : 'EPCAP', `cannot read pcap file '${source}': ${err.code || err.message}`);
  }
}

module.exports = {
  PcapWriter, CaptureClock, readPcap,
  MAGIC_MICROSECONDS, MAGIC_NANOSECONDS,
};
