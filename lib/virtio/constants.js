'use strict';

// Numbers from the virtio specification (Virtual I/O Device (VIRTIO) Version 1.1, OASIS),
// section given with each group; multiqueue, RSS and hash reports from Version 1.2.

module.exports = {
  // 2.1 Device Status Field
  STATUS_ACKNOWLEDGE: 1,
  STATUS_DRIVER: 2,
  STATUS_DRIVER_OK: 4,
  STATUS_FEATURES_OK: 8,
  STATUS_DEVICE_NEEDS_RESET: 64,
  STATUS_FAILED: 128,

  // 5.1.3 Feature bits (network device) and 6 Reserved Feature Bits. Bit numbers.
  NET_F_MAC: 5, // the device config has a MAC address
  NET_F_MRG_RXBUF: 15, // not taken: one buffer per frame is enough for 2 KiB buffers
  NET_F_STATUS: 16, // the device config has a link status
  NET_F_CTRL_VQ: 17, // a control virtqueue exists
  NET_F_CTRL_RX: 18, // ... and takes receive-mode commands (promiscuous)
  NET_F_MQ: 22, // several queue pairs, chosen with VIRTIO_NET_CTRL_MQ_VQ_PAIRS_SET
  F_ANY_LAYOUT: 27, // legacy: header and data may share or split descriptors freely
  F_VERSION_1: 32, // modern (1.x) device; mandatory for 1af4:1041
  F_ACCESS_PLATFORM: 33, // the device's DMA goes through the platform's IOMMU: addresses are IOVAs
  NET_F_HASH_REPORT: 57, // the receive header carries each frame's hash (struct virtio_net_hdr_v1_hash)
  NET_F_RSS: 60, // the device steers frames by a Toeplitz hash and an indirection table

  // 2.6 Split Virtqueues: descriptor flags (2.6.5), ring flags (2.6.6, 2.6.8)
  DESC_F_NEXT: 1,
  DESC_F_WRITE: 2, // device writes this buffer (receive)
  USED_F_NO_NOTIFY: 1, // the device does not need to be notified of new buffers
  AVAIL_F_NO_INTERRUPT: 1, // ixy polls: never interrupt us

  // 4.1.4.8 Legacy Interfaces: A Note on PCI Device Layout (I/O BAR 0, no MSI-X)
  LEGACY_DEVICE_FEATURES: 0x00, // u32
  LEGACY_DRIVER_FEATURES: 0x04, // u32
  LEGACY_QUEUE_ADDRESS: 0x08, // u32: physical page number of the ring (4 KiB pages)
  LEGACY_QUEUE_SIZE: 0x0c, // u16, read only
  LEGACY_QUEUE_SELECT: 0x0e, // u16
  LEGACY_QUEUE_NOTIFY: 0x10, // u16
  LEGACY_DEVICE_STATUS: 0x12, // u8
  LEGACY_ISR_STATUS: 0x13, // u8
  LEGACY_DEVICE_CONFIG: 0x14, // device-specific config while MSI-X is off
  LEGACY_QUEUE_ALIGN: 4096, // 2.6.2: the used ring starts on the next 4 KiB boundary

  // 4.1.4 Virtio Structure PCI Capabilities: vendor-specific capability, cfg_type values
  PCI_CAP_ID_VNDR: 0x09,
  PCI_CAP_COMMON_CFG: 1,
  PCI_CAP_NOTIFY_CFG: 2,
  PCI_CAP_ISR_CFG: 3,
  PCI_CAP_DEVICE_CFG: 4,

  // 4.1.4.3 Common configuration structure layout (byte offsets)
  COMMON_DEVICE_FEATURE_SELECT: 0x00, // u32
  COMMON_DEVICE_FEATURE: 0x04, // u32
  COMMON_DRIVER_FEATURE_SELECT: 0x08, // u32
  COMMON_DRIVER_FEATURE: 0x0c, // u32
  COMMON_MSIX_CONFIG: 0x10, // u16
  COMMON_NUM_QUEUES: 0x12, // u16
  COMMON_DEVICE_STATUS: 0x14, // u8
  COMMON_CONFIG_GENERATION: 0x15, // u8
  COMMON_QUEUE_SELECT: 0x16, // u16
  COMMON_QUEUE_SIZE: 0x18, // u16
  COMMON_QUEUE_MSIX_VECTOR: 0x1a, // u16
  COMMON_QUEUE_ENABLE: 0x1c, // u16
  COMMON_QUEUE_NOTIFY_OFF: 0x1e, // u16
  COMMON_QUEUE_DESC: 0x20, // u64
  COMMON_QUEUE_DRIVER: 0x28, // u64 (available ring)
  COMMON_QUEUE_DEVICE: 0x30, // u64 (used ring)
  NO_VECTOR: 0xffff,

  // 5.1.4 Device configuration layout (network)
  NET_CONFIG_MAC: 0, // 6 bytes
  NET_CONFIG_STATUS: 6, // u16
  NET_S_LINK_UP: 1,
  NET_CONFIG_MAX_VIRTQUEUE_PAIRS: 8, // u16, with VIRTIO_NET_F_MQ or VIRTIO_NET_F_RSS
  NET_CONFIG_RSS_MAX_KEY_SIZE: 17, // u8, with VIRTIO_NET_F_RSS or VIRTIO_NET_F_HASH_REPORT
  NET_CONFIG_RSS_MAX_INDIRECTION_TABLE_LENGTH: 18, // u16
  NET_CONFIG_SUPPORTED_HASH_TYPES: 20, // u32

  // 5.1.6 Device Operation: struct virtio_net_hdr is 10 bytes, 12 with num_buffers, which
  // is present with VIRTIO_F_VERSION_1 or MRG_RXBUF. All zero: no offloads, no GSO.
  NET_HDR_LEGACY: 10,
  NET_HDR_MODERN: 12,
  // With VIRTIO_NET_F_HASH_REPORT the header is struct virtio_net_hdr_v1_hash: the 12 bytes
  // above, then hash_value (le32 at 12), hash_report (le16 at 16) and 2 reserved bytes.
  NET_HDR_HASH: 20,
  NET_HDR_HASH_VALUE: 12,

  // 1.2, 5.1.6.4.3 Hash calculation for incoming packets: hash types (bits of hash_types
  // in the RSS and hash configuration commands).
  NET_RSS_HASH_TYPE_IPv4: 1 << 0,
  NET_RSS_HASH_TYPE_TCPv4: 1 << 1,
  NET_RSS_HASH_TYPE_UDPv4: 1 << 2,

  // 5.1.6.5 Control Virtqueue; 5.1.6.5.1 Packet Receive Filtering
  NET_CTRL_RX: 0,
  NET_CTRL_RX_PROMISC: 0,
  NET_CTRL_RX_ALLMULTI: 1,
  NET_OK: 0,
  // 1.2, 5.1.6.5.5 Automatic receive steering in multiqueue mode and 5.1.6.5.6 Receive-side
  // scaling; the hash configuration (hash reports without RSS) has the RSS command's layout.
  NET_CTRL_MQ: 4,
  NET_CTRL_MQ_VQ_PAIRS_SET: 0, // data: le16 virtqueue_pairs
  NET_CTRL_MQ_RSS_CONFIG: 1, // data: struct virtio_net_rss_config
  NET_CTRL_MQ_HASH_CONFIG: 2, // data: struct virtio_net_hash_config, an RSS layout with a one-entry table and the queue fields reserved (0)
  NET_CTRL_MQ_VQ_PAIRS_MAX: 0x8000,

  // 5.1.2 Virtqueues: receiveq(i) is virtqueue 2i, transmitq(i) 2i + 1; the control queue
  // follows the last pair the device has (max_virtqueue_pairs, so 2 * max_virtqueue_pairs)
  // with VIRTIO_NET_F_MQ or VIRTIO_NET_F_RSS, else it is 2.
  CTRL_QUEUE_SINGLE_PAIR: 2,
};
