'use strict';

// Runs a command as the guest's unprivileged user (uid and gid 1000, no supplementary
// groups: libuv drops them), with the environment and limits /init set up.
//   node test/vm/guest/as-user.js COMMAND [ARGS...]
const { spawnSync } = require('child_process');

const [command, ...args] = process.argv.slice(2);
const result = spawnSync(command, args, { uid: 1000, gid: 1000, stdio: 'inherit' });
if (result.error) process.stderr.write(`as-user: ${result.error.message}\n`);
process.exit(result.status === null ? 1 : result.status);
