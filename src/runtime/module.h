// Loaded cubins and kernel launches (cuLaunchKernelEx, with cluster dimensions).
#pragma once

#include <cuda.h>

#include <string>

namespace tessel::runtime {

struct Dim3 {
  unsigned x = 1, y = 1, z = 1;
  unsigned long long count() const { return 1ULL * x * y * z; }
};

struct LaunchConfig {
  Dim3 grid;
  Dim3 block;
  Dim3 cluster;  // {1,1,1}: no cluster. Otherwise each grid dimension must be a multiple of it.
  unsigned dynamic_shared_bytes = 0;
  CUstream stream = nullptr;
  // Programmatic stream serialization: the launch may start before the kernel before it on the
  // stream has finished (once that one's blocks have all triggered or exited). Only for kernels
  // that wait for it before touching what it may write (griddepcontrol.wait; overlap-launches).
  bool overlap_previous = false;
};

// A kernel entry point of a loaded module. Cheap to copy; valid while its Module lives.
class Function {
 public:
  Function() = default;
  CUfunction handle() const { return function_; }
  const std::string& name() const { return name_; }

  // Raises the dynamic shared memory limit (needed above 48 KiB). launch() does this on demand.
  void set_max_dynamic_shared_bytes(unsigned bytes);
  // Launches with `args` as cuLaunchKernel takes them (an array of pointers to each argument).
  // Checks the configuration first: a grid not divisible by the cluster or more shared memory than
  // the device allows is a UserError, not a driver fault.
  void launch(const LaunchConfig& config, void** args);
  // How many clusters of `config.cluster` blocks (of config.block threads and its dynamic shared
  // memory) the device can run at once (cuOccupancyMaxActiveClusters): what a persistent grid of
  // clusters is sized for. Raises the dynamic shared memory limit first, as launch() would.
  int max_active_clusters(const LaunchConfig& config);
  // How many blocks of config.block threads and its dynamic shared memory one SM holds at once
  // (cuOccupancyMaxActiveBlocksPerMultiprocessor), after raising the shared memory limit.
  int max_active_blocks_per_sm(const LaunchConfig& config);
  // Registers, static shared memory, local memory per thread, as the cubin records them.
  int attribute(CUfunction_attribute attribute) const;

 private:
  friend class Module;
  Function(CUfunction function, std::string name) : function_(function), name_(std::move(name)) {}
  CUfunction function_ = nullptr;
  std::string name_;
  unsigned dynamic_shared_limit_ = 48 * 1024;
};

// An owned CUmodule.
class Module {
 public:
  Module() = default;
  static Module load(const std::string& cubin);
  ~Module();
  Module(Module&& other) noexcept;
  Module& operator=(Module&& other) noexcept;
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  // The entry point `name` (declare it extern "C" to keep the name unmangled). Unknown names are a
  // UserError.
  Function function(const std::string& name) const;

 private:
  CUmodule module_ = nullptr;
};

}  // namespace tessel::runtime
