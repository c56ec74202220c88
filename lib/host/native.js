'use strict';

// Loads the addon built by `npm install` (node-gyp). Kept in one place so that a missing
// build gives one clear message instead of a module-not-found stack.
const path = require('path');
const { IxyError } = require('./errors');

const ADDON_PATH = path.join(__dirname, '..', '..', 'build', 'Release', 'ixy.node');

let addon = null;

function native() {
  if (addon === null) {
    try {
      addon = require(ADDON_PATH);
    } catch (err) {
      throw new IxyError('ENOADDON', `the ixy addon is not built (${err.code || err.message}): run 'npm install' in ${path.dirname(path.dirname(ADDON_PATH))}, ` +
        "or in a project that depends on ixy 'npm install-scripts approve ixy && npm rebuild ixy' (npm 12 skips install scripts not approved)");
    }
  }
  return addon;
}

module.exports = { native };
