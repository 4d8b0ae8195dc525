#include "runtime/context.h"

#include "runtime/driver.h"

namespace tessel::runtime {

Context::Context() {
  const DriverApi& api = driver();
  check(api.cuDeviceGet(&device_, 0), "cuDeviceGet");
  check(api.cuDevicePrimaryCtxRetain(&context_, device_), "cuDevicePrimaryCtxRetain");
  char name[256] = {};
  check(api.cuDeviceGetName(name, sizeof(name), device_), "cuDeviceGetName");
  name_ = name;
  int major = 0, minor = 0;
  check(api.cuDeviceGetAttribute(&major, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MAJOR, device_),
        "cuDeviceGetAttribute");
  check(api.cuDeviceGetAttribute(&minor, CU_DEVICE_ATTRIBUTE_COMPUTE_CAPABILITY_MINOR, device_),
        "cuDeviceGetAttribute");
  compute_capability_ = major * 10 + minor;
  check(api.cuDeviceGetAttribute(&sm_count_, CU_DEVICE_ATTRIBUTE_MULTIPROCESSOR_COUNT, device_),
        "cuDeviceGetAttribute");
  check(api.cuDeviceGetAttribute(&max_shared_per_block_,
                                 CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN, device_),
        "cuDeviceGetAttribute");
}

void Context::make_current() const {
  thread_local CUcontext current = nullptr;
  if (current == context_) return;
  check(driver().cuCtxSetCurrent(context_), "cuCtxSetCurrent");
  current = context_;
}

void Context::synchronize() const {
  make_current();
  check(driver().cuCtxSynchronize(), "cuCtxSynchronize (a kernel failed)");
}

Context& context() {
  // Leaked on purpose: the primary context outlives static destructors of other objects that may
  // still free device memory at exit.
  static Context* instance = new Context();
  instance->make_current();
  return *instance;
}

}  // namespace tessel::runtime
