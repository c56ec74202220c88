'use strict';

// The benchmarks' command lines: walks argv and hands each option to `take(option, next)`,
// where next() reads the option's argument. --help prints `usage` and exits; an option
// that take() does not know (it returns false) or a missing argument is an error.
function eachOption(argv, usage, take) {
  for (let i = 0; i < argv.length; i++) {
    const option = argv[i];
    const next = () => {
      if (i + 1 >= argv.length) throw new Error(`${option} needs a value`);
      return argv[++i];
    };
    if (option === '--help' || option === '-h') {
      process.stdout.write(`${usage}\n`);
      process.exit(0);
    }
    if (take(option, next) === false) throw new Error(`unknown option ${option} (--help lists them)`);
  }
}

module.exports = { eachOption };
