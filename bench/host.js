'use strict';

// The benchmarks' hold on the host's CPUs: which CPU a process's threads run on, and how
// much CPU time a process has used.
const { execFileSync } = require('child_process');
const fs = require('fs');

// Pins the threads of `pid` to `cpu`: all of them, or only its main thread (whose thread
// id is the pid). Threads made later inherit the affinity of the thread that makes them.
function pin(pid, cpu, allThreads = true) {
  execFileSync('taskset', [...(allThreads ? ['-a'] : []), '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' });
}

// A driver process's main thread on CPU 1 and its other threads (V8's compiler and GC
// helpers) on CPU 0, with the model, as a machine with a spare core would have them; or,
// with helpers 'driver', on CPU 1 too, which then also pays for every compilation.
function pinDriver(pid, helpers = 'model') {
  pin(pid, helpers === 'driver' ? 1 : 0);
  pin(pid, 1, false);
}

const CLOCK_TICKS = 100; // USER_HZ: the unit of utime and stime in /proc/PID/stat

// CPU seconds (user + system, fields 14 and 15 of /proc/PID/stat) of process `pid` so far.
function cpuSeconds(pid) {
  const fields = fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLOCK_TICKS;
}

// Nanoseconds the main thread of `pid` has spent runnable but waiting for its CPU (the
// second field of /proc/PID/schedstat): for a driver that spins, the time the host gave
// to someone else, during which arriving frames wait.
function waitedNs(pid) {
  return Number(fs.readFileSync(`/proc/${pid}/schedstat`, 'utf8').split(' ')[1]);
}

module.exports = { pin, pinDriver, cpuSeconds, waitedNs };
