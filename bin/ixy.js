#!/usr/bin/env node
'use strict';

// The `ixy` command: parses arguments and calls the library; nothing else lives here.
// Every failure a user can cause prints one line and exits non-zero.

// First of all: from here on SIGINT and SIGTERM stop these commands with their totals
// (lib/apps/stop-signal.js), during start-up too.
const STOPPABLE = ['forward', 'generate', 'pcap', 'replay'];
const stop = STOPPABLE.includes(process.argv[2]) ? require('../lib/apps/stop-signal').watchStopSignals() : undefined;

const { Command, Option, InvalidArgumentError } = require('commander');
const { version } = require('../package.json');
const { tuneJit } = require('../lib/host/jit');
const { printable } = require('../lib/host/printable');
const { streamFailure, watchStream } = require('../lib/loop/report');

// Before any hot loop runs: let V8 compile a whole forwarding step into one function.
tuneJit();

const program = new Command();

function integer(name, min, max) {
  return (value) => {
    if (!/^\d+$/.test(value)) throw new InvalidArgumentError(`${name} must be a whole number`);
    const n = Number(value);
    if (n < min || n > max) throw new InvalidArgumentError(`${name} must be ${min}..${max}`);
    return n;
  };
}

// The options several commands share, worded once.
function batchOption() {
  return new Option('-b, --batch <n>', 'packets per batch (1..512)').argParser(integer('--batch', 1, 512)).default(32);
}

function secondsOption(description = 'stop after this many seconds (0: run until Ctrl-C)', seconds = 0) {
  return new Option('-t, --seconds <s>', description).argParser(integer('--seconds', 0, 1e9)).default(seconds);
}

// --link-timeout and --force: how a port is taken; deviceOptions() passes them to open().
function linkTimeoutOption() {
  return new Option('--link-timeout <ms>', 'how long to wait for link').argParser(integer('--link-timeout', 1, 600000)).default(10000);
}

function forceOption() {
  return new Option('--force', "take the NIC even if the kernel's interface of it is up or has addresses or routes");
}

// --xdp-bind and --xdp-mode: open()'s mode and xdpMode for xdp:<interface> devices
// (lib/xdp/device.js), passed only when given: open() refuses them (EUNSUPPORTED) for a
// device ixy drives itself.
function xdpBindOption() {
  return new Option('--xdp-bind <mode>', "AF_XDP sockets of xdp: devices (open()'s mode): 'zerocopy' (in the driver's own buffers), 'copy' (the kernel copies each frame), 'auto': zero-copy where the driver offers it").choices(['auto', 'copy', 'zerocopy']);
}

function xdpModeOption() {
  return new Option('--xdp-mode <mode>', "where the XDP program of xdp: devices runs (open()'s xdpMode): 'native' (in the driver), 'generic' (after the kernel built an skb; any interface), 'auto': native where the driver has it").choices(['auto', 'native', 'generic']);
}

function deviceOptions(opts, more = {}) {
  const xdp = {};
  if (opts.xdpBind !== undefined) xdp.mode = opts.xdpBind;
  if (opts.xdpMode !== undefined) xdp.xdpMode = opts.xdpMode;
  return { linkTimeout: opts.linkTimeout, force: Boolean(opts.force), ...xdp, ...more };
}

// --workers: one worker thread per queue (pair), RSS spreading the flows over them.
function workersOption(description) {
  return new Option('-w, --workers <n>', `${description}, RSS over n RX queues (ixgbe, igb; AF_XDP: the interface's queues 0..n-1; 1..16); workers idle in interrupt on AF_XDP, else in backoff: see --idle`).argParser(integer('--workers', 1, 16));
}

function jsonOption(description = 'report as JSON, one object per line (start, rates each second, events, totals, end)') {
  return new Option('--json', description);
}

// --idle: what a loop does while no frames come (lib/device/idle.js).
function idleOption() {
  return new Option('--idle <mode>', "what to do while no frames come: 'interrupt' sleeps until the NIC interrupts (VFIO, the model, AF_XDP), 'backoff' sleeps on timers, 'spin' polls without pause (a whole core); default: interrupt where there is one (with --workers: on AF_XDP, each worker sleeping on its own sockets), else backoff")
    .choices(['backoff', 'spin', 'interrupt']);
}

// --idle-rate: the rate traffic may start at after idleness, which bounds a backoff sleep
// (lib/device/idle-bound.js).
function idleRateOption() {
  return new Option('--idle-rate <pps>', "idle 'backoff' sleeps at most half as long as the RX ring and packet buffer hold traffic that starts at this many frames/s (default: the highest rate carried, at least 1000000)")
    .argParser(integer('--idle-rate', 1, 1e9));
}

// generate's --idle: it sends on its own clock, so there is no interrupt to wait for.
function sendIdleOption() {
  return new Option('--idle <mode>', "software pacing: 'backoff' sleeps until just before each frame is due, 'spin' never sleeps (a whole core)")
    .choices(['backoff', 'spin']).default('backoff');
}

// A reader of stdout that goes away (`| head`) or a full disk: an error of the command,
// not an unhandled 'error' event (lib/loop/report.js).
watchStream(process.stdout);

// Runs an async command body; IxyErrors become "ixy: message" and exit code 1, as does a
// stdout that failed once the command was done.
function action(body) {
  return async (...args) => {
    try {
      await body(...args);
      await new Promise((resolve) => { setImmediate(resolve); }); // a failed write reports on a later tick
      const failure = streamFailure(process.stdout);
      if (failure) throw failure;
    } catch (err) {
      const message = err && err.code && err.message ? err.message : String(err && err.stack ? err.stack : err);
      process.stderr.write(`ixy: ${printable(message.split('\n')[0])}\n`);
      if (process.env.IXY_DEBUG && err && err.stack) process.stderr.write(`${err.stack}\n`);
      process.exitCode = 1;
    }
  };
}

program
  .name('ixy')
  .description('User-space driver for Intel 82599 (ixgbe) NICs, in JavaScript')
  .version(version)
  // Commander's own errors (unknown option, bad value) in the same one-line form as ours.
  .configureOutput({ outputError: (text, write) => write(text.replace(/^error: /, 'ixy: ')) });

program
  .command('forward')
  .description('forward packets between two ports in both directions, printing rates every second')
  .argument('<pci1>', 'PCI address of the first port, e.g. 0000:03:00.0, or xdp:<interface>[@queue] (AF_XDP)')
  .argument('<pci2>', 'PCI address of the second port')
  .addOption(batchOption())
  .addOption(secondsOption())
  .addOption(linkTimeoutOption())
  .addOption(forceOption())
  .addOption(xdpBindOption())
  .addOption(xdpModeOption())
  .addOption(workersOption('one worker thread per queue pair'))
  .addOption(jsonOption())
  .addOption(idleOption())
  .addOption(idleRateOption())
  .action(action(async (pci1, pci2, opts) => {
    if (opts.workers !== undefined) {
      if (opts.json) throw new InvalidArgumentError('--json does not go with --workers yet: the workers\' report is text only');
      const { forwardWorkers } = require('../lib/apps/forward-workers');
      await forwardWorkers(pci1, pci2, { workers: opts.workers, batchSize: opts.batch, seconds: opts.seconds, idle: opts.idle, stop, deviceOptions: deviceOptions(opts) });
      return;
    }
    const { forward } = require('../lib/apps/forward');
    await forward(pci1, pci2, { batchSize: opts.batch, seconds: opts.seconds, idle: opts.idle, stop, json: Boolean(opts.json), deviceOptions: deviceOptions(opts, { idleRate: opts.idleRate }) });
  }));

program
  .command('generate')
  .description('send IPv4 UDP or TCP frames with sequence numbers (flows, sizes, VLAN), evenly paced at a rate, printing rates every second')
  .argument('<pci>', 'PCI address of the port, or xdp:<interface>[@queue] (AF_XDP)')
  .addOption(batchOption())
  .option('-s, --size <bytes>', "frame size without FCS: N (60..1514), a range A-B, or 'imix' (7:4:1 of 60, 590, 1514)", '60')
  .option('-r, --rate <rate>', 'frames per second (10000, 10k, 100kpps, 1Mpps) or bits per second of frames with FCS (500Mbit, 1Gbit/s); 0: as fast as the NIC takes them', '0')
  .option('--pacing <how>', "how frames are spaced at a rate: 'nic' (the 82599's per-queue rate limiter, the driver sleeps), 'software', 'burst' (what fell due, on timers); 'auto': nic where it can, else software", 'auto')
  .option('--src-mac <mac>', 'source MAC, or a range aa:..:01-aa:..:ff', '02:00:00:00:00:01')
  .option('--dst-mac <mac>', 'destination MAC, or a range', 'ff:ff:ff:ff:ff:ff')
  .option('--src-ip <ip>', 'source IPv4 address, or a range a.b.c.d-a.b.c.e', '10.0.0.1')
  .option('--dst-ip <ip>', 'destination IPv4 address, or a range', '10.1.0.1')
  .option('--src-port <port>', 'source UDP/TCP port, or a range N-M', '1024')
  .option('--dst-port <port>', 'destination UDP/TCP port, or a range', '5000')
  .option('--tcp', 'TCP frames (PSH ACK, with checksum) instead of UDP')
  .option('--flows <n>', 'flows, varying 5-tuples: flow k takes the k-th value of each range (default: the longest range); without ranges, source IP and port count up', integer('--flows', 1, 65536))
  .option('--vlan <id>', 'an 802.1Q tag with this VLAN id (0..4095)', integer('--vlan', 0, 4095))
  .option('-n, --count <n>', 'stop after sending this many frames (0: no limit)', integer('--count', 0, 2 ** 32 - 1), 0)
  .addOption(secondsOption())
  .addOption(linkTimeoutOption())
  .addOption(forceOption())
  .addOption(xdpBindOption())
  .addOption(xdpModeOption())
  .addOption(jsonOption())
  .addOption(sendIdleOption())
  .action(action(async (pci, opts) => {
    const { generate } = require('../lib/apps/generate');
    const size = /^[0-9]+$/.test(opts.size) ? Number(opts.size) : opts.size;
    const rate = /^[0-9]+$/.test(opts.rate) ? Number(opts.rate) : opts.rate;
    await generate(pci, {
      batchSize: opts.batch, size, rate, count: opts.count, seconds: opts.seconds, idle: opts.idle, pacing: opts.pacing, stop, json: Boolean(opts.json),
      srcMac: opts.srcMac, dstMac: opts.dstMac, srcIp: opts.srcIp, dstIp: opts.dstIp, srcPort: opts.srcPort, dstPort: opts.dstPort,
      protocol: opts.tcp ? 'tcp' : 'udp', flows: opts.flows, vlan: opts.vlan === undefined ? null : opts.vlan,
      deviceOptions: deviceOptions(opts),
    });
  }));

program
  .command('replay')
  .description('send the frames of a pcap file byte for byte, at their recorded times (scaled) or as fast as the NIC takes them, once or in a loop')
  .argument('<pci>', 'PCI address of the port, or xdp:<interface>[@queue] (AF_XDP)')
  .argument('<file>', 'classic pcap file (microsecond or nanosecond timestamps), frames of 17..1514 bytes captured whole')
  .option('--speed <x>', 'play the recorded timing x times as fast (0.5: half speed)', '1')
  .option('--fast', 'ignore the timestamps: as fast as the NIC takes the frames')
  .option('--loop <n>', 'play the file n times (0: until Ctrl-C)', integer('--loop', 0, 2 ** 31 - 1), 1)
  .addOption(batchOption())
  .addOption(secondsOption('stop after this many seconds (0: when the file has been played)'))
  .addOption(linkTimeoutOption())
  .addOption(forceOption())
  .addOption(xdpBindOption())
  .addOption(xdpModeOption())
  .addOption(jsonOption())
  .action(action(async (pci, file, opts) => {
    const { replay } = require('../lib/apps/replay');
    await replay(pci, file, {
      speed: Number(opts.speed), fast: Boolean(opts.fast), loop: opts.loop, batchSize: opts.batch, seconds: opts.seconds, stop, json: Boolean(opts.json),
      deviceOptions: deviceOptions(opts),
    });
  }));

program
  .command('latency')
  .description('latency from one port to another with the NIC\'s IEEE 1588 timestamps: PTP probes among load traffic (82599 only)')
  .argument('<tx-pci>', 'PCI address of the port that sends')
  .argument('<rx-pci>', 'PCI address of the port that receives')
  .option('-r, --rate <rate>', 'load traffic, spaced by the NIC, as generate takes it: frames per second (50000, 50k, 1Mpps) or bits per second (500Mbit); 0: probes only', '0')
  .option('-s, --size <bytes>', 'load frame size without FCS (60..1514)', integer('--size', 60, 1514), 60)
  .addOption(secondsOption('how long to measure (0: until Ctrl-C)', 10))
  .addOption(jsonOption('print only the summary as one JSON object (count, p50, p99, p99.9, p99.99, max in microseconds)'))
  .option('--samples <file>', 'write every probe to a CSV file (probe, tx_ns, rx_ns, latency_ns)')
  .addOption(linkTimeoutOption())
  .addOption(forceOption())
  .action(action(async (txPci, rxPci, opts) => {
    const { latency } = require('../lib/apps/latency');
    await latency(txPci, rxPci, {
      rate: opts.rate, size: opts.size, seconds: opts.seconds, json: Boolean(opts.json), samplesFile: opts.samples || null,
      deviceOptions: deviceOptions(opts),
    });
  }));

program
  .command('pcap')
  .description('capture received frames to a pcap file (tcpdump, tshark and Wireshark read it)')
  .argument('<pci>', 'PCI address of the port, or xdp:<interface>[@queue] (AF_XDP)')
  .argument('<file>', "pcap file to write ('-': stdout)")
  .argument('[n]', 'stop after n frames kept, with a progress bar on a terminal (none or 0: no limit); a word that is not a number starts the expression')
  .argument('[expression...]', "capture only frames that match this filter, in tcpdump's language (pcap-filter(7)), its words joined as tcpdump joins them: ixy pcap PCI f.pcap udp and dst port 53")
  .option('--ns', 'nanosecond timestamps (the default)')
  .option('--us', 'microsecond timestamps, for tools that only read the original format')
  .option('-U, --packet-buffered', 'write every batch at once, not 1 MiB at a time (always so to a pipe), like tcpdump -U')
  .addOption(batchOption())
  .addOption(secondsOption())
  .option('--ring <n>', 'RX descriptors (power of two, 64..8192): more absorb longer pauses', integer('--ring', 64, 8192), 512)
  .addOption(linkTimeoutOption())
  .addOption(forceOption())
  .addOption(xdpBindOption())
  .addOption(xdpModeOption())
  .addOption(jsonOption('report as JSON, one object per line (start, rates each second, totals, end), on stdout unless the capture goes there'))
  .addOption(idleOption())
  .addOption(idleRateOption())
  .addOption(workersOption('capture each RX queue in its own worker thread into the one file'))
  .action(action(async (pci, file, n, expression, opts) => {
    if (opts.ns && opts.us) throw new InvalidArgumentError('--ns and --us exclude each other');
    // `ixy pcap PCI f.pcap udp` as tcpdump users write it: no count, the expression.
    const counted = n !== undefined && /^\d+$/.test(n);
    const words = n === undefined || counted ? expression : [n, ...expression];
    const options = {
      count: counted ? integer('n', 0, 2 ** 32 - 1)(n) : 0,
      filter: words.join(' '), batchSize: opts.batch, nanoseconds: !opts.us, seconds: opts.seconds, packetBuffered: Boolean(opts.packetBuffered), idle: opts.idle, stop,
    };
    if (opts.workers !== undefined) {
      if (opts.json) throw new InvalidArgumentError('--json does not go with --workers yet: the workers\' report is text only');
      const { pcapWorkers } = require('../lib/apps/pcap-workers');
      await pcapWorkers(pci, file, { ...options, workers: opts.workers, deviceOptions: deviceOptions(opts, { rxRingSize: opts.ring }) });
      return;
    }
    const { pcap } = require('../lib/apps/pcap');
    await pcap(pci, file, { ...options, json: Boolean(opts.json), deviceOptions: deviceOptions(opts, { rxRingSize: opts.ring, idleRate: opts.idleRate }) });
  }));

program
  .command('list')
  .description('list network devices, whether ixy supports them, their kernel interfaces and who holds them')
  .option('-a, --all', 'list every PCI device, not only network devices')
  .action(action(async (opts) => {
    require('../lib/apps/list').list({ all: Boolean(opts.all) });
  }));

program
  .command('bind')
  .description('give a NIC to vfio-pci (or --driver), taking it from its kernel driver, so that ixy drives it through VFIO')
  .argument('<pci>', 'PCI address of the port')
  .option('-d, --driver <name>', 'the kernel driver to bind it to', 'vfio-pci')
  .addOption(forceOption())
  .action(action(async (pci, opts) => {
    require('../lib/apps/bind').bindCommand(pci, { driver: opts.driver, force: Boolean(opts.force) });
  }));

program
  .command('unbind')
  .description('hand a NIC back to the kernel driver that matches it (undoes ixy bind)')
  .argument('<pci>', 'PCI address of the port')
  .addOption(forceOption())
  .action(action(async (pci, opts) => {
    require('../lib/apps/bind').unbindCommand(pci, { force: Boolean(opts.force) });
  }));

program
  .command('demo')
  .description('start the 82599 device model with two ports and traffic, and forward between them')
  .addOption(secondsOption('how long to forward (0: until Ctrl-C)', 5))
  .addOption(batchOption())
  .option('-r, --rate <pps>', 'frames per second the model offers on each port (0: as many as fit)', integer('--rate', 0, 1e9), 0)
  .option('--real', 'real traffic instead: ping and an HTTP download between two network namespaces whose TAPs are wired to the ports (root; ip, ping, curl, python3); with --seconds the set-up then stays that long')
  .action(action(async (opts, cmd) => {
    const { demo } = require('../lib/apps/demo');
    const given = (name) => cmd.getOptionValueSource(name) === 'cli';
    if (opts.real && (given('rate') || given('batch'))) throw new InvalidArgumentError('--real takes only --seconds: its traffic comes from ping and curl');
    await demo({ seconds: opts.real && !given('seconds') ? null : opts.seconds, batchSize: opts.batch, rate: opts.rate, real: Boolean(opts.real) });
  }));

program
  .command('model')
  .description('run the 82599 device model: ports a driver finds through IXY_PCI_ROOT, until Ctrl-C')
  .option('-p, --ports <n>', 'ports (1..8)', integer('--ports', 1, 8), 2)
  .option('-c, --config <commands>', "control commands to run first, separated by ';', e.g. 'source 0 rate=1000; sink 1'")
  .option('--dir <dir>', 'where the ports go: a new directory, made private (default: /dev/shm/ixy-model-PID-XXXXXX)')
  .action(action(async (opts) => {
    const { runModel } = require('../lib/apps/run-model');
    await runModel({ ports: opts.ports, config: opts.config || '', dir: opts.dir });
  }));

program.parseAsync(process.argv);
