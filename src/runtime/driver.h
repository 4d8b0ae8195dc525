// The CUDA driver API, loaded at run time so that tessel builds, starts and does all its CPU work on
// machines without a GPU driver.
//
// Nothing in tessel links libcuda. `driver()` opens libcuda.so.1 on first use and resolves the entry
// points below; `gpu_available()` says whether that worked and a device is present, and is what GPU
// tests ask before they run (they skip otherwise). The table's members carry the names of the driver
// API (`driver().cuMemAlloc(...)`); <cuda.h> maps several of them to versioned symbols
// (cuMemAlloc → cuMemAlloc_v2), and the loader resolves exactly the symbol each name maps to.
#pragma once

#include <cuda.h>

#include <string>

namespace tessel::runtime {

#define TESSEL_DRIVER_FUNCTIONS(X)                                                              \
  X(cuInit) X(cuDriverGetVersion) X(cuGetErrorName) X(cuGetErrorString) X(cuDeviceGetCount)    \
  X(cuDeviceGet) X(cuDeviceGetName) X(cuDeviceGetAttribute) X(cuDevicePrimaryCtxRetain)        \
  X(cuDevicePrimaryCtxRelease) X(cuCtxSetCurrent) X(cuCtxSynchronize) X(cuModuleLoadData)      \
  X(cuModuleUnload) X(cuModuleGetFunction) X(cuFuncSetAttribute) X(cuFuncGetAttribute)         \
  X(cuLaunchKernelEx) X(cuMemAlloc) X(cuMemFree) X(cuMemGetInfo) X(cuMemcpyHtoD)               \
  X(cuMemcpyDtoH) X(cuMemcpyDtoD) X(cuMemsetD8) X(cuMemsetD8Async) X(cuStreamCreate)           \
  X(cuStreamDestroy) X(cuStreamSynchronize) X(cuEventCreate) X(cuEventDestroy)                 \
  X(cuEventRecord) X(cuEventSynchronize) X(cuEventElapsedTime) X(cuTensorMapEncodeTiled)      \
  X(cuOccupancyMaxActiveClusters) X(cuOccupancyMaxActiveBlocksPerMultiprocessor)

// One function pointer per driver entry point used by tessel.
struct DriverApi {
#define TESSEL_DRIVER_MEMBER(name) decltype(&::name) name = nullptr;
  TESSEL_DRIVER_FUNCTIONS(TESSEL_DRIVER_MEMBER)
#undef TESSEL_DRIVER_MEMBER
};

// True when libcuda loads, cuInit succeeds and at least one device exists. Never throws. When false
// and `reason` is given, it says why ("libcuda.so.1 not found", "no CUDA device", ...). Setting
// TESSEL_DISABLE_GPU=1 makes it false, which lets a GPU machine exercise the no-GPU paths.
bool gpu_available(std::string* reason = nullptr);

// The loaded driver. Throws UserError (with the reason) when no GPU is available.
const DriverApi& driver();

// Throws UserError "`what` failed: CUDA_ERROR_NAME (description)" unless `result` is CUDA_SUCCESS.
void check(CUresult result, const char* what);

}  // namespace tessel::runtime
