'use strict';

// Builds what the test guest boots: QEMU 10 (installed from bookworm-backports if missing),
// the Debian kernel as an ELF vmlinux (QEMU boots it through its PVH entry, faster under
// TCG than unpacking the xz bzImage), and an uncompressed initramfs in two parts:
//   base-*.cpio  busybox, the node running this (process.execPath) and its libraries,
//              /init (cached, one per node binary: CI runs the suite under several)
//   package    the ixy package under test                           (rebuilt every run)
// The kernel concatenates cpio archives, so the two are simply appended.
// Cache: $IXY_VM_CACHE or /var/cache/ixy-vm. Usage: node test/vm/build.js
const { execFileSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { CpioWriter } = require('./cpio');
const { nativeFile } = require('../../lib/host/native');

const ROOT = path.resolve(__dirname, '..', '..');
const CACHE = process.env.IXY_VM_CACHE || '/var/cache/ixy-vm';
const BACKPORTS = 'deb http://deb.debian.org/debian bookworm-backports main';
const QEMU_MAJOR = 10; // -device igb appeared in QEMU 8; bookworm has 7.2, backports 10

const sh = (cmd, args, opts = {}) => execFileSync(cmd, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'], ...opts });
const log = (msg) => process.stderr.write(`[vm] ${msg}\n`);

function qemuVersion() {
  try {
    const m = /version (\d+)\.(\d+)/.exec(sh('qemu-system-x86_64', ['--version']));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

// QEMU >= 10, installing it from bookworm-backports when needed (root only). Throws with
// the reason when that is impossible, so callers can report the tests as skipped.
function ensureQemu() {
  if (qemuVersion() >= QEMU_MAJOR) return;
  if (process.geteuid() !== 0) throw new Error(`QEMU >= ${QEMU_MAJOR} is not installed and installing it needs root`);
  log('installing qemu-system-x86 from bookworm-backports');
  const list = '/etc/apt/sources.list.d/backports.list';
  if (!fs.existsSync(list) || !fs.readFileSync(list, 'utf8').includes('bookworm-backports')) {
    fs.writeFileSync(list, `${BACKPORTS}\n`);
  }
  const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  sh('apt-get', ['update', '-qq'], { env });
  sh('apt-get', ['install', '-y', '-qq', '-t', 'bookworm-backports', 'qemu-system-x86'], { env });
  if (qemuVersion() < QEMU_MAJOR) throw new Error(`installed QEMU is still older than ${QEMU_MAJOR}`);
}

// Runs an apt query; on a machine whose package lists are missing or stale (a fresh
// container), updates them once and tries again.
let aptUpdated = false;
function withAptLists(fn) {
  try {
    return fn();
  } catch (err) {
    if (aptUpdated) throw err;
    log('apt failed; running apt-get update once');
    sh('apt-get', ['update', '-qq']);
    aptUpdated = true;
    return fn();
  }
}

// Downloads a Debian package (once) and unpacks it under CACHE/<dirName>; returns that dir.
// `only`: unpack just these members, shell patterns allowed (the kernel package is ~400 MB
// unpacked, mostly modules the guest never loads).
function debPackage(name, only = null, dirName = name) {
  const dir = path.join(CACHE, dirName);
  if (fs.existsSync(path.join(dir, '.done'))) return dir;
  const debs = path.join(CACHE, 'debs');
  fs.mkdirSync(debs, { recursive: true });
  log(`downloading ${name}`);
  withAptLists(() => sh('apt-get', ['download', '-q', name], { cwd: debs }));
  const deb = fs.readdirSync(debs).find((f) => f.startsWith(`${name}_`) && f.endsWith('.deb'));
  fs.rmSync(dir, { recursive: true, force: true });
  if (only === null) sh('dpkg-deb', ['-x', path.join(debs, deb), dir]);
  else {
    fs.mkdirSync(dir, { recursive: true });
    const tar = execFileSync('dpkg-deb', ['--fsys-tarfile', path.join(debs, deb)], { maxBuffer: 1 << 30 });
    execFileSync('tar', ['-x', '--wildcards', '-C', dir, ...[].concat(only)], { input: tar, maxBuffer: 1 << 30 });
  }
  fs.rmSync(path.join(debs, deb)); // unpacked: the .deb is not needed again
  fs.writeFileSync(path.join(dir, '.done'), '');
  return dir;
}

// The kernel package linux-image-amd64 points at, e.g. linux-image-6.1.0-56-amd64.
function kernelPackage() {
  const m = /Depends: (linux-image-\S+)/.exec(withAptLists(() => sh('apt-cache', ['depends', 'linux-image-amd64'])));
  if (!m) throw new Error('cannot tell which kernel linux-image-amd64 depends on');
  return m[1];
}

// The ELF vmlinux inside the bzImage: the payload is one xz stream; find its magic and
// decompress just that stream.
function vmlinux() {
  const out = path.join(CACHE, 'vmlinux');
  if (fs.existsSync(out)) return out;
  const dir = debPackage(kernelPackage(), './boot');
  const bootDir = path.join(dir, 'boot');
  const image = fs.readFileSync(path.join(bootDir, fs.readdirSync(bootDir).find((f) => f.startsWith('vmlinuz-'))));
  const at = image.indexOf(Buffer.from([0xfd, 0x37, 0x7a, 0x58, 0x5a, 0x00]));
  if (at < 0) throw new Error('no xz payload in the kernel image');
  const elf = execFileSync('xz', ['-dc', '--single-stream'], { input: image.subarray(at), maxBuffer: 1 << 30 });
  if (elf.readUInt32BE(0) !== 0x7f454c46) throw new Error('the kernel payload is not an ELF file');
  fs.writeFileSync(`${out}.tmp`, elf);
  fs.renameSync(`${out}.tmp`, out);
  return out;
}

// The kernel modules VFIO needs (the kernel has them as modules, not built in), in the order
// they must be loaded: [{ name, file }]. The package has no modules.dep, so the order is ours.
const VFIO_MODULES = ['virt/lib/irqbypass', 'drivers/vfio/vfio', 'drivers/vfio/vfio_iommu_type1',
  'drivers/vfio/vfio_virqfd', 'drivers/vfio/pci/vfio-pci-core', 'drivers/vfio/pci/vfio-pci'];

function vfioModules() {
  const pkg = kernelPackage();
  const dir = debPackage(pkg, VFIO_MODULES.map((m) => `./lib/modules/*/kernel/${m}.ko`), `${pkg}-vfio`);
  const version = fs.readdirSync(path.join(dir, 'lib', 'modules'))[0];
  return VFIO_MODULES.map((m) => ({ name: path.basename(m), file: path.join(dir, 'lib', 'modules', version, 'kernel', `${m}.ko`) }));
}

// Libraries node needs, as ldd lists them (absolute paths, kept as they are).
function sharedLibraries(binary) {
  return sh('ldd', [binary]).split('\n').map((l) => /(\/\S+) \(0x/.exec(l)).filter(Boolean).map((m) => m[1]);
}

// busybox, node and its libraries, /init. The guest runs the same node binary as the host
// process that builds it, so a suite started under another Node line tests that line in the
// guest too. One archive per binary, rebuilt when the binary or init change.
function baseArchive() {
  const node = fs.realpathSync(process.execPath);
  const init = fs.readFileSync(path.join(__dirname, 'init.sh'));
  const stamp = JSON.stringify({ node, mtime: fs.statSync(node).mtimeMs, init: hash(init) });
  const out = path.join(CACHE, `base-${process.version}-${hash(Buffer.from(node)).slice(0, 8)}.cpio`);
  const stampFile = `${out}.stamp`;
  if (fs.existsSync(out) && fs.existsSync(stampFile) && fs.readFileSync(stampFile, 'utf8') === stamp) return out;
  const busybox = path.join(debPackage('busybox-static'), 'bin', 'busybox');
  log('building base initramfs');
  const w = new CpioWriter(`${out}.tmp`);
  for (const d of ['proc', 'sys', 'dev', 'tmp', 'mnt/huge', 'etc', 'root']) w.dir(d);
  w.file('bin/busybox', fs.readFileSync(busybox), 0o755);
  for (const applet of sh(busybox, ['--list-full']).split('\n').filter(Boolean)) {
    if (applet !== 'bin/busybox') w.symlink(applet, '/bin/busybox');
  }
  w.file('usr/bin/node', fs.readFileSync(node), 0o755);
  for (const lib of sharedLibraries(node)) w.file(lib, fs.readFileSync(fs.realpathSync(lib)), 0o755);
  w.file('init', init, 0o755);
  w.close();
  fs.renameSync(`${out}.tmp`, out);
  fs.writeFileSync(stampFile, stamp);
  return out;
}

function hash(buf) {
  return require('crypto').createHash('sha256').update(buf).digest('hex');
}

// The directories of `names` and of everything they depend on, resolved the way node does.
function dependencyClosure(names) {
  const dirs = new Set();
  const visit = (name, from) => {
    let dir = null;
    for (let d = from; ; d = path.dirname(d)) {
      const candidate = path.join(d, 'node_modules', name);
      if (fs.existsSync(path.join(candidate, 'package.json'))) { dir = candidate; break; }
      if (d === path.dirname(d)) break;
    }
    if (dir === null || dirs.has(dir)) return;
    dirs.add(dir);
    const pkg = JSON.parse(fs.readFileSync(path.join(dir, 'package.json'), 'utf8'));
    for (const dep of Object.keys(pkg.dependencies || {})) visit(dep, dir);
  };
  for (const name of names) visit(name, ROOT);
  return [...dirs];
}

// The package under test at /ixy: what it ships, the addon, runtime modules, guest tests.
function packageArchive(file) {
  const w = new CpioWriter(file);
  const skipJunk = (p) => !/\.0x$|\.pcap$/.test(p);
  w.copy(path.join(ROOT, 'package.json'), 'ixy/package.json');
  w.copy(path.join(ROOT, 'lib'), 'ixy/lib', skipJunk);
  w.copy(path.join(ROOT, 'bin'), 'ixy/bin');
  // The addon the package's loader picks here (the prebuild in CI), where the guest's finds it.
  w.copy(nativeFile('ixy.node'), 'ixy/build/Release/ixy.node');
  w.copy(path.join(ROOT, 'test', 'support', 'helpers.js'), 'ixy/test/support/helpers.js');
  // The tests' own Toeplitz, which guest/igb-rss.test.js checks QEMU's RSS hashes against.
  w.copy(path.join(ROOT, 'test', 'support', 'rss.js'), 'ixy/test/support/rss.js');
  w.copy(path.join(__dirname, 'guest'), 'ixy/test/vm/guest');
  // /init loads these, in this order, when the guest has an IOMMU.
  const modules = vfioModules();
  for (const m of modules) w.copy(m.file, `lib/modules/vfio/${m.name}.ko`);
  w.file('lib/modules/vfio/load-order', Buffer.from(modules.map((m) => `${m.name}.ko\n`).join('')), 0o644);
  for (const dir of dependencyClosure(['commander', 'mocha'])) {
    w.copy(dir, `ixy/${path.relative(ROOT, dir)}`, (p) => !p.endsWith('/.bin'));
  }
  w.close();
}

// Everything a boot needs: { qemu, kernel, initrd }. The initrd is written to `workDir`
// (a fresh one per run, so concurrent runs do not collide).
function build(workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-vm-'))) {
  ensureQemu();
  fs.mkdirSync(CACHE, { recursive: true });
  const kernel = vmlinux();
  const base = baseArchive();
  nativeFile('ixy.node'); // throws ENOADDON, saying what to do, when there is none
  const pkg = path.join(workDir, 'package.cpio');
  packageArchive(pkg);
  const initrd = path.join(workDir, 'initrd.cpio');
  fs.copyFileSync(base, initrd);
  fs.appendFileSync(initrd, fs.readFileSync(pkg));
  fs.rmSync(pkg);
  return { qemu: 'qemu-system-x86_64', kernel, initrd, workDir };
}

module.exports = { build, ensureQemu, qemuVersion, CACHE };

if (require.main === module) {
  const t0 = Date.now();
  const result = build();
  log(`ready in ${((Date.now() - t0) / 1000).toFixed(1)} s: ${JSON.stringify(result)}`);
}
