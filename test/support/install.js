'use strict';

// Helpers of test/project/install.test.js: a machine without compilers, and the demo's accounts.
const assert = require('assert');
const { spawnSync } = require('child_process');

// In a private mount namespace, every C/C++ compiler, make and Python on PATH is masked by
// /dev/null (which nobody may run) and gcc's own programs by an empty tmpfs; then argv runs
// there. PYTHON and npm_config_python, which name one directly, are unset.
const HIDE = `
IFS=:
for d in $PATH; do
  for f in "$d"/cc "$d"/c++ "$d"/cpp "$d"/gcc* "$d"/g++* "$d"/*-gcc* "$d"/*-g++* "$d"/clang* \\
           "$d"/make "$d"/gmake "$d"/python*; do
    if [ -f "$f" ]; then mount --bind /dev/null "$f" || exit 1; fi
  done
done
unset IFS
if [ -d /usr/lib/gcc ]; then mount -t tmpfs -o size=4k,mode=0755 none /usr/lib/gcc || exit 1; fi
exec "$@"
`;

function hidingCompilers(argv, options = {}) {
  const env = { ...process.env, ...options.env };
  delete env.PYTHON;
  delete env.npm_config_python;
  const r = spawnSync('unshare', ['--mount', '--propagation', 'private', 'sh', '-c', HIDE, 'sh', ...argv], {
    encoding: 'utf8', timeout: 240000, ...options, env,
  });
  return { code: r.status, stdout: r.stdout, stderr: r.stderr, out: `${r.stdout}${r.stderr}` };
}

// `ixy demo`'s report accounts for every frame: each total is followed by the = and +
// lines that add up to it, the driver received frames, and the sinks saw none broken.
function accountsForEveryFrame(stdout) {
  const rows = [...stdout.matchAll(/^ +([=+]?) ?([A-Za-z ]+?) +(\d+)( {2}\S.*)?$/gm)];
  assert.strictEqual(rows.filter((r) => r[2] === 'offered').length, 2, stdout);
  let total = null;
  let sum = 0;
  const check = () => { if (total) assert.strictEqual(sum, Number(total[3]), `'${total[2]}' does not add up in:\n${stdout}`); };
  for (const row of rows) {
    if (row[1] === '') {
      check();
      total = row;
      sum = 0;
    } else {
      sum += Number(row[3]);
    }
  }
  check();
  for (const m of stdout.matchAll(/= received +(\d+)/g)) assert.ok(Number(m[1]) > 0, 'the driver received frames');
  assert.strictEqual([...stdout.matchAll(/frames checked, \d+ sequence gaps .*, 0 broken frames$/gm)].length, 2, stdout);
}

module.exports = { hidingCompilers, accountsForEveryFrame };
