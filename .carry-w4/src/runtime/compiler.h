// CUDA C++ → cubin through NVRTC, with the device library as named headers and an on-disk cache.
#pragma once

#include <string>
#include <vector>

namespace tessel::runtime {

struct CompileOptions {
  std::string name = "kernel.cu";  // the program's file name in diagnostics
  std::string arch = "sm_90a";     // a real architecture: NVRTC emits a cubin for it
  std::vector<std::string> flags;  // further NVRTC options, e.g. "-DTILE_M=128", "-lineinfo"
  bool use_cache = true;
  std::string cache_directory;  // empty: KernelCache's default
};

struct CompileResult {
  std::string cubin;      // the ELF image, ready for Module::load
  std::string log;        // NVRTC's log (warnings) of the compile; empty on a cache hit
  std::string cache_key;  // SHA-256 of everything that determines the cubin
  bool cache_hit = false;
  double milliseconds = 0;  // wall time of this call (compile, or cache lookup)
};

// Compiles `source` for `options.arch`. The key hashes the source, the embedded device headers (by
// their build-time digest), the options, the arch and NVRTC's version, so a change to any of them
// misses the cache. A compile error is a UserError whose message holds NVRTC's log. Needs no GPU.
CompileResult compile_cuda(const std::string& source, const CompileOptions& options = {});

// The cache key compile_cuda would use (exposed for tests and for `tessel compile`).
std::string compile_cache_key(const std::string& source, const CompileOptions& options);

// The part of that key that is not the program: tessel's NVRTC revision, NVRTC's version, the arch,
// every option and the device headers' digest. A cache of anything derived from a cubin (e.g.
// tessel::compile's whole compiled kernels) includes it so that a new NVRTC or device library
// misses.
std::string compile_environment_key(const CompileOptions& options);

// "major.minor" of the NVRTC library in use.
std::string nvrtc_version();

}  // namespace tessel::runtime
