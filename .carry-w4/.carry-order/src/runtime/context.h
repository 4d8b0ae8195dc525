// The GPU tessel runs on: device 0's primary context, made current on every thread that asks.
#pragma once

#include <cuda.h>

#include <string>

namespace tessel::runtime {

// The primary context is shared with the CUDA runtime API, so libraries such as cuBLAS that use the
// runtime API see the same memory and streams as tessel's driver-API code.
class Context {
 public:
  CUdevice device() const { return device_; }
  CUcontext handle() const { return context_; }
  const std::string& device_name() const { return name_; }
  int sm_count() const { return sm_count_; }
  int compute_capability() const { return compute_capability_; }  // 90 for sm_90
  int max_shared_bytes_per_block() const { return max_shared_per_block_; }

  // Makes this context current on the calling thread (cheap after the first call per thread).
  void make_current() const;
  // Waits for all work on the device; turns asynchronous kernel faults into a UserError.
  void synchronize() const;

 private:
  friend Context& context();
  Context();
  CUdevice device_ = 0;
  CUcontext context_ = nullptr;
  std::string name_;
  int sm_count_ = 0;
  int compute_capability_ = 0;
  int max_shared_per_block_ = 0;
};

// The process-wide context, created on first use and current on the calling thread. Throws UserError
// when no GPU is available.
Context& context();

}  // namespace tessel::runtime
