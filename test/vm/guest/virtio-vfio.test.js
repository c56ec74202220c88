'use strict';

// The virtio driver (modern, iommu_platform=on) through VFIO, as a normal user, in a guest
// with an IOMMU.
const { nicTests } = require('./nic-tests');

nicTests('virtio-vfio', { driver: 'virtio' });
