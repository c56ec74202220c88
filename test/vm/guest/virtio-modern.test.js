'use strict';

// The virtio driver against QEMU's virtio-net-pci, modern interface only.
const { nicTests } = require('./nic-tests');

nicTests('virtio-modern', { driver: 'virtio' });
