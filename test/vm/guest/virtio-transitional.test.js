'use strict';

// The virtio driver against QEMU's transitional virtio-net-pci (1af4:1000 with both the
// legacy I/O BAR and the modern capabilities): ixy drives it through the legacy interface.
const { nicTests } = require('./nic-tests');

nicTests('virtio-transitional', { driver: 'virtio' });
