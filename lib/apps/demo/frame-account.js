'use strict';

// Where every frame went in the real-traffic set-up (real-net.js): the counts of the
// kernels (each TAP's counters), of the device model (its truth, native/model/README.md)
// and of the driver (the totals `ixy forward` prints), and which of them must be equal.

// The totals `ixy forward` prints when it stops, by PCI address (lib/loop/rates.js formatTotals).
function parseTotals(output) {
  const totals = {};
  const re = /\[([^\]]+)\] total RX (\d+) packets (\d+) bytes, TX (\d+) packets (\d+) bytes, RX missed (\d+), TX dropped (\d+)/g;
  for (const m of output.matchAll(re)) {
    totals[m[1]] = {
      rxPackets: Number(m[2]), rxBytes: Number(m[3]), txPackets: Number(m[4]), txBytes: Number(m[5]),
      rxMissed: Number(m[6]), txDropped: Number(m[7]),
    };
  }
  return totals;
}

// Where the frames of each direction went, from what every part counted: the kernel's
// TAP counters, the model's truth (native/model/README.md) and the driver's totals; the
// report of RealNet.finish(). One entry per direction, from side `from` (0: a) to the
// other: the counts along the way, and `checks`, pairs of counts that must be equal
// ([what, left, right]) when nothing was lost uncounted.
function account({ totals, model, kernel }, addresses) {
  return [0, 1].map((from) => {
    const to = 1 - from;
    const rx = totals[addresses[from]]; // the driver on the port the frames came in
    const tx = totals[addresses[to]]; // and on the one they left by
    const mIn = model[from];
    const mOut = model[to];
    // Offered to the port but never received by the driver, nor missed for want of a
    // descriptor: no link or RX off (e.g. while the kernel had not yet seen the carrier
    // go), refused by the MAC's address filter or for its length.
    const notReceived = mIn.rxDropDisabled + mIn.rxDropFiltered + mIn.rxDropOversize + mIn.rxDropCrc + mIn.rxDropRunt;
    const d = {
      from, to,
      kernelSent: kernel[from].txPackets,
      driverReceived: rx.rxPackets,
      driverMissed: rx.rxMissed,
      notReceived,
      txDropped: tx.txDropped,
      driverSent: tx.txPackets,
      tapRefused: mOut.tapTxDropped,
      kernelReceived: kernel[to].rxPackets,
    };
    d.checks = [
      ['frames the model read from the TAP = frames the kernel sent', mIn.tapRxFrames, kernel[from].txPackets],
      ['frames the kernel sent = received by the driver + missed by it + not received', kernel[from].txPackets, rx.rxPackets + rx.rxMissed + notReceived],
      ['frames the driver received = delivered by the model', rx.rxPackets, mIn.rxDelivered],
      ['frames the driver missed = dropped by the model for want of a descriptor', rx.rxMissed, mIn.rxDropNoDesc],
      ['frames the driver received = sent on + dropped on the way out', rx.rxPackets, tx.txPackets + tx.txDropped],
      ['frames the model transmitted = sent by the driver', mOut.txFrames, tx.txPackets],
      ['frames the model transmitted = written to the TAP + refused by it', mOut.txFrames, mOut.tapTxFrames + mOut.tapTxDropped],
      ['frames the kernel received = written to the TAP', kernel[to].rxPackets, mOut.tapTxFrames],
      ['frames the kernel dropped = refused by the TAP', kernel[to].rxDropped, mOut.tapTxDropped],
      ['bytes the model read from the TAP = bytes the kernel sent', mIn.tapRxBytes, kernel[from].txBytes],
      ['bytes the driver received = delivered by the model', rx.rxBytes, mIn.rxBytes],
      ['bytes the model transmitted = sent by the driver', mOut.txBytes, tx.txBytes],
      ['bytes the kernel received = written to the TAP', kernel[to].rxBytes, mOut.tapTxBytes],
    ];
    return d;
  });
}

module.exports = { parseTotals, account };
