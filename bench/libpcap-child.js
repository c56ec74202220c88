'use strict';

// A libpcap binding from npm capturing on an interface for bench/xdp.js:
//   node libpcap-child.js cap|pcap IFACE SECONDS
// counts the frames its 'packet' events bring in SECONDS and prints { packets, seconds }.
// Neither package is a dependency of ixy: each is found in IXY_CAP_DIR (a folder where
// `npm install cap pcap` ran), else where Node finds it; without it, exit code 3.
// Both read packets in a native loop that returns to the event loop only when the kernel's
// buffer is empty, which under a steady flood it never is: a timer would not fire, so the
// handler itself looks at the clock every 1,024 packets.
const [name, iface, seconds] = process.argv.slice(2);
const end = Date.now() + Number(seconds) * 1000;
const KERNEL_BUFFER = 64 << 20; // the same 64 MiB as tcpdump -B 65536

let binding;
try {
  binding = require(require.resolve(name, { paths: [process.env.IXY_CAP_DIR || process.cwd(), __dirname] }));
} catch {
  process.stderr.write(`${name} is not installed: npm install ${name} in a folder, then IXY_CAP_DIR=that folder\n`);
  process.exit(3);
}

let packets = 0;
function done() {
  process.stdout.write(`${JSON.stringify({ packets, seconds: Number(seconds) })}\n`);
  process.exit(0);
}
function onPacket() {
  if ((++packets & 1023) === 0 && Date.now() >= end) done();
}

if (name === 'cap') {
  const cap = new binding.Cap();
  cap.open(iface, '', KERNEL_BUFFER, Buffer.alloc(65535));
  cap.on('packet', onPacket);
} else {
  binding.createSession(iface, { buffer_size: KERNEL_BUFFER }).on('packet', onPacket);
}
setTimeout(done, Number(seconds) * 1000); // for a trickle, when the loop does return
