#!/usr/bin/env node
'use strict';

// The counts of docs/reading.md, computed rather than written by hand.
//
//   node docs/count.js           prints reading.md's tables with the counts of the files now
//   node docs/count.js --write   writes them into docs/reading.md
//   node docs/count.js --check   exits 1 if reading.md's counts are not those of the files
//
// The list of files is reading.md itself: every table whose header is
// `| file | lines | code | what it is |` lists files (first cell, in backticks, relative to
// the repository). This script fills in `lines` (as `wc -l` counts them) and `code` (lines
// with something other than comments and blanks), the table's total row, and the summary
// table between <!-- summary --> and <!-- /summary -->: one row per listed table, named by
// the heading above it.

const fs = require('fs');
const path = require('path');

const ROOT = path.join(__dirname, '..');
const DOC = path.join(__dirname, 'reading.md');
const HEADER = '| file | lines | code | what it is |';
const TOTAL = /^\| total: /;
// The section whose tables are the path, and the folders of it that are the driver proper
// (memory and the Intel core with ixgbe; not host plumbing, not the apps).
const PATH = 'The path, from the driver down';
const DRIVER_PROPER = ['lib/memory/', 'lib/intel/'];
const sum = (list, key) => list.reduce((total, f) => total + f[key], 0);

// Lines of a JavaScript, C or C++ file that hold code once comments (// and /* */) are
// taken out. Strings are skipped so that '//' inside one is not a comment.
function codeLines(text) {
  let count = 0;
  let inBlock = false;
  for (const line of text.split('\n')) {
    let code = false;
    let quote = null;
    for (let i = 0; i < line.length; i++) {
      const c = line[i];
      if (inBlock) {
        if (c === '*' && line[i + 1] === '/') { inBlock = false; i++; }
        continue;
      }
      if (quote !== null) {
        if (c === '\\') i++;
        else if (c === quote) quote = null;
        continue;
      }
      if (c === '/' && line[i + 1] === '/') break;
      if (c === '/' && line[i + 1] === '*') { inBlock = true; i++; continue; }
      if (c === '"' || c === "'" || c === '`') quote = c;
      if (c !== ' ' && c !== '\t') code = true;
    }
    if (code) count++;
  }
  return count;
}

function countFile(file) {
  const full = path.join(ROOT, file);
  if (!fs.existsSync(full)) throw new Error(`docs/reading.md lists ${file}, which does not exist`);
  const text = fs.readFileSync(full, 'utf8');
  const lines = text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  return { lines, code: codeLines(text) };
}

const num = (n) => n.toLocaleString('en-US');
const files = (n) => `${n} file${n === 1 ? '' : 's'}`;
const cells = (row) => row.split('|').slice(1, -1).map((c) => c.trim());

// reading.md with every count recomputed; also the tables found, for the summary.
function render(text) {
  const lines = text.split('\n');
  const tables = [];
  let heading = '';
  let section = '';
  const out = [];
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    if (/^## /.test(line)) section = line.slice(3);
    if (/^#{2,4} /.test(line)) heading = line.replace(/^#+ /, '');
    out.push(line);
    if (line !== HEADER) continue;
    out.push(lines[++i]); // the |---| row
    const table = { heading, section, files: 0, lines: 0, code: 0, counted: [] };
    while (i + 1 < lines.length && lines[i + 1].startsWith('|')) {
      const row = cells(lines[++i]);
      if (TOTAL.test(lines[i])) continue; // recomputed below
      if (row.length !== 4) throw new Error(`docs/reading.md: a row without four cells: ${lines[i]}`);
      const file = row[0].replace(/`/g, '');
      const n = countFile(file);
      table.files++;
      table.lines += n.lines;
      table.code += n.code;
      table.counted.push({ file, ...n });
      out.push(`| \`${file}\` | ${num(n.lines)} | ${num(n.code)} | ${row[3]} |`);
    }
    out.push(`| total: ${files(table.files)} | ${num(table.lines)} | ${num(table.code)} | |`);
    tables.push(table);
  }
  return fillSummary(out.join('\n'), tables);
}

function fillSummary(text, tables) {
  const open = '<!-- summary -->';
  const close = '<!-- /summary -->';
  const from = text.indexOf(open);
  const to = text.indexOf(close);
  if (from < 0 || to < from) return text;
  const row = (name, list) => `| ${name} | ${list.length} | ${num(sum(list, 'lines'))} | ${num(sum(list, 'code'))} |`;
  const all = tables.flatMap((t) => t.counted);
  const path = tables.filter((t) => t.section === PATH).flatMap((t) => t.counted);
  const proper = path.filter((f) => DRIVER_PROPER.some((dir) => f.file.startsWith(dir)));
  const rows = [
    '| part | files | lines | code |',
    '| --- | ---: | ---: | ---: |',
    ...tables.map((t) => row(t.heading, t.counted)),
    row('**the path**, all its folders', path),
    row(`**the driver proper** (the path's ${DRIVER_PROPER.map((d) => `\`${d}\``).join(' and ')})`, proper),
    row('**everything listed**', all),
  ];
  return `${text.slice(0, from + open.length)}\n${rows.join('\n')}\n${text.slice(to)}`;
}

if (require.main === module) {
  const text = fs.readFileSync(DOC, 'utf8');
  const fresh = render(text);
  const arg = process.argv[2];
  if (arg === '--write') {
    fs.writeFileSync(DOC, fresh);
  } else if (arg === '--check') {
    if (fresh !== text) {
      console.error('docs/reading.md: the counts are not those of the files now; run node docs/count.js --write');
      process.exit(1);
    }
  } else if (arg === undefined) {
    // The tables only: the summary, then each listed table.
    const keep = fresh.split('\n').filter((l) => l.startsWith('|') || /^#{2,4} /.test(l));
    console.log(keep.join('\n'));
  } else {
    console.error('usage: node docs/count.js [--write | --check]');
    process.exit(2);
  }
}

module.exports = { render, codeLines, countFile };
