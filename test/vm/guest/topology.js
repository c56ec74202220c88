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
  // Multiqueue: QEMU's virtio-net has as many queue pairs as its netdev has queues, and a
  // hubport has one; so these ports sit on TAP interfaces (`tap`: how many queues) bridged
  // in a network namespace of QEMU's own (run.js), each MAC bound to its TAP. Port 0 offers
  // 4 pairs with RSS and hash reports, port 1 (one pair) sends to the others, port 2 is a
  // legacy device with 4 pairs (no RSS: the TAP's own steering spreads the flows), port 3 a
  // legacy device without multiqueue, port 4 has RSS without hash reports (QEMU steers with its
  // eBPF program in the TAP where that loads, else in software). Odd slots from 3, free
  // beside igb's, and 0x1e.
  'virtio-rss': {
    device: 'virtio-net-pci', slot: 0x03, stride: 2, id: '1af4:1041',
    ports: [
      { options: 'disable-legacy=on,mq=on,rss=on,hash=on,vectors=10', tap: 4 },
      { options: 'disable-legacy=on', tap: 1 },
      { options: 'disable-modern=on,mq=on,vectors=10', id: '1af4:1000', tap: 4 },
      { options: 'disable-modern=on', id: '1af4:1000', tap: 1 },
      { options: 'disable-legacy=on,mq=on,rss=on,vectors=10', tap: 4, slot: 0x1e },
    ],
  },
};

// [{ kind, port, slot, address, mac, hub, name, options, id, tap }] for the kinds asked
// for: four ports each, or a kind's `ports`, whose entries override its options, id and
// slot port by port; `tap` is the number of queues of the port's TAP interface (0: on a
// QEMU hub), `tapName` its name.
function nics(kinds) {
  const out = [];
  kinds.forEach((kind) => {
    const k = KINDS[kind];
    if (!k) throw new Error(`unknown NIC kind ${kind}`);
    for (let port = 0; port < (k.ports ? k.ports.length : 4); port++) {
      const own = (k.ports && k.ports[port]) || {};
      const slot = own.slot || k.slot + port * (k.stride || 1);
      const hex = slot.toString(16).padStart(2, '0');
      out.push({
        kind, port, slot,
        address: `0000:00:${hex}.0`,
        mac: `52:54:00:12:${hex}:${(port + 1).toString(16).padStart(2, '0')}`,
        hub: k.ports ? 0x40 + slot : k.slot + (port >> 1), // one hub per pair; alone with `ports`
        name: `${kind}-${port}`,
        options: own.options !== undefined ? own.options : k.options,
        id: own.id || k.id,
        tap: own.tap || 0,
        tapName: `ixyt${hex}`,
      });
    }
  });
  return out;
}

module.exports = { KINDS, nics };
