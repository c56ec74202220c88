'use strict';

// DMA memory: hugepages the NIC can read and write, with the address the NIC uses for each.
// The addon allocates (hugetlbfs file, mmap shared, unlink) and translates
// (/proc/self/pagemap); this class only keeps the result and answers "where is byte N".
// That address is the physical one when this process can read it (root); otherwise an
// I/O virtual address that only the IOMMU knows (lib/vfio.js), which only a device bound
// to vfio-pci can use.
const fs = require('fs');
const { fromNative } = require('./errors');
const { native } = require('./native');
const vfio = require('./vfio');

class DmaMemory {
  // size: bytes wanted, rounded up to whole 2 MiB hugepages by the addon.
  constructor(size) {
    const addon = native();
    let result;
    try {
      result = addon.allocDma(size);
    } catch (err) {
      throw fromNative(err, 'cannot allocate DMA memory in /mnt/huge');
    }
    this.buffer = result.buffer;
    this.size = result.buffer.byteLength;
    this.pageSize = addon.HUGE_PAGE_SIZE;
    // Device address of each hugepage.
    this.pagePhys = result.phys || vfio.iovasFor(this.size, this.pageSize);
    this.iommuMapped = false;
    try {
      vfio.track(this);
    } catch (err) {
      this.free();
      throw err;
    }
  }

  // Device address of byte `offset`. Bytes are physically contiguous only within a
  // hugepage, so a ring or buffer must never straddle a page boundary.
  physOf(offset) {
    const page = Math.floor(offset / this.pageSize);
    return this.pagePhys[page] + (offset % this.pageSize);
  }

  free() {
    if (this.buffer !== null) {
      vfio.untrack(this);
      native().free(this.buffer);
      this.buffer = null;
    }
  }
}

// Free hugepages right now, for messages and tests.
function freeHugepages() {
  const match = /HugePages_Free:\s+(\d+)/.exec(fs.readFileSync('/proc/meminfo', 'utf8'));
  return match ? Number(match[1]) : 0;
}

module.exports = { DmaMemory, freeHugepages };
