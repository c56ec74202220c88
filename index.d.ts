// Type declarations for require('ixy'): the public library API (lib/index.js).
// A packet is a buffer id in a Mempool, never an object; a PacketBatch carries ids and
// lengths. docs/api.md ("Packets, batches and who owns a buffer") gives the rules of buffer ownership.

/** Every failure a user can cause: `code` says which (EBADADDR, ENODEV, EDOUBLEFREE, ...). */
export class IxyError extends Error {
  constructor(code: string, message: string);
  readonly code: string;
}

export interface MempoolOptions {
  /** Number of buffers, 1..1048576 (default 4096). */
  entries?: number;
  /** Bytes per buffer, a power of two from 64 to 2 MiB (default 2048). */
  bufferSize?: number;
  /** Check buffer ownership (default: IXY_DEBUG_BUFFERS=1 in the environment). */
  debug?: boolean;
}

/** Fixed-size packet buffers in DMA memory (hugepages). */
export class Mempool {
  constructor(options?: MempoolOptions);
  readonly entries: number;
  readonly bufferSize: number;
  /** buffers[id]: a view of buffer id's bytes, made once when the pool is created. */
  readonly buffers: Uint8Array[];
  /** One view over all buffers: byte k of buffer id is bytes[(id << bufferShift) + k]. */
  readonly bytes: Uint8Array;
  readonly bufferShift: number;
  /**
   * Physical addresses, two words per buffer: phys[2 * id] is the low half of buffer id's
   * address, phys[2 * id + 1] the high half. phys and freeIds are views into the driver's
   * index arena (lib/memory/arena.js).
   */
  readonly phys: Uint32Array;
  readonly freeIds: Uint32Array;
  readonly freeCount: number;
  readonly inUse: number;
  /** Buffer id's physical address. */
  physOf(id: number): number;
  /** A free buffer's id, or -1 when the pool is empty. */
  alloc(): number;
  free(id: number): void;
  /** Fills ids[0..n) with up to n buffers (at most ids.length); returns how many it got. */
  allocMany(ids: Uint32Array, n: number): number;
  /** Frees ids[from..to). */
  freeMany(ids: Uint32Array, from: number, to: number): void;
  /** Releases the DMA memory; counts stay readable. */
  close(): void;
}

/** A Mempool that throws EDOUBLEFREE / EUSEAFTERFREE instead of corrupting memory. */
export class CheckedMempool extends Mempool {
  /** 0: the pool's, 1: the application's, 2: handed to the NIC. */
  readonly owner: Uint8Array;
}

/** Buffer ids and lengths moving between an application and a queue; reused, never reallocated. */
export class PacketBatch {
  /**
   * status: keep each received frame's descriptor status word, for checksumOf().
   * hashes: keep each received frame's RSS hash, in `hashes`.
   */
  constructor(capacity?: number, pool?: Mempool | null, options?: { status?: boolean; hashes?: boolean });
  readonly capacity: number;
  /** Views into the driver's index arena (lib/memory/arena.js): usable while the batch is. */
  readonly ids: Uint32Array;
  readonly lengths: Uint32Array;
  /** With { status: true }: per received frame, its RX descriptor's status word as the NIC wrote it. */
  readonly status: Uint32Array | null;
  /**
   * With { hashes: true }: per received frame, the RSS hash the NIC computed (Toeplitz over
   * the IPv4 addresses and TCP/UDP ports; 0 when it hashed nothing, and always 0 with one RX
   * queue, where RSS is off). Filled without allocating.
   */
  readonly hashes: Uint32Array | null;
  count: number;
  /** How many of the first packets the last txBatch() took: ids[sent..count) are still yours. */
  sent: number;
  /** The pool every buffer of the batch belongs to (set by receive). */
  pool: Mempool | null;
  /** The bytes of packet i: a view of its whole buffer; the frame is the first lengths[i]. */
  data(i: number): Uint8Array;
  /**
   * The NIC's checksum verdict on received frame i: CHECKSUM_* bits, 0 when nothing was
   * checked. Frames with wrong checksums are delivered; this tells them apart. Needs a
   * batch made with { status: true } (throws EINVAL otherwise).
   */
  checksumOf(i: number): number;
  /**
   * Throws IxyError EINVAL unless count is within the capacity, every id is a buffer of
   * the batch's pool and every length within [minLength, the pool's buffer size].
   */
  checkForSend(minLength: number): void;
  /** Keeps, in order, the frames keep() accepts and frees the others at once; returns how many are left. */
  keepIf(keep: FilterPredicate): number;
  /** Frees packets [from, count) and empties the batch. */
  freeFrom(from?: number): void;
  /** Frees the packets the batch still owns, ids[sent..count), and empties it. */
  release(): void;
}

/** checksumOf() bits: the IPv4 header checksum was checked and is right / wrong. */
export const CHECKSUM_IP_GOOD: number;
export const CHECKSUM_IP_BAD: number;
/** checksumOf() bits: the TCP/UDP checksum was checked and is right / wrong. */
export const CHECKSUM_L4_GOOD: number;
export const CHECKSUM_L4_BAD: number;

export interface DeviceStats {
  rxPackets: number;
  rxBytes: number;
  txPackets: number;
  txBytes: number;
  /** Broken frames dropped: flagged by the NIC on a ring, or counted by its MAC (bad FCS, runts, oversize). */
  rxErrors: number;
  /** Frames dropped for want of room: no free descriptor, or a full packet buffer. */
  rxMissed: number;
  /**
   * Per RX queue, as the queue counted them: with RSS, how the flows spread. With
   * { workers: true }, the queue pairs' counts, and `dropped`: the queue's own drops.
   */
  rxQueues: { packets: number; bytes: number; dropped?: number }[];
  /** Per TX queue. */
  txQueues: { packets: number; bytes: number }[];
  /** Frames taken for sending that never left: still on a TX ring when it stopped or was reset after a hang. */
  txDropped: number;
}

export interface RxQueue {
  receive(batch: PacketBatch): number;
  readonly packets: number;
  readonly bytes: number;
  readonly errors: number;
}

export interface TxQueue {
  /**
   * Queues the batch; returns how many packets fit. Buffers of sent packets go back to
   * their pool when a quarter or less of the ring is free, or when the batch's pool has
   * fewer free buffers than the ring has descriptors. Unchecked: every id must be a buffer
   * of batch.pool and every length within [17, bufferSize] (batch.checkForSend() checks;
   * Device.txBatch() does it for you; frames straight from receive() always qualify).
   */
  send(batch: PacketBatch): number;
  /** Gives the buffers of every sent packet back to their pools now. */
  reclaim(): void;
  readonly packets: number;
  readonly bytes: number;
}

/**
 * What a polling loop does while no frames come (lib/device/idle.js): 'backoff' sleeps on timers
 * once its queues have been empty for 5 ms, longer the longer it is idle, at most half as
 * long as the NIC holds traffic starting at `idleRate` (lib/device/idle-bound.js), and returns to
 * full polling with the first frame; 'interrupt' sleeps until the NIC's receive interrupt
 * instead (a NIC driven through VFIO, the device model's, or an AF_XDP device's sockets, until
 * the kernel has frames for one; EUNSUPPORTED otherwise); 'spin' polls without
 * pause (a whole core, as benchmarks want). The default is 'interrupt' where every device
 * has interrupts, else 'backoff'.
 */
export type IdleMode = 'spin' | 'backoff' | 'interrupt';

export interface ReceiveOptions {
  /** Packets per batch, 1..4096 (default 32). */
  batchSize?: number;
  /** How long the iterator may poll before letting the event loop run, in ms (default 1). */
  sliceMs?: number;
  /** Keep each frame's descriptor status word, for batch.checksumOf() (default false). */
  status?: boolean;
  /** Keep each frame's RSS hash in batch.hashes (default false). */
  hashes?: boolean;
  /** Aborting it ends the loop at its next step (an aborted one: at once), as close() does. */
  signal?: AbortSignal;
  /** What the loop does while the queue is empty (default: open()'s idle, else the best the device has). */
  idle?: IdleMode;
  /** Each step hands out a view of the batch that throws ESTALEBATCH once its turn is over (default: open()'s debug). */
  debug?: boolean;
  /**
   * Hand out only the frames this accepts: a tcpdump filter expression (compiled with
   * compileFilter()) or a predicate. The others are freed as soon as they are received.
   */
  filter?: string | FilterPredicate | null;
}

/** A received frame, copied: nothing changes it after it was handed out. */
export interface Frame {
  /** A Node Buffer of exactly `length` bytes (typed here as its base, Uint8Array: no @types/node needed). */
  data: Uint8Array;
  length: number;
  /** When the driver took it off the ring: ms since 1970 with fractions (performance.timeOrigin + performance.now()). */
  timestamp: number;
}

export interface LinkEvent { up: boolean; /** Mb/s, 0 when down */ speed: number; text: string; }
export interface TxHangEvent { queue: number; /** frames dropped by the queue's reset */ dropped: number; text: string; }

/**
 * The iterator of dev.receive(): yields ONE reused batch, valid until the next step. At
 * the next step (and on break) the buffers it still owns (ids[sent..count)) are freed.
 */
export interface ReceiveIterator extends AsyncIterableIterator<PacketBatch> {
  next(): Promise<IteratorResult<PacketBatch, undefined>>;
  return(): Promise<IteratorResult<PacketBatch, undefined>>;
}

/**
 * What every ixy driver offers. An EventEmitter: 'link', 'txhang' and 'lost' (while anyone
 * listens, the device runs check() once a second on an unref'd timer).
 */
export class Device {
  readonly address: string;
  /** The driver's name, e.g. 'ixgbe'. */
  readonly driver: string;
  /**
   * AF_XDP devices (driver 'af_xdp'): how their sockets bound, 'copy' or 'zerocopy' (null
   * when opened with { workers: true }: the workers bind them). Undefined on other drivers.
   */
  readonly mode?: 'copy' | 'zerocopy' | null;
  /** AF_XDP devices: where their XDP program runs, 'native' or 'generic'. Undefined on other drivers. */
  readonly xdpMode?: 'native' | 'generic';
  readonly rxQueues: RxQueue[];
  readonly txQueues: TxQueue[];
  readonly pools: Mempool[];
  readonly stopped: boolean;
  readonly closed: boolean;
  /** 'aa:bb:cc:dd:ee:ff' */
  readonly mac: string;
  /** Mb/s; 0 while the link is down. */
  readonly linkSpeed: number;
  promiscuous: boolean;
  /** Receives up to batch.capacity frames; returns how many. */
  rxBatch(queue: number, batch: PacketBatch): number;
  /** Queues the batch's packets for sending; returns how many fit (also in batch.sent). */
  txBatch(queue: number, batch: PacketBatch): number;
  /** for await (const batch of dev.receive(0)) { ... } */
  receive(queue?: number, options?: ReceiveOptions): ReceiveIterator;
  /** for await (const f of dev.frames(0)) { ... }: each frame a copy. */
  frames(queue?: number, options?: ReceiveOptions): AsyncGenerator<Frame, void, undefined>;
  /** The same frames as an object-mode stream.Readable (typed by what it is iterated as). */
  createReadStream(queue?: number, options?: ReceiveOptions & { highWaterMark?: number }): AsyncIterable<Frame> & { destroy(error?: Error): void };
  /** EventEmitter's on/once/off, for the events below. */
  on(event: 'link', listener: (e: LinkEvent) => void): this;
  on(event: 'txhang', listener: (e: TxHangEvent) => void): this;
  on(event: 'lost', listener: (err: IxyError) => void): this;
  once(event: 'link' | 'txhang' | 'lost', listener: (e: any) => void): this;
  off(event: 'link' | 'txhang' | 'lost', listener: (e: any) => void): this;
  stats(): DeviceStats;
  /**
   * For long-running loops, about once a second: lines worth telling (link down/up, a TX
   * queue reset after a hang). Throws IxyError EDEVICELOST when the NIC is gone.
   */
  check(): string[];
  /** Stops the queues: the NIC touches no more memory. */
  stop(): void;
  /** Stops the device and frees its memory. Safe to call twice. */
  close(): void;
  /** ixgbe, igb opened with { workers: true }: what attachQueue() takes in a worker. */
  workerHandle(): WorkerHandle;
}

/** Options of Model.source(); each is the `source` command's option of that name. */
export interface ModelSourceOptions {
  /** Frames per second, 0 = as many as the RX rings take (default). */
  rate?: number;
  /** Frame length without FCS, 14..16000 (default 60; TCP frames need 54). */
  size?: number;
  /** Frames in all, then the source stops (default: endless). */
  count?: number;
  /** Flows, 1..65536 (default 1): frame n belongs to flow n % flows, or with zipf to a drawn one. */
  flows?: number;
  /** Ethernet destination: a MAC, a port index or 'broadcast' (default: the port's own MAC). */
  dst?: string | number;
  ipsum?: 'good' | 'bad';
  udpsum?: 'zero' | 'good' | 'bad';
  tcpsum?: 'good' | 'bad';
  fcs?: 'good' | 'bad';
  /** 'mixed': odd flows TCP, even flows UDP (default 'udp'). */
  proto?: 'udp' | 'tcp' | 'mixed';
  /** Flow 0's IPv4 source and destination address (default 10.0.PORT.1, 10.1.PORT.1). */
  sip?: string;
  dip?: string;
  /** Flow 0's ports (default 1024, 5000). */
  sport?: number;
  dport?: number;
  /** The fields to which flow f adds f (default ['sip', 'sport']); 'none' for none. */
  vary?: ('sip' | 'dip' | 'sport' | 'dport')[] | 'none';
  /** Zipf weights: flow f is drawn with weight 1/(f+1)^zipf (a fixed schedule, the same every run). */
  zipf?: number;
}

/**
 * How an AF_XDP socket binds (open()'s `mode`, the commands' --xdp-bind): 'zerocopy' (the
 * driver DMAs into the UMEM; EUNSUPPORTED where it cannot), 'copy' (the kernel copies each
 * frame, any interface), 'auto': zero-copy where the driver offers it, else copy.
 */
export type XdpBindMode = 'auto' | 'copy' | 'zerocopy';

/**
 * Where the XDP program of an AF_XDP device runs (open()'s `xdpMode`, the commands'
 * --xdp-mode): 'native' (in the driver, before an skb exists; EUNSUPPORTED where the driver
 * has no XDP), 'generic' (after the kernel built an skb, any interface, slower), 'auto':
 * native where the driver has it, else generic.
 */
export type XdpAttachMode = 'auto' | 'native' | 'generic';

export interface OpenOptions {
  /**
   * RX queues (default 1). With more than one, ixgbe programs RSS: flows spread over the
   * queues by the Toeplitz hash of their IPv4 addresses and TCP/UDP ports (the published
   * Microsoft/DPDK key, or rssKey), the redirection table naming queues 0..N-1 in turn.
   * ixgbe: at most 16, the queues the 82599's RETA can name (EINVAL above).
   * virtio-net: max(rxQueues, txQueues) queue pairs, more than one where the device offers
   * multiqueue (EUNSUPPORTED otherwise), with its RSS (same key, 128-entry table) where it
   * offers that, and the device's hash reports in batch.hashes where it offers those.
   */
  rxQueues?: number;
  txQueues?: number;
  /**
   * Descriptors per ring: a power of two, 64..8192 (default 512). ixgbe and igb rings of all
   * open devices share 4 MiB of DMA memory (16 bytes per descriptor): ENOMEM beyond it.
   */
  rxRingSize?: number;
  txRingSize?: number;
  /** ixgbe, igb: RX descriptors handed back to the NIC per RDT write, 1..rxRingSize/2 (default rxRingSize/4). */
  rxFreeThreshold?: number;
  /**
   * ixgbe, igb: SRRCTL.DROP_EN, an RX queue without a free descriptor drops at once instead
   * of holding frames in the packet buffer (default: with several RX queues of one thread;
   * queues of `workers` hold). AF_XDP: only true, what the kernel does (false: EUNSUPPORTED).
   */
  rxDropWhenFull?: boolean;
  /** Buffers per RX queue's mempool (default 4096). */
  mempoolEntries?: number;
  bufferSize?: number;
  /** Default true. */
  promiscuous?: boolean;
  /** How long to wait for link, in ms (default 10000). */
  linkTimeout?: number;
  /**
   * ixgbe, igb: the queues belong to worker threads. The device does the global init (and
   * RSS) but makes no queues; workerHandle() gives each worker what attachQueue() needs.
   */
  workers?: boolean;
  /**
   * ixgbe, with rxQueues above 1: the 40-byte Toeplitz key RSS hashes with (copied at
   * open(); another length is EINVAL). Default: Microsoft's published key.
   */
  rssKey?: Uint8Array | null;
  /**
   * AF_XDP devices ('xdp:<interface>') only: how their sockets bind (default 'auto'). Any
   * other device: EUNSUPPORTED.
   */
  mode?: XdpBindMode;
  /**
   * AF_XDP devices ('xdp:<interface>') only: where their XDP program runs (default 'auto').
   * Any other device: EUNSUPPORTED.
   */
  xdpMode?: XdpAttachMode;
  /** Once aborted, open() stops waiting for link and rejects with code EABORTED. */
  signal?: AbortSignal;
  /** Check buffer ownership (default: IXY_DEBUG_BUFFERS=1 in the environment). */
  debug?: boolean;
  /**
   * Take the NIC from the kernel even if its interface is up or has addresses or routes
   * (default false: EACTIVE).
   */
  force?: boolean;
  /** The default idle mode of this device's receive() loops (default: 'interrupt' through VFIO, on the model and on AF_XDP, else 'backoff'). */
  idle?: IdleMode;
  /**
   * Frames per second traffic may start at after idleness: bounds the sleeps of idle
   * 'backoff' (default: the highest rate the loop has carried, at least 1,000,000).
   */
  idleRate?: number;
}

/**
 * Opens a NIC by PCI address (e.g. '0000:03:00.0'); resolves once its link is up. The
 * process holds the NIC until close() or its death; another opener gets EBUSY. A kernel
 * interface's queues through AF_XDP: 'xdp:eth1' (queues 0..n-1 by rxQueues/txQueues) or
 * 'xdp:eth1@3' (queue 3), with options mode and xdpMode.
 */
export function open(address: string, options?: OpenOptions): Promise<Device>;

/** What a worker needs to attach a queue pair: plain data, postable as workerData. */
export interface WorkerHandle {
  address: string;
  /** The device's sysfs directory, resolved once by ixy.open(). */
  dir: string;
  /** How the device is reached: 'sysfs', 'model' (worker threads need one of these) or 'vfio'. */
  backend: 'sysfs' | 'model' | 'vfio';
  driver: 'ixgbe' | 'igb';
  /** Which thread owns each queue pair (shared between the threads). */
  owners: Int32Array;
  rxQueues: number;
  txQueues: number;
  rxRingSize: number;
  txRingSize: number;
  rxFreeThreshold: number;
  rxDropWhenFull: boolean;
  mempoolEntries: number;
  bufferSize: number;
  /** What each queue pair moved (lib/intel/pair-counts.js), shared between the threads. */
  counts: Float64Array;
}

/**
 * Queue pair i of a device opened with { workers: true }, driven by the thread that
 * attached it: its own BAR mapping, rings and mempool. Close it before the main thread
 * closes the device; a thread that ends without close() still stops its queues.
 */
export interface QueuePair {
  readonly address: string;
  readonly index: number;
  rxBatch(batch: PacketBatch): number;
  txBatch(batch: PacketBatch): number;
  /**
   * What the pair moved since it was attached; rxDropped: frames the NIC had no descriptor
   * for on this RX queue (its own drop counter, as of the last check()); txDropped: frames
   * taken for sending that the NIC never sent.
   */
  stats(): { rxPackets: number; rxBytes: number; txPackets: number; txBytes: number; rxDropped: number; rxErrors: number; txDropped: number };
  /**
   * About once a second: publishes the pair's drop counts to the device's stats() and
   * resets a hung TX queue (with the link up); returns what it found.
   */
  check(): Array<{ type: 'txhang'; queue: number; dropped: number; text: string }>;
  /** Stops both queues: the NIC then touches none of this thread's memory. */
  stop(): void;
  close(): void;
}

/**
 * In a worker thread: takes queue pair `index` (RX and TX queue `index`) of the device
 * whose workerHandle() this is. EBUSY when another thread owns it, ENODEV when the device
 * is not open in this process.
 */
export function attachQueue(handle: WorkerHandle, index: number): QueuePair;

export interface PciDevice {
  address: string;
  vendor: number;
  device: number;
  class: number;
  /** The bound kernel driver, or null. */
  driver: string | null;
  /** The kernel's network interfaces of the device (none once unbound). */
  interfaces: NetInterface[];
  /** The process that holds the device (ixy.open()), or null. */
  holder: { pid: number; command: string } | null;
}

export interface NetInterface {
  name: string;
  /** Administratively up (IFF_UP in its flags). */
  up: boolean;
  operstate: string;
  addresses: number;
  routes: number;
  /** Up, or has addresses or routes: ixy takes the device only with force. */
  active: boolean;
}

export function listDevices(): PciDevice[];

export interface BindResult {
  address: string;
  /** The driver the device had before, or null. */
  from: string | null;
  /** The driver it has now. */
  to: string | null;
}

/**
 * Binds the device to vfio-pci (or `driver`) through driver_override and drivers_probe,
 * like dpdk-devbind; EBUSY while an ixy process holds it, EACTIVE unless forced.
 */
export function bind(address: string, options?: { driver?: string; force?: boolean }): BindResult & {
  /** The device's IOMMU group number, or null. */
  iommuGroup: string | null;
  /** Other devices of the group bound to a host driver: VFIO opens none of the group until they are bound too. */
  groupPeers: { address: string; driver: string }[];
};

/** Hands the device back to the kernel driver that matches its IDs (undoes bind()). */
export function unbind(address: string, options?: { force?: boolean }): BindResult;

export interface PcapWriterOptions {
  /** Nanosecond timestamps (default true); false: microseconds. */
  nanoseconds?: boolean;
  /** Bytes kept of each frame (default 65535). */
  snaplen?: number;
  /** Bytes buffered before a write to the file (default 1 MiB). */
  bufferSize?: number;
  /**
   * Write the file header first (default true). false: only records, appended after a
   * header another writer of the same file descriptor wrote.
   */
  header?: boolean;
}

/** Writes classic pcap files (link type Ethernet), buffered. */
export class PcapWriter {
  /** A file name (created or truncated) or an open file descriptor. */
  constructor(target: string | number, options?: PcapWriterOptions);
  readonly frames: number;
  readonly bytes: number;
  /** Appends bytes[0..length) with a timestamp (seconds and nanoseconds since 1970, UTC). */
  write(bytes: Uint8Array, length: number, sec: number, nsec: number): void;
  /** Appends the batch's frames [from, count), all with the same timestamp. */
  writeBatch(batch: PacketBatch, sec: number, nsec: number, from?: number): void;
  flush(): void;
  close(): void;
}

export interface CaptureClockBase {
  sec: number;
  nsec: number;
  /** The monotonic clock (process.hrtime.bigint(), as a number) at the origin. */
  mono: number;
}

/**
 * Wall-clock time without allocating: now() updates sec and nsec in place. Clocks made from
 * the same base() tell the same time in every thread.
 */
export class CaptureClock {
  constructor(base?: CaptureClockBase | null);
  sec: number;
  nsec: number;
  now(): this;
  /** Plain data (for workerData) from which another thread's CaptureClock tells the same time. */
  base(): CaptureClockBase;
}

export interface PcapFrame {
  sec: number;
  nsec: number;
  /** Length on the wire; data may be shorter (snaplen). */
  length: number;
  data: Uint8Array;
}

export interface PcapFile {
  header: { nanoseconds: boolean; versionMajor: number; versionMinor: number; snaplen: number; linktype: number };
  frames: PcapFrame[];
}

/**
 * Reads a whole classic pcap file (either byte order and resolution): a file name, or a Buffer
 * or Uint8Array holding one. Refuses (EPCAP) a file of more than maxFrames frames (default 2^20).
 */
export function readPcap(source: string | Uint8Array, options?: { maxFrames?: number }): PcapFile;

/** Whether an Ethernet frame, bytes[0..length), passes a filter. Allocates nothing. */
export type FilterPredicate = (bytes: Uint8Array, length: number) => boolean;

/**
 * Compiles a capture filter in tcpdump's language (pcap-filter(7): `udp and dst port 53`,
 * `tcp[tcpflags] & tcp-syn != 0`, `vlan 100 and host 10.0.0.1`, ...) into a predicate that
 * keeps the frames tcpdump keeps. Throws IxyError EFILTER, with the column, for a bad one.
 */
export function compileFilter(expression: string): FilterPredicate & { readonly expression: string };

/**
 * Raises V8's inlining budget for the whole process (lib/host/jit.js), so that a tight loop of
 * rxBatch/txBatch compiles with the driver's receive and send inlined. Call once at start.
 * Returns the flags V8 refused (none on Node 20 to 26); the first refusal is told once on stderr.
 */
export function tuneJit(): string[];

/** Receive and send queues, as `work` gets them from warmUp(). */
export interface WarmUpQueues {
  receive(batch: PacketBatch): number;
  send(batch: PacketBatch): number;
}

/**
 * Runs `work(rxQueue, txQueue, direction)`, a program's per-batch function, on stand-in
 * ixgbe/igb queues (direction 0 from the first port to the second, 1 back) against a NIC played in memory (lib/warm-up/index.js), so that V8 has compiled it for
 * frames before the first real frame arrives. Call before opening the devices; close the
 * result when the program ends (freeing it earlier slows every typed array access).
 */
export function warmUp(
  work: (rxQueue: WarmUpQueues, txQueue: WarmUpQueues, direction: 0 | 1) => unknown,
  options?: { bufferSize?: number },
): { close(): void };

export interface RunOptions {
  /** [rxQueue, txQueue] pairs; work(rx, tx, i) is called for each, once per step. None: work() is called without arguments. */
  paths?: Array<[RxQueue | null, TxQueue | null]>;
  /** The open devices to watch (events, EDEVICELOST), report on and idle on. */
  devices: Device[];
  /** Stop after this many seconds (0: no limit). */
  seconds?: number;
  idle?: IdleMode;
  /** Print the per-second rate lines (default false). */
  report?: boolean;
  /** The reports as JSON lines (implies report). */
  json?: boolean;
  out?: { write(text: string): unknown };
  /** true (default): warm work up at the start; false: not; or what warmUp(work) returned, closed when the loop ends. */
  warmUp?: boolean | { close(): void };
  signal?: AbortSignal;
}

/**
 * The commands' loop for a program's per-batch function: slices between event-loop turns,
 * idle modes, warm-up, device watching, SIGINT/SIGTERM. Resolves with why it stopped.
 */
export function run(
  work: (rxQueue: RxQueue | null, txQueue: TxQueue | null, path: number) => boolean | void,
  options: RunOptions,
): Promise<'done' | 'signal' | 'aborted' | 'time'>;

export interface UdpFrameOptions {
  size?: number;
  dst?: string;
  src?: string;
  srcIp?: string;
  dstIp?: string;
  srcPort?: number;
  dstPort?: number;
  ttl?: number;
}

export interface Ipv4HeaderOptions {
  srcIp: string | number;
  dstIp: string | number;
  protocol?: number;
  totalLength: number;
  ttl?: number;
  id?: number;
}

/** Building and parsing Ethernet/IPv4/UDP in place. */
export namespace packet {
  const ETH_HEADER: 14;
  const IPV4_HEADER: 20;
  const UDP_HEADER: 8;
  const SEQ_OFFSET: 42;
  const MIN_FRAME: 60;
  const MAX_FRAME: 1514;
  const ETHERTYPE_IPV4: 0x0800;
  const ETHERTYPE_VLAN: 0x8100;
  const IPPROTO_ICMP: 1;
  const IPPROTO_TCP: 6;
  const IPPROTO_UDP: 17;
  const TCP_HEADER: 20;
  /** TCP header flags (FrameInfo.tcpFlags, writeTcpHeader's flags). */
  const TCP_FIN: 0x01;
  const TCP_SYN: 0x02;
  const TCP_RST: 0x04;
  const TCP_PSH: 0x08;
  const TCP_ACK: 0x10;
  const TCP_URG: 0x20;
  const TCP_ECE: 0x40;
  const TCP_CWR: 0x80;

  /** Results of parseFrame; make one and reuse it for every packet. */
  class FrameInfo {
    etherType: number;
    vlan: number;
    l3: number;
    protocol: number;
    ttl: number;
    srcIp: number;
    dstIp: number;
    l4: number;
    srcPort: number;
    dstPort: number;
    payload: number;
    payloadLength: number;
    /** TCP only: the header's flags (TCP_SYN | TCP_ACK ...); 0 for anything else. */
    tcpFlags: number;
  }

  /** Fills info from b[0..length); returns the IPv4 protocol, or -1 if not IPv4. */
  function parseFrame(b: Uint8Array, length: number, info: FrameInfo): number;
  function ipToString(ip: number): string;
  function macToString(b: Uint8Array, offset?: number): string;
  function parseMac(text: string): number[];
  function parseIpv4(text: string): number[];
  function internetChecksum(bytes: Uint8Array, offset: number, length: number): number;
  /** Writes a whole IPv4/UDP frame with sequence number 0; returns its size. */
  function writeUdpFrame(b: Uint8Array, options?: UdpFrameOptions): number;
  /** Writes the sequence number of the frame that starts at b[at] (default 0). */
  function writeSeq(b: Uint8Array, seq: number, at?: number): void;
  function readSeq(b: Uint8Array): number;
  function isValidUdp(b: Uint8Array, length: number): boolean;
  /** Each returns the offset after the header it wrote. */
  function writeEthernetHeader(b: Uint8Array, dst: string | ArrayLike<number>, src: string | ArrayLike<number>, etherType?: number): number;
  function writeIpv4Header(b: Uint8Array, offset: number, options: Ipv4HeaderOptions): number;
  function writeUdpHeader(b: Uint8Array, offset: number, srcPort: number, dstPort: number, length: number): number;
  /** A 20-byte TCP header (no options) with checksum 0; fill it with writeL4Checksum once the payload is in place. */
  function writeTcpHeader(b: Uint8Array, offset: number, options: TcpHeaderOptions): number;
  /** Computes and writes the TCP or UDP checksum of the IPv4 packet at b[l3] (pseudo-header included); returns it. */
  function writeL4Checksum(b: Uint8Array, l3: number): number;
  function swapMacs(b: Uint8Array): void;
}

export interface TcpHeaderOptions {
  srcPort: number;
  dstPort: number;
  seq?: number;
  ack?: number;
  /** Default TCP_SYN. */
  flags?: number;
  /** Default 65535. */
  window?: number;
}

/** The 82599 (ixgbe) driver; ixy.open() picks it for Intel 82599 device IDs. */
export class IxgbeDevice extends Device {
  static open(address: string, options?: OpenOptions): Promise<IxgbeDevice>;
}

/** The 82576/I350 (igb) driver; ixy.open() picks it for those Intel device IDs. */
export class IgbDevice extends Device {
  static open(address: string, options?: OpenOptions): Promise<IgbDevice>;
  /** The NIC's own good-packet/octet counters (GPRC, GPTC, GORC, GOTC) summed since open. */
  hardwareCounters(): { rxPackets: number; txPackets: number; rxBytes: number; txBytes: number };
}

/** The virtio-net driver (1af4:1000 legacy/transitional, 1af4:1041 modern); several queue pairs with VIRTIO_NET_F_MQ, RSS with VIRTIO_NET_F_RSS. */
export class VirtioDevice extends Device {
  static open(address: string, options?: OpenOptions): Promise<VirtioDevice>;
}

/** A port's truth as the model counts it (native/model/README.md, "stats"). */
export interface ModelPortStats {
  address: string;
  linkUp: boolean;
  rxOffered: number;
  rxDelivered: number;
  rxBytes: number;
  rxDropNoDesc: number;
  rxDropDisabled: number;
  rxDropFiltered: number;
  rxDropOversize: number;
  rxDropCrc: number;
  rxDropRunt: number;
  txFrames: number;
  txBytes: number;
  txDropBadLength: number;
  descErrors: number;
  sinkFrames: number;
  sinkSeqErrors: number;
  /** sink check=1: flows seen, and frames whose sequence number was not above their flow's last. */
  sinkFlows: number;
  sinkFlowErrors: number;
  /** Whether MRQC selects RSS, and frames delivered to RX queues 0..15. */
  rss: boolean;
  rxQueues: number[];
  sinkBadFrames: number;
  pcapFrames: number;
  /** The process whose hugepages the port's DMA uses, 0 for none. */
  dmaOwnerPid: number;
  busMaster: boolean;
  rxQueueActive: boolean;
  txQueuesActive: number;
  sourceSeq: number;
  sourceBacklog: number;
  loopMaxGapUs: number;
  dmaWaits: number;
  dmaAfterRelease: number;
  rxQueueReleased: boolean;
  txQueuesReleased: number;
  /** Microseconds the source was paused because the model itself was stopped. */
  sourcePausedUs: number;
  deviceId: string;
  removed: boolean;
  tap: string;
  tapRxFrames: number;
  tapRxBytes: number;
  tapTxFrames: number;
  tapTxBytes: number;
  tapTxDropped: number;
  rxLastNs: number;
  txLastNs: number;
  /** Interrupts sent, per MSI-X vector. */
  interrupts: number[];
  [counter: string]: number | boolean | string | number[];
}

/** The model's latency truth for one TX port (native/model/README.md, "Latency truth"). */
export interface ModelLatency {
  port: number;
  count: number;
  unmatched: number;
  minNs: number;
  meanNs: number;
  p50Ns: number;
  p99Ns: number;
  p999Ns: number;
  p9999Ns: number;
  maxNs: number;
  /** The non-empty buckets: [lowest ns, width in ns, frames]. */
  buckets: [number, number, number][];
}

/**
 * The 82599 device model (a separate process): fake PCI devices under `dir` (use it as
 * IXY_PCI_ROOT), wired to traffic sources, sinks, cables and pcap files.
 */
export class Model {
  /** config: control commands to run before the model starts, e.g. ['source 0 rate=1000', 'sink 1']. */
  static start(options?: { ports?: number; config?: string[]; dir?: string; device?: string | string[]; iommu?: string; binary?: string; args?: string[] }): Promise<Model>;
  /**
   * Connects to a model that runs already (started by another process, e.g. `ixy model`) by its
   * directory: its control socket is dir/control.sock unless given. IxyError ENOMODEL if none answers.
   */
  static attach(dir: string, options?: { socket?: string }): Promise<Model>;
  readonly pid: number;
  readonly dir: string;
  readonly socket: string;
  readonly addresses: string[];
  readonly ports: { address: string; mac: string }[];
  /** A traffic source into the port's RX (native/model/README.md, "Control protocol" and "Source frames"). */
  source(port: number, options?: ModelSourceOptions): Promise<unknown>;
  /** The port's RSS hash of an IPv4 tuple with the key in its RSSRK, and the queue its RETA names. */
  hash(port: number, src: string, dst: string, sport?: number, dport?: number): Promise<{ hash: number; queue: number }>;
  sourceOff(port: number): Promise<unknown>;
  sink(port: number, options?: { check?: boolean }): Promise<unknown>;
  cable(a: number, b: number): Promise<unknown>;
  /** Transmitted frames with their wire times; nanoseconds: the nanosecond pcap format. */
  pcapOut(port: number, file: string | null, options?: { nanoseconds?: boolean }): Promise<unknown>;
  /** The port's line: 'paced' (10 Gb/s, the default) or 'unlimited' (frames take no wire time). */
  wire(port: number, mode: 'paced' | 'unlimited'): Promise<unknown>;
  /** Starts (and clears) the latency truth on every port; latencyOff() stops it. */
  latencyOn(): Promise<unknown>;
  latencyOff(): Promise<unknown>;
  /** The histogram of the source frames that left `port`: RX write-back to TX fetch, in ns. */
  latency(port: number): Promise<ModelLatency>;
  pcapIn(port: number, file: string, options?: { loop?: boolean; rate?: number }): Promise<unknown>;
  link(port: number, up: boolean): Promise<unknown>;
  /** The port takes no TX descriptors for `ms` milliseconds (a TX hang, for watchdogs). */
  stall(port: number, ms: number): Promise<unknown>;
  /** Sends one raw control command (native/model/README.md) and resolves with its JSON reply; EMODEL if refused. */
  command(line: string): Promise<any>;
  /** Wires the port to TAP interface `ifname` (made with `ip tuntap`), in network namespace `netns` if given. */
  tap(port: number, ifname: string, options?: { netns?: string }): Promise<unknown>;
  tapOff(port: number): Promise<unknown>;
  clear(port: number): Promise<unknown>;
  stats(): Promise<ModelPortStats[]>;
  stats(port: number): Promise<ModelPortStats>;
  waitFor(port: number, predicate: (stats: ModelPortStats) => boolean, timeoutMs?: number): Promise<ModelPortStats>;
  /** Closes this process's connection to the model; the model runs on. */
  close(): void;
  /** Stops the model and removes its directory; an attached model is asked to quit. */
  stop(): Promise<unknown>;
}

/** The options of a FrameRecipe (and of a Generator, generate()): ranges are 'A-B'. */
export interface FrameOptions {
  /** Default 02:00:00:00:00:01; or a range aa:..:01-aa:..:ff. */
  srcMac?: string;
  /** Default ff:ff:ff:ff:ff:ff; or a range. */
  dstMac?: string;
  /** Default 10.0.0.1; or a range a.b.c.d-a.b.c.e. */
  srcIp?: string;
  /** Default 10.1.0.1; or a range. */
  dstIp?: string;
  /** Default 1024; or a range 'N-M'. */
  srcPort?: number | string;
  /** Default 5000; or a range 'N-M'. */
  dstPort?: number | string;
  /** 'udp' (default) or 'tcp' (PSH ACK, with its checksum). */
  protocol?: 'udp' | 'tcp';
  /** Flows; flow k takes the (k mod count)-th value of each range. Default: the longest range. */
  flows?: number;
  /** 60..1514 without FCS (default 60), 'A-B', or 'imix'. */
  size?: number | string;
  /** An 802.1Q tag with this VLAN id, 0..4095. */
  vlan?: number | null;
  /** IPv4 TTL (default 64). */
  ttl?: number;
}

/** Every flow's header bytes and a table of sizes, for a generator (lib/traffic/recipe.js). */
export class FrameRecipe {
  constructor(options?: FrameOptions);
  readonly flows: number;
  /** Frame sizes without FCS, used in turn. */
  readonly sizes: number[];
  /** Mean frame size without FCS. */
  readonly meanSize: number;
  /** Byte offset of the 32-bit big-endian sequence number (after the UDP or TCP header). */
  readonly seqAt: number;
}

/** Stamps and sends the frames `ixy generate` sends: frame k carries sequence number k. */
export class Generator {
  constructor(options?: FrameOptions & { recipe?: FrameRecipe; entries?: number });
  readonly recipe: FrameRecipe;
  /** Frames sent so far: the next frame's sequence number. */
  readonly seq: number;
  /** The pool whose buffers hold the frames. */
  readonly pool: Mempool;
  /** Fills batch with up to n stamped frames; returns how many. */
  fill(batch: PacketBatch, n: number): number;
  /** Sends up to n frames on txQueue through batch; returns how many went. */
  send(txQueue: TxQueue, batch: PacketBatch, n: number): number;
  /** Frees the pool: after the device that sent its frames is closed. */
  close(): void;
}

/** A rate: a number of frames per second, or text such as '10k', '1Mpps', '500Mbit', '1Gbit/s'. EINVAL otherwise. */
export function parseRate(rate: number | string): { pps: number } | { bps: number };

/** Frames at `pps`, evenly spaced from `start` (performance.now() milliseconds). */
export class SoftwarePacer {
  constructor(pps: number, options?: { start?: number; spin?: boolean });
  readonly start: number;
  /** When frame n is due, in performance.now() milliseconds. */
  dueAt(n: number): number;
  /** Blocks (sleeping, then spinning) until frame n is due, or until `limit`; returns the time it woke. */
  waitFor(n: number, limit?: number): number;
}

/** `ixy generate` as a function (docs/api.md, "Generating traffic"). */
export function generate(address: string, options?: FrameOptions & {
  batchSize?: number;
  /** 0 (default): as fast as the NIC takes them; else as parseRate() reads it. */
  rate?: number | string;
  count?: number;
  seconds?: number;
  pacing?: 'auto' | 'nic' | 'software' | 'burst';
  idle?: 'backoff' | 'spin';
  deviceOptions?: OpenOptions;
  out?: { write(text: string): unknown };
  json?: boolean;
  stop?: AbortSignal | null;
}): Promise<{ reason: string; sent: number; stats: DeviceStats; pacing: string | null }>;

/** `ixy replay` as a function: a pcap file's frames at their recorded times (or `fast`). */
export function replay(address: string, file: string, options?: {
  /** Scales the recorded gaps' pace (2: twice as fast). Default 1. */
  speed?: number;
  fast?: boolean;
  /** Times through the file, 0: until stopped. Default 1. */
  loop?: number;
  batchSize?: number;
  seconds?: number;
  deviceOptions?: OpenOptions;
  out?: { write(text: string): unknown };
  json?: boolean;
  stop?: AbortSignal | null;
}): Promise<{ reason: string; sent: number; stats: DeviceStats }>;
