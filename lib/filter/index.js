'use strict';

// compileFilter(expression): a tcpdump filter expression (pcap-filter(7)) as a predicate
// `(bytes, length, wireLength = length) => boolean` over Ethernet frames, compiled once into a JavaScript
// function (lexer -> parser -> codegen -> optimize -> emit; see each file). The predicate
// reads only bytes[0..length), allocates nothing, and keeps exactly the frames tcpdump
// keeps for the same expression (test/filter/filter.test.js holds it to that).
//
// A bad expression throws IxyError EFILTER with the column of the problem.
const { IxyError, shown } = require('../host/errors');
const { parse } = require('./parser');
const { toIr } = require('./codegen');
const { optimize } = require('./optimize');
const { emit } = require('./emit');

// Longer expressions are refused: compiling is linear, but some 3,000 `host` terms (64 KiB)
// take seconds already. The nesting limit is the parser's (MAX_DEPTH there).
const MAX_LENGTH = 65536;

// The body of the predicate, for reading or debugging (`ixy` prints it nowhere).
function filterSource(expression) {
  if (typeof expression !== 'string') {
    throw new IxyError('EFILTER', `a filter expression is a string, got ${shown(expression)}`);
  }
  if (expression.length > MAX_LENGTH) {
    throw new IxyError('EFILTER', `a filter expression is at most ${MAX_LENGTH} characters, got ${expression.length}`);
  }
  return emit(optimize(toIr(expression, parse(expression))));
}

function compileFilter(expression) {
  const source = filterSource(expression);
  // Declared with the parameters it reads: a call with fewer arguments than declared costs.
  const predicate = /\bwire\b/.test(source) ? new Function('b', 'len', 'wire', source) : new Function('b', 'len', source);
  Object.defineProperty(predicate, 'expression', { value: expression });
  return predicate;
}

module.exports = { compileFilter, filterSource };
