'use strict';

// A one-line progress bar for a terminal: redrawn in place with a carriage return, so it
// is only for TTYs (a log file would get every redraw). `draw` is cheap enough for a timer.
const { formatPacketRate } = require('../loop/rates');

const WIDTH = 30;

class ProgressBar {
  constructor(stream, total) {
    this.stream = stream;
    this.total = total;
    this.start = performance.now();
    this.drawn = -1;
  }

  draw(done) {
    if (done === this.drawn) return;
    this.drawn = done;
    const fraction = Math.min(1, done / this.total);
    const filled = Math.round(fraction * WIDTH);
    const seconds = (performance.now() - this.start) / 1000;
    const rate = seconds > 0 ? done / seconds : 0;
    this.stream.write(`\r[${'#'.repeat(filled)}${'.'.repeat(WIDTH - filled)}] ${done}/${this.total} frames ` +
      `${(fraction * 100).toFixed(0).padStart(3)}% ${formatPacketRate(rate)}\x1b[K`);
  }

  // The last state, and a newline so that what follows starts on its own line.
  finish(done) {
    this.drawn = -1;
    this.draw(done);
    this.stream.write('\n');
  }
}

module.exports = { ProgressBar };
