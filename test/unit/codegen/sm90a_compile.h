// What the codegen tests ask of a kernel compiled for sm_90a: its CUDA source from the default
// pipeline (no cubin), and ptxas's report (-v) of compiling a source, which names the registers,
// the spills and the warnings (C7510-C7515: a wgmma serialized) the tests check.
#pragma once

#include <string>

#include "compile/compile.h"
#include "runtime/compiler.h"

namespace tessel::testing {

// `kernel` through the default pipeline to sm_90a CUDA, not compiled further.
inline CompiledKernel compile_sm90a_source(const ir::Operation& kernel) {
  CompileOptions options;
  options.compile_cubin = false;
  return compile(kernel, target::cuda::Target::sm90a(), options);
}

// ptxas's report of compiling `cuda` for sm_90a (a real compile: the kernel cache is not used,
// since the log exists only then).
inline std::string ptxas_report(const std::string& cuda) {
  runtime::CompileOptions nvrtc;
  nvrtc.arch = "sm_90a";
  nvrtc.use_cache = false;
  nvrtc.flags = {"--ptxas-options=-v"};
  return runtime::compile_cuda(cuda, nvrtc).log;
}

}  // namespace tessel::testing
