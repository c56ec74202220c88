'use strict';

// The PCI device IDs the ixgbe driver serves (vendor 0x8086), each with its name and its
// media. How the link is set up depends on the media (4.6.4): the SFP+ parts (`sfp`) take
// a 10 GbE serial link (AUTOC.LMS = SFI); the backplane, CX4 and XAUI parts keep the link
// mode their NVM loaded into AUTOC. ixy has run on the 82599ES SFP+ (0x10fb) in the
// family's C driver and on the device model here, which also stands in for the other IDs'
// link modes; on real hardware those are untested. X540 and X550 are not listed: their
// copper PHYs need a link setup ixy does not do.
const IXGBE_DEVICES = new Map([
  [0x10f7, { name: '82599 10G KX4', sfp: false }],
  [0x10f8, { name: '82599 10G backplane', sfp: false }],
  [0x10f9, { name: '82599 10G CX4', sfp: false }],
  [0x10fb, { name: '82599ES 10G SFI/SFP+', sfp: true }],
  [0x10fc, { name: '82599 10G XAUI', sfp: false }],
  [0x1514, { name: '82599 10G KX4 mezzanine', sfp: false }],
  [0x1517, { name: '82599 10G KR', sfp: false }],
  [0x151c, { name: '82599 10G T3 LOM', sfp: false }],
  [0x1529, { name: '82599 10G SFP+ FCoE', sfp: true }],
  [0x152a, { name: '82599 10G backplane FCoE', sfp: false }],
  [0x154d, { name: '82599 10G SFP+ SF2', sfp: true }],
  [0x1557, { name: '82599EN 10G SFP+', sfp: true }],
]);

const TESTED_ON_HARDWARE = 0x10fb; // the one ID tested on hardware

// Whether an 82599 device ID is an SFP+ part.
function isSfp(deviceId) {
  const entry = IXGBE_DEVICES.get(deviceId);
  return entry !== undefined && entry.sfp;
}

module.exports = { IXGBE_DEVICES, TESTED_ON_HARDWARE, isSfp };
