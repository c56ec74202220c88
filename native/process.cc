// The addon's helpers for the process around the driver, apart from the driver path:
//   lockFile(fd)       flock(fd, LOCK_EX | LOCK_NB): true when taken, false when another
//                      open file holds it (lib/host/claim.js: one owner per device)
//   captureStderr(fn)  call fn() with file descriptor 2 pointing into a pipe and return
//                      what was written there (how lib/host/jit.js hears V8 refuse a flag)
//   readClock(out)     CLOCK_MONOTONIC in ms into out[0], a Float64Array (lib/loop/clock.js)
//   eventLoopHasWork() whether a turn of Node's event loop would find work (lib/loop/index.js)

#include <napi.h>

#include <cerrno>
#include <cstdio>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <time.h>
#include <sys/file.h>
#include <unistd.h>

#include "addon.h"
#include "uv.h"

namespace {

using ixy::ThrowErrno;

// captureStderr(fn): calls fn() with file descriptor 2 pointing into a pipe and returns what
// was written to it meanwhile, as a string. V8 answers a flag it does not know by printing
// "Error: unrecognized flag ..." to stderr (v8.setFlagsFromString returns nothing), and
// JavaScript cannot redirect a file descriptor: this lets lib/host/jit.js hear the answer and
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

// readClock(out): writes CLOCK_MONOTONIC, in milliseconds, into out[0] (a Float64Array of
// at least one element; lib/loop/clock.js makes it once) and returns nothing, so that
// nothing is allocated on the JS heap (in Node 20 performance.now() returns a new heap
// number; lib/loop/clock.js says why the busy loop must not). Node-API's C calls, not the
// C++ wrapper's: this is called thousands of times a second and each wrapper call adds checks.
napi_value ReadClock(napi_env env, napi_callback_info info) {
  size_t argc = 1;
  napi_value arg;
  napi_typedarray_type type;
  size_t length = 0;
  void* data = nullptr;
  if (napi_get_cb_info(env, info, &argc, &arg, nullptr, nullptr) != napi_ok || argc < 1 ||
      napi_get_typedarray_info(env, arg, &type, &length, &data, nullptr, nullptr) != napi_ok ||
      type != napi_float64_array || length < 1) {
    napi_throw_type_error(env, "EINVAL", "readClock(out): out must be a Float64Array of at least one element");
    return nullptr;
  }
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  static_cast<double*>(data)[0] = static_cast<double>(ts.tv_sec) * 1e3 + static_cast<double>(ts.tv_nsec) / 1e6;
  return nullptr;
}

// A timer of the loop's that is due by now_ms (CLOCK_MONOTONIC, ms). libuv's due_in counts
// from loop->time, which stands still while a callback runs, hence the deadline.
struct TimerCheck {
  uint64_t loop_ms;
  uint64_t now_ms;
  bool due;
};

void CheckTimer(uv_handle_t* handle, void* arg) {
  auto* check = static_cast<TimerCheck*>(arg);
  if (check->due || uv_handle_get_type(handle) != UV_TIMER || !uv_is_active(handle)) return;
  const uint64_t due_in = uv_timer_get_due_in(reinterpret_cast<uv_timer_t*>(handle));
  if (check->loop_ms + due_in <= check->now_ms) check->due = true;
}

// eventLoopHasWork(): true when Node's event loop has something to do: a timer due, or a
// file descriptor it watches ready (I/O, a signal, a worker's message, a thread-pool
// completion, a task V8 posted: each reaches libuv's epoll instance, which is itself
// readable then, so polling it takes nothing from libuv). The busy loop asks this every 10
// ms and gives the event loop a turn only when it is true. Returns true or false, which
// allocate nothing. Node's own queues (Immediates, promise callbacks, process.nextTick())
// are not libuv's and are not seen here.
napi_value EventLoopHasWork(napi_env env, napi_callback_info) {
  uv_loop_t* loop = nullptr;
  napi_value result;
  if (napi_get_uv_event_loop(env, &loop) != napi_ok || loop == nullptr) {
    napi_get_boolean(env, true, &result);
    return result;
  }
  TimerCheck check{uv_now(loop), uv_hrtime() / 1000000, false};
  uv_walk(loop, CheckTimer, &check);
  bool work = check.due;
  if (!work) {
    struct pollfd p = {uv_backend_fd(loop), POLLIN, 0};
    work = poll(&p, 1, 0) > 0;
  }
  napi_get_boolean(env, work, &result);
  return result;
}

}  // namespace

void ixy::InitProcess(Napi::Env env, Napi::Object exports) {
  exports.Set("captureStderr", Napi::Function::New(env, CaptureStderr));
  exports.Set("lockFile", Napi::Function::New(env, LockFile));
  napi_value read_clock;
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_function(env, "readClock", NAPI_AUTO_LENGTH, ReadClock, nullptr, &read_clock));
  exports.Set("readClock", Napi::Value(env, read_clock));
  napi_value has_work;
  NAPI_THROW_IF_FAILED_VOID(env, napi_create_function(env, "eventLoopHasWork", NAPI_AUTO_LENGTH, EventLoopHasWork, nullptr, &has_work));
  exports.Set("eventLoopHasWork", Napi::Value(env, has_work));
}
