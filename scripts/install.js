'use strict';

// ixy's install script. Where the package's prebuild fits this machine (its addon loads and
// the model's executable is beside it) there is nothing to do: that is the common case, and
// the reason npm 12 may skip this script without harm. Elsewhere (another architecture or
// C library, a glibc older than the prebuild's) it builds the addon and the device model
// from source with node-gyp; when that fails, one line says what to install, and the build's
// output waits in a log file. In a clone of ixy (not inside node_modules) it always builds
// from source, in the open, so that the tests run what the clone's source says.
const fs = require('fs');
const os = require('os');
const path = require('path');
const { places, target, REMEDY } = require('../lib/host/native');
const { rebuild, ROOT } = require('./node-gyp');

// Why the prebuild does not fit, or null when it does.
function prebuildMisfit() {
  const dir = places(ROOT)[0];
  if (!fs.existsSync(path.join(dir, 'ixy.node'))) return `no prebuild for ${target()}`;
  if (!fs.existsSync(path.join(dir, 'ixy-model'))) return `the prebuild for ${target()} has no ixy-model`;
  try {
    require(path.join(dir, 'ixy.node'));
    return null;
  } catch (err) {
    return `the prebuild for ${target()} does not load here (${String(err.message).split('\n')[0]})`;
  }
}

// What went wrong, in node-gyp's words: the message of the error it ended with
// ('Could not find any Python installation to use', 'not found: make', ...).
function reasonIn(log) {
  const lines = fs.readFileSync(log, 'utf8').split('\n');
  const error = lines.find((l) => l.includes('gyp ERR! stack Error: '));
  if (error) return error.slice(error.indexOf('Error: ') + 7).trim();
  const other = lines.find((l) => /gyp ERR! \S/.test(l));
  return other ? other.slice(other.indexOf('gyp ERR! ') + 9).trim() : 'node-gyp failed';
}

function fromSource(why) {
  const log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'ixy-build-')), 'node-gyp.log');
  const fd = fs.openSync(log, 'w');
  const status = rebuild(['ignore', fd, fd]);
  fs.closeSync(fd);
  if (status === 0) {
    fs.rmSync(path.dirname(log), { recursive: true, force: true });
    console.log(`ixy: ${why}: built the addon and the device model from source with node-gyp`);
    return 0;
  }
  const reason = status === null ? 'node-gyp not found' : reasonIn(log);
  console.error(`ixy: ENOADDON: ${why}, and building from source failed (${reason}; the whole output: ${log}): ${REMEDY}`);
  return 1;
}

function main() {
  const inClone = !ROOT.split(path.sep).includes('node_modules');
  if (inClone) return rebuild('inherit') === 0 ? 0 : 1;
  const why = prebuildMisfit();
  return why === null ? 0 : fromSource(why);
}

process.exitCode = main();
