// The ixy addon: the things JavaScript cannot do by itself.
//
//   mapResource(path, minBytes)  map a PCI BAR (sysfs resource0) and return it as an
//                      ArrayBuffer; refuses a symlink, a non-regular file, or one smaller
//                      than minBytes
//   allocDma(bytes)    allocate hugepage memory for DMA, return it with the physical
//                      address of each hugepage (null where this process may not know them)
//   vfio*              the VFIO ioctls, in vfio.cc
//   free(arrayBuffer)  unmap either of the above now instead of at garbage collection
//   guardDevice(bar, config, stopBits) / unguardDevice(id) / armSignals()
//                      the fatal-signal guard: stop registered devices from a signal
//                      handler, where no JavaScript can run (see below)
//   lockFile(fd)       flock(fd, LOCK_EX | LOCK_NB): true when taken, false when another
//                      open file holds it (lib/claim.js: one owner per device)
//   captureStderr(fn)  call fn() with file descriptor 2 pointing into a pipe and return
//                      what was written there (how lib/jit.js hears V8 refuse a flag)
//
// Everything else (sysfs files, config space, the driver itself) is JavaScript.
// Errors are thrown as JavaScript Errors with a `code` property (the errno name, or an
// ixy code) so that the library can turn them into one-line messages.

#include <napi.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <mutex>
#include <string>
#include <unordered_map>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "addon.h"

// glibc names MFD_HUGETLB but not the page-size flags (linux/memfd.h): log2(2 MiB) << 26.
#ifndef MFD_HUGE_2MB
#define MFD_HUGE_2MB (21U << 26)
#endif

namespace ixy {

// Throws a JS Error with message "what: strerror(errno)" and code = errno name.
void ThrowErrno(Napi::Env env, const std::string& what, int err) {
  Napi::Error e = Napi::Error::New(env, what + ": " + strerror(err));
  const char* name = strerrorname_np(err);
  e.Set("code", Napi::String::New(env, name ? name : "EIO"));
  e.Set("errno", Napi::Number::New(env, err));
  e.ThrowAsJavaScriptException();
}

void ThrowCode(Napi::Env env, const std::string& message, const char* code) {
  Napi::Error e = Napi::Error::New(env, message);
  e.Set("code", Napi::String::New(env, code));
  e.ThrowAsJavaScriptException();
}

}  // namespace ixy

namespace {

using ixy::ThrowCode;
using ixy::ThrowErrno;

using ixy::kHugePageSize;
constexpr const char* kHugeMount = "/mnt/huge";
constexpr long kHugetlbfsMagic = 0x958458f6;

// ---------------------------------------------------------------------------------------
// The fatal-signal guard.
//
// A NIC keeps doing DMA into the hugepages it was given until its queues are disabled or
// its Bus Master bit is cleared (PCI Local Bus Specification 3.0, 6.2.2: with bit 2 of the
// command register clear the device issues no memory requests). When the process dies
// those pages go back to the kernel and are handed to someone else, while the NIC goes on
// writing received frames into them. The JavaScript side stops devices on 'exit'; a signal
// that kills the process runs no JavaScript, so the stop is done here, from the handler.
//
// A handler may only call async-signal-safe functions (POSIX.1-2017, XSH 2.4.3): no
// allocation, no locks, no JavaScript. So each guarded device is a fixed slot, filled in
// normal context and published with one atomic store: the mapped BAR, the register bits
// that stop its DMA (read-modify-write, in order), and an fd of its sysfs `config` file
// opened at registration, through which pread/pwrite clear the Bus Master bit.

constexpr int kMaxGuarded = 64;
// ixgbe: RXCTRL, 64 RXDCTL, 64 TXDCTL, DMATXCTL = 130 pairs at most.
constexpr int kMaxStopBits = 160;
constexpr off_t kPciCommand = 0x04;           // PCI 3.0, 6.2.2 Command register
constexpr uint8_t kPciCommandBusMaster = 1 << 2;

enum SlotState : int { kSlotFree, kSlotFilling, kSlotLive, kSlotStopping, kSlotStopped };

struct StopBit {
  uint32_t offset;  // byte offset into the BAR, a multiple of 4
  uint32_t bits;    // bits to clear
};

struct GuardSlot {
  std::atomic<int> state{kSlotFree};
  volatile uint32_t* bar = nullptr;
  int config_fd = -1;
  off_t config_base = 0;  // where config space starts in config_fd (VFIO: region 7)
  int nbits = 0;
  StopBit bits[kMaxStopBits];
};

static_assert(std::atomic<int>::is_always_lock_free, "the handler needs lock-free atomics");
GuardSlot guard_slots[kMaxGuarded];

// Async-signal-safe: volatile loads and stores to the BAR, pread/pwrite on the config fd.
void StopSlot(GuardSlot& slot) {
  for (int i = 0; i < slot.nbits; i++) {
    volatile uint32_t* reg = slot.bar + slot.bits[i].offset / 4;
    *reg = *reg & ~slot.bits[i].bits;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (slot.config_fd >= 0) {
    uint8_t command = 0;
    if (pread(slot.config_fd, &command, 1, slot.config_base + kPciCommand) == 1 && (command & kPciCommandBusMaster)) {
      command &= static_cast<uint8_t>(~kPciCommandBusMaster);
      (void)!pwrite(slot.config_fd, &command, 1, slot.config_base + kPciCommand);
    }
  }
}

// Stops every live device once; a slot another thread's handler is stopping is skipped.
void StopAllGuarded() {
  for (GuardSlot& slot : guard_slots) {
    int expected = kSlotLive;
    if (slot.state.compare_exchange_strong(expected, kSlotStopping, std::memory_order_acquire)) {
      StopSlot(slot);
      slot.state.store(kSlotStopped, std::memory_order_release);
    }
  }
}

// Takes slot `id` out of the registry so that no handler touches its BAR any more; the
// caller may unmap the BAR afterwards. If a handler is stopping it right now (another
// thread is dying of a signal), waits until it is done. Returns the slot's config fd for
// the caller to close, or -1 if the slot was not in use.
int TakeSlot(int id) {
  GuardSlot& slot = guard_slots[id];
  for (;;) {
    int state = slot.state.load(std::memory_order_acquire);
    if (state == kSlotFree || state == kSlotFilling) return -1;
    if (state == kSlotStopping) {
      struct timespec ms = {0, 1000000};
      nanosleep(&ms, nullptr);
      continue;
    }
    if (slot.state.compare_exchange_strong(state, kSlotFilling, std::memory_order_acquire)) break;
  }
  const int fd = slot.config_fd;
  slot.config_fd = -1;
  slot.bar = nullptr;
  slot.nbits = 0;
  slot.state.store(kSlotFree, std::memory_order_release);
  return fd;
}

void Unguard(int id) {
  const int fd = TakeSlot(id);
  if (fd >= 0) close(fd);
}

// A BAR about to be unmapped must leave the registry first, whoever unmaps it.
void UnguardBar(const void* addr) {
  for (int id = 0; id < kMaxGuarded; id++) {
    int state = guard_slots[id].state.load(std::memory_order_acquire);
    if (state != kSlotFree && state != kSlotFilling && guard_slots[id].bar == addr) Unguard(id);
  }
}

// The signals that end a process whose program has not asked for them: the terminating
// ones a user or a supervisor sends, and the faults.
struct GuardedSignal {
  int number;
  const char* name;
};
constexpr GuardedSignal kGuardedSignals[] = {
    {SIGINT, "SIGINT"},   {SIGTERM, "SIGTERM"}, {SIGHUP, "SIGHUP"},
    {SIGQUIT, "SIGQUIT"}, {SIGSEGV, "SIGSEGV"}, {SIGBUS, "SIGBUS"},
    {SIGILL, "SIGILL"},   {SIGFPE, "SIGFPE"},   {SIGABRT, "SIGABRT"},
};

// The action each signal had before ours: written only while ours is not installed.
struct sigaction previous_action[NSIG];

// Node installs handlers of its own that are its default behaviour, not the program's:
// SIGINT and SIGTERM reset the terminal and re-raise the signal (node::SignalExit), and
// SIGSEGV/SIGBUS let V8 take WebAssembly out-of-bounds traps and otherwise die as with
// SIG_DFL (node::TrapWebAssemblyOrContinue). Both are exported by the node binary; where
// they are not (another embedder), only SIG_DFL counts as a default.
using SigactionFn = void (*)(int, siginfo_t*, void*);
SigactionFn node_signal_exit = nullptr;
SigactionFn node_wasm_trap = nullptr;

void LookUpNodeHandlers() {
  static bool done = false;
  if (done) return;
  done = true;
  node_signal_exit = reinterpret_cast<SigactionFn>(dlsym(RTLD_DEFAULT, "_ZN4node10SignalExitEiP9siginfo_tPv"));
  node_wasm_trap = reinterpret_cast<SigactionFn>(dlsym(RTLD_DEFAULT, "_ZN4node25TrapWebAssemblyOrContinueEiP9siginfo_tPv"));
}

// sa_handler and sa_sigaction share storage: compare the pointer whatever the flags say.
bool IsDefaultAction(const struct sigaction& sa) {
  if (sa.sa_handler == SIG_DFL) return true;
  if (sa.sa_handler == SIG_IGN) return false;
  return (node_signal_exit != nullptr && sa.sa_sigaction == node_signal_exit) ||
         (node_wasm_trap != nullptr && sa.sa_sigaction == node_wasm_trap);
}

void OnFatalSignal(int sig, siginfo_t* info, void* ucontext) {
  const int saved_errno = errno;
  const struct sigaction previous = previous_action[sig];
  if (node_wasm_trap != nullptr && previous.sa_sigaction == node_wasm_trap) {
    // V8 first: a WebAssembly bounds trap is handled there (it redirects the return address
    // in ucontext) and the program goes on with its devices running. Anything else makes
    // Node restore SIG_DFL and raise the signal, which stays pending until we return.
    node_wasm_trap(sig, info, ucontext);
    struct sigaction now;
    sigset_t pending;
    sigaction(sig, nullptr, &now);
    sigpending(&pending);
    if (now.sa_sigaction == OnFatalSignal && !sigismember(&pending, sig)) {
      errno = saved_errno;
      return;
    }
    StopAllGuarded();
    errno = saved_errno;
    return;
  }
  StopAllGuarded();
  // Back to the action the process had (SIG_DFL, or Node's own that ends the same way), and
  // the same signal again: blocked while we run, it is delivered as we return, so the
  // process dies of it as it would have without ixy (the exit status names the signal).
  // A fault (SIGSEGV, SIGBUS, SIGILL, SIGFPE) would also recur at the faulting instruction.
  sigaction(sig, &previous, nullptr);
  raise(sig);
  errno = saved_errno;
}

// armSignals(): installs the handler for each guarded signal whose action is the default
// (see IsDefaultAction). A handler the program installed, libuv's for a JavaScript
// process.on(signal) listener among them, or SIG_IGN, is left alone: that program decides
// what the signal means (and may close its devices). Idempotent; call again after the last
// JavaScript listener of a signal is removed (libuv then sets SIG_DFL). Returns the names
// of the signals the guard now has.
Napi::Value ArmSignals(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  LookUpNodeHandlers();
  Napi::Array armed = Napi::Array::New(env);
  uint32_t n = 0;
  for (const GuardedSignal& s : kGuardedSignals) {
    struct sigaction current;
    if (sigaction(s.number, nullptr, &current) != 0) continue;
    if (current.sa_sigaction != OnFatalSignal) {
      if (!IsDefaultAction(current)) continue;
      previous_action[s.number] = current;
      struct sigaction ours;
      memset(&ours, 0, sizeof(ours));
      ours.sa_sigaction = OnFatalSignal;
      ours.sa_flags = SA_SIGINFO | SA_ONSTACK;  // SA_ONSTACK: a stack overflow still gets here if there is an alternate stack
      sigfillset(&ours.sa_mask);
      if (sigaction(s.number, &ours, nullptr) != 0) continue;
    }
    armed.Set(n++, Napi::String::New(env, s.name));
  }
  return armed;
}

bool IsOurMapping(void* addr, size_t* size);

// The sysfs config file at `path`, opened read-write, or -1 with a JS error thrown.
int OpenConfigFile(Napi::Env env, const std::string& path) {
  int fd = open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) {
      ThrowCode(env, path + " is a symbolic link; sysfs makes none there: refusing to follow it", "EDEVFILE");
    } else {
      ThrowErrno(env, "cannot open " + path, err);
    }
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
    close(fd);
    ThrowCode(env, path + " is not a regular file as sysfs makes it: refusing to use it", "EDEVFILE");
    return -1;
  }
  return fd;
}

// guardDevice(bar, config, stopBits[, configOffset]): registers a device; returns its id for
// unguardDevice. config: the sysfs config file's path, or a VFIO device fd (kept as a
// duplicate) whose config region starts at configOffset. bar: an ArrayBuffer from mapResource, or null (a device stopped only by
// clearing Bus Master). stopBits: a Uint32Array of (offset, bits) pairs cleared in order.
Napi::Value GuardDevice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !(info[0].IsArrayBuffer() || info[0].IsNull()) || !(info[1].IsString() || info[1].IsNumber()) ||
      !info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array) {
    Napi::TypeError::New(env, "guardDevice(bar, config, stopBits[, configOffset]): bar an ArrayBuffer from mapResource or null, config the config file's path or a VFIO device fd, stopBits a Uint32Array")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  void* bar = nullptr;
  size_t bar_size = 0;
  if (info[0].IsArrayBuffer()) {
    bar = info[0].As<Napi::ArrayBuffer>().Data();
    if (bar == nullptr || !IsOurMapping(bar, &bar_size)) {
      Napi::TypeError::New(env, "guardDevice: bar is not a mapping from mapResource").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  Napi::Uint32Array pairs = info[2].As<Napi::Uint32Array>();
  const size_t count = pairs.ElementLength() / 2;
  if (pairs.ElementLength() % 2 != 0 || count > static_cast<size_t>(kMaxStopBits) || (bar == nullptr && count > 0)) {
    Napi::RangeError::New(env, "guardDevice: stopBits must be at most " + std::to_string(kMaxStopBits) +
                                   " (offset, bits) pairs, and none without a bar").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  for (size_t i = 0; i < count; i++) {
    const uint32_t offset = pairs[2 * i];
    if (offset % 4 != 0 || static_cast<size_t>(offset) + 4 > bar_size) {
      Napi::RangeError::New(env, "guardDevice: register offset " + std::to_string(offset) + " is not an aligned offset inside the BAR")
          .ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  int fd = -1;
  off_t config_base = 0;
  if (info[1].IsNumber()) {
    // A VFIO device fd: config space is its region at byte `configOffset`.
    fd = fcntl(info[1].As<Napi::Number>().Int32Value(), F_DUPFD_CLOEXEC, 0);
    if (fd < 0) {
      ThrowErrno(env, "cannot keep the VFIO device's fd", errno);
      return env.Undefined();
    }
    if (info.Length() >= 4 && info[3].IsNumber()) config_base = static_cast<off_t>(info[3].As<Napi::Number>().DoubleValue());
  } else {
    fd = OpenConfigFile(env, info[1].As<Napi::String>());
    if (fd < 0) return env.Undefined();
  }
  for (int id = 0; id < kMaxGuarded; id++) {
    GuardSlot& slot = guard_slots[id];
    int expected = kSlotFree;
    if (!slot.state.compare_exchange_strong(expected, kSlotFilling, std::memory_order_acquire)) continue;
    slot.bar = static_cast<volatile uint32_t*>(bar);
    slot.config_fd = fd;
    slot.config_base = config_base;
    slot.nbits = static_cast<int>(count);
    for (size_t i = 0; i < count; i++) slot.bits[i] = StopBit{pairs[2 * i], pairs[2 * i + 1]};
    slot.state.store(kSlotLive, std::memory_order_release);  // from here a handler may use it
    return Napi::Number::New(env, id);
  }
  close(fd);
  ThrowCode(env, "more than " + std::to_string(kMaxGuarded) + " devices open at once: close some first", "EBUSY");
  return env.Undefined();
}

// unguardDevice(id, clearBusMaster): the device is no longer stopped by a signal; its
// config fd is closed. With clearBusMaster, Bus Master is cleared through that fd first:
// the file opened when the device was, whatever became of the path or of IXY_PCI_ROOT
// since. Throws (after unguarding) if that write fails.
Napi::Value UnguardDevice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "unguardDevice(id, clearBusMaster): id must be a number").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const int id = info[0].As<Napi::Number>().Int32Value();
  if (id < 0 || id >= kMaxGuarded) {
    Napi::RangeError::New(env, "unguardDevice(id): no such id").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const bool clear_bus_master = info.Length() >= 2 && info[1].ToBoolean().Value();
  const off_t base = guard_slots[id].config_base;  // TakeSlot leaves it as it was
  const int fd = TakeSlot(id);
  if (fd < 0) return env.Undefined();
  int err = 0;
  if (clear_bus_master) {
    uint8_t command = 0;
    if (pread(fd, &command, 1, base + kPciCommand) != 1) {
      err = errno ? errno : EIO;
    } else if (command & kPciCommandBusMaster) {
      command &= static_cast<uint8_t>(~kPciCommandBusMaster);
      if (pwrite(fd, &command, 1, base + kPciCommand) != 1) err = errno ? errno : EIO;
    }
  }
  close(fd);
  if (err != 0) ThrowErrno(env, "cannot clear Bus Master in the config space", err);
  return env.Undefined();
}

// An ArrayBuffer over mmap'd memory. The finalizer unmaps it unless free() did already:
// free() detaches the buffer, and a detached buffer's finalizer must not unmap again.
// A table from address to mapping lets free() tell the finalizer that the work is done.
struct Mapping {
  void* addr;
  size_t size;
};

std::mutex mappings_lock;
std::unordered_map<void*, Mapping*> mappings;

void FinalizeMapping(Napi::Env /*env*/, void* /*data*/, Mapping* m) {
  {
    std::lock_guard<std::mutex> guard(mappings_lock);
    if (m->addr != nullptr) {
      mappings.erase(m->addr);
      UnguardBar(m->addr);
      munmap(m->addr, m->size);
    }
  }
  delete m;
}

Napi::Value WrapMapping(Napi::Env env, void* addr, size_t size) {
  Mapping* m = new Mapping{addr, size};
  {
    std::lock_guard<std::mutex> guard(mappings_lock);
    mappings[addr] = m;
  }
  return Napi::ArrayBuffer::New(env, addr, size, FinalizeMapping, m);
}

// Forgets the mapping at addr and unmaps it; false if it was not one of ours.
bool ReleaseMapping(void* addr) {
  std::lock_guard<std::mutex> guard(mappings_lock);
  auto it = mappings.find(addr);
  if (it == mappings.end()) return false;
  Mapping* m = it->second;
  mappings.erase(it);
  UnguardBar(m->addr);
  munmap(m->addr, m->size);
  m->addr = nullptr;  // the finalizer, when it runs, only deletes the record
  return true;
}

bool IsOurMapping(void* addr, size_t* size) {
  std::lock_guard<std::mutex> guard(mappings_lock);
  auto it = mappings.find(addr);
  if (it == mappings.end()) return false;
  *size = it->second->size;
  return true;
}

// mapResource(path, minBytes): map the whole BAR file read-write and shared, as the device
// sees it. The file is opened without following a symlink in its last component (the
// caller resolved the directory): sysfs has no links there, and a planted one would make a
// root process map and write some other file. It must be a regular file (sysfs resource
// files are) of at least minBytes, the size of the register range the driver touches.
Napi::Value MapResource(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "mapResource(path): path must be a string").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string path = info[0].As<Napi::String>();
  double min_bytes = 1;
  if (info.Length() >= 2 && info[1].IsNumber()) min_bytes = info[1].As<Napi::Number>().DoubleValue();
  if (min_bytes < 1) min_bytes = 1;
  // O_NONBLOCK: a FIFO planted there must not hang the open; fstat refuses it below.
  int fd = open(path.c_str(), O_RDWR | O_NOFOLLOW | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) {
    int err = errno;
    if (err == ELOOP) {
      ThrowCode(env, path + " is a symbolic link; sysfs makes none there: refusing to follow it (check what created the device directory)",
                "EDEVFILE");
    } else {
      ThrowErrno(env, "cannot open " + path, err);
    }
    return env.Undefined();
  }
  struct stat st;
  if (fstat(fd, &st) < 0) {
    int err = errno;
    close(fd);
    ThrowErrno(env, "cannot size " + path, err);
    return env.Undefined();
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    ThrowCode(env, path + " is not a regular file as sysfs makes it: refusing to map it", "EDEVFILE");
    return env.Undefined();
  }
  if (static_cast<double>(st.st_size) < min_bytes) {
    close(fd);
    ThrowCode(env, path + " has " + std::to_string(st.st_size) + " bytes, fewer than the " +
                       std::to_string(static_cast<uint64_t>(min_bytes)) +
                       " the driver's registers need: is this the right device?",
              "EDEVFILE");
    return env.Undefined();
  }
  void* addr = mmap(nullptr, st.st_size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  int err = errno;
  close(fd);  // the mapping keeps the file referenced
  if (addr == MAP_FAILED) {
    ThrowErrno(env, "cannot mmap " + path, err);
    return env.Undefined();
  }
  return WrapMapping(env, addr, st.st_size);
}

// Physical address of the page holding `virt`, from /proc/self/pagemap: one 64-bit entry
// per 4 KiB page, bits 0-54 the page frame number, bit 63 "present". Without
// CAP_SYS_ADMIN the kernel reports frame number 0: that is an error, never an address.
bool VirtToPhys(int pagemap, const void* virt, uint64_t* phys) {
  const uint64_t page = static_cast<uint64_t>(sysconf(_SC_PAGESIZE));
  const uint64_t v = reinterpret_cast<uintptr_t>(virt);
  uint64_t entry = 0;
  if (pread(pagemap, &entry, sizeof(entry), (v / page) * sizeof(entry)) != sizeof(entry)) return false;
  const uint64_t pfn = entry & ((1ULL << 55) - 1);
  if ((entry & (1ULL << 63)) == 0 || pfn == 0) return false;
  *phys = pfn * page + (v % page);
  return true;
}

// A hugetlbfs file of `size` bytes, already unlinked, or -1 with a JS error thrown. The file
// lives in /mnt/huge (where the device model finds the pages of its clients); a user who
// may not write there gets an anonymous hugetlbfs file from memfd_create instead.
int OpenHugeFile(Napi::Env env, size_t size) {
  static unsigned counter = 0;
  struct statfs fs;
  bool mounted = statfs(kHugeMount, &fs) == 0 && fs.f_type == kHugetlbfsMagic;
  int fd = -1;
  int err = 0;
  if (mounted) {
    std::string path = std::string(kHugeMount) + "/ixy-" + std::to_string(getpid()) + "-" + std::to_string(counter++);
    fd = open(path.c_str(), O_CREAT | O_RDWR | O_EXCL | O_CLOEXEC, 0600);
    err = errno;
    if (fd >= 0) unlink(path.c_str());  // the open fd and later the mapping keep the pages alive
  }
  if (fd < 0 && (!mounted || err == EACCES || err == EPERM)) {
    fd = memfd_create("ixy-dma", MFD_CLOEXEC | MFD_HUGETLB | MFD_HUGE_2MB);
    if (fd < 0 && !mounted) {
      ThrowCode(env, "hugetlbfs is not mounted at /mnt/huge: run 'sudo ./setup-hugetlbfs.sh'", "ENOHUGETLBFS");
      return -1;
    }
    err = errno;
  }
  if (fd < 0) {
    ThrowErrno(env, "cannot create a hugepage file in " + std::string(kHugeMount), err);
    return -1;
  }
  if (ftruncate(fd, size) != 0) {
    err = errno;
    close(fd);
    if (err == EINVAL || err == ENOMEM) {
      ThrowCode(env, "not enough free hugepages for " + std::to_string(size >> 20) +
                     " MiB of DMA memory: reserve more with 'sudo ./setup-hugetlbfs.sh PAGES'",
                "ENOHUGEPAGES");
    } else {
      ThrowErrno(env, "cannot size DMA memory", err);
    }
    return -1;
  }
  return fd;
}

// allocDma(bytes): hugepage memory for descriptor rings and packet buffers.
// A hugetlbfs file sized to whole hugepages, mapped shared (so the device model can map
// the same pages), unlinked at once so nothing is left behind if the process dies.
// Returns { buffer, phys } where phys[i] is the physical address of hugepage i, or
// phys = null when this process may not read physical addresses (not root): then only an
// IOMMU (VFIO) can give the device addresses for it. Hugepages are physically contiguous
// inside themselves, not with each other.
Napi::Value AllocDma(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber() || info[0].As<Napi::Number>().DoubleValue() <= 0) {
    Napi::TypeError::New(env, "allocDma(bytes): bytes must be a positive number").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const size_t want = static_cast<size_t>(info[0].As<Napi::Number>().DoubleValue());
  const size_t size = (want + kHugePageSize - 1) / kHugePageSize * kHugePageSize;
  int fd = OpenHugeFile(env, size);
  if (fd < 0) return env.Undefined();
  // hugetlbfs reserves the pages at mmap time: ENOMEM here means not enough free hugepages.
  void* addr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, 0);
  int err = errno;
  close(fd);
  if (addr == MAP_FAILED) {
    if (err == ENOMEM) {
      ThrowCode(env, "not enough free hugepages for " + std::to_string(size >> 20) +
                     " MiB of DMA memory: reserve more with 'sudo ./setup-hugetlbfs.sh PAGES'",
                "ENOHUGEPAGES");
    } else {
      ThrowErrno(env, "cannot mmap DMA memory", err);
    }
    return env.Undefined();
  }
  // Hugepages are never swapped out; mlock only makes that explicit, so a locked-memory
  // limit that refuses it (a normal user's) is not an error.
  (void)mlock(addr, size);
  memset(addr, 0, size);

  Napi::Object result = Napi::Object::New(env);
  result.Set("buffer", WrapMapping(env, addr, size));
  result.Set("phys", env.Null());
  int pagemap = open("/proc/self/pagemap", O_RDONLY | O_CLOEXEC);
  if (pagemap < 0) return result;
  Napi::Array phys = Napi::Array::New(env, size / kHugePageSize);
  bool known = true;
  for (size_t i = 0; i < size / kHugePageSize && known; i++) {
    uint64_t p = 0;
    known = VirtToPhys(pagemap, static_cast<char*>(addr) + i * kHugePageSize, &p);
    // Physical addresses fit a double exactly (well below 2^53).
    phys.Set(i, Napi::Number::New(env, static_cast<double>(p)));
  }
  close(pagemap);
  if (known) result.Set("phys", phys);
  return result;
}

// free(arrayBuffer): release a mapping now. The buffer is detached first, so every view on
// it reads as empty afterwards instead of touching unmapped memory.
Napi::Value Free(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsArrayBuffer()) {
    Napi::TypeError::New(env, "free(buffer): buffer must be an ArrayBuffer").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  Napi::ArrayBuffer ab = info[0].As<Napi::ArrayBuffer>();
  if (ab.IsDetached()) return env.Undefined();
  void* addr = ab.Data();
  {
    std::lock_guard<std::mutex> guard(mappings_lock);
    if (mappings.count(addr) == 0) {
      Napi::TypeError::New(env, "free(buffer): not a buffer from mapResource or allocDma").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  ab.Detach();  // first, so that no view can reach the memory once it is unmapped
  ReleaseMapping(addr);
  return env.Undefined();
}

// captureStderr(fn): calls fn() with file descriptor 2 pointing into a pipe and returns what
// was written to it meanwhile, as a string. V8 answers a flag it does not know by printing
// "Error: unrecognized flag ..." to stderr (v8.setFlagsFromString returns nothing), and
// JavaScript cannot redirect a file descriptor: this lets lib/jit.js hear the answer and
// tell the user in its own words. Whatever another thread writes to stderr during the call
// lands here too, so fn must be short. The pipe holds 64 KiB; past that writes fail (the
// write end is non-blocking) instead of blocking the process on itself. If fn throws, the
// exception is passed on once stderr is restored.
Napi::Value CaptureStderr(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsFunction()) {
    Napi::TypeError::New(env, "captureStderr(fn): fn must be a function").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC | O_NONBLOCK) != 0) {
    ThrowErrno(env, "captureStderr: pipe", errno);
    return env.Undefined();
  }
  fflush(stderr);
  // A process started with fd 2 closed gets it closed again afterwards.
  const int saved = fcntl(STDERR_FILENO, F_DUPFD_CLOEXEC, 3);
  if (saved < 0 && errno != EBADF) {
    const int err = errno;
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    ThrowErrno(env, "captureStderr: dup", err);
    return env.Undefined();
  }
  if (dup2(pipe_fds[1], STDERR_FILENO) < 0) {
    const int err = errno;
    if (saved >= 0) close(saved);
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    ThrowErrno(env, "captureStderr: dup2", err);
    return env.Undefined();
  }
  info[0].As<Napi::Function>().Call({});  // a throw leaves the exception pending, see below
  fflush(stderr);
  if (saved >= 0) {
    dup2(saved, STDERR_FILENO);
    close(saved);
  } else {
    close(STDERR_FILENO);
  }
  close(pipe_fds[1]);
  std::string text;
  char chunk[4096];
  ssize_t n;
  while ((n = read(pipe_fds[0], chunk, sizeof(chunk))) > 0) text.append(chunk, static_cast<size_t>(n));
  close(pipe_fds[0]);
  if (env.IsExceptionPending()) return env.Undefined();
  return Napi::String::New(env, text);
}

// lockFile(fd): an exclusive flock on fd's open file, without waiting. The kernel drops it
// when the last descriptor of that open file closes, and so with the process, however it
// dies. Returns false when another open file holds it; throws on any other error.
Napi::Value LockFile(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "lockFile(fd): fd must be a number").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const int fd = info[0].As<Napi::Number>().Int32Value();
  int rc;
  do {
    rc = flock(fd, LOCK_EX | LOCK_NB);
  } while (rc != 0 && errno == EINTR);
  if (rc == 0) return Napi::Boolean::New(env, true);
  if (errno == EWOULDBLOCK) return Napi::Boolean::New(env, false);
  ThrowErrno(env, "flock", errno);
  return env.Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  ixy::InitVfio(env, exports);
  exports.Set("mapResource", Napi::Function::New(env, MapResource));
  exports.Set("allocDma", Napi::Function::New(env, AllocDma));
  exports.Set("free", Napi::Function::New(env, Free));
  exports.Set("guardDevice", Napi::Function::New(env, GuardDevice));
  exports.Set("unguardDevice", Napi::Function::New(env, UnguardDevice));
  exports.Set("armSignals", Napi::Function::New(env, ArmSignals));
  exports.Set("captureStderr", Napi::Function::New(env, CaptureStderr));
  exports.Set("lockFile", Napi::Function::New(env, LockFile));
  exports.Set("HUGE_PAGE_SIZE", Napi::Number::New(env, kHugePageSize));
  return exports;
}

}  // namespace

namespace ixy {

Napi::Value WrapMappedMemory(Napi::Env env, void* addr, size_t size) { return WrapMapping(env, addr, size); }

}  // namespace ixy

NODE_API_MODULE(ixy, Init)
