'use strict';

// The stop of a thread's queue pair before its memory goes, however the thread ends:
// worker.terminate() runs no JavaScript on the way out, yet the thread's DMA memory is
// unmapped then (native/teardown.cc says how, and in what order).
const { native } = require('./native');

// Before `bar` (this thread's own mapping of the BAR) or any memory guard() names is
// unmapped, and at the latest when this thread's environment is torn down: clears ENABLE
// of RX and TX queue `index` (RXDCTL, TXDCTL of `layout`) through `bar`, waits for the NIC
// to read them back clear, and sets owners[index] from `owner` to 0. cancel() (close(),
// which stops the pair itself) takes it back.
class TeardownStop {
  constructor(bar, layout, index, owners, owner) {
    const bits = new Uint32Array([layout.RXDCTL(index), layout.RXDCTL_ENABLE, layout.TXDCTL(index), layout.TXDCTL_ENABLE]);
    this.id = native().stopOnTeardown(bar, bits, owners, index, owner);
  }

  // The pair's DMA memory (an ArrayBuffer from the addon): its unmapping stops the pair first.
  guard(buffer) {
    native().guardTeardownStop(this.id, buffer);
  }

  cancel() {
    native().cancelTeardownStop(this.id);
  }
}

module.exports = { TeardownStop };
