'use strict';

// npm run prebuild: builds the addon and the device model from this clone's source with
// node-gyp, and puts stripped copies into prebuilds/<platform>-<arch>-<libc>/ (for this
// machine: no cross-building), where the package's loader looks first
// (lib/host/native.js). `npm pack` runs it (prepack) and removes prebuilds/ after (postpack);
// .ci/run runs it and tests against what it made.
//   node scripts/prebuild.js            build from source, then collect
//   node scripts/prebuild.js --collect  collect build/Release as it is (built from this source)
//   node scripts/prebuild.js --clean    remove prebuilds/
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { places } = require('../lib/host/native');
const { rebuild, ROOT } = require('./node-gyp');

const FILES = ['ixy.node', 'ixy-model'];

function fail(message) {
  console.error(`prebuild: ${message}`);
  process.exit(1);
}

function run(command, args) {
  const r = spawnSync(command, args, { encoding: 'utf8' });
  if (r.error || r.status !== 0) fail(`${command} ${args.join(' ')}: ${r.error ? r.error.message : r.stderr.trim().split('\n')[0]}`);
  return r.stdout;
}

// Copies the build into `dest`, without symbols (a third of the size), and checks that the
// copies work: the addon loads in a fresh Node and the model answers --help.
function collect(dest) {
  const [, release] = places(ROOT);
  fs.rmSync(dest, { recursive: true, force: true });
  fs.mkdirSync(dest, { recursive: true });
  for (const name of FILES) {
    const from = path.join(release, name);
    if (!fs.existsSync(from)) fail(`${path.relative(ROOT, from)} is missing: build it first (npx node-gyp rebuild)`);
    fs.copyFileSync(from, path.join(dest, name));
    run('strip', ['--strip-unneeded', path.join(dest, name)]);
  }
  run(process.execPath, ['-e', `require(${JSON.stringify(path.join(dest, 'ixy.node'))})`]);
  run(path.join(dest, 'ixy-model'), ['--help']);
  for (const name of FILES) {
    console.log(`prebuild: ${path.relative(ROOT, path.join(dest, name))} ${fs.statSync(path.join(dest, name)).size} bytes`);
  }
  // The loader takes a prebuild first, in a clone too: a later build from source would not run.
  console.log("prebuild: this clone's ixy loads these before build/Release until 'npm run prebuild -- --clean'");
}

function main(argv) {
  const prebuilds = path.join(ROOT, 'prebuilds');
  if (argv.includes('--clean')) {
    fs.rmSync(prebuilds, { recursive: true, force: true });
    return;
  }
  if (!argv.includes('--collect') && rebuild('inherit') !== 0) fail('node-gyp rebuild failed');
  collect(places(ROOT)[0]);
}

main(process.argv.slice(2));
