'use strict';

// The igb driver against QEMU's igb (82576) model.
const { nicTests } = require('./nic-tests');

nicTests('igb', { driver: 'igb', speed: 1000 });
