// `tessel compile FILE --emit=ir|cuda|ptx|cubin`: runs the pipeline on a textual kernel and prints
// the lowered IR, the generated CUDA C++, its PTX, or writes the cubin.
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>

#include "compile/compile.h"
#include "ir/parser.h"
#include "support/command_line.h"
#include "support/diagnostics.h"
#include "tessel/command.h"
#include "transforms/layout/schedule_rows.h"

namespace tessel::tool {
namespace {

int run_compile(const std::vector<std::string>& args) {
  std::string emit = "cuda", kernel_name, arch = "sm_90a", output;
  bool print_after_all = false, time_passes = false, time_compile = false;
  CompileOptions options;
  std::map<std::string, int64_t> hints;
  // --passes=a,b replaces the default pipeline (--passes=verify: the input is lowered IR already).
  std::string file = single_input_file(OptionParser("compile")
                                           .value("--emit", emit)
                                           .value("--kernel", kernel_name)
                                           .value("--target", arch)
                                           .value("--output -o", output)
                                           .list("--passes", options.passes)
                                           .flag("--print-after-all", print_after_all)
                                           .flag("--time-passes", time_passes)
                                           .flag("--time", time_compile)
                                           .value("--size-hint",
                                                  [&](const std::string& text) {
                                                    parse_sizes(text, hints, "--size-hint");
                                                  })
                                           .parse(args),
                                       "compile");
  if (emit != "ir" && emit != "cuda" && emit != "ptx" && emit != "cubin") {
    user_error(SourceLocation::unknown(), "--emit must be one of ir, cuda, ptx, cubin (got '", emit,
               "')");
  }
  if (emit == "cubin" && output.empty()) {
    user_error(SourceLocation::unknown(), "--emit=cubin writes a binary: name the file with -o");
  }
  target::cuda::Target target = target::cuda::Target::named(arch);
  auto module = ir::parse_module(read_input_file(file), file);
  if (module->kernels.empty()) user_error(SourceLocation::unknown(), file, " holds no kernel");
  transforms::check_size_hints(*module, hints);
  for (const auto& k : module->kernels) transforms::set_size_hints(*k, hints);
  const ir::Operation* kernel = module->kernels[0].get();
  if (!kernel_name.empty()) {
    kernel = module->find_kernel(kernel_name);
    if (!kernel) user_error(SourceLocation::unknown(), "no kernel @", kernel_name, " in ", file);
  }
  options.print_after_all = print_after_all;
  options.dump = &std::cout;
  std::ostringstream timing;
  if (time_passes) options.timing = &timing;
  options.compile_cubin = emit == "cubin";
  CompiledKernel compiled = compile(*kernel, target, options);
  std::string result;
  if (emit == "ir") result = compiled.lowered_ir();
  if (emit == "cuda") result = compiled.cuda_source();
  if (emit == "ptx") result = compile_ptx(compiled.cuda_source(), target.name());
  if (emit == "cubin") result = compiled.cubin();
  if (output.empty()) {
    std::cout << result;
  } else {
    std::ofstream out(output, std::ios::binary);
    if (!out) user_error(SourceLocation::unknown(), "cannot write '", output, "'");
    out << result;
  }
  if (time_passes || time_compile) {
    std::cerr << timing.str();
    char line[200];
    std::snprintf(line, sizeof line,
                  "pipeline %.3f ms, emit %.3f ms, nvrtc %.3f ms%s, total %.3f ms\n",
                  compiled.times().pipeline_ms, compiled.times().emit_ms, compiled.times().nvrtc_ms,
                  compiled.times().cache_hit ? " (cache hit)" : "", compiled.times().total_ms);
    std::cerr << line;
  }
  return 0;
}

const bool registered = register_command(
    {"compile", "compile a textual kernel to lowered IR, CUDA C++, PTX or a cubin",
     "usage: tessel compile FILE [--emit=ir|cuda|ptx|cubin] [--target=sm_90a|sm_80]\n"
     "                      [--kernel NAME] [-o FILE] [--passes=a,b] [--print-after-all]\n"
     "                      [--time-passes] [--time] [--size-hint M=8192,N=1024]\n"
     "  Runs the pass pipeline on the kernel (the first in FILE, - for stdin, unless --kernel),\n"
     "  then prints the lowered IR, the generated CUDA C++ (default) or its PTX, or writes the\n"
     "  cubin (-o needed).\n"
     "  Register tensors need thread-value layouts (pinned, or from layout synthesis).\n"
     "  --size-hint: the sizes schedule-rows tunes a row program for (correct for any size).\n"
     "  --passes=a,b runs those passes instead of the pipeline (--passes=verify: FILE is lowered\n"
     "  IR already, e.g. the output of --emit=ir edited by hand).\n"
     "  TESSEL_DUMP_IR=1 or --print-after-all prints the IR after every pass; --time-passes times\n"
     "  each pass (and so runs them all); --time prints the compile's phases, cache hits "
     "included.\n",
     &run_compile});

}  // namespace
}  // namespace tessel::tool
