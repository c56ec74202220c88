'use strict';

// A writer for the "newc" cpio format the Linux kernel unpacks as an initramfs
// (kernel documentation: early-userspace/buffer-format). Written here so the harness needs
// no cpio binary and every file comes out owned by root whatever the host says.
// Each entry: a 110-byte ASCII header, the NUL-terminated name, padding to 4 bytes, the
// data, padding to 4 bytes. The archive ends with an entry named TRAILER!!!.
const fs = require('fs');
const path = require('path');

const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

class CpioWriter {
  constructor(file) {
    this.fd = fs.openSync(file, 'w');
    this.inode = 1;
    this.written = 0;
    this.seen = new Set();
  }

  header(name, mode, size) {
    const fields = [
      this.inode++, mode, 0, 0, 1, 0, size,
      0, 0, 0, 0, // dev major/minor, rdev major/minor
      Buffer.byteLength(name) + 1, 0,
    ];
    return '070701' + fields.map((n) => n.toString(16).padStart(8, '0')).join('');
  }

  write(buf) {
    fs.writeSync(this.fd, buf);
    this.written += buf.length;
  }

  pad() {
    const extra = (4 - (this.written % 4)) % 4;
    if (extra) this.write(Buffer.alloc(extra));
  }

  entry(name, mode, data) {
    this.write(Buffer.from(this.header(name, mode, data.length) + name + '\0'));
    this.pad();
    if (data.length) this.write(data);
    this.pad();
  }

  // A directory and, first, every parent not yet written ("usr/lib" -> "usr", "usr/lib").
  dir(name) {
    name = name.replace(/^\/+|\/+$/g, '');
    if (name === '' || this.seen.has(name)) return;
    this.dir(path.dirname(name) === '.' ? '' : path.dirname(name));
    this.seen.add(name);
    this.entry(name, S_IFDIR | 0o755, Buffer.alloc(0));
  }

  file(name, data, mode = 0o644) {
    name = name.replace(/^\/+/, '');
    this.dir(path.dirname(name) === '.' ? '' : path.dirname(name));
    this.entry(name, S_IFREG | mode, data);
  }

  symlink(name, target) {
    name = name.replace(/^\/+/, '');
    this.dir(path.dirname(name) === '.' ? '' : path.dirname(name));
    this.entry(name, S_IFLNK | 0o777, Buffer.from(target));
  }

  // Copies a host file or directory tree to `name` in the archive, keeping modes and links.
  copy(hostPath, name, filter = () => true) {
    const st = fs.lstatSync(hostPath);
    if (!filter(hostPath, st)) return;
    if (st.isSymbolicLink()) this.symlink(name, fs.readlinkSync(hostPath));
    else if (st.isDirectory()) {
      this.dir(name);
      for (const child of fs.readdirSync(hostPath).sort()) {
        this.copy(path.join(hostPath, child), `${name}/${child}`, filter);
      }
    } else if (st.isFile()) this.file(name, fs.readFileSync(hostPath), st.mode & 0o777);
  }

  close() {
    this.entry('TRAILER!!!', 0, Buffer.alloc(0));
    fs.closeSync(this.fd);
  }
}

module.exports = { CpioWriter };
