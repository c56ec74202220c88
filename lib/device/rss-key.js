'use strict';

// The RSS key every ixy driver programs (ixgbe's and igb's RSSRK, virtio-net's RSS config)
// unless open() is given another (rssKey, ixgbe and igb): the one Microsoft's RSS
// verification suite publishes (also DPDK's default), so that a flow hashes alike on every
// ixy NIC and the hashes a NIC reports can be checked against published values.
const RSS_KEY = Buffer.from(
  '6d5a56da255b0ec24167253d43a38fb0d0ca2bcbae7b30b477cb2da38030f20c6a42b73bbeac01fa', 'hex');

module.exports = { RSS_KEY };
