// import { open, PacketBatch, Model, ... } from 'ixy': the library for ES modules. Node
// finds the names of a CommonJS module's exports by reading its source, and so cannot see
// the ones lib/index.js defines as getters (the drivers and the model, loaded on first
// use); here every name is listed, so each one imports. They are the very objects
// require('ixy') gives.
import ixy from './lib/index.js';

export default ixy;
export const {
  open,
  attachQueue,
  listDevices,
  bind,
  unbind,
  tuneJit,
  warmUp,
  run,
  Device,
  IxgbeDevice,
  IgbDevice,
  VirtioDevice,
  PacketBatch,
  Mempool,
  CheckedMempool,
  IxyError,
  packet,
  PcapWriter,
  CaptureClock,
  readPcap,
  compileFilter,
  CHECKSUM_IP_GOOD,
  CHECKSUM_IP_BAD,
  CHECKSUM_L4_GOOD,
  CHECKSUM_L4_BAD,
  Model,
  Generator,
  FrameRecipe,
  parseRate,
  SoftwarePacer,
  generate,
  replay,
} = ixy;
