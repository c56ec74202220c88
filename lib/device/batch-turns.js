'use strict';

// Debug mode for receive(): the iterator reuses one batch, so a batch kept past its turn
// (pushed into an array, buffered by Readable.from(), read after an await) silently shows
// later frames. With `debug`, each step hands out a view of the batch that works until the
// next step and throws ESTALEBATCH on every use after it. Views cost a Proxy per batch and
// a check per property access: for finding the bug, not for running at speed.
const { IxyError } = require('../host/errors');

class BatchTurns {
  constructor(batch) {
    this.batch = batch;
    this.turn = 0;
    this.live = 0; // the turn whose view still works; 0: none
  }

  // A view of the batch for the next turn; the previous view stops working.
  next() {
    const turn = ++this.turn;
    this.live = turn;
    const turns = this;
    const check = () => {
      if (turns.live !== turn) throw stale(turn, turns.turn);
    };
    return new Proxy(this.batch, {
      get(target, key) {
        check();
        return Reflect.get(target, key);
      },
      set(target, key, value) {
        check();
        return Reflect.set(target, key, value);
      },
      has(target, key) {
        check();
        return Reflect.has(target, key);
      },
    });
  }

  // The current view stops working (the loop moved on, or ended).
  end() {
    this.live = 0;
  }
}

function stale(turn, now) {
  return new IxyError('ESTALEBATCH', `batch ${turn} from receive() was used after its turn (the loop is at ${now > turn ? `batch ${now}` : 'its end'}): receive() reuses one batch, so copy what you keep (dev.frames() yields copies)`);
}

module.exports = { BatchTurns };
