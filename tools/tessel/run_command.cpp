// `tessel run FILE --interpret|--gpu --size M=..,N=..`: runs a kernel written in tile IR text in
// the CPU interpreter or (compiled) on the GPU, on random inputs, and prints a checksum and the
// output's first elements; `--gpu --check` also interprets it and prints the relative error.
#include <algorithm>
#include <cinttypes>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>

#include "compile/compile.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"
#include "runtime/buffer.h"
#include "runtime/context.h"
#include "support/command_line.h"
#include "support/diagnostics.h"
#include "support/hash.h"
#include "tessel/command.h"
#include "transforms/layout/schedule_rows.h"

namespace tessel::tool {
namespace {

using interp::HostTensor;

// Host memory `tessel run` may take for the kernel's tensors unless --memory-limit says otherwise:
// enough for the example kernels at sizes the interpreter finishes in minutes, and a refusal
// instead of swapping when a size is mistyped (--size M=100000 on a [M,M] f32 tensor is 40 GB).
constexpr int64_t kDefaultMemoryLimitGiB = 4;

// Every --size name must be one of the kernel's sizes: a misspelt one would otherwise be ignored.
void check_size_names(const ir::Operation& kernel, const std::map<std::string, int64_t>& sizes) {
  const std::vector<std::string>& known = kernel.signature().sizes;
  for (const auto& [name, value] : sizes) {
    if (std::find(known.begin(), known.end(), name) != known.end()) continue;
    std::string list;
    for (const std::string& size : known) list += (list.empty() ? "" : ", ") + size;
    user_error(SourceLocation::unknown(), "--size ", name, ": @", kernel.signature().name,
               " has no size ", name,
               list.empty() ? " (it has no sizes)" : " (its sizes: " + list + ")");
  }
}

// Bytes of host memory a tensor of this type takes at these sizes (as HostTensor stores it), as a
// double so that absurd sizes cannot overflow before they are refused.
double host_bytes(const ir::Type& type, const std::map<std::string, int64_t>& sizes) {
  double elements = 1;
  for (int64_t extent : interp::concrete_shape(type, sizes))
    elements *= static_cast<double>(extent);
  int bits = type.element() == ir::ScalarKind::i1 ? 8 : ir::bit_width(type.element());
  return std::ceil(elements * bits / 8);
}

// Random contents: floats uniform in [-1, 1) rounded to the element type, integers over a small
// range of the type.
void randomize(HostTensor& t, std::mt19937_64& rng) {
  std::uniform_real_distribution<double> real(-1.0, 1.0);
  ir::ScalarKind k = t.element();
  for (int64_t i = 0; i < t.size(); ++i) {
    if (ir::is_float(k)) {
      t.set_float(i, real(rng));
    } else if (k == ir::ScalarKind::i1) {
      t.set_int(i, static_cast<int64_t>(rng() & 1));
    } else {
      int64_t lo = ir::is_signed(k) ? -8 : 0, hi = ir::is_signed(k) ? 7 : 15;
      t.set_int(i, lo + static_cast<int64_t>(rng() % static_cast<uint64_t>(hi - lo + 1)));
    }
  }
}

std::string element_str(const HostTensor& t, int64_t i) {
  char buffer[64];
  if (ir::is_float(t.element())) {
    std::snprintf(buffer, sizeof buffer, "%.6g", t.get_float(i));
  } else {
    std::snprintf(buffer, sizeof buffer, "%" PRId64, t.get_int(i));
  }
  return buffer;
}

// The rows that the groups of a grouped kernel share (src/ir/grouped.h) when `ends` is the row
// ends find_group reads: the extent of the dimension that the kernel's first tile window splits
// (of an indirect tile windowed along its indirect dimension, the row map's: the window counts
// map positions, not the tensor's rows — a gather's X has T token rows, its groups split M).
// -1 for any other parameter.
int64_t group_rows(const ir::Operation& kernel, const ir::Value* ends,
                   const std::map<std::string, int64_t>& sizes) {
  bool read = false;
  int64_t rows = -1;
  ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
    if (op->kind() == ir::OpKind::find_group && op->operand(0) == ends) read = true;
    if (op->kind() == ir::OpKind::tile && rows < 0 && ir::tile_window_dim(*op) >= 0) {
      const int dim = ir::tile_window_dim(*op);
      rows = dim == ir::tile_indirect_dim(*op)
                 ? interp::concrete_shape(ir::tile_indirect_map(*op)->type(), sizes)[0]
                 : interp::concrete_shape(op->operand(0)->type(), sizes)[dim];
    }
  });
  return read ? std::max<int64_t>(rows, 0) : -1;
}

// Whether the kernel writes `param`: the destination of a store (`copy %value, %dest`, or a
// lowered kernel's `copy_async %stage, %dest`) is a view of it. The default output of `run` is
// the last tensor the kernel writes, not the last parameter: a grouped kernel's last parameter
// is often its row ends, an input that poisoning would corrupt.
bool kernel_writes(const ir::Operation& kernel, const ir::Value* param) {
  bool writes = false;
  ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
    const bool store = (op->kind() == ir::OpKind::copy && op->num_operands() == 2) ||
                       (op->kind() == ir::OpKind::copy_async && op->num_operands() >= 2);
    if (store && ir::storage_root(op->operand(1)) == param) writes = true;
  });
  return writes;
}

// The rows of the tensor whose indirect tiles read `map` as their row map (src/ir/grouped.h), and
// whether one of those tiles is stored into; rows = -1 when `map` is no tile's row map.
struct MapUse {
  int64_t rows = -1;
  bool stored = false;
};
MapUse row_map_use(const ir::Operation& kernel, const ir::Value* map,
                   const std::map<std::string, int64_t>& sizes) {
  MapUse use;
  ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
    if (op->kind() != ir::OpKind::tile || ir::tile_indirect_map(*op) != map) return;
    const int d = ir::tile_indirect_dim(*op);
    use.rows = interp::concrete_shape(op->operand(0)->type(), sizes)[d];
    const ir::Value* tile = op->result();
    ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* o) {
      const bool store = (o->kind() == ir::OpKind::copy && o->num_operands() == 2) ||
                         (o->kind() == ir::OpKind::copy_async && o->num_operands() >= 2);
      if (store && o->operand(1) == tile) use.stored = true;
    });
  });
  return use;
}

// A row map of random rows below `rows`: distinct ones (a random permutation's first entries)
// where a tile stored through it must not send two positions to one row and there are enough
// rows, else drawn with repeats.
void random_row_map(HostTensor& map, const MapUse& use, std::mt19937_64& rng) {
  std::vector<int64_t> rows(static_cast<size_t>(use.rows));
  for (int64_t r = 0; r < use.rows; ++r) rows[static_cast<size_t>(r)] = r;
  std::shuffle(rows.begin(), rows.end(), rng);
  const bool distinct = use.stored && map.size() <= use.rows;
  for (int64_t i = 0; i < map.size(); ++i) {
    map.set_int(i, distinct ? rows[static_cast<size_t>(i)]
                            : static_cast<int64_t>(rng() % static_cast<uint64_t>(use.rows)));
  }
}

// Row ends of random groups that split `rows` (empty groups included): sorted cut points.
void random_group_ends(HostTensor& ends, int64_t rows, std::mt19937_64& rng) {
  std::vector<int64_t> cuts;
  for (int64_t g = 0; g + 1 < ends.size(); ++g)
    cuts.push_back(static_cast<int64_t>(rng() % (rows + 1)));
  std::sort(cuts.begin(), cuts.end());
  cuts.push_back(rows);
  for (int64_t g = 0; g < ends.size(); ++g) ends.set_int(g, cuts[g]);
}

int run_run(const std::vector<std::string>& args) {
  std::string kernel_name, output_name, schedule_text;
  bool interpret = false, gpu = false, check = false;
  int64_t seed = 1, show = 8, memory_limit_gib = kDefaultMemoryLimitGiB;
  std::vector<std::string> passes;  // instead of the pipeline (as compile --passes)
  interp::RunOptions options;
  std::string file = single_input_file(
      OptionParser("run")
          .flag("--interpret", interpret)
          .flag("--gpu", gpu)
          .flag("--check", check)
          .value("--size", [&](const std::string& text) { parse_sizes(text, options.sizes); })
          .value("--kernel", kernel_name)
          .value("--output", output_name)
          .value("--schedule", schedule_text)
          .integer("--seed", seed, 0)
          .integer("--show", show, 0)
          .list("--passes", passes)
          .integer("--memory-limit", memory_limit_gib, 1)
          .parse(args),
      "run");
  if (interpret == gpu) {
    user_error(SourceLocation::unknown(), "run: choose one of --interpret and --gpu");
  }
  if (check && !gpu) user_error(SourceLocation::unknown(), "run: --check goes with --gpu");
  if (!schedule_text.empty() && !interpret) {
    user_error(SourceLocation::unknown(), "run: --schedule goes with --interpret");
  }
  auto module = ir::parse_module(read_input_file(file), file);
  ir::verify(*module);
  if (module->kernels.empty()) user_error(SourceLocation::unknown(), file, " holds no kernel");
  // A row program is scheduled for the sizes it runs at (schedule-rows' size hints).
  for (const auto& k : module->kernels) transforms::set_size_hints(*k, options.sizes);
  const ir::Operation* kernel = module->kernels[0].get();
  if (!kernel_name.empty()) {
    kernel = module->find_kernel(kernel_name);
    if (!kernel) user_error(SourceLocation::unknown(), "no kernel @", kernel_name, " in ", file);
  }
  check_size_names(*kernel, options.sizes);
  if (!schedule_text.empty()) options.schedule = interp::Schedule::parse(schedule_text);
  std::mt19937_64 rng(static_cast<uint64_t>(seed));
  const ir::Block& body = *kernel->region(0);
  std::vector<std::unique_ptr<HostTensor>> tensors;
  std::vector<interp::Argument> arguments;
  std::vector<std::string> names;
  // Check sizes, facts and the memory the tensors need before allocating anything.
  std::vector<int64_t> grid = interp::grid_extents(*kernel, options.sizes);
  double bytes_needed = 0;
  for (const auto& param : body.arguments()) {
    if (param->type().is_tensor()) bytes_needed += host_bytes(param->type(), options.sizes);
  }
  if (check) bytes_needed *= 2;  // the interpreter's run works on copies of the inputs
  double limit = static_cast<double>(memory_limit_gib) * (int64_t{1} << 30);
  if (bytes_needed > limit) {
    char needed[80];
    std::snprintf(needed, sizeof needed, "%.0f bytes (%.1f GiB)", bytes_needed,
                  bytes_needed / (int64_t{1} << 30));
    user_error(SourceLocation::unknown(), "the tensors of @", kernel->signature().name,
               " at these sizes need ", needed, " of host memory, more than the limit of ",
               memory_limit_gib, " GiB (raise it with --memory-limit=GIB)");
  }
  int output = -1;
  for (const auto& param : body.arguments()) {
    const ir::Type& t = param->type();
    if (t.is_tensor()) {
      auto host =
          std::make_unique<HostTensor>(t.element(), interp::concrete_shape(t, options.sizes));
      randomize(*host, rng);
      if (int64_t rows = group_rows(*kernel, param.get(), options.sizes); rows >= 0)
        random_group_ends(*host, rows, rng);
      if (MapUse use = row_map_use(*kernel, param.get(), options.sizes); use.rows > 0)
        random_row_map(*host, use, rng);
      arguments.emplace_back(host.get());
      names.push_back(param->name());
      if (output_name.empty() ? kernel_writes(*kernel, param.get())
                              : output_name == param->name())
        output = static_cast<int>(tensors.size());
      tensors.push_back(std::move(host));
    } else if (ir::is_float(t.element())) {
      arguments.emplace_back(std::uniform_real_distribution<double>(0.0, 1.0)(rng));
    } else {
      arguments.emplace_back(static_cast<int64_t>(rng() % 8));
    }
  }
  if (output < 0) {
    user_error(SourceLocation::unknown(), output_name.empty()
                                              ? "the kernel writes no tensor parameter (name "
                                                "one with --output)"
                                              : "no tensor parameter %" + output_name);
  }
  double rel_error = -1;
  int64_t nan_elements = 0;
  std::pair<int64_t, const char*> first_nan{-1, ""};
  if (interpret) {
    interp::interpret(*kernel, arguments, options);
  } else {
    // Compile, upload, poison the output, launch, download; --check interprets copies of the
    // same inputs and compares the output by ||gpu - interp|| / ||interp||.
    // The target the kernel pins on its block grid (e.g. an sm_80-path GEMM), else sm_90a.
    std::string target_name = "sm_90a";
    ir::walk(const_cast<ir::Operation*>(kernel), [&](ir::Operation* op) {
      if (op->kind() == ir::OpKind::block_grid && op->has_attr("target"))
        target_name = op->str_attr("target");
    });
    // The cubin is built for the device at hand (an sm_80 cubin does not load on an H100).
    CompileOptions compile_options;
    compile_options.passes = passes;
    compile_options.nvrtc_arch = native_arch();
    CompiledKernel compiled =
        compile(*kernel, target::cuda::Target::named(target_name), compile_options);
    std::vector<std::unique_ptr<HostTensor>> expected;
    if (check) {
      std::vector<interp::Argument> copies = arguments;
      for (size_t i = 0, t = 0; i < copies.size(); ++i) {
        if (!std::holds_alternative<HostTensor*>(copies[i])) continue;
        expected.push_back(std::make_unique<HostTensor>(*tensors[t++]));
        copies[i] = expected.back().get();
      }
      interp::interpret(*kernel, copies, options);
    }
    runtime::context();
    std::vector<runtime::DeviceBuffer> buffers;
    std::vector<KernelArg> launch_args;
    for (size_t i = 0, t = 0; i < arguments.size(); ++i) {
      if (const double* f = std::get_if<double>(&arguments[i])) {
        launch_args.emplace_back(*f);
      } else if (const int64_t* n = std::get_if<int64_t>(&arguments[i])) {
        launch_args.emplace_back(*n);
      } else {
        HostTensor& h = *tensors[t];
        buffers.emplace_back(std::max<size_t>(h.bytes().size(), 16));
        buffers.back().upload(h.bytes().data(), h.bytes().size());
        if (static_cast<int>(t) == output) buffers.back().fill_bytes(0xff);  // poison (NaN)
        launch_args.emplace_back(TensorArg{buffers.back().ptr(), h.shape(), h.element()});
        ++t;
      }
    }
    compiled.launch(launch_args);
    runtime::context().synchronize();
    for (size_t t = 0; t < tensors.size(); ++t) {
      buffers[t].download(tensors[t]->bytes().data(), tensors[t]->bytes().size());
    }
    if (check) {
      const HostTensor& got = *tensors[output];
      const HostTensor& want = *expected[output];
      double num = 0, den = 0;
      for (int64_t e = 0; e < got.size(); ++e) {
        const double g = got.get_float(e), w = want.get_float(e);
        // A NaN on one side only (the GPU's output is poisoned with NaN before the launch: an
        // element it never wrote stays NaN) is counted and named, not summed into a NaN error
        // that would print as nothing; NaN on both sides agrees.
        if (std::isnan(g) || std::isnan(w)) {
          if (std::isnan(g) != std::isnan(w) && nan_elements++ == 0)
            first_nan = {e, std::isnan(g) ? "GPU" : "interpreter"};
          continue;
        }
        num += (g - w) * (g - w);
        den += w * w;
      }
      rel_error = std::sqrt(num / std::max(den, 1e-300));
    }
  }
  std::cout << "kernel @" << kernel->signature().name << ", grid [";
  for (size_t d = 0; d < grid.size(); ++d) std::cout << (d ? ", " : "") << grid[d];
  std::cout << "], " << (interpret ? "interpreted" : "on the GPU") << "\n";
  if (rel_error >= 0) {
    char line[120];
    std::snprintf(line, sizeof line, "relative error vs the interpreter: %.3e\n", rel_error);
    std::cout << line;
    if (nan_elements > 0) {
      std::cout << "error: " << nan_elements << " element(s) of the output are NaN on one side "
                << "only (the first at "
                << "flat index " << first_nan.first << ", NaN on the " << first_nan.second
                << " side; the GPU's output is poisoned with NaN, so an element the kernel never "
                << "wrote reads NaN); the relative error counts the others\n";
    }
  }
  for (size_t i = 0; i < tensors.size(); ++i) {
    const HostTensor& t = *tensors[i];
    std::string_view bytes(reinterpret_cast<const char*>(t.bytes().data()), t.bytes().size());
    double sum = 0;
    for (int64_t e = 0; e < t.size(); ++e) sum += t.get_float(e);
    char line[160];
    std::snprintf(line, sizeof line, "%%%s: %s[", names[i].c_str(),
                  std::string(ir::to_string(t.element())).c_str());
    std::cout << line;
    for (size_t d = 0; d < t.shape().size(); ++d) std::cout << (d ? "," : "") << t.shape()[d];
    std::snprintf(line, sizeof line, "] checksum fnv1a=%016" PRIx64 " sum=%.9g%s\n", fnv1a64(bytes),
                  sum, static_cast<int>(i) == output ? " (output)" : "");
    std::cout << line;
  }
  const HostTensor& out = *tensors[output];
  std::cout << "%" << names[output] << " first elements:";
  for (int64_t e = 0; e < std::min<int64_t>(show, out.size()); ++e)
    std::cout << " " << element_str(out, e);
  std::cout << "\n";
  return nan_elements > 0 ? 1 : 0;
}

const bool registered = register_command(
    {"run", "run a textual kernel in the CPU interpreter or on the GPU",
     "usage: tessel run FILE (--interpret | --gpu [--check]) --size M=..,N=.. [--kernel NAME]\n"
     "                  [--output NAME] [--schedule NAME] [--seed S] [--show N] [--passes a,b]\n"
     "                  [--memory-limit GIB]\n"
     "  Runs the kernel (the first in FILE, or - for stdin, unless --kernel) in the CPU\n"
     "  interpreter, or compiled on the GPU (--gpu; --check also interprets it and prints the\n"
     "  relative error; an output element NaN on one side only, e.g. one the kernel never wrote\n"
     "  over the NaN poison, is named and makes the exit status 1), on random inputs (floats\n"
     "  uniform in [-1,1), rounded to the element type;\n"
     "  the row ends a grouped kernel's find_group reads: random groups splitting the rows;\n"
     "  an indirect tile's row map: random rows of its tensor, distinct where it is stored to;\n"
     "  seed 1 unless --seed), then prints each tensor's checksum and the first N (8) elements of\n"
     "  the output tensor (the last tensor parameter the kernel writes, unless --output). --size\n"
     "  gives every size of the kernel (it may repeat; a name the kernel does not have is an\n"
     "  error).\n"
     "  --passes replaces the compile pipeline (as in compile).\n"
     "  --schedule (with --interpret) picks how a warp-specialized kernel's roles interleave at\n"
     "  their synchronization points: round-robin (the default), producer-first, consumer-first\n"
     "  or random:SEED; a correct kernel gives the same output under every schedule.\n"
     "  The tensors live in host memory (twice with --check), and sizes whose tensors need more\n"
     "  than --memory-limit GiB (default 4) are refused before anything is allocated: a mistyped\n"
     "  size should not swap the machine, and the interpreter would take hours at such sizes.\n",
     &run_run});

}  // namespace
}  // namespace tessel::tool
