'use strict';

// The virtio driver against QEMU's virtio-net-pci, legacy interface only.
const { nicTests } = require('./nic-tests');

nicTests('virtio-legacy', { driver: 'virtio' });
