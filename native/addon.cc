// The ixy addon: the three things JavaScript cannot do by itself.
//
//   mapResource(path)  map a PCI BAR (sysfs resource0) and return it as an ArrayBuffer
//   allocDma(bytes)    allocate hugepage memory for DMA, return it with the physical
//                      address of each hugepage
//   free(arrayBuffer)  unmap either of the above now instead of at garbage collection
//
// Everything else (sysfs files, config space, the driver itself) is JavaScript.
// Errors are thrown as JavaScript Errors with a `code` property (the errno name, or an
// ixy code) so that the library can turn them into one-line messages.

#include <napi.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <mutex>
#include <string>
#include <unordered_map>

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <unistd.h>

namespace {

constexpr size_t kHugePageSize = 2 * 1024 * 1024;
constexpr const char* kHugeMount = "/mnt/huge";
constexpr long kHugetlbfsMagic = 0x958458f6;

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
  munmap(m->addr, m->size);
  m->addr = nullptr;  // the finalizer, when it runs, only deletes the record
  return true;
}

// mapResource(path): map the whole BAR file read-write and shared, as the device sees it.
Napi::Value MapResource(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsString()) {
    Napi::TypeError::New(env, "mapResource(path): path must be a string").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  std::string path = info[0].As<Napi::String>();
  int fd = open(path.c_str(), O_RDWR);
  if (fd < 0) {
    ThrowErrno(env, "cannot open " + path, errno);
    return env.Undefined();
  }
  struct stat st;
  if (fstat(fd, &st) < 0 || st.st_size <= 0) {
    int err = st.st_size <= 0 ? EINVAL : errno;
    close(fd);
    ThrowErrno(env, "cannot size " + path, err);
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

// allocDma(bytes): hugepage memory for descriptor rings and packet buffers.
// A file on hugetlbfs sized to whole hugepages, mapped shared (so the device model can map
// the same pages), locked so it never moves, unlinked at once so nothing is left behind if
// the process dies. Returns { buffer, phys } where phys[i] is the physical address of
// hugepage i. Hugepages are physically contiguous inside themselves, not with each other.
Napi::Value AllocDma(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber() || info[0].As<Napi::Number>().DoubleValue() <= 0) {
    Napi::TypeError::New(env, "allocDma(bytes): bytes must be a positive number").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const size_t want = static_cast<size_t>(info[0].As<Napi::Number>().DoubleValue());
  const size_t size = (want + kHugePageSize - 1) / kHugePageSize * kHugePageSize;

  struct statfs fs;
  if (statfs(kHugeMount, &fs) != 0 || fs.f_type != kHugetlbfsMagic) {
    ThrowCode(env, "hugetlbfs is not mounted at /mnt/huge: run 'sudo ./setup-hugetlbfs.sh'", "ENOHUGETLBFS");
    return env.Undefined();
  }

  static unsigned counter = 0;
  std::string path = std::string(kHugeMount) + "/ixy-" + std::to_string(getpid()) + "-" +
                     std::to_string(counter++);
  int fd = open(path.c_str(), O_CREAT | O_RDWR | O_EXCL, 0600);
  if (fd < 0) {
    ThrowErrno(env, "cannot create " + path, errno);
    return env.Undefined();
  }
  unlink(path.c_str());  // the open fd and later the mapping keep the pages alive
  if (ftruncate(fd, size) != 0) {
    int err = errno;
    close(fd);
    ThrowErrno(env, "cannot size DMA memory", err);
    return env.Undefined();
  }
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
  if (mlock(addr, size) != 0) {
    err = errno;
    munmap(addr, size);
    ThrowErrno(env, "cannot lock DMA memory", err);
    return env.Undefined();
  }
  memset(addr, 0, size);

  int pagemap = open("/proc/self/pagemap", O_RDONLY);
  if (pagemap < 0) {
    err = errno;
    munmap(addr, size);
    ThrowErrno(env, "cannot open /proc/self/pagemap", err);
    return env.Undefined();
  }
  Napi::Array phys = Napi::Array::New(env, size / kHugePageSize);
  for (size_t i = 0; i < size / kHugePageSize; i++) {
    uint64_t p = 0;
    if (!VirtToPhys(pagemap, static_cast<char*>(addr) + i * kHugePageSize, &p)) {
      close(pagemap);
      munmap(addr, size);
      ThrowCode(env, "cannot translate virtual to physical addresses (/proc/self/pagemap shows no "
                     "frame numbers): run as root",
                "ENOTROOT");
      return env.Undefined();
    }
    // Physical addresses fit a double exactly (well below 2^53).
    phys.Set(i, Napi::Number::New(env, static_cast<double>(p)));
  }
  close(pagemap);

  Napi::Object result = Napi::Object::New(env);
  result.Set("buffer", WrapMapping(env, addr, size));
  result.Set("phys", phys);
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

Napi::Object Init(Napi::Env env, Napi::Object exports) {
  exports.Set("mapResource", Napi::Function::New(env, MapResource));
  exports.Set("allocDma", Napi::Function::New(env, AllocDma));
  exports.Set("free", Napi::Function::New(env, Free));
  exports.Set("HUGE_PAGE_SIZE", Napi::Number::New(env, kHugePageSize));
  return exports;
}

}  // namespace

NODE_API_MODULE(ixy, Init)
