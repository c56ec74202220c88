// The ixy addon: the things JavaScript cannot do by itself.
//
//   mapResource(path, minBytes)  map a PCI BAR (sysfs resource0) and return it as an
//                      ArrayBuffer; refuses a symlink, a non-regular file, or one smaller
//                      than minBytes
//   allocDma(bytes)    allocate hugepage memory for DMA, return it with the physical
//                      address of each hugepage (null where this process may not know them)
//   vfio*              the VFIO ioctls, in vfio.cc
//   free(arrayBuffer)  unmap either of the above (or a vfioMapRegion) now instead of at
//                      garbage collection
//   guardDevice(bar, config, stopBits) / unguardDevice(id) / armSignals()
//                      the fatal-signal guard: stop registered devices from a signal
//                      handler, where no JavaScript can run (guard.cc)
//   eventFd() / sendFdLine(path, line, fd)
//                      an eventfd handed to the device model for its interrupts (unix-fd.cc)
//   lockFile(fd) / captureStderr(fn)
//                      a device lock for one owner per NIC (lib/host/claim.js) and hearing what
//                      V8 prints on stderr (lib/host/jit.js), in process.cc
//
// Everything else (sysfs files, config space, the driver itself) is JavaScript.
// Errors are thrown as JavaScript Errors with a `code` property (the errno name, or an
// ixy code) so that the library can turn them into one-line messages.

#include <napi.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include <fcntl.h>
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
using ixy::UnguardBar;

constexpr size_t kHugePageSize = 2 * 1024 * 1024;
constexpr const char* kHugeMount = "/mnt/huge";
constexpr long kHugetlbfsMagic = 0x958458f6;

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
  if (m->addr != nullptr) ixy::StopBeforeUnmap(m->addr);  // a queue pair's memory (teardown.cc)
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

// Forgets the mapping at addr and unmaps it; false if it was not one of ours.
bool ReleaseMapping(void* addr) {
  ixy::StopBeforeUnmap(addr);
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

}  // namespace

Napi::Value ixy::WrapMappedMemory(Napi::Env env, void* addr, size_t size) {
  Mapping* m = new Mapping{addr, size};
  {
    std::lock_guard<std::mutex> guard(mappings_lock);
    mappings[addr] = m;
  }
  return Napi::ArrayBuffer::New(env, addr, size, FinalizeMapping, m);
}

bool ixy::IsOurMapping(void* addr, size_t* size) {
  std::lock_guard<std::mutex> guard(mappings_lock);
  auto it = mappings.find(addr);
  if (it == mappings.end()) return false;
  *size = it->second->size;
  return true;
}

namespace {

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
  return ixy::WrapMappedMemory(env, addr, st.st_size);
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
constexpr size_t kMaxDmaBytes = size_t{1} << 32;

Napi::Value AllocDma(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber() || info[0].As<Napi::Number>().DoubleValue() <= 0) {
    Napi::TypeError::New(env, "allocDma(bytes): bytes must be a positive number").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const size_t want = static_cast<size_t>(info[0].As<Napi::Number>().DoubleValue());
  const size_t size = (want + kHugePageSize - 1) / kHugePageSize * kHugePageSize;
  // One allocation becomes one external ArrayBuffer, and Node refuses those over 4 GiB (20's
  // limit) by crashing in its finalizer bookkeeping rather than throwing: refuse first.
  if (size > kMaxDmaBytes) {
    ThrowCode(env, "cannot allocate " + std::to_string(size >> 20) + " MiB of DMA memory at once: at most " +
                   std::to_string(kMaxDmaBytes >> 20) + " MiB per allocation", "EINVAL");
    return env.Undefined();
  }
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
  result.Set("buffer", ixy::WrapMappedMemory(env, addr, size));
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
      Napi::TypeError::New(env, "free(buffer): not a buffer from mapResource, allocDma or vfioMapRegion").ThrowAsJavaScriptException();
      return env.Undefined();
    }
  }
  ab.Detach();  // first, so that no view can reach the memory once it is unmapped
  ReleaseMapping(addr);
  return env.Undefined();
}

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  ixy::InitVfio(env, exports);
  exports.Set("mapResource", Napi::Function::New(env, MapResource));
  exports.Set("allocDma", Napi::Function::New(env, AllocDma));
  exports.Set("free", Napi::Function::New(env, Free));
  ixy::InitGuard(env, exports);
  ixy::InitProcess(env, exports);
  ixy::InitUnixFd(env, exports);
  ixy::InitXdp(env, exports);
  ixy::InitTeardown(env, exports);
  exports.Set("HUGE_PAGE_SIZE", Napi::Number::New(env, kHugePageSize));
  return exports;
}

}  // namespace

NODE_API_MODULE(ixy, Init)
