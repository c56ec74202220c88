'use strict';

// lib/ is layered so that the tree is the reading list, bottom up. This test reads every
// require() in lib/ (lazy ones inside functions included) and checks the two rules the
// layering rests on: no file requires one that requires it back, directly or through
// others; and no file requires one in a layer above its own, or in another folder of its
// own layer (ixgbe/ and igb/ know nothing of each other).
const assert = require('assert');
const fs = require('fs');
const path = require('path');

const LIB = path.join(__dirname, '..', '..', 'lib');

// Bottom up. A file belongs to the longest folder here that contains it; '.' is the
// loose files at lib/'s top: the public API. lib/index.js, the package's face, lists what
// require('ixy') exports from any layer (the commands' generate() and replay() included),
// so it stands above them all and nothing in lib/ requires it.
const LAYERS = [
  ['host'], // sysfs, VFIO, interrupts, claims, bind guards, the addon loader, register access
  ['memory'], // DMA memory, the index arena, mempools, batches, ownership checks
  ['filter'], // capture filters: tcpdump's language compiled to a predicate over a frame
  ['device'], // what every driver's Device and queues share: counters, receive(), idle
  ['intel'], // the ixgbe/igb NIC base and descriptor queues
  ['intel/ixgbe', 'intel/igb', 'virtio', 'model', 'xdp'], // the drivers, the device model's API, AF_XDP
  ['warm-up'], // an app's hot path run on stand-in queues before the device goes live
  ['loop'], // the commands' run loop (ixy.run() offers it): slices, idle, reports
  ['.'], // the public API: open(), the driver table, packets, pcap
  ['traffic'], // what generators send: frame recipes, rates and pacing
  ['apps'], // the commands
  ['face'], // lib/index.js alone: what require('ixy') gives, gathered from every layer
];
const FACE = path.join(LIB, 'index.js');

function folderOf(file) {
  if (file === FACE) return 'face';
  const dir = path.relative(LIB, path.dirname(file)).split(path.sep).join('/') || '.';
  let best = null;
  for (const layer of LAYERS) {
    for (const folder of layer) {
      const inside = folder === '.' ? dir === '.' : dir === folder || dir.startsWith(`${folder}/`);
      if (inside && (best === null || folder.length > best.length || best === '.')) best = folder;
    }
  }
  return best;
}

function rankOf(folder) {
  return LAYERS.findIndex((layer) => layer.includes(folder));
}

function jsFiles(dir) {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return jsFiles(p);
    return e.name.endsWith('.js') ? [p] : [];
  });
}

// file -> the files of lib/ it requires.
function requireGraph(lib) {
  const graph = new Map();
  for (const file of jsFiles(lib)) {
    const source = fs.readFileSync(file, 'utf8');
    const targets = [];
    for (const m of source.matchAll(/require\(\s*(['"])(\.[^'"]*)\1\s*\)/g)) {
      targets.push(require.resolve(path.resolve(path.dirname(file), m[2])));
    }
    graph.set(file, targets.filter((t) => t.startsWith(lib + path.sep)));
  }
  return graph;
}

// Every cycle of the graph, each as the list of files around it (found once, from its
// first file in the walk).
function cycles(graph) {
  const found = [];
  const state = new Map(); // file -> 'open' while on the stack, 'done' after
  const stack = [];
  const visit = (file) => {
    state.set(file, 'open');
    stack.push(file);
    for (const next of graph.get(file) || []) {
      if (state.get(next) === 'open') found.push(stack.slice(stack.indexOf(next)).concat(next));
      else if (!state.has(next)) visit(next);
    }
    stack.pop();
    state.set(file, 'done');
  };
  for (const file of graph.keys()) if (!state.has(file)) visit(file);
  return found;
}

const short = (file) => path.relative(LIB, file);

describe('the layers of lib/', () => {
  const graph = requireGraph(LIB);

  it('places every file of lib/ in a declared layer', () => {
    const loose = [...graph.keys()].filter((f) => folderOf(f) === null).map(short);
    assert.deepStrictEqual(loose, [], 'folders the layer list does not name');
  });

  it('has no import circle', () => {
    const found = cycles(graph).map((c) => c.map(short).join(' -> '));
    assert.deepStrictEqual(found, []);
  });

  it('has no require that runs up a layer or across to a sibling folder', () => {
    const wrong = [];
    for (const [file, targets] of graph) {
      const from = folderOf(file);
      for (const target of targets) {
        const to = folderOf(target);
        if (rankOf(to) > rankOf(from) || (rankOf(to) === rankOf(from) && to !== from)) {
          wrong.push(`${short(file)} (${from}) -> ${short(target)} (${to})`);
        }
      }
    }
    assert.deepStrictEqual(wrong, []);
  });

  it('keeps at most 10 loose files at the top of lib/', () => {
    const loose = fs.readdirSync(LIB).filter((name) => name.endsWith('.js'));
    assert.ok(loose.length <= 10, `${loose.length} loose files: ${loose.join(', ')}`);
  });

  it('finds a circle and an upward require when there are some (the checks can fail)', () => {
    const a = path.join(LIB, 'memory', 'a.js');
    const b = path.join(LIB, 'host', 'b.js');
    const made = new Map([[a, [b]], [b, [a]]]);
    assert.strictEqual(cycles(made).length, 1);
    assert.ok(rankOf(folderOf(b)) < rankOf(folderOf(a)), 'host is below memory');
  });
});
