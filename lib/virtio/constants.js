'use strict';

// Numbers from the virtio specification (Virtual I/O Device (VIRTIO) Version 1.1, OASIS),
// section given with each group.

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
  F_ANY_LAYOUT: 27, // legacy: header and data may share or split descriptors freely
  F_VERSION_1: 32, // modern (1.x) device; mandatory for 1af4:1041
  F_ACCESS_PLATFORM: 33, // the device's DMA goes through the platform's IOMMU: addresses are IOVAs

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

  // 5.1.6 Device Operation: struct virtio_net_hdr is 10 bytes, 12 with num_buffers, which
  // is present with VIRTIO_F_VERSION_1 or MRG_RXBUF. All zero: no offloads, no GSO.
  NET_HDR_LEGACY: 10,
  NET_HDR_MODERN: 12,

  // 5.1.6.5 Control Virtqueue; 5.1.6.5.1 Packet Receive Filtering
  NET_CTRL_RX: 0,
  NET_CTRL_RX_PROMISC: 0,
  NET_CTRL_RX_ALLMULTI: 1,
  NET_OK: 0,

  // 5.1.2 Virtqueues: receiveq1, transmitq1; the control queue follows the last pair (2
  // without VIRTIO_NET_F_MQ).
  RX_QUEUE: 0,
  TX_QUEUE: 1,
  CTRL_QUEUE: 2,
};
