#include "runtime/driver.h"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>

#include "support/diagnostics.h"

namespace tessel::runtime {
namespace {

// Expands a name through <cuda.h>'s macros before quoting it, so "cuMemAlloc" becomes
// "cuMemAlloc_v2": the symbol the declared type belongs to.
#define TESSEL_QUOTE_EXPANDED(name) TESSEL_QUOTE(name)
#define TESSEL_QUOTE(name) #name

struct LoadedDriver {
  DriverApi api;
  bool ok = false;
  std::string reason;
};

LoadedDriver load_driver() {
  LoadedDriver loaded;
  const char* disable = std::getenv("TESSEL_DISABLE_GPU");
  if (disable != nullptr && std::string(disable) == "1") {
    loaded.reason = "TESSEL_DISABLE_GPU=1";
    return loaded;
  }
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    loaded.reason = "the CUDA driver (libcuda.so.1) is not installed";
    return loaded;
  }
#define TESSEL_DRIVER_LOAD(name)                                                                   \
  loaded.api.name =                                                                                \
      reinterpret_cast<decltype(loaded.api.name)>(dlsym(library, TESSEL_QUOTE_EXPANDED(name)));   \
  if (loaded.api.name == nullptr) {                                                                \
    loaded.reason = std::string("the CUDA driver lacks ") + TESSEL_QUOTE_EXPANDED(name);          \
    return loaded;                                                                                 \
  }
  TESSEL_DRIVER_FUNCTIONS(TESSEL_DRIVER_LOAD)
#undef TESSEL_DRIVER_LOAD
  CUresult init = loaded.api.cuInit(0);
  if (init != CUDA_SUCCESS) {
    const char* name = "?";
    loaded.api.cuGetErrorName(init, &name);
    loaded.reason = std::string("cuInit failed: ") + name;
    return loaded;
  }
  int count = 0;
  if (loaded.api.cuDeviceGetCount(&count) != CUDA_SUCCESS || count == 0) {
    loaded.reason = "no CUDA device is present";
    return loaded;
  }
  loaded.ok = true;
  return loaded;
}

const LoadedDriver& loaded_driver() {
  static const LoadedDriver loaded = load_driver();
  return loaded;
}

}  // namespace

bool gpu_available(std::string* reason) {
  const LoadedDriver& loaded = loaded_driver();
  if (!loaded.ok && reason != nullptr) *reason = loaded.reason;
  return loaded.ok;
}

const DriverApi& driver() {
  const LoadedDriver& loaded = loaded_driver();
  if (!loaded.ok) user_error(SourceLocation::unknown(), "no GPU available: ", loaded.reason);
  return loaded.api;
}

void check(CUresult result, const char* what) {
  if (result == CUDA_SUCCESS) return;
  const DriverApi& api = driver();
  const char* name = "unknown CUresult";
  const char* text = "";
  api.cuGetErrorName(result, &name);
  api.cuGetErrorString(result, &text);
  user_error(SourceLocation::unknown(), what, " failed: ", name, " (", text, ")");
}

}  // namespace tessel::runtime
