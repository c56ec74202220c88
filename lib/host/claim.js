'use strict';

// One owner per device. A NIC driven by two programs at once (or by two Devices of one
// program) is reset under the first one's feet and writes into memory its owner no longer
// means. The owner holds an exclusive flock on one of the device's sysfs files, opened
// read-only, from before the first register write until close(): the kernel drops it when
// that file is closed, and so when the process dies, SIGKILL included.
//
// Which file decides who else can block the claim, since whoever can open a file can flock
// it. The claim is on `resource0` wherever this process can open it: sysfs makes it 0600
// (and the model makes it so), so only root can open it, and no other user can hold the
// lock to keep root's ixy out. Where it cannot (a normal user driving a NIC through VFIO, a
// device with no BAR 0), the claim is on `config`, which sysfs makes world-readable: any
// local user can then hold that lock and make the claim fail with EBUSY (the message and
// `ixy list` name the holder). A normal user's ixy needs no more, as VFIO opens a device's
// group for one process at a time; and a normal user cannot drive a device that is not
// bound to vfio-pci, so root's ixy need not look at config's lock.
//
// flock locks belong to an open file, not to a process: a second open() of the file in the
// same process cannot take the lock either, so one check covers both cases. Who holds it
// comes from /proc/locks, whose FLOCK lines give the pid that took the lock and the file's
// device and inode.
const fs = require('fs');
const path = require('path');
const { IxyError, fromNative } = require('./errors');
const { native } = require('./native');
const { deviceDir } = require('./pci');
const { openPlain } = require('./sysfs-safety');

const CLAIM_FILES = ['resource0', 'config']; // in order of preference, see above

// Makes this process the device (directory `dir`) one owner, or throws EBUSY naming the
// owner there is. Returns the claim: the open file whose lock it is, for releaseClaim().
function claimDevice(address, dir = deviceDir(address)) {
  const fd = openClaimFile(address, dir);
  try {
    lockDevice(fd, address, 'claim');
  } catch (err) {
    fs.closeSync(fd);
    throw err;
  }
  return fd;
}

// The first file of CLAIM_FILES this process can open, open read-only.
function openClaimFile(address, dir) {
  const [first, second] = CLAIM_FILES;
  try {
    return openPlain(path.join(dir, first), fs.constants.O_RDONLY);
  } catch (err) {
    if (err.code !== 'ENOENT' && err.code !== 'EACCES') throw fromNative(err, `cannot open ${first} of ${address}`);
  }
  try {
    return openPlain(path.join(dir, second), fs.constants.O_RDONLY, 64);
  } catch (err) {
    throw fromNative(err, `cannot open ${second} of ${address}`);
  }
}

// Ends the claim that claimDevice() returned (every close() calls this, last).
function releaseClaim(fd) {
  fs.closeSync(fd);
}

// Who holds the device ({ pid, command }), or null. `locks`: readLocks(), for a listing;
// `dir`: the device's directory, where a handle has it.
function deviceHolder(address, { locks = readLocks(), dir = deviceDir(address) } = {}) {
  for (const name of CLAIM_FILES) {
    try {
      const holder = holderOf(fs.statSync(path.join(dir, name), { bigint: true }), locks);
      if (holder !== null) return holder;
    } catch {
      // no such file: the next
    }
  }
  return null;
}

// Takes the lock on fd (the device's claim file, open) or throws EBUSY naming the holder.
// For a claim (`why`), a holder that is this process means a Device not yet closed.
function lockDevice(fd, address, why = null) {
  if (native().lockFile(fd)) return;
  const holder = holderOf(fd);
  if (why === 'claim' && holder !== null && holder.pid === process.pid) {
    throw new IxyError('EBUSY', `${address} is already open in this process (pid ${process.pid}): close() that Device first`);
  }
  let who = 'another program';
  if (holder !== null) {
    who = holder.pid === process.pid ? `this process (pid ${holder.pid}), through a Device not yet closed` : `pid ${holder.pid} (${holder.command})`;
  }
  throw new IxyError('EBUSY', `${address} is in use by ${who}: one program at a time drives a NIC; stop that one (or close() the other Device) first`);
}

// The lines of /proc/locks, read once for a whole listing.
function readLocks() {
  try {
    return fs.readFileSync('/proc/locks', 'latin1').split('\n');
  } catch {
    return [];
  }
}

// { pid, command } of whoever holds a flock on the file open as fd (or of which fs.Stats
// with bigint fields are given), or null when nobody does.
function holderOf(fdOrStat, locks = readLocks()) {
  const st = typeof fdOrStat === 'number' ? fs.fstatSync(fdOrStat, { bigint: true }) : fdOrStat;
  // /proc/locks writes the device as major:minor in hex and the inode in decimal; st.dev is
  // the user-space encoding of dev_t (glibc's gnu_dev_major/gnu_dev_minor).
  const major = ((st.dev >> 8n) & 0xfffn) | ((st.dev >> 32n) & ~0xfffn);
  const minor = (st.dev & 0xffn) | ((st.dev >> 12n) & ~0xffn);
  const id = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${st.ino}`;
  for (const line of locks) {
    // "1: FLOCK  ADVISORY  WRITE 19005 fe:00:9978671 0 EOF"; waiters have "->" after "1:".
    // A shared (READ) flock keeps the claim out as well as an exclusive one.
    const f = line.trim().split(/\s+/);
    if (f[1] !== 'FLOCK' || f[5] !== id) continue;
    const pid = Number(f[4]);
    return { pid, command: commandOf(pid) };
  }
  return null;
}

// A process's command line, shortened for one line of text. The pid that took a lock can
// have exited while a child it forked with the file open still holds it. Its control
// characters stay as they are: what prints it escapes them (IxyError, `ixy list`).
function commandOf(pid) {
  let argv;
  try {
    argv = fs.readFileSync(`/proc/${pid}/cmdline`, 'latin1').split('\0').filter((a) => a !== '');
  } catch {
    return 'exited; a process it started may hold the lock';
  }
  const text = argv.join(' ').replace(/\s+/g, ' ');
  return text.length > 100 ? `${text.slice(0, 97)}...` : text;
}

module.exports = { claimDevice, releaseClaim, deviceHolder, lockDevice, readLocks };
