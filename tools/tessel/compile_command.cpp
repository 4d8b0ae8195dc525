// `tessel compile FILE --emit=ir|cuda|ptx|cubin`: runs the pipeline on a textual kernel and prints
// the lowered IR, the generated CUDA C++, its PTX, or writes the cubin.
#include <fstream>
#include <iostream>
#include <sstream>

#include "compile/compile.h"
#include "ir/parser.h"
#include "support/diagnostics.h"
#include "tessel/command.h"

namespace tessel::tool {
namespace {

int run_compile(const std::vector<std::string>& args) {
  std::string file, emit = "cuda", kernel_name, arch = "sm_90a", output, passes_text;
  bool print_after_all = false, time_passes = false, time_compile = false;
  for (size_t i = 0; i < args.size(); ++i) {
    const std::string& arg = args[i];
    auto value = [&](const std::string& flag) -> std::string {
      if (arg.rfind(flag + "=", 0) == 0) return arg.substr(flag.size() + 1);
      if (i + 1 >= args.size()) user_error(SourceLocation::unknown(), flag, " needs a value");
      return args[++i];
    };
    if (arg.rfind("--emit", 0) == 0) {
      emit = value("--emit");
    } else if (arg.rfind("--kernel", 0) == 0) {
      kernel_name = value("--kernel");
    } else if (arg.rfind("--target", 0) == 0) {
      arch = value("--target");
    } else if (arg == "-o" || arg.rfind("--output", 0) == 0) {
      if (arg == "-o") {
        if (i + 1 >= args.size()) user_error(SourceLocation::unknown(), "-o needs a value");
        output = args[++i];
      } else {
        output = value("--output");
      }
    } else if (arg.rfind("--passes", 0) == 0) {
      passes_text = value("--passes");
    } else if (arg == "--print-after-all") {
      print_after_all = true;
    } else if (arg == "--time-passes") {
      time_passes = true;
    } else if (arg == "--time") {
      time_compile = true;
    } else if (arg.rfind("--", 0) == 0) {
      user_error(SourceLocation::unknown(), "unknown option '", arg,
                 "' (see `tessel help compile`)");
    } else if (file.empty()) {
      file = arg;
    } else {
      user_error(SourceLocation::unknown(), "compile takes one input file");
    }
  }
  if (file.empty()) user_error(SourceLocation::unknown(), "compile needs an input file");
  if (emit != "ir" && emit != "cuda" && emit != "ptx" && emit != "cubin") {
    user_error(SourceLocation::unknown(), "--emit must be one of ir, cuda, ptx, cubin (got '", emit,
               "')");
  }
  if (emit == "cubin" && output.empty()) {
    user_error(SourceLocation::unknown(), "--emit=cubin writes a binary: name the file with -o");
  }
  target::cuda::Target target = target::cuda::Target::named(arch);
  std::ifstream in(file);
  if (!in) user_error(SourceLocation::unknown(), "cannot open '", file, "'");
  std::stringstream text;
  text << in.rdbuf();
  auto module = ir::parse_module(text.str(), file);
  if (module->kernels.empty()) user_error(SourceLocation::unknown(), file, " holds no kernel");
  const ir::Operation* kernel = module->kernels[0].get();
  if (!kernel_name.empty()) {
    kernel = module->find_kernel(kernel_name);
    if (!kernel) user_error(SourceLocation::unknown(), "no kernel @", kernel_name, " in ", file);
  }
  CompileOptions options;
  options.print_after_all = print_after_all;
  options.dump = &std::cout;
  std::ostringstream timing;
  if (time_passes) options.timing = &timing;
  options.compile_cubin = emit == "cubin";
  // --passes=a,b replaces the default pipeline (--passes=verify: the input is lowered IR already).
  for (size_t p = 0; !passes_text.empty() && p <= passes_text.size();) {
    size_t q = passes_text.find(',', p);
    if (q == std::string::npos) q = passes_text.size();
    if (q > p) options.passes.push_back(passes_text.substr(p, q - p));
    p = q + 1;
  }
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
     "                      [--time-passes] [--time]\n"
     "  Runs the pass pipeline on the kernel (the first in FILE unless --kernel), then prints the\n"
     "  lowered IR, the generated CUDA C++ (default) or its PTX, or writes the cubin (-o needed).\n"
     "  Register tensors need thread-value layouts (pinned, or from layout synthesis).\n"
     "  --passes=a,b runs those passes instead of the pipeline (--passes=verify: FILE is lowered\n"
     "  IR already, e.g. the output of --emit=ir edited by hand).\n"
     "  TESSEL_DUMP_IR=1 or --print-after-all prints the IR after every pass; --time-passes times\n"
     "  each pass (and so runs them all); --time prints the compile's phases, cache hits "
     "included.\n",
     &run_compile});

}  // namespace
}  // namespace tessel::tool
