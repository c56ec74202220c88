'use strict';

// ixy on every Node.js line it is tested on (test/support/node-versions.js: NODE_LINES), whichever
// Node runs these tests: the one addon build (Node-API) loads and arms its signal guard
// under each, and tuneJit() sets its V8 flags there without a word, or says in one line
// that V8 refused one. A line whose binary is not cached is skipped loudly; .ci/run
// fetches them all first, so CI never skips.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawnSync } = require('child_process');
const { NODE_LINES, nodeFor, majorOf } = require('../support/node-versions');
const { FATAL_SIGNALS } = require('../../lib/host/exit-guard');

const ROOT = path.join(__dirname, '..', '..');
// The addon the package's loader picks: the prebuild where there is one (CI), else node-gyp's.
const ADDON = require('../../lib/host/native').nativeFile('ixy.node');
const JIT = path.join(ROOT, 'lib', 'host', 'jit.js');

// Runs `script` under `node`; its stdout is JSON. Returns { result, stderr }.
function runUnder(node, script) {
  const r = spawnSync(node, ['-e', script], { cwd: ROOT, encoding: 'utf8', timeout: 30000 });
  assert.strictEqual(r.status, 0, `${node} exited with ${r.status} (${r.signal}): ${r.stderr}`);
  return { result: JSON.parse(r.stdout), stderr: r.stderr };
}

describe('Node.js versions', function () {
  this.timeout(60000);

  it('package.json engines names exactly the lines the tests run on', function () {
    const pkg = JSON.parse(fs.readFileSync(path.join(ROOT, 'package.json'), 'utf8'));
    assert.strictEqual(pkg.engines.node, NODE_LINES.map((major) => `^${major}`).join(' || '));
  });

  for (const major of NODE_LINES) {
    describe(`Node ${major}`, function () {
      let node = null;

      before(function () {
        node = nodeFor(major);
        if (node === null) {
          console.log(`\n  !!! Node ${major} tests SKIPPED: no binary cached; run 'node test/support/node-versions.js fetch ${major}'\n`);
          this.skip();
        }
      });

      it('loads the one addon build and arms the signal guard for every fatal signal', function () {
        const { result } = runUnder(node, `
          const addon = require(${JSON.stringify(ADDON)});
          console.log(JSON.stringify({ version: process.version, napi: process.versions.napi,
            exports: Object.keys(addon).sort(), armed: addon.armSignals() }));`);
        assert.strictEqual(majorOf(result.version), major);
        assert.ok(Number(result.napi) >= 8, `Node-API ${result.napi} is older than the addon's NAPI_VERSION 8`);
        for (const name of ['allocDma', 'armSignals', 'captureStderr', 'free', 'guardDevice', 'mapResource', 'unguardDevice']) {
          assert.ok(result.exports.includes(name), `the addon has no ${name}: ${result.exports}`);
        }
        // Node handles SIGINT, SIGTERM and SIGSEGV itself from start-up; the guard takes them
        // only if it recognised Node's handlers (looked up by name in the node binary).
        assert.deepStrictEqual(result.armed, FATAL_SIGNALS);
      });

      it('captureStderr() hands back what fn wrote on stderr and restores stderr, also when fn throws', function () {
        const r = spawnSync(node, ['-e', `
          const { captureStderr } = require(${JSON.stringify(ADDON)});
          const caught = captureStderr(() => process.stderr.write('into the pipe\\n'));
          let thrown = null;
          try { captureStderr(() => { throw new Error('from fn'); }); } catch (err) { thrown = err.message; }
          process.stderr.write('back on stderr\\n');
          console.log(JSON.stringify({ caught, thrown }));`], { cwd: ROOT, encoding: 'utf8', timeout: 30000 });
        assert.strictEqual(r.status, 0, r.stderr);
        assert.deepStrictEqual(JSON.parse(r.stdout), { caught: 'into the pipe\n', thrown: 'from fn' });
        assert.strictEqual(r.stderr, 'back on stderr\n');
      });

      it('tuneJit() sets its V8 flags without a word', function () {
        const { result, stderr } = runUnder(node, `console.log(JSON.stringify(require(${JSON.stringify(JIT)}).tuneJit()))`);
        assert.deepStrictEqual(result, []);
        assert.strictEqual(stderr, '');
      });

      it('tuneJit() says once, in one line of its own, that V8 refused a flag', function () {
        const { result, stderr } = runUnder(node, `
          const jit = require(${JSON.stringify(JIT)});
          jit.JIT_FLAGS.push('--ixy-no-such-flag=1');
          console.log(JSON.stringify([jit.tuneJit(), jit.tuneJit()]));`);
        assert.deepStrictEqual(result, [['--ixy-no-such-flag=1'], ['--ixy-no-such-flag=1']]);
        const lines = stderr.split('\n').filter((l) => l !== '');
        assert.strictEqual(lines.length, 1, `expected one line on stderr, got:\n${stderr}`);
        assert.match(lines[0], /^ixy: V8 \S+ \(Node v\d+\.\d+\.\d+\) refused --ixy-no-such-flag=1 \(unrecognized flag --ixy-no-such-flag=1\); /);
      });
    });
  }
});
