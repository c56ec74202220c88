// The teardown stop of the ixy addon: a thread's queue pair (lib/queue-pair.js) is stopped
// before its memory goes, however the thread ends. A worker that returns, throws or calls
// process.exit() runs JavaScript on its way out ('exit'), but one ended by
// worker.terminate() runs none: its memory is unmapped at teardown while the NIC, its
// queues still enabled, goes on fetching descriptors and writing frames there.
// So the stop runs natively, at whichever comes first: the unmapping of a mapping the pair
// uses (its BAR mapping, its ring region, its mempool: at teardown their finalizers run
// before the environment's cleanup hooks, and a pair dropped without close() loses them
// to the garbage collector), or the environment's cleanup hook (napi_add_env_cleanup_hook).
// It clears the queues' ENABLE bits through the thread's own BAR mapping, waits until the
// NIC reads them back clear (82599 4.6.7.1.2, 4.6.8.1.2: the NIC then touches none of the
// rings' memory), and lets go of the pair in the device's owner table, so that another
// thread can attach it again. close() cancels it: the pair is then stopped in JavaScript.

#include <napi.h>
#include <node_api.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <ctime>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "addon.h"

namespace {

constexpr int kStopWaitMs = 100;  // how long the hook waits for the NIC to clear ENABLE

struct StopBit {
  uint32_t offset;  // byte offset into the BAR, a multiple of 4
  uint32_t bits;    // bits to clear
};

struct TeardownStop {
  napi_env env;
  uint32_t id;
  volatile uint32_t* bar;
  std::vector<StopBit> bits;
  int32_t* owner_slot;  // the pair's word of the owner table (a SharedArrayBuffer)
  int32_t owner;        // what that word holds while this thread owns the pair
  std::vector<void*> guarded;  // mappings whose unmapping runs the stop first
};

std::mutex stops_lock;
std::unordered_map<uint32_t, TeardownStop*> stops;
uint32_t next_id = 1;

int64_t NowMs() {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000 + ts.tv_nsec / 1000000;
}

void Forget(TeardownStop* t) {
  std::lock_guard<std::mutex> guard(stops_lock);
  stops.erase(t->id);
}

// Stops the pair and lets go of it. The BAR is written only while it is still one of our
// mappings (it is guarded too: its own unmapping runs this first).
void RunStop(TeardownStop* t) {
  size_t size = 0;
  if (ixy::IsOurMapping(const_cast<uint32_t*>(t->bar), &size)) {
    for (const StopBit& b : t->bits) t->bar[b.offset / 4] &= ~b.bits;
    std::atomic_thread_fence(std::memory_order_seq_cst);
    const int64_t deadline = NowMs() + kStopWaitMs;
    for (const StopBit& b : t->bits) {
      while ((t->bar[b.offset / 4] & b.bits) != 0 && NowMs() < deadline) {
        struct timespec pause = {0, 100000};
        nanosleep(&pause, nullptr);
      }
    }
  }
  int32_t expected = t->owner;
  __atomic_compare_exchange_n(t->owner_slot, &expected, 0, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
}

// The environment's cleanup hook.
void RunTeardownStop(void* arg) {
  TeardownStop* t = static_cast<TeardownStop*>(arg);
  Forget(t);
  RunStop(t);
  delete t;
}

// Takes the stop `id` of this environment out of the registry; nullptr if there is none.
TeardownStop* Take(napi_env env, uint32_t id) {
  std::lock_guard<std::mutex> guard(stops_lock);
  auto it = stops.find(id);
  if (it == stops.end() || it->second->env != env) return nullptr;
  TeardownStop* t = it->second;
  stops.erase(it);
  return t;
}

// The first element of a typed array, over an ArrayBuffer or a SharedArrayBuffer (whose
// Napi::ArrayBuffer view would have no data).
void* ElementsOf(Napi::Env env, Napi::TypedArray array) {
  void* data = nullptr;
  if (napi_get_typedarray_info(env, array, nullptr, nullptr, &data, nullptr, nullptr) != napi_ok) return nullptr;
  return data;
}

Napi::Value StopOnTeardown(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 5 || !info[0].IsArrayBuffer() || !info[1].IsTypedArray() || !info[2].IsTypedArray() ||
      !info[3].IsNumber() || !info[4].IsNumber()) {
    Napi::TypeError::New(env, "stopOnTeardown(bar, stopBits, owners, index, owner): an ArrayBuffer, a Uint32Array, an Int32Array and two numbers")
        .ThrowAsJavaScriptException();
    return env.Null();
  }
  Napi::ArrayBuffer bar = info[0].As<Napi::ArrayBuffer>();
  Napi::TypedArray bitsArray = info[1].As<Napi::TypedArray>();
  Napi::TypedArray ownersArray = info[2].As<Napi::TypedArray>();
  size_t size = 0;
  if (!ixy::IsOurMapping(bar.Data(), &size) || bitsArray.TypedArrayType() != napi_uint32_array ||
      bitsArray.ElementLength() % 2 != 0 || ownersArray.TypedArrayType() != napi_int32_array) {
    Napi::TypeError::New(env, "stopOnTeardown: bar must be a mapping from mapResource, stopBits a Uint32Array of pairs, owners an Int32Array")
        .ThrowAsJavaScriptException();
    return env.Null();
  }
  const uint32_t index = info[3].As<Napi::Number>().Uint32Value();
  if (index >= ownersArray.ElementLength()) {
    Napi::RangeError::New(env, "stopOnTeardown: index outside the owner table").ThrowAsJavaScriptException();
    return env.Null();
  }
  const uint32_t* words = static_cast<const uint32_t*>(ElementsOf(env, bitsArray));
  int32_t* owners = static_cast<int32_t*>(ElementsOf(env, ownersArray));
  if (words == nullptr || owners == nullptr) {
    Napi::TypeError::New(env, "stopOnTeardown: stopBits or owners has no data").ThrowAsJavaScriptException();
    return env.Null();
  }
  TeardownStop* t = new TeardownStop();
  t->env = env;
  t->bar = static_cast<volatile uint32_t*>(bar.Data());
  for (size_t i = 0; i < bitsArray.ElementLength(); i += 2) {
    if (words[i] % 4 != 0 || words[i] + 4 > size) {
      delete t;
      Napi::RangeError::New(env, "stopOnTeardown: a register offset outside the BAR").ThrowAsJavaScriptException();
      return env.Null();
    }
    t->bits.push_back({words[i], words[i + 1]});
  }
  t->owner_slot = owners + index;
  t->owner = info[4].As<Napi::Number>().Int32Value();
  t->guarded.push_back(bar.Data());
  {
    std::lock_guard<std::mutex> guard(stops_lock);
    t->id = next_id++;
    stops[t->id] = t;
  }
  if (napi_add_env_cleanup_hook(env, RunTeardownStop, t) != napi_ok) {
    Forget(t);
    delete t;
    Napi::Error::New(env, "stopOnTeardown: napi_add_env_cleanup_hook failed").ThrowAsJavaScriptException();
    return env.Null();
  }
  return Napi::Number::New(env, t->id);
}

// cancelTeardownStop(id): the pair was stopped and let go of in JavaScript (close()); the
// hook must not touch its BAR, which is about to be unmapped.
Napi::Value CancelTeardownStop(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  if (info.Length() < 1 || !info[0].IsNumber()) {
    Napi::TypeError::New(env, "cancelTeardownStop(id): id must be a number").ThrowAsJavaScriptException();
    return env.Null();
  }
  TeardownStop* t = Take(env, info[0].As<Napi::Number>().Uint32Value());
  if (t == nullptr) return Napi::Boolean::New(env, false);
  napi_remove_env_cleanup_hook(env, RunTeardownStop, t);
  delete t;
  return Napi::Boolean::New(env, true);
}

// guardTeardownStop(id, buffer): the unmapping of buffer (a mapping of ours, e.g. the
// pair's mempool) runs the stop first.
Napi::Value GuardTeardownStop(const Napi::CallbackInfo& info) {
  Napi::Env env = info.Env();
  size_t size = 0;
  if (info.Length() < 2 || !info[0].IsNumber() || !info[1].IsArrayBuffer() ||
      !ixy::IsOurMapping(info[1].As<Napi::ArrayBuffer>().Data(), &size)) {
    Napi::TypeError::New(env, "guardTeardownStop(id, buffer): buffer must be a mapping from allocDma or mapResource").ThrowAsJavaScriptException();
    return env.Null();
  }
  std::lock_guard<std::mutex> guard(stops_lock);
  auto it = stops.find(info[0].As<Napi::Number>().Uint32Value());
  if (it == stops.end() || it->second->env != static_cast<napi_env>(env)) return Napi::Boolean::New(env, false);
  it->second->guarded.push_back(info[1].As<Napi::ArrayBuffer>().Data());
  return Napi::Boolean::New(env, true);
}

}  // namespace

void ixy::StopBeforeUnmap(void* addr) {
  std::vector<TeardownStop*> due;
  {
    std::lock_guard<std::mutex> guard(stops_lock);
    for (auto it = stops.begin(); it != stops.end();) {
      const std::vector<void*>& g = it->second->guarded;
      if (std::find(g.begin(), g.end(), addr) != g.end()) {
        due.push_back(it->second);
        it = stops.erase(it);
      } else {
        ++it;
      }
    }
  }
  for (TeardownStop* t : due) {
    // A mapping is finalized on the thread whose environment made it, the pair's.
    napi_remove_env_cleanup_hook(t->env, RunTeardownStop, t);
    RunStop(t);
    delete t;
  }
}

void ixy::InitTeardown(Napi::Env env, Napi::Object exports) {
  exports.Set("stopOnTeardown", Napi::Function::New(env, StopOnTeardown));
  exports.Set("guardTeardownStop", Napi::Function::New(env, GuardTeardownStop));
  exports.Set("cancelTeardownStop", Napi::Function::New(env, CancelTeardownStop));
}
