'use strict';

// idle 'interrupt' on QEMU's modern virtio-net through VFIO: the receive queue's MSI-X
// vector wakes the loop.
const { idleTests } = require('./idle-tests');

idleTests('virtio-vfio');
