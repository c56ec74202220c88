'use strict';

// The guest itself: node runs, the package loads, hugepages and the NICs are there.
const assert = require('assert');
const fs = require('fs');

describe('guest', function () {
  it('runs node with the ixy package and its addon', function () {
    const ixy = require('../../../lib');
    assert.strictEqual(typeof ixy.open, 'function');
    assert.strictEqual(typeof require('../../../lib/host/native').native().allocDma, 'function');
  });

  it('has free hugepages on a mounted hugetlbfs', function () {
    const free = Number(/HugePages_Free:\s+(\d+)/.exec(fs.readFileSync('/proc/meminfo', 'utf8'))[1]);
    assert.ok(free >= 64, `only ${free} free hugepages`);
    assert.ok(fs.readFileSync('/proc/mounts', 'utf8').includes('/mnt/huge hugetlbfs'));
  });
});
