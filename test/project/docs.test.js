'use strict';

// The documents: README.md and docs/*.md point only at files and headings that exist, name
// only files of the repository that exist, and the counts in docs/reading.md are those of
// the files it lists (docs/count.js).
const assert = require('assert');
const fs = require('fs');
const path = require('path');
const { render } = require('../../docs/count');

const root = path.join(__dirname, '..', '..');
const docs = ['README.md', ...fs.readdirSync(path.join(root, 'docs')).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`)];

// GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens.
const slug = (heading) => heading.trim().toLowerCase().replace(/[^\p{L}\p{N} _-]/gu, '').replace(/ /g, '-');

function anchors(file) {
  const text = fs.readFileSync(path.join(root, file), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
  return new Set([...text.matchAll(/^#{1,6} (.*)$/gm)].map((m) => slug(m[1])));
}

describe('the documents', function () {
  it('link only to files and headings that exist', function () {
    const broken = [];
    for (const doc of docs) {
      const text = fs.readFileSync(path.join(root, doc), 'utf8').replace(/^```[\s\S]*?^```/gm, '');
      for (const [, target] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        if (/^[a-z]+:/.test(target)) continue; // http(s), mailto
        const [file, anchor] = target.split('#');
        const resolved = file === '' ? doc : path.posix.normalize(path.posix.join(path.posix.dirname(doc), file));
        if (!fs.existsSync(path.join(root, resolved))) {
          broken.push(`${doc}: ${target} (no file ${resolved})`);
        } else if (anchor !== undefined && resolved.endsWith('.md') && !anchors(resolved).has(anchor)) {
          broken.push(`${doc}: ${target} (no heading #${anchor} in ${resolved})`);
        }
      }
    }
    assert.deepStrictEqual(broken, []);
  });

  // A path written in the text, linked or not (`lib/host/pci.js`, bench/ab.js, native/model/),
  // starting at a folder of the repository; globs and placeholders (test/*/*.test.js,
  // lib/intel/<driver>/) are patterns, not paths.
  it('name only files and folders of the repository that exist', function () {
    const TOP = /(?<![\w./-])((?:lib|native|test|bench|docs|examples|bin|\.ci)\/[\w./-]*[\w/])/g;
    const named = new Set();
    const missing = [];
    for (const doc of docs) {
      const text = fs.readFileSync(path.join(root, doc), 'utf8');
      for (const m of text.matchAll(TOP)) {
        if (/[*<{]/.test(text[m.index + m[0].length] || '')) continue;
        named.add(m[1]);
        if (!fs.existsSync(path.join(root, m[1]))) missing.push(`${doc}: ${m[1]}`);
      }
    }
    assert.deepStrictEqual(missing, []);
    assert.ok(named.has('lib/intel/ixgbe/device.js') && named.has('lib/intel/ring-queue.js'), [...named].join(' '));
  });

  it("docs/reading.md's counts are those of the files it lists (node docs/count.js --write)", function () {
    const text = fs.readFileSync(path.join(root, 'docs', 'reading.md'), 'utf8');
    assert.ok(text.includes('| file | lines | code | what it is |'), 'reading.md lists no files');
    assert.strictEqual(render(text), text);
  });
});
