// The fatal-signal guard of the ixy addon: stop every registered device's DMA from a
// signal handler, where no JavaScript can run (guardDevice, unguardDevice, armSignals; see
// lib/host/exit-guard.js). Apart from the driver path because a reader can skip it: it is the
// safety net for a process that dies, not how a NIC is driven.

#include <napi.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdint>
#include <cstring>
#include <string>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "addon.h"

namespace {

using ixy::IsOurMapping;
using ixy::ThrowCode;
using ixy::ThrowErrno;

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
// that stop its DMA (read-modify-write, in order), and an fd through which pread/pwrite
// clear the Bus Master bit: its sysfs `config` file opened at registration, or a duplicate
// of its VFIO device fd with the config region's offset.

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

// Clears the Bus Master bit of the config space read through fd at base (PCI 3.0, 6.2.2),
// if it is set. Returns 0 or the errno of the failed pread/pwrite. Async-signal-safe.
int ClearBusMaster(int fd, off_t base) {
  uint8_t command = 0;
  if (pread(fd, &command, 1, base + kPciCommand) != 1) return errno ? errno : EIO;
  if ((command & kPciCommandBusMaster) == 0) return 0;
  command &= static_cast<uint8_t>(~kPciCommandBusMaster);
  return pwrite(fd, &command, 1, base + kPciCommand) == 1 ? 0 : (errno ? errno : EIO);
}

// Async-signal-safe: volatile loads and stores to the BAR, pread/pwrite on the config fd.
void StopSlot(GuardSlot& slot) {
  for (int i = 0; i < slot.nbits; i++) {
    volatile uint32_t* reg = slot.bar + slot.bits[i].offset / 4;
    *reg = *reg & ~slot.bits[i].bits;
  }
  std::atomic_thread_fence(std::memory_order_seq_cst);
  if (slot.config_fd >= 0) (void)ClearBusMaster(slot.config_fd, slot.config_base);
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
}  // namespace

void ixy::UnguardBar(const void* addr) {
  for (int id = 0; id < kMaxGuarded; id++) {
    int state = guard_slots[id].state.load(std::memory_order_acquire);
    if (state != kSlotFree && state != kSlotFilling && guard_slots[id].bar == addr) Unguard(id);
  }
}

namespace {

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
// duplicate) whose config region starts at configOffset. bar: an ArrayBuffer from
// mapResource or vfioMapRegion, or null (a device stopped only by clearing Bus Master). stopBits: a Uint32Array of (offset, bits) pairs cleared in order.
Napi::Value GuardDevice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !(info[0].IsArrayBuffer() || info[0].IsNull()) || !(info[1].IsString() || info[1].IsNumber()) ||
      !info[2].IsTypedArray() || info[2].As<Napi::TypedArray>().TypedArrayType() != napi_uint32_array) {
    Napi::TypeError::New(env, "guardDevice(bar, config, stopBits[, configOffset]): bar an ArrayBuffer from mapResource or vfioMapRegion, or null, config the config file's path or a VFIO device fd, stopBits a Uint32Array")
        .ThrowAsJavaScriptException();
    return env.Undefined();
  }
  void* bar = nullptr;
  size_t bar_size = 0;
  if (info[0].IsArrayBuffer()) {
    bar = info[0].As<Napi::ArrayBuffer>().Data();
    if (bar == nullptr || !IsOurMapping(bar, &bar_size)) {
      Napi::TypeError::New(env, "guardDevice: bar is not a mapping from mapResource or vfioMapRegion").ThrowAsJavaScriptException();
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
  const int err = clear_bus_master ? ClearBusMaster(fd, base) : 0;
  close(fd);
  if (err != 0) ThrowErrno(env, "cannot clear Bus Master in the config space", err);
  return env.Undefined();
}

}  // namespace

void ixy::InitGuard(Napi::Env env, Napi::Object exports) {
  // The last net under lib/host/exit-guard.js's 'exit' listener, which another 'exit' listener
  // can skip (Node emits no later listener once one throws): exit() runs atexit handlers
  // whatever JavaScript did, so every device still registered (none after a clean exit)
  // stops there. Once per process, as the registry is; a worker's end calls no exit().
  static std::atomic<bool> at_exit{false};
  if (!at_exit.exchange(true)) atexit(StopAllGuarded);
  exports.Set("guardDevice", Napi::Function::New(env, GuardDevice));
  exports.Set("unguardDevice", Napi::Function::New(env, UnguardDevice));
  exports.Set("armSignals", Napi::Function::New(env, ArmSignals));
}
