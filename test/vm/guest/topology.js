'use strict';

// The guest's NICs, shared by the host (which wires them) and the guest tests (which use
// them). Each kind gets four ports on the q35 root bus: ports 0-1 are cabled together
// (one QEMU hub), and so are ports 2-3. Guest PCI address of slot s: 0000:00:<s>.0.
// QEMU's igb has SR-IOV: its VFs take the two slots 0x10 above it (first VF offset 0x80,
// stride 2, 8 VFs), so igb ports sit on every other slot from 2 and nothing at 0x12-0x19.
const KINDS = {
  igb: { device: 'igb', slot: 0x02, stride: 2, id: '8086:10c9' },
  'virtio-legacy': { device: 'virtio-net-pci', options: 'disable-modern=on', slot: 0x0a, id: '1af4:1000' },
  // QEMU's default on the root bus: legacy I/O BAR plus the modern capabilities.
  'virtio-transitional': { device: 'virtio-net-pci', slot: 0x0e, id: '1af4:1000' },
  'virtio-modern': { device: 'virtio-net-pci', options: 'disable-legacy=on', slot: 0x1a, id: '1af4:1041' },
  // Bound to vfio-pci in a guest with an IOMMU (a boot of their own: run.js `iommu`). A
  // virtio device goes through the IOMMU only with iommu_platform=on (modern only).
  'igb-vfio': { device: 'igb', slot: 0x02, stride: 2, id: '8086:10c9', vfio: true },
  'virtio-vfio': { device: 'virtio-net-pci', options: 'disable-legacy=on,iommu_platform=on', slot: 0x1a, id: '1af4:1041', vfio: true },
};

// [{ kind, port, slot, address, mac, hub, pcap }] for the kinds asked for.
function nics(kinds) {
  const out = [];
  kinds.forEach((kind) => {
    const k = KINDS[kind];
    if (!k) throw new Error(`unknown NIC kind ${kind}`);
    for (let port = 0; port < 4; port++) {
      const slot = k.slot + port * (k.stride || 1);
      const hex = slot.toString(16).padStart(2, '0');
      out.push({
        kind, port, slot,
        address: `0000:00:${hex}.0`,
        mac: `52:54:00:12:${hex}:${(port + 1).toString(16).padStart(2, '0')}`,
        hub: k.slot + (port >> 1), // one hub per pair
        name: `${kind}-${port}`,
      });
    }
  });
  return out;
}

module.exports = { KINDS, nics };
