'use strict';

// Mocha reporter for the guest: the usual spec output for people reading the console, plus
// one line per test that the host parses (test/vm/run.js):
//   @@ixy pass <full title>
//   @@ixy fail <full title> :: <error message on one line>
//   @@ixy pending <full title>
//   @@ixy done <passes> <failures> <pending> <ms>
// Tests send data for host-side checks with `@@ixy data <json>` (see report() in util.js).
const Mocha = require('mocha');

const { EVENT_TEST_PASS, EVENT_TEST_FAIL, EVENT_TEST_PENDING, EVENT_RUN_END } = Mocha.Runner.constants;
const oneLine = (s) => String(s).replace(/\s*\n\s*/g, ' | ');

class GuestReporter extends Mocha.reporters.Spec {
  constructor(runner, options) {
    super(runner, options);
    const started = Date.now();
    runner.on(EVENT_TEST_PASS, (t) => console.log(`@@ixy pass ${oneLine(t.fullTitle())}`));
    runner.on(EVENT_TEST_PENDING, (t) => console.log(`@@ixy pending ${oneLine(t.fullTitle())}`));
    runner.on(EVENT_TEST_FAIL, (t, err) => console.log(`@@ixy fail ${oneLine(t.fullTitle())} :: ${oneLine(err && err.message)}`));
    runner.once(EVENT_RUN_END, () => {
      const s = runner.stats;
      console.log(`@@ixy done ${s.passes} ${s.failures} ${s.pending} ${Date.now() - started}`);
    });
  }
}

module.exports = GuestReporter;
