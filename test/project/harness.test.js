'use strict';

// The suite's own clean-up (test/support/children.js): a test that fails before it ends
// its children still leaves no process behind.
const assert = require('assert');
const { spawnSync } = require('child_process');
const fs = require('fs');
const path = require('path');
const { suiteTmpDir } = require('../support/helpers');

const MOCHA = path.join(__dirname, '..', '..', 'node_modules', '.bin', 'mocha');
// Running, or stopped; not a zombie (killed, not yet reaped by init).
function alive(pid) {
  try {
    return !/^\d+ \(.*\) Z/.test(fs.readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('the test harness', function () {
  const tmpDir = suiteTmpDir('ixy-harness-');

  it('kills the children of a failed test when it ends, and all children when mocha exits', async function () {
    const file = path.join(tmpDir(), 'leak.test.js');
    const pids = path.join(tmpDir(), 'pids');
    fs.writeFileSync(file, `
      const { spawn } = require('child_process');
      const fs = require('fs');
      let suiteChild;
      before(() => { suiteChild = spawn('sleep', ['1000']); });
      it('fails with a child running', () => {
        const child = spawn('sleep', ['1000']);
        fs.writeFileSync(${JSON.stringify(pids)}, child.pid + ' ' + suiteChild.pid);
        throw new Error('failed before its clean-up');
      });
      it('finds that child gone, and the suite\\'s still there', async () => {
        await new Promise((resolve) => setTimeout(resolve, 200));
        const [child, suite] = fs.readFileSync(${JSON.stringify(pids)}, 'utf8').split(' ').map(Number);
        const alive = (pid) => { try { process.kill(pid, 0); return true; } catch { return false; } };
        if (alive(child) || !alive(suite)) throw new Error('wrong');
      });`);
    const r = spawnSync(MOCHA, ['--config', path.join(__dirname, '..', '..', '.mocharc.json'), file], { encoding: 'utf8', timeout: 30000 });
    assert.match(r.stdout, /1 passing[^]*1 failing/, r.stdout + r.stderr);
    const [child, suite] = fs.readFileSync(pids, 'utf8').split(' ').map(Number);
    for (let t = 0; t < 50 && (alive(child) || alive(suite)); t++) await new Promise((resolve) => setTimeout(resolve, 20));
    assert.ok(!alive(child) && !alive(suite), 'a child left running after mocha exited');
  });
});
