'use strict';

// A FIFO (named pipe) as a command's file: `ixy pcap`'s output, `ixy replay`'s input. A
// blocking open of a FIFO waits in the kernel until the other end is opened, and a
// JavaScript thread blocked there runs no signal handler: Ctrl-C did nothing, and pcap,
// blocked after it had opened the NIC, let the ring fill. Here each end is opened without
// blocking and waited for on timers, before the NIC is opened, so that `stop` (the
// commands' AbortSignal, lib/apps/stop-signal.js) ends the wait.
const fs = require('fs');
const path = require('path');
const { IxyError } = require('../host/errors');

const POLL_MS = 20;

function sleep(ms) {
  return new Promise((resolve) => { setTimeout(resolve, ms); });
}

// Is `file` a FIFO (not through a link) that this user may open here? In a directory anyone
// may write to (sticky, like /tmp) only this user's: PcapWriter refuses others' there.
function ownFifo(file) {
  let st;
  try {
    st = fs.lstatSync(file);
  } catch {
    return false;
  }
  if (!st.isFIFO()) return false;
  const dir = fs.statSync(path.dirname(path.resolve(file)));
  return (dir.mode & 0o1002) !== 0o1002 || st.uid === process.geteuid();
}

// For writing: resolves with a descriptor once a reader has the FIFO open, or null when
// `stop` aborted first. Without a reader a non-blocking open fails with ENXIO. The
// descriptor is non-blocking: PcapWriter waits out a full pipe (EAGAIN) itself.
async function openFifoForWriting(file, stop) {
  const { O_WRONLY, O_NONBLOCK, O_NOFOLLOW } = fs.constants;
  for (;;) {
    if (stop && stop.aborted) return null;
    try {
      return fs.openSync(file, O_WRONLY | O_NONBLOCK | O_NOFOLLOW);
    } catch (err) {
      if (err.code !== 'ENXIO') throw new IxyError(err.code === 'EACCES' ? 'EACCES' : 'EPCAP', `cannot open FIFO '${file}': ${err.code || err.message}`);
    }
    await sleep(POLL_MS);
  }
}

// For reading: resolves with everything a writer wrote until it closed its end, or null
// when `stop` aborted first. A non-blocking read says 0 both before any writer came and
// after the last one left; the end is the first 0 after data came.
async function readFifo(file, stop) {
  const { O_RDONLY, O_NONBLOCK, O_NOFOLLOW } = fs.constants;
  let fd;
  try {
    fd = fs.openSync(file, O_RDONLY | O_NONBLOCK | O_NOFOLLOW);
  } catch (err) {
    throw new IxyError(err.code === 'EACCES' ? 'EACCES' : 'EPCAP', `cannot read pcap file '${file}': ${err.code || err.message}`);
  }
  const chunks = [];
  const chunk = Buffer.allocUnsafe(1 << 16);
  try {
    for (;;) {
      if (stop && stop.aborted) return null;
      let n;
      try {
        n = fs.readSync(fd, chunk, 0, chunk.length, null);
      } catch (err) {
        if (err.code !== 'EAGAIN') throw new IxyError('EPCAP', `cannot read pcap file '${file}': ${err.code || err.message}`);
        n = -1; // a writer, no data yet
      }
      if (n > 0) {
        chunks.push(Buffer.from(chunk.subarray(0, n)));
        continue;
      }
      if (n === 0 && chunks.length > 0) return Buffer.concat(chunks);
      await sleep(POLL_MS);
    }
  } finally {
    fs.closeSync(fd);
  }
}

module.exports = { ownFifo, openFifoForWriting, readFifo };
