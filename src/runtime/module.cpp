#include "runtime/module.h"

#include "runtime/context.h"
#include "runtime/driver.h"
#include "support/diagnostics.h"

namespace tessel::runtime {
namespace {

// The driver's description of a launch of `grid` blocks shaped as `config` says, with the cluster
// dimension as its one attribute (kept in `cluster`) when `with_cluster`.
// `attributes` holds up to two entries for the launch to point at: the cluster dimensions and
// programmatic stream serialization (LaunchConfig::overlap_previous).
CUlaunchConfig driver_launch(const LaunchConfig& config, const Dim3& grid,
                             CUlaunchAttribute (&attributes)[2], bool with_cluster) {
  CUlaunchConfig launch{};
  launch.gridDimX = grid.x;
  launch.gridDimY = grid.y;
  launch.gridDimZ = grid.z;
  launch.blockDimX = config.block.x;
  launch.blockDimY = config.block.y;
  launch.blockDimZ = config.block.z;
  launch.sharedMemBytes = config.dynamic_shared_bytes;
  launch.hStream = config.stream;
  launch.attrs = attributes;
  launch.numAttrs = 0;
  if (with_cluster) {
    CUlaunchAttribute& cluster = attributes[launch.numAttrs++];
    cluster = {};
    cluster.id = CU_LAUNCH_ATTRIBUTE_CLUSTER_DIMENSION;
    cluster.value.clusterDim.x = config.cluster.x;
    cluster.value.clusterDim.y = config.cluster.y;
    cluster.value.clusterDim.z = config.cluster.z;
  }
  if (config.overlap_previous) {
    CUlaunchAttribute& overlap = attributes[launch.numAttrs++];
    overlap = {};
    overlap.id = CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION;
    overlap.value.programmaticStreamSerializationAllowed = 1;
  }
  if (launch.numAttrs == 0) launch.attrs = nullptr;
  return launch;
}

}  // namespace

Module Module::load(const std::string& cubin) {
  context();
  Module module;
  check(driver().cuModuleLoadData(&module.module_, cubin.data()), "cuModuleLoadData");
  return module;
}

Module::~Module() {
  if (module_ != nullptr) driver().cuModuleUnload(module_);
}

Module::Module(Module&& other) noexcept : module_(other.module_) { other.module_ = nullptr; }

Module& Module::operator=(Module&& other) noexcept {
  if (this != &other) {
    if (module_ != nullptr) driver().cuModuleUnload(module_);
    module_ = other.module_;
    other.module_ = nullptr;
  }
  return *this;
}

Function Module::function(const std::string& name) const {
  if (module_ == nullptr) user_error(SourceLocation::unknown(), "function '", name, "': no module");
  CUfunction function = nullptr;
  CUresult result = driver().cuModuleGetFunction(&function, module_, name.c_str());
  if (result == CUDA_ERROR_NOT_FOUND) {
    user_error(SourceLocation::unknown(), "the module has no kernel named '", name,
               "' (is it declared extern \"C\" __global__?)");
  }
  check(result, "cuModuleGetFunction");
  return Function(function, name);
}

int Function::attribute(CUfunction_attribute attribute) const {
  int value = 0;
  check(driver().cuFuncGetAttribute(&value, attribute, function_), "cuFuncGetAttribute");
  return value;
}

void Function::set_max_dynamic_shared_bytes(unsigned bytes) {
  int limit = context().max_shared_bytes_per_block();
  int static_bytes = attribute(CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES);
  if (static_cast<long long>(bytes) + static_bytes > limit) {
    user_error(SourceLocation::unknown(), "kernel '", name_, "' asks for ", bytes,
               " bytes of dynamic shared memory plus ", static_bytes,
               " static; the device allows ", limit, " per block");
  }
  check(driver().cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                    static_cast<int>(bytes)),
        "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES)");
  dynamic_shared_limit_ = bytes;
}

int Function::max_active_clusters(const LaunchConfig& config) {
  if (config.dynamic_shared_bytes > dynamic_shared_limit_) {
    set_max_dynamic_shared_bytes(config.dynamic_shared_bytes);
  }
  // The grid only has to be a multiple of the cluster; the answer does not depend on it.
  CUlaunchAttribute attributes[2];
  CUlaunchConfig launch = driver_launch(config, config.cluster, attributes, true);
  int clusters = 0;
  check(driver().cuOccupancyMaxActiveClusters(&clusters, function_, &launch),
        "cuOccupancyMaxActiveClusters");
  return clusters;
}

int Function::max_active_blocks_per_sm(const LaunchConfig& config) {
  if (config.dynamic_shared_bytes > dynamic_shared_limit_) {
    set_max_dynamic_shared_bytes(config.dynamic_shared_bytes);
  }
  int blocks = 0;
  check(driver().cuOccupancyMaxActiveBlocksPerMultiprocessor(
            &blocks, function_, static_cast<int>(config.block.count()),
            config.dynamic_shared_bytes),
        "cuOccupancyMaxActiveBlocksPerMultiprocessor");
  return blocks;
}

void Function::launch(const LaunchConfig& config, void** args) {
  if (function_ == nullptr) user_error(SourceLocation::unknown(), "launch of an empty Function");
  if (config.grid.count() == 0 || config.block.count() == 0) {
    user_error(SourceLocation::unknown(), "launch of '", name_, "': empty grid or block");
  }
  if (config.block.count() > 1024) {
    user_error(SourceLocation::unknown(), "launch of '", name_, "': ", config.block.count(),
               " threads per block (at most 1024)");
  }
  const Dim3& cluster = config.cluster;
  if (config.grid.x % cluster.x != 0 || config.grid.y % cluster.y != 0 ||
      config.grid.z % cluster.z != 0) {
    user_error(SourceLocation::unknown(), "launch of '", name_, "': grid (", config.grid.x, ",",
               config.grid.y, ",", config.grid.z, ") is not a multiple of the cluster (",
               cluster.x, ",", cluster.y, ",", cluster.z, ")");
  }
  if (config.dynamic_shared_bytes > dynamic_shared_limit_) {
    set_max_dynamic_shared_bytes(config.dynamic_shared_bytes);
  }
  CUlaunchAttribute attributes[2];
  CUlaunchConfig launch = driver_launch(config, config.grid, attributes, cluster.count() > 1);
  check(driver().cuLaunchKernelEx(&launch, function_, args, nullptr), "cuLaunchKernelEx");
}

}  // namespace tessel::runtime
