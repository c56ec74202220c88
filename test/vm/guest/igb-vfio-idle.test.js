'use strict';

// idle 'interrupt' on QEMU's igb through VFIO: MSI-X vector 0 wakes the loop.
const { idleTests } = require('./idle-tests');

idleTests('igb-vfio');
