'use strict';

// Mocha root hooks (.mocharc.json "require"): no test leaves a process behind, even when it
// fails before its own clean-up. Every child that child_process.spawn() starts is tracked
// until it exits; those a failed test started are killed when it ends, and all that are
// left when mocha exits. (A test that passes ends its own; the children of before() hooks
// belong to their suite, which ends them in its after().)
const childProcess = require('child_process');

const running = new Map();   // ChildProcess -> the test that started it, or null
let current = null;

const spawn = childProcess.spawn;
childProcess.spawn = function trackedSpawn(...args) {
  const child = spawn.apply(this, args);
  if (child.pid !== undefined) {
    running.set(child, current);
    child.once('exit', () => running.delete(child));
  }
  return child;
};

function end(child) {
  try {
    child.kill('SIGKILL');
  } catch { /* gone */ }
}

process.on('exit', () => {
  for (const child of running.keys()) end(child);
});

exports.mochaHooks = {
  beforeEach() {
    current = this.currentTest;
  },
  afterEach() {
    if (this.currentTest.state === 'failed') {
      for (const [child, test] of running) {
        if (test === current) end(child);
      }
    }
    current = null;
  },
};
