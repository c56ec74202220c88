'use strict';

// Several queue pairs on virtio-net, and how the device spreads frames over them (virtio
// 1.2, 5.1.6.5.5 and 5.1.6.5.6): with VIRTIO_NET_F_RSS the device hashes each IPv4 frame
// (Toeplitz over the addresses and TCP/UDP ports, with our key), the hash's low bits index
// the indirection table, and the entry names the receive queue; one control command
// (VIRTIO_NET_CTRL_MQ_RSS_CONFIG) sends key, hash types and table, and sets how many queue
// pairs are in use. With VIRTIO_NET_F_MQ alone the device steers as it likes and the driver
// only sets that number (VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET). With VIRTIO_NET_F_HASH_REPORT
// each frame's receive header carries its hash (5.1.6.4.4). Control path only.
const C = require('./constants');
const { IxyError } = require('../host/errors');
const { RSS_KEY } = require('../device/rss-key');

// IPv4 addresses, and TCP or UDP ports where the frame has them (as on the Intel NICs).
const HASH_TYPES = C.NET_RSS_HASH_TYPE_IPv4 | C.NET_RSS_HASH_TYPE_TCPv4 | C.NET_RSS_HASH_TYPE_UDPv4;

// Entries of the indirection table: 128 as in the Intel NICs' RETA, or fewer where the
// device takes fewer (a power of two: the device indexes it with hash & mask).
const TABLE_LENGTH = 128;

// What the device's config says it can do (present with VIRTIO_NET_F_RSS or
// VIRTIO_NET_F_HASH_REPORT); throws EUNSUPPORTED when that cannot hash with our key and types.
function hashLimits(transport, address) {
  const maxKey = transport.readConfig8(C.NET_CONFIG_RSS_MAX_KEY_SIZE);
  const maxTable = transport.readConfig16(C.NET_CONFIG_RSS_MAX_INDIRECTION_TABLE_LENGTH);
  const types = transport.readConfig32(C.NET_CONFIG_SUPPORTED_HASH_TYPES) & HASH_TYPES;
  if (maxKey < RSS_KEY.length) throw new IxyError('EUNSUPPORTED', `virtio device ${address} takes RSS keys of ${maxKey} bytes, ixy's is ${RSS_KEY.length}`);
  if (types === 0) throw new IxyError('EUNSUPPORTED', `virtio device ${address} cannot hash IPv4 frames (supported_hash_types ${transport.readConfig32(C.NET_CONFIG_SUPPORTED_HASH_TYPES)})`);
  let tableLength = TABLE_LENGTH;
  while (tableLength > maxTable && tableLength > 1) tableLength >>= 1;
  return { types, tableLength };
}

// struct virtio_net_rss_config: le32 hash_types, le16 indirection_table_mask, le16
// unclassified_queue, le16 indirection_table[mask + 1], le16 max_tx_vq, u8 hash_key_length,
// u8 hash_key_data[]. The table names queues 0..rxQueues-1 in turn; frames the device does
// not hash go to queue 0; `pairs` queue pairs are in use from then on.
function rssConfig({ types, tableLength }, rxQueues, pairs) {
  const b = Buffer.alloc(8 + 2 * tableLength + 3 + RSS_KEY.length);
  b.writeUInt32LE(types, 0);
  b.writeUInt16LE(tableLength - 1, 4);
  b.writeUInt16LE(0, 6);
  for (let i = 0; i < tableLength; i++) b.writeUInt16LE(i % Math.max(rxQueues, 1), 8 + 2 * i);
  const at = 8 + 2 * tableLength;
  b.writeUInt16LE(pairs, at);
  b[at + 2] = RSS_KEY.length;
  RSS_KEY.copy(b, at + 3);
  return b;
}

// struct virtio_net_hash_config: le32 hash_types, le16 reserved[4], u8 hash_key_length,
// u8 hash_key_data[]: hash reports without RSS.
function hashConfig({ types }) {
  const b = Buffer.alloc(12 + 1 + RSS_KEY.length);
  b.writeUInt32LE(types, 0);
  b[12] = RSS_KEY.length;
  RSS_KEY.copy(b, 13);
  return b;
}

// le16 virtqueue_pairs of VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET.
function pairsConfig(pairs) {
  const b = Buffer.alloc(2);
  b.writeUInt16LE(pairs, 0);
  return b;
}

// Tells the device how many queue pairs are in use and how to spread frames over the
// first rxQueues of them (`dev` has negotiated VIRTIO_NET_F_MQ or VIRTIO_NET_F_RSS).
function configureSteering(dev, rxQueues, pairs) {
  const { ctrl, transport, address } = dev;
  if (dev.has(C.NET_F_RSS)) {
    ctrl.command(C.NET_CTRL_MQ, C.NET_CTRL_MQ_RSS_CONFIG, rssConfig(hashLimits(transport, address), rxQueues, pairs), 'the RSS configuration (VIRTIO_NET_CTRL_MQ_RSS_CONFIG)');
    return;
  }
  ctrl.command(C.NET_CTRL_MQ, C.NET_CTRL_MQ_VQ_PAIRS_SET, pairsConfig(pairs), `${pairs} queue pairs (VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET)`);
  if (dev.has(C.NET_F_HASH_REPORT)) {
    ctrl.command(C.NET_CTRL_MQ, C.NET_CTRL_MQ_HASH_CONFIG, hashConfig(hashLimits(transport, address)), 'the hash configuration (VIRTIO_NET_CTRL_MQ_HASH_CONFIG)');
  }
}

module.exports = { configureSteering };
