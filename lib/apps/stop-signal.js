'use strict';

// SIGINT, SIGTERM, SIGHUP (the terminal went away; tcpdump treats it as SIGTERM) and SIGQUIT
// as a request to stop, for the commands that promise their totals, a flushed capture and
// exit 0 on Ctrl-C (forward, generate, pcap, replay). bin/ixy.js watches them from its first
// instruction, so that a signal during start-up (the device's init, the link wait) ends the
// command as one during its loop does, instead of ending the process by the signal. The
// returned AbortSignal goes to open() (its link wait gives up: EABORTED) and to runLoop().
// A second signal ends the process as the signal would have; the exit guard
// (lib/host/exit-guard.js) takes the signal back once no listener is left, and stops the NICs.
const STOP_SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT'];

function watchStopSignals() {
  const controller = new AbortController();
  const onSignal = (name) => {
    if (!controller.signal.aborted) {
      controller.abort();
      return;
    }
    for (const signal of STOP_SIGNALS) process.removeListener(signal, onSignal);
    process.kill(process.pid, name);
  };
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  return controller.signal;
}

module.exports = { watchStopSignals, STOP_SIGNALS };
