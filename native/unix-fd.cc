// Handing an eventfd to another process, as the device model takes its interrupt lines
// (native/model/irqfd.c; lib/host/model-irq.js). Node cannot pass a file descriptor over a UNIX
// socket by itself:
//   eventFd()                 a new eventfd (non-blocking, close-on-exec)
//   sendFdLine(path, line, fd)  connect to the UNIX stream socket at `path`, send `line`
//                      (ending in a newline) with `fd` attached (SCM_RIGHTS), and return the
//                      one line the peer answers, without its newline (fd -1: no fd)
// The exchange blocks: the model answers within a millisecond or two. And waiting on fds
// without the event loop:
//   waitReadable(fds, ms)     sleeps in ppoll() until one of the fds in `fds` (an Int32Array,
//                      at most 64) is readable, at most `ms` (fractions kept); returns how
//                      many are (0: the time ran out, or a signal came)

#include <napi.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <fcntl.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "addon.h"

namespace {

using ixy::ThrowErrno;

Napi::Value EventFd(const Napi::CallbackInfo& info) {
  int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (fd < 0) {
    ThrowErrno(info.Env(), "cannot create an eventfd", errno);
    return info.Env().Undefined();
  }
  return Napi::Number::New(info.Env(), fd);
}

Napi::Value SendFdLine(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsString() || !info[1].IsString() || !info[2].IsNumber()) {
    Napi::TypeError::New(env, "sendFdLine(path, line, fd)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const std::string path = info[0].As<Napi::String>().Utf8Value();
  const std::string line = info[1].As<Napi::String>().Utf8Value() + "\n";
  const int passed = info[2].As<Napi::Number>().Int32Value();
  sockaddr_un addr = {};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof(addr.sun_path)) {
    ThrowErrno(env, "socket path too long: " + path, ENAMETOOLONG);
    return env.Undefined();
  }
  memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  // Every failure below closes the socket and throws: `fail(what, errno)`.
  int sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  auto fail = [&](const std::string& what, int err) {
    if (sock >= 0) close(sock);
    ThrowErrno(env, what + " " + path, err);
    return env.Undefined();
  };
  if (sock < 0 || connect(sock, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    return fail("cannot connect to", errno);
  }
  union {
    cmsghdr header;
    char space[CMSG_SPACE(sizeof(int))];
  } control = {};
  iovec iov = {const_cast<char*>(line.data()), line.size()};
  msghdr msg = {};
  msg.msg_iov = &iov;
  msg.msg_iovlen = 1;
  if (passed >= 0) {  // fd -1: the line alone
    msg.msg_control = control.space;
    msg.msg_controllen = sizeof(control.space);
    cmsghdr* c = CMSG_FIRSTHDR(&msg);
    c->cmsg_level = SOL_SOCKET;
    c->cmsg_type = SCM_RIGHTS;
    c->cmsg_len = CMSG_LEN(sizeof(int));
    memcpy(CMSG_DATA(c), &passed, sizeof(int));
  }
  // The fd goes with the first byte; a short send (the model's lines fit one) is finished
  // with send().
  for (size_t at = 0; at < line.size();) {
    ssize_t sent = at == 0 ? sendmsg(sock, &msg, MSG_NOSIGNAL) : send(sock, line.data() + at, line.size() - at, MSG_NOSIGNAL);
    if (sent < 0 && errno == EINTR) continue;
    if (sent < 0) return fail("cannot send to", errno);
    at += static_cast<size_t>(sent);
  }
  std::string reply;
  char buf[512];
  while (reply.find('\n') == std::string::npos) {
    ssize_t r = read(sock, buf, sizeof(buf));
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) return fail("no answer from", r == 0 ? ECONNRESET : errno);
    reply.append(buf, static_cast<size_t>(r));
  }
  close(sock);
  return Napi::String::New(env, reply.substr(0, reply.find('\n')));
}

// A loop polling AF_XDP rings sleeps here between polls that find nothing, with its
// thread's CPU left to the kernel's NAPI poll that fills them (lib/device/idle.js).
Napi::Value WaitReadable(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Int32Array fds = info[0].As<Napi::Int32Array>();
  const double ms = info[1].As<Napi::Number>().DoubleValue();
  constexpr size_t kMaxFds = 64;
  if (fds.ElementLength() > kMaxFds) {
    ThrowErrno(env, "waitReadable: more than 64 fds", EINVAL);
    return env.Undefined();
  }
  pollfd p[kMaxFds];
  const size_t n = fds.ElementLength();
  for (size_t i = 0; i < n; i++) p[i] = {fds[i], POLLIN, 0};
  const int64_t ns = ms > 0 ? static_cast<int64_t>(ms * 1e6) : 0;
  const timespec timeout = {static_cast<time_t>(ns / 1000000000), static_cast<long>(ns % 1000000000)};
  const int ready = ppoll(p, n, &timeout, nullptr);
  if (ready < 0 && errno != EINTR) {
    ThrowErrno(env, "cannot wait for readable fds (ppoll)", errno);
    return env.Undefined();
  }
  return Napi::Number::New(env, ready < 0 ? 0 : ready);
}

}  // namespace

namespace ixy {

void InitUnixFd(Napi::Env env, Napi::Object exports) {
  exports.Set("eventFd", Napi::Function::New(env, EventFd));
  exports.Set("sendFdLine", Napi::Function::New(env, SendFdLine));
  exports.Set("waitReadable", Napi::Function::New(env, WaitReadable));
}

}  // namespace ixy
