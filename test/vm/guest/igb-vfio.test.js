'use strict';

// The igb driver through VFIO, as an unprivileged user, in a guest with an IOMMU.
const { nicTests } = require('./nic-tests');

nicTests('igb-vfio', { driver: 'igb', speed: 1000 });
