'use strict';

// SIGINT and SIGTERM as a request to stop, for the commands that promise their totals and
// exit 0 on Ctrl-C (forward, generate, pcap). bin/ixy.js watches them from its first
// instruction, so that a signal during start-up (the device's init, the link wait) ends the
// command as one during its loop does, instead of ending the process by the signal. The
// returned AbortSignal goes to open() (its link wait gives up: EABORTED) and to runLoop().
// A second signal ends the process as the signal would have; the exit guard
// (lib/host/exit-guard.js) takes the signal back once no listener is left, and stops the NICs.
function watchStopSignals() {
  const controller = new AbortController();
  const onSignal = (name) => {
    if (!controller.signal.aborted) {
      controller.abort();
      return;
    }
    process.removeListener('SIGINT', onSignal);
    process.removeListener('SIGTERM', onSignal);
    process.kill(process.pid, name);
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return controller.signal;
}

module.exports = { watchStopSignals };
