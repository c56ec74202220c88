// VFIO backend: see lib/vfio.js.
#include <napi.h>

void InitVfio(Napi::Env env, Napi::Object exports) {
  (void)env;
  (void)exports;
}
