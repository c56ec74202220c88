'use strict';

// The npm `cap` package (libpcap bindings) capturing on an interface for bench/xdp.js:
//   node cap-child.js IFACE SECONDS
// counts the frames its 'packet' events bring in SECONDS and prints { packets }. `cap` is
// not a dependency of ixy: it is found in IXY_CAP_DIR (a folder with node_modules/cap,
// e.g. after `npm install cap` there), else where Node finds it; without it, exit code 3.
const [iface, seconds] = process.argv.slice(2);
let Cap;
try {
  ({ Cap } = require(require.resolve('cap', { paths: [process.env.IXY_CAP_DIR || process.cwd(), __dirname] })));
} catch {
  process.stderr.write('cap is not installed: npm install cap in a folder, then IXY_CAP_DIR=that folder\n');
  process.exit(3);
}
const cap = new Cap();
const buffer = Buffer.alloc(65535);
cap.open(iface, '', 64 << 20, buffer); // the same 64 MiB kernel buffer as tcpdump -B 65536
let packets = 0;
cap.on('packet', () => { packets++; });
setTimeout(() => {
  cap.close();
  process.stdout.write(`${JSON.stringify({ packets, seconds: Number(seconds) })}\n`);
}, Number(seconds) * 1000);
