'use strict';

const v8 = require('v8');

// Heap bytes allocated in a window = growth of the used heap + what every GC in the
// window freed (V8's GCProfiler reports the used heap before and after each GC). That
// counts every allocation, including those collected before the window ends.
function heapWindow() {
  const profiler = new v8.GCProfiler();
  let usedStart = 0;
  return {
    start() {
      profiler.start();
      usedStart = v8.getHeapStatistics().used_heap_size;
    },
    stop() {
      const usedEnd = v8.getHeapStatistics().used_heap_size;
      const { statistics } = profiler.stop();
      let freed = 0;
      let pauseUs = 0;
      const gcTypes = {}; // V8's names: Scavenge, MarkSweepCompact, ...
      for (const gc of statistics) {
        freed += gc.beforeGC.heapStatistics.usedHeapSize - gc.afterGC.heapStatistics.usedHeapSize;
        pauseUs += gc.cost;
        gcTypes[gc.gcType] = (gcTypes[gc.gcType] || 0) + 1;
      }
      return { heapAllocated: usedEnd - usedStart + freed, gcs: statistics.length, gcPauseUs: Math.round(pauseUs), gcTypes };
    },
  };
}

module.exports = { heapWindow };
