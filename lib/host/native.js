'use strict';

// Finds and loads the native part of ixy: the addon (ixy.node) and the device model's
// executable (ixy-model). Two places, best first: the prebuild the package carries for this
// platform, architecture and C library (prebuilds/linux-x64-glibc/, made by
// scripts/prebuild.js), then what node-gyp built from source (build/Release/). The first
// place whose addon loads is the one, and the model comes from there too, so that the two
// always come from the same build. No place: one ENOADDON line that says what to install.
const fs = require('fs');
const path = require('path');
const { IxyError } = require('./errors');

const ROOT = path.join(__dirname, '..', '..');
const ADDON = 'ixy.node';

// 'glibc' or 'musl': a build for one does not load under the other. Node's report knows
// which C library it runs on (glibcVersionRuntime is there only under glibc).
function libc() {
  const report = process.report;
  const excluded = report.excludeNetwork;
  report.excludeNetwork = true; // the header is all that is read: no DNS lookups for the rest
  try {
    return report.getReport().header.glibcVersionRuntime ? 'glibc' : 'musl';
  } finally {
    report.excludeNetwork = excluded === true;
  }
}

// What a prebuild must have been built for, and the name of its directory: 'linux-x64-glibc'.
function target() {
  const base = `${process.platform}-${process.arch}`;
  return process.platform === 'linux' ? `${base}-${libc()}` : base;
}

// The directories the native part may be in, best first.
function places(root = ROOT) {
  return [path.join(root, 'prebuilds', target()), path.join(root, 'build', 'Release')];
}

// The one-line remedy, shared with scripts/install.js.
const REMEDY = "install a C/C++ toolchain (g++, make) and Python 3, then run 'npm rebuild ixy' " +
  "(npm 12 runs ixy's install script only once you approve it: 'npm install-scripts approve ixy'; " +
  "in a clone of ixy: 'npm install')";

// { addon, dir } from the first place whose addon loads; throws ENOADDON, naming what each
// place that has an addon said, when none does.
function load(root = ROOT) {
  const failed = [];
  for (const dir of places(root)) {
    const file = path.join(dir, ADDON);
    if (!fs.existsSync(file)) continue;
    try {
      return { addon: require(file), dir };
    } catch (err) {
      // dlopen's message starts with the file's path, which is said once already.
      failed.push(`${path.relative(root, file)}: ${String(err.message).split('\n')[0].replace(`${file}: `, '')}`);
    }
  }
  const why = failed.length ? failed.join('; ') : `no prebuild for ${target()} and none built from source`;
  throw new IxyError('ENOADDON', `the ixy addon is missing in ${root} (${why}): ${REMEDY}`);
}

let loaded = null;

function native() {
  if (loaded === null) loaded = load();
  return loaded.addon;
}

// The path of a file of the native build the addon came from: nativeFile('ixy-model').
function nativeFile(name) {
  native();
  return path.join(loaded.dir, name);
}

module.exports = { native, nativeFile, load, places, target, REMEDY };
