// The VFIO ioctls (Linux Documentation/driver-api/vfio.rst), for a device bound to vfio-pci.
//
//   vfioOpenDevice(group, address)   the device's fd; joins its IOMMU group to the process's
//                      container first (one container per process, like DPDK's default)
//   vfioReleaseGroup(group)          take the group out of the container once none of its
//                      devices is open, so that another process may have it; true when the
//                      container is left empty (its DMA mappings went with the last group)
//   vfioRegionInfo(fd, index)        { offset, size } of region `index` (the BARs
//                      are regions 0-5, config space is region 7)
//   vfioMapRegion(fd, index, minBytes)  mmap a BAR region: an ArrayBuffer like mapResource's
//   vfioMapDma(buffer, offset, bytes, iova)  let the device reach those bytes of `buffer`
//                      at I/O virtual address `iova` through the IOMMU (read and write)
//   vfioUnmapDma(iova, bytes)        take that back
//   vfioIrqCount(fd, index)          how many vectors interrupt type `index` has (MSI-X: 2,
//                      MSI: 1)
//   vfioEnableIrqs(fd, index, count) route vectors 0..count-1 to new eventfds; returns them
//   vfioDisableIrqs(fd, index)       route them nowhere again
//   new FdWatcher(fd, callback[, counted])  calls callback() from the event loop whenever
//                      fd is readable, between start() and stop(); only a started watcher
//                      keeps the process alive. close(). counted (the default): fd is an
//                      eventfd, whose count is read (reset) before the callback; false: fd
//                      is read by no one here (an AF_XDP socket, readable while its RX ring
//                      holds frames: the caller stops the watcher in the callback, or it
//                      fires again at every turn of the loop). The fd stays the caller's.
//
// The IOMMU translates every address the device uses: it can reach only what was mapped
// here, so a wrong descriptor address faults instead of writing someone else's memory.
// When the process dies the kernel closes the fds, which resets the device and drops the
// mappings. lib/host/vfio.js is the JavaScript side (group lookup, IOVAs, messages).

#include <napi.h>

#include <cerrno>
#include <cstring>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include <fcntl.h>
#include <linux/vfio.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include "addon.h"
#include "uv.h"

namespace {

using ixy::ThrowCode;
using ixy::ThrowErrno;

int container_fd = -1;
std::map<int, int> group_fds;  // IOMMU group number -> its open fd (one open per group)

// The process's container, opened on first use.
int Container(Napi::Env env) {
  if (container_fd >= 0) return container_fd;
  int fd = open("/dev/vfio/vfio", O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == ENOENT) {
      ThrowCode(env, "/dev/vfio/vfio does not exist: load the vfio-pci module ('modprobe vfio-pci')", "ENOVFIO");
    } else {
      ThrowErrno(env, "cannot open /dev/vfio/vfio", err);
    }
    return -1;
  }
  if (ioctl(fd, VFIO_GET_API_VERSION) != VFIO_API_VERSION) {
    close(fd);
    ThrowCode(env, "the kernel's VFIO API version is not the one ixy was built for", "ENOVFIO");
    return -1;
  }
  if (ioctl(fd, VFIO_CHECK_EXTENSION, VFIO_TYPE1_IOMMU) <= 0) {
    close(fd);
    ThrowCode(env, "VFIO has no type 1 IOMMU here: boot with the IOMMU on (intel_iommu=on or amd_iommu=on)", "ENOIOMMU");
    return -1;
  }
  container_fd = fd;
  return fd;
}

// The fd of IOMMU group `group`, attached to the container.
int Group(Napi::Env env, int group) {
  auto it = group_fds.find(group);
  if (it != group_fds.end()) return it->second;
  int container = Container(env);
  if (container < 0) return -1;
  std::string path = "/dev/vfio/" + std::to_string(group);
  int fd = open(path.c_str(), O_RDWR | O_CLOEXEC);
  if (fd < 0) {
    int err = errno;
    if (err == EACCES || err == EPERM) {
      ThrowCode(env, "no permission to open " + path + ": grant it to this user (e.g. 'chown USER " + path + "')", "EVFIOPERM");
    } else if (err == EBUSY) {
      ThrowCode(env, path + " is open in another process", "EBUSY");
    } else {
      ThrowErrno(env, "cannot open " + path, err);
    }
    return -1;
  }
  vfio_group_status status = {};
  status.argsz = sizeof(status);
  if (ioctl(fd, VFIO_GROUP_GET_STATUS, &status) != 0) {
    int err = errno;
    close(fd);
    ThrowErrno(env, "cannot read the status of " + path, err);
    return -1;
  }
  if ((status.flags & VFIO_GROUP_FLAGS_VIABLE) == 0) {
    close(fd);
    ThrowCode(env, "IOMMU group " + std::to_string(group) + " is not viable: every device in it must be bound to vfio-pci or to no driver", "EVFIOVIABLE");
    return -1;
  }
  if (ioctl(fd, VFIO_GROUP_SET_CONTAINER, &container) != 0) {
    int err = errno;
    close(fd);
    ThrowErrno(env, "cannot add IOMMU group " + std::to_string(group) + " to the VFIO container", err);
    return -1;
  }
  // The IOMMU model is chosen after the first group joined the container (none is open
  // yet: an empty container has no model, and the next first group sets it again).
  if (group_fds.empty()) {
    if (ioctl(container, VFIO_SET_IOMMU, VFIO_TYPE1_IOMMU) != 0) {
      int err = errno;
      close(fd);
      ThrowErrno(env, "cannot set the VFIO container's IOMMU model", err);
      return -1;
    }
  }
  group_fds[group] = fd;
  return fd;
}

Napi::Value ReleaseGroup(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "vfioReleaseGroup(group)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  auto it = group_fds.find(info[0].As<Napi::Number>().Int32Value());
  if (it != group_fds.end()) {
    (void)ioctl(it->second, VFIO_GROUP_UNSET_CONTAINER);
    close(it->second);
    group_fds.erase(it);
  }
  return Napi::Boolean::New(env, group_fds.empty());
}

Napi::Value OpenDevice(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsString()) {
    Napi::TypeError::New(env, "vfioOpenDevice(group, address)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int group = Group(env, info[0].As<Napi::Number>().Int32Value());
  if (group < 0) return env.Undefined();
  std::string address = info[1].As<Napi::String>();
  int fd = ioctl(group, VFIO_GROUP_GET_DEVICE_FD, address.c_str());
  if (fd < 0) {
    ThrowErrno(env, "cannot get VFIO device " + address, errno);
    return env.Undefined();
  }
  fcntl(fd, F_SETFD, FD_CLOEXEC);
  return Napi::Number::New(env, fd);
}

// Fills `region` for region `index` of device fd; false with a JS error thrown if not.
bool RegionInfo(Napi::Env env, int fd, uint32_t index, vfio_region_info* region) {
  *region = {};
  region->argsz = sizeof(*region);
  region->index = index;
  if (ioctl(fd, VFIO_DEVICE_GET_REGION_INFO, region) != 0) {
    ThrowErrno(env, "cannot read VFIO region " + std::to_string(index), errno);
    return false;
  }
  return true;
}

Napi::Value GetRegionInfo(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    Napi::TypeError::New(env, "vfioRegionInfo(fd, index)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  vfio_region_info region;
  if (!RegionInfo(env, info[0].As<Napi::Number>().Int32Value(), info[1].As<Napi::Number>().Uint32Value(), &region)) {
    return env.Undefined();
  }
  Napi::Object result = Napi::Object::New(env);
  // Region offsets are index << 40: below 2^53, exact in a double.
  result.Set("offset", Napi::Number::New(env, static_cast<double>(region.offset)));
  result.Set("size", Napi::Number::New(env, static_cast<double>(region.size)));
  return result;
}

Napi::Value MapRegion(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsNumber() || !info[2].IsNumber()) {
    Napi::TypeError::New(env, "vfioMapRegion(fd, index, minBytes)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int fd = info[0].As<Napi::Number>().Int32Value();
  uint32_t index = info[1].As<Napi::Number>().Uint32Value();
  double min_bytes = info[2].As<Napi::Number>().DoubleValue();
  vfio_region_info region;
  if (!RegionInfo(env, fd, index, &region)) return env.Undefined();
  if ((region.flags & VFIO_REGION_INFO_FLAG_MMAP) == 0) {
    ThrowCode(env, "VFIO region " + std::to_string(index) + " cannot be mapped", "EDEVFILE");
    return env.Undefined();
  }
  if (static_cast<double>(region.size) < min_bytes) {
    ThrowCode(env, "BAR " + std::to_string(index) + " has " + std::to_string(region.size) + " bytes, fewer than the " +
                       std::to_string(static_cast<uint64_t>(min_bytes)) + " the driver's registers need: is this the right device?",
              "EDEVFILE");
    return env.Undefined();
  }
  void* addr = mmap(nullptr, region.size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(region.offset));
  if (addr == MAP_FAILED) {
    ThrowErrno(env, "cannot mmap VFIO region " + std::to_string(index), errno);
    return env.Undefined();
  }
  return ixy::WrapMappedMemory(env, addr, region.size);
}

Napi::Value MapDma(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 4 || !info[0].IsArrayBuffer() || !info[1].IsNumber() || !info[2].IsNumber() || !info[3].IsNumber()) {
    Napi::TypeError::New(env, "vfioMapDma(buffer, offset, bytes, iova)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  int container = Container(env);
  if (container < 0) return env.Undefined();
  Napi::ArrayBuffer buffer = info[0].As<Napi::ArrayBuffer>();
  const double offset = info[1].As<Napi::Number>().DoubleValue();
  const double bytes = info[2].As<Napi::Number>().DoubleValue();
  if (offset < 0 || bytes <= 0 || offset + bytes > static_cast<double>(buffer.ByteLength())) {
    Napi::RangeError::New(env, "vfioMapDma: the range is not inside the buffer").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  vfio_iommu_type1_dma_map map = {};
  map.argsz = sizeof(map);
  map.flags = VFIO_DMA_MAP_FLAG_READ | VFIO_DMA_MAP_FLAG_WRITE;
  map.vaddr = reinterpret_cast<uintptr_t>(buffer.Data()) + static_cast<uint64_t>(offset);
  map.iova = static_cast<uint64_t>(info[3].As<Napi::Number>().DoubleValue());
  map.size = static_cast<uint64_t>(bytes);
  if (ioctl(container, VFIO_IOMMU_MAP_DMA, &map) != 0) {
    int err = errno;
    if (err == ENOMEM) {
      // VFIO pins the pages and counts them against RLIMIT_MEMLOCK.
      ThrowCode(env, "cannot map " + std::to_string(map.size >> 20) + " MiB for DMA through the IOMMU: the locked-memory limit is too low (raise 'ulimit -l' or memlock in /etc/security/limits.conf)",
                "EMEMLOCK");
    } else {
      ThrowErrno(env, "cannot map DMA memory through the IOMMU", err);
    }
    return env.Undefined();
  }
  return env.Undefined();
}

Napi::Value UnmapDma(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    Napi::TypeError::New(env, "vfioUnmapDma(iova, bytes)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (container_fd < 0) return env.Undefined();
  vfio_iommu_type1_dma_unmap unmap = {};
  unmap.argsz = sizeof(unmap);
  unmap.iova = static_cast<uint64_t>(info[0].As<Napi::Number>().DoubleValue());
  unmap.size = static_cast<uint64_t>(info[1].As<Napi::Number>().DoubleValue());
  if (ioctl(container_fd, VFIO_IOMMU_UNMAP_DMA, &unmap) != 0) {
    ThrowErrno(env, "cannot unmap DMA memory from the IOMMU", errno);
  }
  return env.Undefined();
}


// ---------------------------------------------------------------------------------------
// Interrupts. VFIO turns each interrupt vector of the device into a signal on an eventfd
// (VFIO_DEVICE_SET_IRQS); libuv watches the eventfd like any other fd, so a waiting driver
// costs no thread and no CPU until the device interrupts.

Napi::Value IrqCount(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    Napi::TypeError::New(env, "vfioIrqCount(fd, index)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  vfio_irq_info irq = {};
  irq.argsz = sizeof(irq);
  irq.index = info[1].As<Napi::Number>().Uint32Value();
  if (ioctl(info[0].As<Napi::Number>().Int32Value(), VFIO_DEVICE_GET_IRQ_INFO, &irq) != 0) {
    ThrowErrno(env, "cannot read the device's interrupt info", errno);
    return env.Undefined();
  }
  return Napi::Number::New(env, irq.count);
}

// One VFIO_DEVICE_SET_IRQS: `fds` (may be empty: DATA_NONE) for vectors 0.. of `index`.
int SetIrqs(int device, uint32_t index, const std::vector<int32_t>& fds) {
  std::vector<char> buf(sizeof(vfio_irq_set) + fds.size() * sizeof(int32_t));
  vfio_irq_set* set = reinterpret_cast<vfio_irq_set*>(buf.data());
  set->argsz = static_cast<uint32_t>(buf.size());
  set->flags = (fds.empty() ? VFIO_IRQ_SET_DATA_NONE : VFIO_IRQ_SET_DATA_EVENTFD) | VFIO_IRQ_SET_ACTION_TRIGGER;
  set->index = index;
  set->start = 0;
  set->count = static_cast<uint32_t>(fds.size());
  if (!fds.empty()) memcpy(set->data, fds.data(), fds.size() * sizeof(int32_t));
  return ioctl(device, VFIO_DEVICE_SET_IRQS, set);
}

Napi::Value EnableIrqs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 3 || !info[0].IsNumber() || !info[1].IsNumber() || !info[2].IsNumber()) {
    Napi::TypeError::New(env, "vfioEnableIrqs(fd, index, count)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  const int device = info[0].As<Napi::Number>().Int32Value();
  const uint32_t index = info[1].As<Napi::Number>().Uint32Value();
  const uint32_t count = info[2].As<Napi::Number>().Uint32Value();
  std::vector<int32_t> fds;
  for (uint32_t i = 0; i < count; i++) {
    int fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    if (fd < 0) {
      int err = errno;
      for (int f : fds) close(f);
      ThrowErrno(env, "cannot create an eventfd", err);
      return env.Undefined();
    }
    fds.push_back(fd);
  }
  if (SetIrqs(device, index, fds) != 0) {
    int err = errno;
    for (int f : fds) close(f);
    ThrowErrno(env, "cannot route the device's interrupts to eventfds (VFIO_DEVICE_SET_IRQS)", err);
    return env.Undefined();
  }
  Napi::Array result = Napi::Array::New(env, fds.size());
  for (size_t i = 0; i < fds.size(); i++) result.Set(i, Napi::Number::New(env, fds[i]));
  return result;
}

Napi::Value DisableIrqs(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsNumber()) {
    Napi::TypeError::New(env, "vfioDisableIrqs(fd, index)").ThrowAsJavaScriptException();
    return env.Undefined();
  }
  if (SetIrqs(info[0].As<Napi::Number>().Int32Value(), info[1].As<Napi::Number>().Uint32Value(), {}) != 0) {
    ThrowErrno(env, "cannot stop the device's interrupts", errno);
  }
  return env.Undefined();
}

class FdWatcher : public Napi::ObjectWrap<FdWatcher> {
 public:
  static Napi::Function Define(Napi::Env env) {
    return DefineClass(env, "FdWatcher",
                       {InstanceMethod("start", &FdWatcher::Start), InstanceMethod("stop", &FdWatcher::Stop),
                        InstanceMethod("close", &FdWatcher::Close)});
  }

  explicit FdWatcher(const Napi::CallbackInfo& info) : Napi::ObjectWrap<FdWatcher>(info) {
    Napi::Env env = info.Env();
    if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsFunction() || (info.Length() > 2 && !info[2].IsBoolean() && !info[2].IsUndefined())) {
      Napi::TypeError::New(env, "new FdWatcher(fd, callback[, counted])").ThrowAsJavaScriptException();
      return;
    }
    fd_ = info[0].As<Napi::Number>().Int32Value();
    counted_ = info.Length() < 3 || info[2].IsUndefined() || info[2].As<Napi::Boolean>().Value();
    callback_ = Napi::Persistent(info[1].As<Napi::Function>());
    uv_loop_t* loop = nullptr;
    if (napi_get_uv_event_loop(env, &loop) != napi_ok) {
      Napi::Error::New(env, "no event loop").ThrowAsJavaScriptException();
      return;
    }
    poll_ = new uv_poll_t;
    if (uv_poll_init(loop, poll_, fd_) != 0) {
      delete poll_;
      poll_ = nullptr;
      Napi::Error::New(env, "cannot watch fd " + std::to_string(fd_)).ThrowAsJavaScriptException();
      return;
    }
    poll_->data = this;
  }

  ~FdWatcher() override { Release(); }

 private:
  Napi::Value Start(const Napi::CallbackInfo& info) {
    if (poll_ != nullptr) uv_poll_start(poll_, UV_READABLE, OnReadable);
    return info.Env().Undefined();
  }

  Napi::Value Stop(const Napi::CallbackInfo& info) {
    if (poll_ != nullptr) uv_poll_stop(poll_);
    return info.Env().Undefined();
  }

  Napi::Value Close(const Napi::CallbackInfo& info) {
    Release();
    return info.Env().Undefined();
  }

  // The handle goes back to libuv, which frees it once the loop has let go of it.
  void Release() {
    if (poll_ == nullptr) return;
    poll_->data = nullptr;
    uv_close(reinterpret_cast<uv_handle_t*>(poll_), [](uv_handle_t* h) { delete reinterpret_cast<uv_poll_t*>(h); });
    poll_ = nullptr;
  }

  static void OnReadable(uv_poll_t* handle, int status, int /*events*/) {
    FdWatcher* self = static_cast<FdWatcher*>(handle->data);
    if (self == nullptr || status < 0) return;
    uint64_t count = 0;
    if (self->counted_ && read(self->fd_, &count, sizeof(count)) != sizeof(count)) return;  // already read
    Napi::Env env = self->callback_.Env();
    Napi::HandleScope scope(env);
    // MakeCallback: as for any libuv callback into JavaScript, microtasks (the promise the
    // waiting loop awaits) run right after it.
    self->callback_.MakeCallback(env.Global(), {});
    if (env.IsExceptionPending()) napi_fatal_exception(env, env.GetAndClearPendingException().Value());
  }

  int fd_ = -1;
  bool counted_ = true;  // an eventfd: read its count before the callback
  uv_poll_t* poll_ = nullptr;
  Napi::FunctionReference callback_;
};

}  // namespace

namespace ixy {

void InitVfio(Napi::Env env, Napi::Object exports) {
  exports.Set("vfioOpenDevice", Napi::Function::New(env, OpenDevice));
  exports.Set("vfioReleaseGroup", Napi::Function::New(env, ReleaseGroup));
  exports.Set("vfioRegionInfo", Napi::Function::New(env, GetRegionInfo));
  exports.Set("vfioMapRegion", Napi::Function::New(env, MapRegion));
  exports.Set("vfioMapDma", Napi::Function::New(env, MapDma));
  exports.Set("vfioUnmapDma", Napi::Function::New(env, UnmapDma));
  exports.Set("vfioIrqCount", Napi::Function::New(env, IrqCount));
  exports.Set("vfioEnableIrqs", Napi::Function::New(env, EnableIrqs));
  exports.Set("vfioDisableIrqs", Napi::Function::New(env, DisableIrqs));
  exports.Set("FdWatcher", FdWatcher::Define(env));
}

}  // namespace ixy
