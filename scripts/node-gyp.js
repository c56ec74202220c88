'use strict';

// Runs `node-gyp rebuild` in ixy's directory, for scripts/install.js and scripts/prebuild.js.
// Which node-gyp: the project's own (a devDependency, in a clone), else the one the package
// manager runs install scripts with (npm names it in npm_config_node_gyp), else the first on
// PATH. Users' installs need no node-gyp of their own: only where no prebuild fits is one
// run, and npm, pnpm and yarn bring theirs.
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');

const ROOT = path.join(__dirname, '..');

function nodeGypCommand() {
  try {
    return [process.execPath, require.resolve('node-gyp/bin/node-gyp.js', { paths: [ROOT] })];
  } catch { /* not installed here */ }
  const npms = process.env.npm_config_node_gyp;
  if (npms && fs.existsSync(npms)) return [process.execPath, npms];
  return ['node-gyp'];
}

// Compiles both targets of binding.gyp on every core. stdio: as for spawnSync ('inherit',
// or [ 'ignore', fd, fd ] for a log file). Returns the exit status (null: not started).
function rebuild(stdio) {
  const env = { ...process.env };
  // The distribution's Node with its headers installed (Debian's nodejs-dev): no download.
  const distribution = process.execPath === '/usr/bin/node' && fs.existsSync('/usr/include/node/node_api.h');
  if (!env.npm_config_nodedir && distribution) env.npm_config_nodedir = '/usr';
  const [command, ...args] = nodeGypCommand();
  const r = spawnSync(command, [...args, 'rebuild', '--jobs', 'max'], { cwd: ROOT, stdio, env });
  return r.error ? null : r.status;
}

module.exports = { rebuild, ROOT };
