// What addon.cc shares with guard.cc, vfio.cc, process.cc, unix-fd.cc, xdp.cc and teardown.cc.
#pragma once

#include <napi.h>

#include <cstddef>
#include <string>

namespace ixy {

// Throws a JS Error with message "what: strerror(err)" and code = the errno name.
void ThrowErrno(Napi::Env env, const std::string& what, int err);
// Throws a JS Error with an ixy code.
void ThrowCode(Napi::Env env, const std::string& message, const char* code);
// An ArrayBuffer over memory mapped with mmap: unmapped by free() or at garbage collection.
Napi::Value WrapMappedMemory(Napi::Env env, void* addr, size_t size);
// Whether addr starts a mapping of ours (mapResource, allocDma, a VFIO region); its size.
bool IsOurMapping(void* addr, size_t* size);
// Takes the device whose BAR starts at addr out of the fatal-signal guard (guard.cc), for
// the BAR's unmapping.
void UnguardBar(const void* addr);
// Adds the fatal-signal guard's functions (guard.cc) to the addon's exports.
void InitGuard(Napi::Env env, Napi::Object exports);
// Adds the VFIO functions (vfio.cc) to the addon's exports.
void InitVfio(Napi::Env env, Napi::Object exports);
// Adds lockFile and captureStderr (process.cc) to the addon's exports.
void InitProcess(Napi::Env env, Napi::Object exports);
// Adds eventFd and sendFdLine (unix-fd.cc) to the addon's exports.
void InitUnixFd(Napi::Env env, Napi::Object exports);
// Adds the AF_XDP functions (xdp.cc) to the addon's exports.
void InitXdp(Napi::Env env, Napi::Object exports);
// Runs the teardown stop of every queue pair whose memory includes the mapping at addr,
// before that mapping goes (teardown.cc). Not with the mappings' lock held.
void StopBeforeUnmap(void* addr);
// Adds stopOnTeardown, guardTeardownStop and cancelTeardownStop (teardown.cc) to the
// addon's exports.
void InitTeardown(Napi::Env env, Napi::Object exports);

}  // namespace ixy
