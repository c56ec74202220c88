// AF_XDP through the kernel's ABI directly (no libbpf, libxdp or clang): the XDP program
// and its XSKMAP (bpf(2)), the BPF link that attaches it, and the XDP socket with its UMEM
// and four rings (linux/if_xdp.h). What lib/xdp/ needs and JavaScript cannot do:
//   xdpAttach(ifindex, skbMode, queues)  an XSKMAP of `queues` entries, the program, and a
//                      link attaching it in generic (skbMode) or native mode: { map, prog, link }
//   xdpSocket(ifindex, queue, umem, chunk, rxSize, txSize, bindFlags, sharedFd)  a bound
//                      XDP socket over the ArrayBuffer `umem` (or sharing sharedFd's UMEM): { fd,
//                      zerocopy, rx, tx, fill, comp }, each ring { buffer, producer, consumer,
//                      desc, flags } (byte offsets into its mapping)
//   xdpMapSet(map, key, fd) / xdpMapDelete(map, key)   the XSKMAP entry of a queue
//   xdpKickTx(fd) / xdpKickRx(fd)  the wakeups need_wakeup asks for: 0 or an errno
//   xdpStats(fd)        struct xdp_statistics as six numbers
//   closeFd(fd)
//   xdpAllocPlain(bytes)  an ArrayBuffer of plain anonymous pages (a UMEM without hugepages)
//   copyFrames(src, dst, plan, n)  n copies between two Uint8Arrays, plan[3i..3i+2] = source
//                      offset, destination offset, length (TX of frames from outside the UMEM)
// Errors carry the errno's name as code; lib/xdp/errors.js turns them into ixy's codes.

#include <napi.h>

#include <cerrno>
#include <cstring>
#include <string>

#include <linux/bpf.h>
#include <linux/if_link.h>
#include <linux/if_xdp.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "addon.h"

#ifndef AF_XDP
#define AF_XDP 44
#endif
#ifndef SOL_XDP
#define SOL_XDP 283
#endif

namespace {

using ixy::ThrowErrno;

long Bpf(int cmd, bpf_attr* attr) {
  return syscall(__NR_bpf, cmd, attr, sizeof(*attr));
}

bpf_insn Insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
  bpf_insn i = {};
  i.code = code;
  i.dst_reg = dst;
  i.src_reg = src;
  i.off = off;
  i.imm = imm;
  return i;
}

// The program: return bpf_redirect_map(&xskmap, ctx->rx_queue_index, XDP_PASS). The map's
// lookup fails for a queue without a socket, and then the flags (XDP_PASS) are the verdict:
// the kernel's stack gets every frame ixy did not ask for.
int LoadProgram(int mapFd, char* log, size_t logSize) {
  bpf_insn prog[] = {
      // r2 = *(u32 *)(r1 + offsetof(struct xdp_md, rx_queue_index))
      Insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, offsetof(xdp_md, rx_queue_index), 0),
      // r1 = the map (a 64-bit immediate: two instructions)
      Insn(BPF_LD | BPF_DW | BPF_IMM, BPF_REG_1, BPF_PSEUDO_MAP_FD, 0, mapFd),
      Insn(0, 0, 0, 0, 0),
      // r3 = XDP_PASS, the action when the map has no socket for this queue
      Insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_3, 0, 0, XDP_PASS),
      Insn(BPF_JMP | BPF_CALL, 0, 0, 0, BPF_FUNC_redirect_map),
      Insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0),
  };
  static const char kLicense[] = "GPL";
  bpf_attr attr = {};
  attr.prog_type = BPF_PROG_TYPE_XDP;
  attr.expected_attach_type = BPF_XDP;
  attr.insns = reinterpret_cast<uint64_t>(prog);
  attr.insn_cnt = sizeof(prog) / sizeof(prog[0]);
  attr.license = reinterpret_cast<uint64_t>(kLicense);
  attr.log_buf = reinterpret_cast<uint64_t>(log);
  attr.log_size = static_cast<uint32_t>(logSize);
  attr.log_level = 1;
  memcpy(attr.prog_name, "ixy_xsk", 8);
  return static_cast<int>(Bpf(BPF_PROG_LOAD, &attr));
}

Napi::Value XdpAttach(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int ifindex = info[0].As<Napi::Number>().Int32Value();
  const bool skb = info[1].As<Napi::Boolean>().Value();
  const uint32_t queues = info[2].As<Napi::Number>().Uint32Value();
  bpf_attr attr = {};
  attr.map_type = BPF_MAP_TYPE_XSKMAP;
  attr.key_size = 4;
  attr.value_size = 4;
  attr.max_entries = queues;
  memcpy(attr.map_name, "ixy_xskmap", 11);
  const int map = static_cast<int>(Bpf(BPF_MAP_CREATE, &attr));
  if (map < 0) {
    ThrowErrno(env, "cannot create an XSKMAP (bpf BPF_MAP_CREATE)", errno);
    return env.Undefined();
  }
  static char log[4096];
  log[0] = 0;
  const int prog = LoadProgram(map, log, sizeof(log));
  if (prog < 0) {
    const int err = errno;
    close(map);
    ThrowErrno(env, std::string("cannot load the XDP program (bpf BPF_PROG_LOAD") + (log[0] ? ", verifier: " + std::string(log) : "") + ")", err);
    return env.Undefined();
  }
  attr = {};
  attr.link_create.prog_fd = prog;
  attr.link_create.target_ifindex = ifindex;
  attr.link_create.attach_type = BPF_XDP;
  attr.link_create.flags = skb ? XDP_FLAGS_SKB_MODE : XDP_FLAGS_DRV_MODE;
  const int link = static_cast<int>(Bpf(BPF_LINK_CREATE, &attr));
  if (link < 0) {
    const int err = errno;
    close(prog);
    close(map);
    ThrowErrno(env, std::string("cannot attach the XDP program in ") + (skb ? "generic" : "native") + " mode (bpf BPF_LINK_CREATE)", err);
    return env.Undefined();
  }
  Napi::Object result = Napi::Object::New(env);
  result.Set("map", map);
  result.Set("prog", prog);
  result.Set("link", link);
  return result;
}

Napi::Value XdpMapUpdate(const Napi::CallbackInfo& info, bool remove) {
  Napi::Env env = info.Env();
  uint32_t key = info[1].As<Napi::Number>().Uint32Value();
  uint32_t value = remove ? 0 : info[2].As<Napi::Number>().Uint32Value();
  bpf_attr attr = {};
  attr.map_fd = info[0].As<Napi::Number>().Uint32Value();
  attr.key = reinterpret_cast<uint64_t>(&key);
  attr.value = reinterpret_cast<uint64_t>(&value);
  if (Bpf(remove ? BPF_MAP_DELETE_ELEM : BPF_MAP_UPDATE_ELEM, &attr) != 0 && !(remove && errno == ENOENT)) {
    ThrowErrno(env, "cannot update the XSKMAP entry of queue " + std::to_string(key), errno);
  }
  return env.Undefined();
}

Napi::Value XdpMapSet(const Napi::CallbackInfo& info) {
  return XdpMapUpdate(info, false);
}

Napi::Value XdpMapDelete(const Napi::CallbackInfo& info) {
  return XdpMapUpdate(info, true);
}

// One ring's mapping and where its fields are.
Napi::Object Ring(Napi::Env env, void* addr, size_t size, const xdp_ring_offset& off) {
  Napi::Object ring = Napi::Object::New(env);
  ring.Set("buffer", ixy::WrapMappedMemory(env, addr, size));
  ring.Set("producer", static_cast<double>(off.producer));
  ring.Set("consumer", static_cast<double>(off.consumer));
  ring.Set("desc", static_cast<double>(off.desc));
  ring.Set("flags", static_cast<double>(off.flags));
  return ring;
}

struct Mapped {
  void* addr = MAP_FAILED;
  size_t size = 0;
};

Napi::Value XdpSocket(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const int ifindex = info[0].As<Napi::Number>().Int32Value();
  const uint32_t queue = info[1].As<Napi::Number>().Uint32Value();
  const uint32_t chunk = info[3].As<Napi::Number>().Uint32Value();
  const uint32_t rxSize = info[4].As<Napi::Number>().Uint32Value();
  const uint32_t txSize = info[5].As<Napi::Number>().Uint32Value();
  const uint16_t bindFlags = static_cast<uint16_t>(info[6].As<Napi::Number>().Uint32Value());
  const int sharedFd = info[7].As<Napi::Number>().Int32Value();
  int fd = socket(AF_XDP, SOCK_RAW | SOCK_CLOEXEC, 0);
  Mapped maps[4];
  auto fail = [&](const std::string& what, int err) {
    for (Mapped& m : maps) {
      if (m.addr != MAP_FAILED) munmap(m.addr, m.size);
    }
    if (fd >= 0) close(fd);
    ThrowErrno(env, what, err);
    return env.Undefined();
  };
  if (fd < 0) return fail("cannot create an AF_XDP socket", errno);
  if (sharedFd < 0) {
    Napi::ArrayBuffer umem = info[2].As<Napi::ArrayBuffer>();
    xdp_umem_reg reg = {};
    reg.addr = reinterpret_cast<uint64_t>(umem.Data());
    reg.len = umem.ByteLength();
    reg.chunk_size = chunk;
    if (setsockopt(fd, SOL_XDP, XDP_UMEM_REG, &reg, sizeof(reg)) != 0) return fail("cannot register the UMEM (XDP_UMEM_REG)", errno);
  }
  // The fill ring as large as the RX ring, the completion ring as the TX ring.
  const int opts[4] = {XDP_RX_RING, XDP_TX_RING, XDP_UMEM_FILL_RING, XDP_UMEM_COMPLETION_RING};
  const uint32_t sizes[4] = {rxSize, txSize, rxSize, txSize};
  for (int i = 0; i < 4; i++) {
    if (setsockopt(fd, SOL_XDP, opts[i], &sizes[i], sizeof(sizes[i])) != 0) return fail("cannot size the XDP rings", errno);
  }
  xdp_mmap_offsets off = {};
  socklen_t len = sizeof(off);
  if (getsockopt(fd, SOL_XDP, XDP_MMAP_OFFSETS, &off, &len) != 0) return fail("cannot read the ring offsets (XDP_MMAP_OFFSETS)", errno);
  const xdp_ring_offset* offsets[4] = {&off.rx, &off.tx, &off.fr, &off.cr};
  const size_t descBytes[4] = {sizeof(xdp_desc), sizeof(xdp_desc), sizeof(uint64_t), sizeof(uint64_t)};
  const off_t pgoff[4] = {XDP_PGOFF_RX_RING, XDP_PGOFF_TX_RING, static_cast<off_t>(XDP_UMEM_PGOFF_FILL_RING), static_cast<off_t>(XDP_UMEM_PGOFF_COMPLETION_RING)};
  for (int i = 0; i < 4; i++) {
    maps[i].size = offsets[i]->desc + sizes[i] * descBytes[i];
    maps[i].addr = mmap(nullptr, maps[i].size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd, pgoff[i]);
    if (maps[i].addr == MAP_FAILED) return fail("cannot map an XDP ring", errno);
  }
  sockaddr_xdp sxdp = {};
  sxdp.sxdp_family = AF_XDP;
  sxdp.sxdp_ifindex = ifindex;
  sxdp.sxdp_queue_id = queue;
  sxdp.sxdp_flags = sharedFd < 0 ? bindFlags : XDP_SHARED_UMEM;
  sxdp.sxdp_shared_umem_fd = sharedFd < 0 ? 0 : sharedFd;
  if (bind(fd, reinterpret_cast<sockaddr*>(&sxdp), sizeof(sxdp)) != 0) return fail("cannot bind the AF_XDP socket to queue " + std::to_string(queue), errno);
  xdp_options xo = {};
  len = sizeof(xo);
  const bool zerocopy = getsockopt(fd, SOL_XDP, XDP_OPTIONS, &xo, &len) == 0 && (xo.flags & XDP_OPTIONS_ZEROCOPY);
  Napi::Object result = Napi::Object::New(env);
  result.Set("fd", fd);
  result.Set("zerocopy", zerocopy);
  const char* names[4] = {"rx", "tx", "fill", "comp"};
  for (int i = 0; i < 4; i++) result.Set(names[i], Ring(env, maps[i].addr, maps[i].size, *offsets[i]));
  return result;
}

// sendto() with nothing to send: the kernel takes the TX ring (copy mode: sends it now).
Napi::Value XdpKickTx(const Napi::CallbackInfo& info) {
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const int err = sendto(fd, nullptr, 0, MSG_DONTWAIT, nullptr, 0) < 0 ? errno : 0;
  return Napi::Number::New(info.Env(), err);
}

// recvfrom() with nothing to receive: the driver looks at the fill ring again.
Napi::Value XdpKickRx(const Napi::CallbackInfo& info) {
  const int fd = info[0].As<Napi::Number>().Int32Value();
  const int err = recvfrom(fd, nullptr, 0, MSG_DONTWAIT, nullptr, nullptr) < 0 ? errno : 0;
  return Napi::Number::New(info.Env(), err);
}

Napi::Value XdpStats(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  xdp_statistics s = {};
  socklen_t len = sizeof(s);
  if (getsockopt(info[0].As<Napi::Number>().Int32Value(), SOL_XDP, XDP_STATISTICS, &s, &len) != 0) {
    ThrowErrno(env, "cannot read the socket's statistics (XDP_STATISTICS)", errno);
    return env.Undefined();
  }
  const uint64_t v[6] = {s.rx_dropped, s.rx_invalid_descs, s.tx_invalid_descs, s.rx_ring_full, s.rx_fill_ring_empty_descs, s.tx_ring_empty_descs};
  Napi::Array out = Napi::Array::New(env, 6);
  for (uint32_t i = 0; i < 6; i++) out.Set(i, static_cast<double>(v[i]));
  return out;
}

// Plain pages for a UMEM where there are no hugepages: anonymous, populated, page-aligned.
Napi::Value XdpAllocPlain(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  const size_t size = static_cast<size_t>(info[0].As<Napi::Number>().DoubleValue());
  void* addr = mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (addr == MAP_FAILED) {
    ThrowErrno(env, "cannot map " + std::to_string(size >> 20) + " MiB for the UMEM", errno);
    return env.Undefined();
  }
  return ixy::WrapMappedMemory(env, addr, size);
}

Napi::Value CloseFd(const Napi::CallbackInfo& info) {
  close(info[0].As<Napi::Number>().Int32Value());
  return info.Env().Undefined();
}

Napi::Value CopyFrames(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  Napi::Uint8Array src = info[0].As<Napi::Uint8Array>();
  Napi::Uint8Array dst = info[1].As<Napi::Uint8Array>();
  Napi::Uint32Array plan = info[2].As<Napi::Uint32Array>();
  const uint32_t n = info[3].As<Napi::Number>().Uint32Value();
  if (static_cast<size_t>(n) * 3 > plan.ElementLength()) {
    Napi::RangeError::New(env, "copyFrames: the plan is shorter than n copies").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const uint32_t* p = plan.Data();
  for (uint32_t i = 0; i < n; i++, p += 3) {
    const size_t from = p[0], to = p[1], bytes = p[2];
    if (from + bytes > src.ByteLength() || to + bytes > dst.ByteLength()) {
      Napi::RangeError::New(env, "copyFrames: a copy outside its buffer").ThrowAsJavaScriptException();
      return env.Undefined();
    }
    memcpy(dst.Data() + to, src.Data() + from, bytes);
  }
  return env.Undefined();
}

}  // namespace

void ixy::InitXdp(Napi::Env env, Napi::Object exports) {
  exports.Set("xdpAttach", Napi::Function::New(env, XdpAttach));
  exports.Set("xdpSocket", Napi::Function::New(env, XdpSocket));
  exports.Set("xdpMapSet", Napi::Function::New(env, XdpMapSet));
  exports.Set("xdpMapDelete", Napi::Function::New(env, XdpMapDelete));
  exports.Set("xdpKickTx", Napi::Function::New(env, XdpKickTx));
  exports.Set("xdpKickRx", Napi::Function::New(env, XdpKickRx));
  exports.Set("xdpStats", Napi::Function::New(env, XdpStats));
  exports.Set("closeFd", Napi::Function::New(env, CloseFd));
  exports.Set("xdpAllocPlain", Napi::Function::New(env, XdpAllocPlain));
  exports.Set("copyFrames", Napi::Function::New(env, CopyFrames));
}
