'use strict';

// The package as a user gets it (issue 49): `npm pack`, installed into fresh projects under
// /tmp. With the compilers and Python hidden (a mount namespace in which each is masked by a
// file nobody may run), `npm install` and `npm install --ignore-scripts` both succeed on the
// prebuild, compiling nothing, and require('ixy'), import('ixy') and `npx ixy demo` run on it.
// (How long an install takes is the machine's: a fresh one's first npm reads npm cold.)
// Without a prebuild: with the compilers, install builds from source; without, one line.
// npm installs offline where its cache has commander and node-addon-api (.ci/run's npm ci).
const assert = require('assert');
const fs = require('fs');
const os = require('os');
const path = require('path');
const { spawnSync } = require('child_process');
const { places } = require('../../lib/host/native');
const { hidingCompilers, accountsForEveryFrame } = require('../support/install');

const ROOT = path.join(__dirname, '..', '..');
const PREBUILD = places(ROOT)[0];
const TARGET = path.basename(PREBUILD);
const NPM_QUIET = ['--prefer-offline', '--no-audit', '--no-fund'];

function sh(command, args, options = {}) {
  const r = spawnSync(command, args, { encoding: 'utf8', timeout: 240000, ...options });
  return { code: r.status, out: `${r.stdout}${r.stderr}`, stdout: r.stdout, stderr: r.stderr };
}

// A fresh project in `dir` with the tarball installed; returns { code, out, seconds }.
// TMPDIR: the failed build's log stays in the test's directory.
function project(dir, tarball, npmArgs, hide) {
  fs.mkdirSync(dir);
  fs.writeFileSync(path.join(dir, 'package.json'), '{ "name": "app", "version": "1.0.0", "private": true }\n');
  const argv = ['npm', 'install', ...NPM_QUIET, ...npmArgs, tarball];
  const options = { cwd: dir, env: { ...process.env, TMPDIR: path.dirname(dir) } };
  const started = process.hrtime.bigint();
  const r = hide ? hidingCompilers(argv, options) : sh(argv[0], argv.slice(1), options);
  return { ...r, seconds: Number(process.hrtime.bigint() - started) / 1e9 };
}

// Node in `dir` runs `source` (CommonJS or, with .mjs, a module) that starts a model and
// opens its port with the package; prints the addon's file as mapped and the model's exe.
function probe(dir, ext) {
  const load = ext === 'mjs' ? "const { default: ixy } = await import('ixy');" : "const ixy = require('ixy');";
  const source = `(async () => {
    ${load}
    const fs = await import('fs');
    const model = await ixy.Model.start({ ports: 1 });
    process.env.IXY_PCI_ROOT = model.dir;
    try {
      const dev = await ixy.open(model.addresses[0], { rxQueues: 1, txQueues: 1 });
      const maps = fs.readFileSync('/proc/self/maps', 'utf8').split('\\n');
      const addon = [...new Set(maps.filter((l) => l.endsWith('.node')).map((l) => l.slice(l.indexOf('/'))))];
      const exe = fs.readlinkSync('/proc/' + model.pid + '/exe');
      dev.close();
      console.log(JSON.stringify({ addon, model: exe }));
    } finally { await model.stop(); }
  })();`;
  fs.writeFileSync(path.join(dir, `probe.${ext}`), source);
  const r = hidingCompilers([process.execPath, `probe.${ext}`], { cwd: dir });
  assert.strictEqual(r.code, 0, r.out);
  return JSON.parse(r.stdout);
}

describe('the addon loader (lib/host/native.js)', function () {
  // A package root with a prebuild that does not load (not an ELF file) and, unless
  // `built` is false, a build from source: load(root)'s answer, in a child Node.
  function loadIn(built) {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-loader-'));
    try {
      fs.mkdirSync(path.join(root, 'prebuilds', TARGET), { recursive: true });
      fs.writeFileSync(path.join(root, 'prebuilds', TARGET, 'ixy.node'), 'not an ELF file, and longer than an ELF header would be\n'.repeat(2));
      if (built) {
        fs.mkdirSync(path.join(root, 'build', 'Release'), { recursive: true });
        fs.copyFileSync(require('../../lib/host/native').nativeFile('ixy.node'), path.join(root, 'build', 'Release', 'ixy.node'));
      }
      const script = `try { console.log(require(${JSON.stringify(path.join(ROOT, 'lib', 'host', 'native.js'))}).load(${JSON.stringify(root)}).dir); }
        catch (e) { console.log(e.code + ' ' + e.message); }`;
      return { root, said: sh(process.execPath, ['-e', script]).stdout.trim() };
    } finally {
      fs.rmSync(root, { recursive: true, force: true });
    }
  }

  it('takes the prebuild only if it loads, then the build from source', function () {
    const { root, said } = loadIn(true);
    assert.strictEqual(said, path.join(root, 'build', 'Release'));
  });

  it('with neither, throws ENOADDON: what the prebuild said, and what to install', function () {
    const { root, said } = loadIn(false);
    assert.match(said, new RegExp(`^ENOADDON the ixy addon is missing in ${root} \\(prebuilds/${TARGET}/ixy\\.node: invalid ELF header\\): install a C/C\\+\\+ toolchain`));
  });
});

describe('installing the package (npm pack)', function () {
  this.timeout(300000);
  let tmp = null;
  let tarball = null; // with the prebuild
  let bare = null; // the same package without prebuilds/
  let collected = false; // prebuilds/ made by this test from build/Release, removed after

  before(function () {
    if (process.getuid() !== 0) this.skip(); // the mount namespace that hides the compilers
    tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-install-'));
    // .ci/run made the prebuild from the source it tests; alone, take this clone's build.
    if (!fs.existsSync(path.join(PREBUILD, 'ixy.node'))) {
      const r = sh(process.execPath, [path.join(ROOT, 'scripts', 'prebuild.js'), '--collect']);
      assert.strictEqual(r.code, 0, r.out);
      collected = true;
    }
    const r = sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', tmp], { cwd: ROOT });
    assert.strictEqual(r.code, 0, r.out);
    tarball = path.join(tmp, JSON.parse(r.stdout)[0].filename);
    // The fallback's package: the tarball without prebuilds/, packed again.
    const unpacked = path.join(tmp, 'bare');
    fs.mkdirSync(unpacked);
    assert.strictEqual(sh('tar', ['xzf', tarball, '-C', unpacked]).code, 0);
    fs.rmSync(path.join(unpacked, 'package', 'prebuilds'), { recursive: true });
    const b = sh('npm', ['pack', '--ignore-scripts', '--json', '--pack-destination', unpacked], { cwd: path.join(unpacked, 'package') });
    assert.strictEqual(b.code, 0, b.out);
    bare = path.join(unpacked, JSON.parse(b.stdout)[0].filename);
  });

  after(function () {
    if (collected) fs.rmSync(path.join(ROOT, 'prebuilds'), { recursive: true, force: true });
    if (tmp) fs.rmSync(tmp, { recursive: true, force: true });
  });

  it('holds what a user runs, and no tests, CI or bench records, in at most 5 MiB', function () {
    const files = sh('tar', ['tzf', tarball]).stdout.split('\n').filter(Boolean).map((f) => f.replace(/^package\//, ''));
    for (const want of [`prebuilds/${TARGET}/ixy.node`, `prebuilds/${TARGET}/ixy-model`, 'lib/index.js', 'bin/ixy.js',
      'native/addon.cc', 'native/model/main.c', 'binding.gyp', 'scripts/install.js', 'docs/api.md',
      'examples/reflector.js', 'index.d.ts', 'index.mjs', 'setup-hugetlbfs.sh', 'README.md', 'LICENSE']) {
      assert.ok(files.includes(want), `${want} is not in the package`);
    }
    assert.deepStrictEqual(files.filter((f) => /^(test|\.ci|bench|build|node_modules)\//.test(f)), []);
    assert.ok(fs.statSync(tarball).size <= 5 * 1024 * 1024, `${fs.statSync(tarball).size} bytes`);
  });

  it('with no compiler and no Python: installs with or without its script, compiles nothing, and runs on the prebuild', function () {
    const check = hidingCompilers(['sh', '-c', 'for t in cc gcc g++ c++ make python3; do $t --version >/dev/null 2>&1 && echo "$t runs"; done; true']);
    assert.strictEqual(check.stdout, '', 'the mount namespace hides the compilers');
    for (const [name, args] of [['scripts', []], ['no-scripts', ['--ignore-scripts']]]) {
      const dir = path.join(tmp, name);
      const r = project(dir, tarball, args, true);
      assert.strictEqual(r.code, 0, r.out);
      assert.ok(!fs.existsSync(path.join(dir, 'node_modules', 'ixy', 'build')), 'nothing was compiled');
    }
    const dir = path.join(tmp, 'no-scripts');
    const pkg = fs.realpathSync(path.join(dir, 'node_modules', 'ixy'));
    for (const ext of ['cjs', 'mjs']) {
      assert.deepStrictEqual(probe(dir, ext), {
        addon: [path.join(pkg, 'prebuilds', TARGET, 'ixy.node')],
        model: path.join(pkg, 'prebuilds', TARGET, 'ixy-model'),
      }, ext);
    }
    const demo = hidingCompilers(['npx', '--offline', 'ixy', 'demo', '--seconds', '2'], { cwd: path.join(tmp, 'scripts') });
    assert.strictEqual(demo.code, 0, demo.out);
    accountsForEveryFrame(demo.stdout);
  });

  it('without a prebuild: builds from source where the compilers are, and says in one line what to install where not', function () {
    const built = project(path.join(tmp, 'source'), bare, [], false);
    assert.strictEqual(built.code, 0, built.out);
    const pkg = path.join(tmp, 'source', 'node_modules', 'ixy');
    const r = sh(process.execPath, ['-p', `require(${JSON.stringify(path.join(pkg, 'lib', 'host', 'native.js'))}).load().dir`]);
    assert.strictEqual(r.stdout.trim(), path.join(pkg, 'build', 'Release'), r.out);
    console.log(`      (the source build's install took ${built.seconds.toFixed(1)} s)`);

    const failed = project(path.join(tmp, 'none'), bare, [], true);
    assert.notStrictEqual(failed.code, 0, failed.out);
    const said = failed.out.split('\n').filter((l) => l.includes('ixy: '));
    assert.strictEqual(said.length, 1, failed.out);
    assert.match(said[0], new RegExp(`ixy: ENOADDON: no prebuild for ${TARGET}, and building from source failed \\(.+; the whole output: \\S+\\): install a C/C\\+\\+ toolchain \\(g\\+\\+, make\\) and Python 3, then run 'npm rebuild ixy'`));
    assert.doesNotMatch(failed.out, /^\s*(npm error\s+)?(gyp ERR! stack\s+)?at /m, 'no stack trace');

    const skipped = project(path.join(tmp, 'skipped'), bare, ['--ignore-scripts'], true);
    assert.strictEqual(skipped.code, 0, skipped.out);
    const demo = hidingCompilers(['npx', '--offline', 'ixy', 'demo', '--seconds', '1'], { cwd: path.join(tmp, 'skipped') });
    assert.strictEqual(demo.code, 1, demo.out);
    assert.strictEqual(demo.stdout, '');
    assert.match(demo.stderr, /^ixy: the ixy addon is missing in \S+ \(no prebuild for \S+ and none built from source\): install a C\/C\+\+ toolchain .*'npm rebuild ixy'.*\n$/);
  });
});
