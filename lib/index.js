'use strict';

// require('ixy'): open a NIC by PCI address and move packets in batches.
//
//   const ixy = require('ixy');
//   const dev = await ixy.open('0000:03:00.0');
//   const batch = new ixy.PacketBatch(32);
//   const n = dev.rxBatch(0, batch);      // frames: batch.data(i), batch.lengths[i]
//   dev.txBatch(0, batch);                 // returns how many were queued
//   dev.close();
//
// The package's face: it gathers names from every layer of lib/ (the traffic generator
// and the replay and generate commands included) and nothing in lib/ requires it
// (test/project/layers.test.js). Heavier parts load on first use, through getters.
const { open } = require('./open');
const { IxyError } = require('./host/errors');
const {
  PacketBatch, CHECKSUM_IP_GOOD, CHECKSUM_IP_BAD, CHECKSUM_L4_GOOD, CHECKSUM_L4_BAD,
} = require('./memory/batch');
const { Mempool, CheckedMempool } = require('./memory/mempool');
const packet = require('./packet');
const { PcapWriter, CaptureClock, readPcap } = require('./pcap-file');
const { compileFilter } = require('./filter');
const { Device } = require('./device/device');
const { bind, unbind } = require('./rebind');
const { listDevices } = require('./host/list-devices');
const { tuneJit } = require('./host/jit');
const { warmUp } = require('./warm-up');
const { run } = require('./run');

// In a worker thread: queue pair `index` of a device the main thread opened with
// { workers: true }, from its workerHandle() (lib/queue-pair.js).
function attachQueue(handle, index) {
  return require('./queue-pair').attachQueue(handle, index);
}

module.exports = {
  open,
  attachQueue,
  PacketBatch,
  Mempool,
  CheckedMempool,
  IxyError,
  Device,
  packet,
  PcapWriter,
  CaptureClock,
  readPcap,
  compileFilter,
  tuneJit,
  warmUp,
  run,
  CHECKSUM_IP_GOOD,
  CHECKSUM_IP_BAD,
  CHECKSUM_L4_GOOD,
  CHECKSUM_L4_BAD,
  listDevices,
  bind,
  unbind,
  get IxgbeDevice() {
    return require('./intel/ixgbe/device').IxgbeDevice;
  },
  get IgbDevice() {
    return require('./intel/igb/device').IgbDevice;
  },
  get VirtioDevice() {
    return require('./virtio/device').VirtioDevice;
  },
  get Model() {
    return require('./model').Model;
  },
  // What `ixy generate` and `ixy replay` are made of (docs/api.md, "Generating traffic").
  get Generator() {
    return require('./traffic/generator').Generator;
  },
  get FrameRecipe() {
    return require('./traffic/recipe').FrameRecipe;
  },
  get parseRate() {
    return require('./traffic/pacing').parseRate;
  },
  get SoftwarePacer() {
    return require('./traffic/pacing').SoftwarePacer;
  },
  get generate() {
    return require('./apps/generate').generate;
  },
  get replay() {
    return require('./apps/replay').replay;
  },
};
