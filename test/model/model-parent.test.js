'use strict';

// `npx ixy model &` then `kill $!`: npm passes no signal on to the command it runs, so
// `ixy model` must notice that the command that started it is gone, and stop the model
// (which removes its directory). A wrapper that leads its own process group, as a shell's
// background job does, plays npx here, and dies by SIGKILL so that it cannot pass anything on.
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { spawn } = require('child_process');

const IXY = path.join(__dirname, '..', '..', 'bin', 'ixy.js');
const { sleep } = require('../../lib/host/register-access');
const running = (pid) => {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1][0] !== 'Z';
  } catch {
    return false;
  }
};

describe('ixy model ends with the command that started it', function () {
  this.timeout(30000);

  it('stops the model and removes its directory once its launcher is killed', async function () {
    const launcher = spawn(process.execPath, ['-e', `
      const c = require('child_process').spawn(process.execPath, [${JSON.stringify(IXY)}, 'model', '--ports', '1'], { stdio: ['ignore', 'inherit', 'inherit'] });
      process.stdout.write('ixy ' + c.pid + '\\n');
      setInterval(() => {}, 1000);
    `], { detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    launcher.stdout.on('data', (d) => { out += d; });
    let ixyPid = 0;
    let modelPid = 0;
    let dir = '';
    try {
      const end = Date.now() + 15000;
      while (!/directory: +(\S+)/.test(out) && Date.now() < end) await sleep(50);
      ixyPid = Number(/^ixy (\d+)/m.exec(out)[1]);
      modelPid = Number(/device model running \(pid (\d+)\)/.exec(out)[1]);
      dir = /directory: +(\S+)/.exec(out)[1];
      assert.ok(fs.existsSync(dir));
      process.kill(launcher.pid, 'SIGKILL');
      const gone = Date.now() + 10000;
      while ((running(modelPid) || fs.existsSync(dir)) && Date.now() < gone) await sleep(100);
      assert.ok(!running(modelPid), `the model (pid ${modelPid}) still runs after its launcher died`);
      assert.ok(!fs.existsSync(dir), `${dir} is still there`);
      const stopped = Date.now() + 5000;
      while (running(ixyPid) && Date.now() < stopped) await sleep(50);
      assert.ok(!running(ixyPid), 'ixy model still runs');
    } finally {
      for (const pid of [launcher.pid, ixyPid]) {
        try { if (pid && running(pid)) process.kill(pid, 'SIGKILL'); } catch { /* gone */ }
      }
    }
  });
});
