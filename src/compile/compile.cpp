#include "compile/compile.h"

#include <nvrtc.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <sstream>
#include <unordered_map>

#include "compile/compiled_entry.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "pipeline/pipeline.h"
#include "runtime/compiler.h"
#include "runtime/context.h"
#include "runtime/device_headers.h"
#include "runtime/kernel_cache.h"
#include "runtime/tma.h"
#include "support/diagnostics.h"
#include "support/hash.h"
#include "tessel/lowering_hash.h"  // generated: the hash of the lowering code
#include "transforms/layout/schedule_rows.h"

namespace tessel {
namespace {

using Clock = std::chrono::steady_clock;
double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

std::string shape_str(const std::vector<int64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ",";
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

}  // namespace

CompiledKernel compile(const ir::Operation& kernel, const target::cuda::Target& target,
                       const CompileOptions& options) {
  if (kernel.kind() != ir::OpKind::kernel) {
    user_error(kernel.loc(), "compile: expected a kernel op, not ", kernel.name());
  }
  if (!options.size_hints.empty()) {
    // The hints become the `hint` of the kernel's size ops (what schedule-rows reads), and so
    // part of the text the cache key hashes.
    ir::Module hinted;
    std::unordered_map<const ir::Value*, ir::Value*> mapping;
    hinted.kernels.push_back(ir::clone(kernel, mapping));
    transforms::check_size_hints(hinted, options.size_hints, "compile: size_hints");
    transforms::set_size_hints(*hinted.kernels.front(), options.size_hints);
    CompileOptions rest = options;
    rest.size_hints.clear();
    return compile(*hinted.kernels.front(), target, rest);
  }
  auto start = Clock::now();
  // Cached by content: the input kernel's text, the target, the pass list and the NVRTC flags.
  // Three levels: a hit in this process returns the compiled object; a whole compiled kernel on
  // disk (compiled_entry: lowered IR, emitted CUDA, cubin) skips the passes, the emitter and NVRTC;
  // failing that, lowered IR on disk skips the passes. Dumps and timings force the passes.
  Sha256 hasher;
  // TESSEL_LOWERING_HASH covers the sources of every pass and of the emitter: lowered IR cached by
  // an older tessel is never reused by a newer one.
  hasher.update(std::string("tessel-compile-v2\n") + TESSEL_LOWERING_HASH + "\n" + target.name() +
                "\n" + ir::print_kernel(kernel));
  for (const std::string& pass :
       options.passes.empty() ? pipeline::lowering_passes() : options.passes)
    hasher.update(pass + ",");
  for (const std::string& flag : options.nvrtc_flags) hasher.update(flag + ",");
  hasher.update("nvrtc-arch:" + options.nvrtc_arch);
  std::string key = hasher.hex();
  bool may_skip_passes =
      !options.print_after_all && !options.timing && !std::getenv("TESSEL_DUMP_IR");
  runtime::KernelCache disk(options.cache_directory);
  // The in-process memo is per cache directory: a compile against another directory (a fresh
  // cache) reads and fills that directory.
  std::string memo_key = key + "\n" + disk.directory();
  static std::mutex memo_mutex;
  static std::map<std::string, CompiledKernel> memo;
  if (may_skip_passes && options.use_cache && options.compile_cubin) {
    std::lock_guard<std::mutex> lock(memo_mutex);
    auto it = memo.find(memo_key);
    if (it != memo.end()) {
      CompiledKernel hit = it->second;
      hit.loaded_.reset();
      hit.function_ = {};
      hit.times_ = {};
      hit.times_.cache_hit = true;
      hit.times_.total_ms = ms_since(start);
      return hit;
    }
  }
  CompiledKernel out;
  out.name_ = kernel.signature().name;
  out.loc_ = kernel.loc();
  out.arch_ = options.nvrtc_arch.empty() ? target.name() : options.nvrtc_arch;
  runtime::CompileOptions nvrtc;
  nvrtc.arch = out.arch_;
  nvrtc.flags = options.nvrtc_flags;
  nvrtc.use_cache = options.use_cache;
  nvrtc.cache_directory = options.cache_directory;
  // The whole-kernel entry also depends on what makes the cubin: NVRTC, its options, the device
  // headers (compile_environment_key; none of it is in TESSEL_LOWERING_HASH).
  bool use_entry = may_skip_passes && options.use_cache;
  std::string entry_key;
  if (use_entry) {
    Sha256 entry_hasher;
    entry_hasher.update(std::string(compiled_entry::kFormat) + "\n" + key + "\n" +
                        runtime::compile_environment_key(nvrtc));
    entry_key = "kernel-" + entry_hasher.hex();
  }
  bool from_entry = false;  // lowered IR and emitted kernel came from the disk entry
  if (use_entry) {
    if (std::optional<std::string> payload = disk.load(entry_key)) {
      std::optional<compiled_entry::Entry> entry = compiled_entry::deserialize(*payload);
      if (entry) {
        try {
          out.module_ =
              std::shared_ptr<ir::Module>(ir::parse_module(entry->lowered_ir, "<cached kernel>"));
          from_entry = out.module_->kernels.size() == 1;
        } catch (const UserError&) {
          from_entry = false;
        }
      }
      if (from_entry) {
        out.lowered_ir_ = std::move(entry->lowered_ir);
        out.emitted_ = std::move(entry->emitted);
        out.times_.from_disk = true;
        if (options.compile_cubin && !entry->cubin.empty()) {
          out.cubin_ = std::move(entry->cubin);
          out.cache_key_ = std::move(entry->cubin_key);
          out.times_.cache_hit = true;
        }
      } else {
        // Its checksum held but it does not read back (a format this tessel does not know):
        // drop it; the compile below writes a good one.
        disk.remove(entry_key);
        out.module_.reset();
      }
    }
  }
  std::optional<std::string> lowered;
  if (!from_entry) {
    if (may_skip_passes && options.use_cache) lowered = disk.load("lowered-" + key);
    if (lowered) {
      out.module_ = std::shared_ptr<ir::Module>(ir::parse_module(*lowered, "<cached lowered IR>"));
      out.lowered_ir_ = *lowered;
    } else {
      out.module_ = std::make_shared<ir::Module>();
      std::unordered_map<const ir::Value*, ir::Value*> mapping;
      out.module_->kernels.push_back(ir::clone(kernel, mapping));
      // The passes read the target from the block grid (a kernel may pin it there).
      ir::walk(out.module_->kernels.front().get(), [&](ir::Operation* op) {
        if (op->kind() != ir::OpKind::block_grid) return;
        if (op->has_attr("target") && op->str_attr("target") != target.name()) {
          user_error(op->loc(), "compile: the kernel pins target ", op->str_attr("target"),
                     " but is compiled for ", target.name());
        }
        op->set_attr("target", ir::Attribute::string(target.name()));
      });
      pipeline::PipelineOptions pipeline_options;
      pipeline_options.print_after_all = options.print_after_all;
      pipeline_options.dump = options.dump;
      pipeline_options.timing = options.timing;
      pipeline_options.passes = options.passes;
      pipeline::lower(*out.module_, pipeline_options);
      out.lowered_ir_ = ir::print(*out.module_);
    }
  }
  out.times_.pipeline_ms = ms_since(start);

  auto emit_start = Clock::now();
  if (!from_entry) {
    try {
      out.emitted_ = target::cuda::emit_cuda(*out.module_->kernels.front());
    } catch (const UserError&) {
      if (!lowered) throw;
      // Cached IR has no source locations. Should it fail to emit (a corrupt entry), drop it and
      // lower the user's own kernel again, so that any error names the user's source.
      CompileOptions uncached = options;
      uncached.use_cache = false;
      return compile(kernel, target, uncached);
    }
    // Only IR that emits is cached: the cached text has no source locations, so errors must come
    // from a run of the passes on the user's own kernel.
    if (!lowered && options.use_cache && may_skip_passes)
      disk.store("lowered-" + key, out.lowered_ir_);
  }
  out.times_.emit_ms = ms_since(emit_start);

  bool compiled_cubin = false;
  if (options.compile_cubin && out.cubin_.empty()) {
    nvrtc.name = out.emitted_.entry + ".cu";
    runtime::CompileResult result = runtime::compile_cuda(out.emitted_.source, nvrtc);
    out.cubin_ = std::move(result.cubin);
    out.cache_key_ = result.cache_key;
    out.times_.nvrtc_ms = result.milliseconds;
    out.times_.cache_hit = result.cache_hit;
    compiled_cubin = true;
  }
  // A new entry, or one that gains its cubin.
  if (use_entry && (!from_entry || compiled_cubin)) {
    compiled_entry::Entry entry{out.lowered_ir_, out.emitted_, out.cubin_, out.cache_key_};
    disk.store(entry_key, compiled_entry::serialize(entry));
  }
  out.times_.total_ms = ms_since(start);
  if (options.use_cache && options.compile_cubin) {
    std::lock_guard<std::mutex> lock(memo_mutex);
    memo.emplace(memo_key, out);
  }
  return out;
}

std::map<std::string, int64_t> CompiledKernel::bind(const std::vector<KernelArg>& args) const {
  const ir::Operation& kernel = *module_->kernels.front();
  const ir::Block& body = *kernel.region(0);
  const SourceLocation& loc = loc_;  // the user's kernel, also when the IR came from the cache
  if (args.size() != body.arguments().size()) {
    user_error(loc, "launch of @", name_, ": expected ", body.arguments().size(),
               " arguments, got ", args.size());
  }
  std::map<std::string, int64_t> sizes;
  for (size_t i = 0; i < args.size(); ++i) {
    const ir::Value* param = body.argument(static_cast<int>(i));
    const ir::Type& t = param->type();
    // Built only for an error message: a launch's checks stay cheap (host launch overhead).
    auto what = [&] {
      return "launch of @" + name_ + ": argument " + std::to_string(i) + " (%" + param->name() +
             ")";
    };
    if (t.is_tensor()) {
      const TensorArg* tensor = std::get_if<TensorArg>(&args[i]);
      if (!tensor) user_error(loc, what(), " must be a tensor of type ", t.str());
      if (tensor->element != t.element()) {
        user_error(loc, what(), " has element type ", ir::to_string(tensor->element),
                   " but the kernel declares ", t.str());
      }
      if (static_cast<int>(tensor->shape.size()) != t.rank()) {
        user_error(loc, what(), " has shape ", shape_str(tensor->shape), " of rank ",
                   tensor->shape.size(), " but the kernel declares ", t.str());
      }
      if (tensor->data % 16 != 0) {
        user_error(loc, what(), " is not 16-byte aligned (vector accesses need it)");
      }
      for (int d = 0; d < t.rank(); ++d) {
        const ir::Extent& e = t.shape()[d];
        int64_t got = tensor->shape[d];
        if (e.is_static()) {
          if (got != e.value) {
            user_error(loc, what(), " has shape ", shape_str(tensor->shape),
                       " but the kernel declares ", t.str(), " (extent ", d, " must be ", e.value,
                       ")");
          }
          continue;
        }
        auto [it, fresh] = sizes.emplace(e.symbol, got);
        if (!fresh && it->second != got) {
          user_error(loc, what(), " has shape ", shape_str(tensor->shape), ", which sets ",
                     e.symbol, " = ", got, ", but an earlier argument set ", e.symbol, " = ",
                     it->second);
        }
      }
    } else {
      if (std::holds_alternative<TensorArg>(args[i])) {
        user_error(loc, what(), " must be a scalar of type ", t.str(), ", not a tensor");
      }
      if (ir::is_float(t.element()) && !std::holds_alternative<double>(args[i])) {
        user_error(loc, what(), " must be a floating-point scalar (", t.str(), ")");
      }
      if (!ir::is_float(t.element()) && !std::holds_alternative<int64_t>(args[i])) {
        user_error(loc, what(), " must be an integer scalar (", t.str(), ")");
      }
    }
  }
  for (const std::string& s : kernel.signature().sizes) {
    auto it = sizes.find(s);
    if (it == sizes.end()) {
      user_error(loc, "launch of @", name_, ": no tensor argument determines the size ", s);
    }
    if (it->second < 0 || it->second > (int64_t{1} << 31) - 1) {
      user_error(loc, "launch of @", name_, ": size ", s, " = ", it->second,
                 " is outside [0, 2^31)");
    }
  }
  for (const ir::Fact& f : kernel.signature().facts) {
    int64_t v = sizes.at(f.symbol);
    if (v % f.divisor != 0) {
      user_error(loc, "launch of @", name_, ": the kernel requires ", f.symbol, " % ", f.divisor,
                 " == 0, but ", f.symbol, " = ", v);
    }
  }
  return sizes;
}

int64_t CompiledKernel::launch_sm_count() const {
  // Only a kernel that reads sm_count (a persistent grid) asks the device.
  bool reads = false;
  ir::walk(module_->kernels.front().get(),
           [&](ir::Operation* op) { reads = reads || op->kind() == ir::OpKind::sm_count; });
  if (!reads) return 1;
  // A persistent grid is sized for the blocks the device holds at once, once the kernel is loaded
  // (prepare_launch asks the occupancy API): a block beyond those would wait for an earlier one to
  // finish all its tiles, and a block with little shared memory and few registers (a W4A16 GEMV
  // tile of 64 rows) shares its SM with others, so one block per SM would leave the SM's
  // schedulers mostly idle. For clusters it is the clusters that fit times the cluster. A GEMM
  // block that holds most of the SM's shared memory gets one block per SM, as before.
  if (resident_blocks_ > 0) return resident_blocks_;
  return runtime::context().sm_count();
}

bool overlapping_launches_allowed() {
  // Read once: TESSEL_OVERLAP_LAUNCHES=0 launches every kernel without programmatic stream
  // serialization (its grid_wait then returns at once), for A/B timings of the same cubins.
  static const bool allowed = [] {
    const char* env = std::getenv("TESSEL_OVERLAP_LAUNCHES");
    return !(env && std::string(env) == "0");
  }();
  return allowed;
}

runtime::LaunchConfig CompiledKernel::launch_config(const std::map<std::string, int64_t>& sizes,
                                                    std::optional<int64_t> sm_count) const {
  std::vector<int64_t> grid = interp::grid_extents(*module_->kernels.front(), sizes,
                                                   sm_count ? *sm_count : launch_sm_count());
  runtime::LaunchConfig config;
  unsigned* dims[] = {&config.grid.x, &config.grid.y, &config.grid.z};
  if (grid.size() > 3)
    user_error(SourceLocation::unknown(), "launch of @", name_, ": grid rank > 3");
  for (size_t i = 0; i < grid.size(); ++i) {
    int64_t limit = i == 0 ? (int64_t{1} << 31) - 1 : 65535;
    if (grid[i] > limit) {
      user_error(SourceLocation::unknown(), "launch of @", name_, ": grid extent ", i, " = ",
                 grid[i], " exceeds the device limit ", limit);
    }
    *dims[i] = static_cast<unsigned>(grid[i]);
  }
  config.block.x = static_cast<unsigned>(emitted_.threads);
  config.cluster.x = static_cast<unsigned>(emitted_.cluster);
  config.dynamic_shared_bytes = static_cast<unsigned>(emitted_.dynamic_shared_bytes);
  config.overlap_previous = emitted_.overlaps_launches && overlapping_launches_allowed();
  return config;
}

namespace {

bool same_arguments(const std::vector<KernelArg>& a, const std::vector<KernelArg>& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].index() != b[i].index()) return false;
    if (const TensorArg* x = std::get_if<TensorArg>(&a[i])) {
      const TensorArg& y = std::get<TensorArg>(b[i]);
      if (x->data != y.data || x->element != y.element || x->shape != y.shape) return false;
    } else if (const double* x = std::get_if<double>(&a[i])) {
      if (*x != std::get<double>(b[i])) return false;
    } else if (std::get<int64_t>(a[i]) != std::get<int64_t>(b[i])) {
      return false;
    }
  }
  return true;
}

}  // namespace

void CompiledKernel::launch(const std::vector<KernelArg>& args, CUstream stream) {
  // A relaunch with the arguments of the previous launch reuses everything derived from them
  // (the checks' outcome, the grid, the parameter block, the TMA descriptors): only the driver
  // call remains, which keeps the host overhead of repeated launches low.
  // (A copied or moved kernel object prepares again: slots_ points into the object's own storage.)
  if (!launch_ready_ || prepared_by_ != this || !same_arguments(args, last_args_)) {
    prepare_launch(args);
  }
  if (!launch_ready_) return;  // an empty problem
  runtime::LaunchConfig config = *last_config_;
  config.stream = stream;
  function_.launch(config, slots_.data());
}

void CompiledKernel::prepare_launch(const std::vector<KernelArg>& args) {
  launch_ready_ = false;
  std::map<std::string, int64_t> sizes = bind(args);
  if (cubin_.empty()) {
    user_error(SourceLocation::unknown(), "launch of @", name_,
               ": the kernel was compiled without a cubin (compile_cubin = false)");
  }
  if (!loaded_) {
    loaded_ = std::make_shared<runtime::Module>(runtime::Module::load(cubin_));
    function_ = loaded_->function(emitted_.entry);
    runtime::LaunchConfig probe;
    probe.block.x = static_cast<unsigned>(emitted_.threads);
    probe.dynamic_shared_bytes = static_cast<unsigned>(emitted_.dynamic_shared_bytes);
    if (emitted_.cluster > 1) {
      probe.cluster.x = static_cast<unsigned>(emitted_.cluster);
      int clusters = function_.max_active_clusters(probe);
      if (clusters <= 0) {
        user_error(SourceLocation::unknown(), "launch of @", name_, ": no cluster of ",
                   emitted_.cluster, " blocks of ", emitted_.threads, " threads and ",
                   emitted_.dynamic_shared_bytes, " bytes of shared memory fits on this device");
      }
      resident_blocks_ = int64_t{clusters} * emitted_.cluster;
    } else {
      // 0 (the occupancy query found no room) falls back to the SM count; the launch then
      // reports what does not fit.
      resident_blocks_ =
          int64_t{function_.max_active_blocks_per_sm(probe)} * runtime::context().sm_count();
    }
  }
  // The grid comes from evaluating the kernel's block_grid; relaunches with the same sizes reuse
  // it.
  if (!last_config_ || sizes != last_sizes_) {
    last_config_ = launch_config(sizes);
    last_sizes_ = sizes;
  }
  if (last_config_->grid.count() == 0) return;  // an empty problem
  // Argument storage in the emitted parameter order (reserved up front: slots point into it).
  pointers_.clear();
  floats_.clear();
  ints_.clear();
  slots_.clear();
  pointers_.reserve(emitted_.params.size());
  floats_.reserve(emitted_.params.size());
  ints_.reserve(emitted_.params.size());
  size_t next_arg = 0;
  size_t next_descriptor = 0;
  // Every descriptor's slot exists before the first is pointed at (a resize would move them).
  size_t descriptors = 0;
  for (const target::cuda::KernelParam& p : emitted_.params) {
    descriptors += p.kind == target::cuda::KernelParam::Kind::tma_descriptor;
  }
  if (tma_descriptors_.size() < descriptors) tma_descriptors_.resize(descriptors);
  for (const target::cuda::KernelParam& p : emitted_.params) {
    using Kind = target::cuda::KernelParam::Kind;
    if (p.kind == Kind::tma_descriptor) {
      // cuLaunchKernelEx copies the 128-byte map from this address (the kernel's parameter is
      // `const __grid_constant__`); nothing writes through it.
      const CUtensorMap& map =
          tma_descriptor(next_descriptor++, p, std::get<TensorArg>(args.at(p.tensor)));
      slots_.push_back(const_cast<CUtensorMap*>(&map));
      continue;
    }
    if (p.kind == Kind::size) {
      ints_.push_back(static_cast<int>(sizes.at(p.name)));
      slots_.push_back(&ints_.back());
      continue;
    }
    if (p.kind == Kind::sm_count) {
      ints_.push_back(static_cast<int>(launch_sm_count()));
      slots_.push_back(&ints_.back());
      continue;
    }
    if (p.kind == Kind::workspace) {
      pointers_.push_back(workspace(static_cast<size_t>(p.tensor), sizes));
      slots_.push_back(&pointers_.back());
      continue;
    }
    const KernelArg& a = args.at(next_arg++);
    if (p.kind == Kind::tensor) {
      pointers_.push_back(std::get<TensorArg>(a).data);
      slots_.push_back(&pointers_.back());
    } else if (ir::is_float(p.type.element())) {
      floats_.push_back(static_cast<float>(std::get<double>(a)));
      slots_.push_back(&floats_.back());
    } else {
      ints_.push_back(static_cast<int>(std::get<int64_t>(a)));
      slots_.push_back(&ints_.back());
    }
  }
  last_args_ = args;
  prepared_by_ = this;
  launch_ready_ = true;
}

CUdeviceptr CompiledKernel::workspace(size_t index, const std::map<std::string, int64_t>& sizes) {
  if (!workspaces_ || workspaces_owner_ != this) {
    workspaces_ = std::make_shared<std::vector<runtime::DeviceBuffer>>();
    workspaces_owner_ = this;
  }
  const std::vector<int64_t> bytes =
      interp::workspace_bytes(*module_->kernels.front(), sizes, launch_sm_count());
  TESSEL_ASSERT(index < bytes.size(), "a workspace parameter without its workspace op");
  if (workspaces_->size() < bytes.size()) workspaces_->resize(bytes.size());
  runtime::DeviceBuffer& buffer = (*workspaces_)[index];
  const auto need = static_cast<std::size_t>(std::max<int64_t>(bytes[index], 16));
  if (buffer.bytes() < need) {
    // The previous launches that used the old buffer may still run: wait before freeing it.
    if (buffer.bytes() > 0) runtime::context().synchronize();
    buffer = runtime::DeviceBuffer(need);
    buffer.fill_bytes(0);
  }
  return buffer.ptr();
}

const CUtensorMap& CompiledKernel::tma_descriptor(size_t index,
                                                  const target::cuda::KernelParam& param,
                                                  const TensorArg& tensor) {
  TESSEL_ASSERT(index < tma_descriptors_.size(), "TMA descriptor slots are made before use");
  CachedDescriptor& cached = tma_descriptors_[index];
  if (cached.valid && cached.data == tensor.data && cached.shape == tensor.shape) return cached.map;
  runtime::TmaSpec spec;
  switch (tensor.element) {
    case ir::ScalarKind::f16:
      spec.element = runtime::TmaElement::f16;
      break;
    case ir::ScalarKind::bf16:
      spec.element = runtime::TmaElement::bf16;
      break;
    case ir::ScalarKind::f32:
      spec.element = runtime::TmaElement::f32;
      break;
    case ir::ScalarKind::f8e4m3:
    case ir::ScalarKind::f8e5m2:
      spec.element = runtime::TmaElement::u8;  // TMA moves bytes; wgmma reads them as FP8
      break;
    case ir::ScalarKind::u4:
    case ir::ScalarKind::i4:
      spec.element = runtime::TmaElement::u8;  // two values a byte: halved innermost below
      break;
    default:
      TESSEL_ASSERT(false, "TMA descriptor for element type ", ir::to_string(tensor.element));
  }
  spec.address = tensor.data;
  // Row-major: the last dimension is TMA's innermost. An empty extent still needs a legal map
  // (its loops run zero times, so the map is never read).
  uint64_t stride = static_cast<uint64_t>(runtime::element_bytes(spec.element));
  const bool packed4 = tensor.element == ir::ScalarKind::u4 || tensor.element == ir::ScalarKind::i4;
  for (size_t d = tensor.shape.size(); d-- > 0;) {
    uint64_t extent = static_cast<uint64_t>(std::max<int64_t>(tensor.shape[d], 1));
    // Packed 4-bit rows are bytes to TMA (the emitter's boxes count values; rows of an even
    // number of values, the kernel's facts, keep every value pair in one byte).
    if (packed4 && d + 1 == tensor.shape.size()) extent = (extent + 1) / 2;
    spec.shape.push_back(extent);
    if (d + 1 < tensor.shape.size()) spec.strides_bytes.push_back(stride);
    stride *= extent;
  }
  for (int64_t b : param.box) spec.box.push_back(static_cast<uint32_t>(b));
  if (packed4 && !spec.box.empty()) spec.box[0] = (spec.box[0] + 1) / 2;
  spec.swizzle = param.swizzle_bytes == 128  ? runtime::TmaSwizzle::b128
                 : param.swizzle_bytes == 64 ? runtime::TmaSwizzle::b64
                 : param.swizzle_bytes == 32 ? runtime::TmaSwizzle::b32
                                             : runtime::TmaSwizzle::none;
  if (param.optional) {
    // The kernel reads this descriptor only when the tensor qualifies (its IR guards the use):
    // one that does not (rows not 16-byte multiples, say) gets an empty map, never read.
    try {
      runtime::validate_tma_spec(spec);
    } catch (const UserError&) {
      cached.map = CUtensorMap{};
      cached.data = tensor.data;
      cached.shape = tensor.shape;
      cached.valid = true;
      return cached.map;
    }
  }
  cached.map = runtime::make_tma_descriptor(spec);
  cached.data = tensor.data;
  cached.shape = tensor.shape;
  cached.valid = true;
  return cached.map;
}

std::string native_arch() {
  int cc = runtime::context().compute_capability();
  return cc == 90 ? "sm_90a" : "sm_" + std::to_string(cc);
}

std::string compile_ptx(const std::string& source, const std::string& arch) {
  auto check = [](nvrtcResult r, const char* what) {
    if (r != NVRTC_SUCCESS) {
      user_error(SourceLocation::unknown(), what, " failed: ", nvrtcGetErrorString(r));
    }
  };
  std::vector<std::string> contents, names;
  for (const runtime::EmbeddedHeader& h : runtime::device_headers()) {
    contents.emplace_back(h.content);
    names.emplace_back(h.name);
  }
  std::vector<const char*> cp, np;
  for (size_t i = 0; i < contents.size(); ++i) {
    cp.push_back(contents[i].c_str());
    np.push_back(names[i].c_str());
  }
  nvrtcProgram program;
  check(nvrtcCreateProgram(&program, source.c_str(), "kernel.cu", static_cast<int>(cp.size()),
                           cp.data(), np.data()),
        "nvrtcCreateProgram");
  std::string arch_option = "--gpu-architecture=compute_" + arch.substr(3);
  const char* opts[] = {arch_option.c_str(), "-std=c++17", "-default-device"};
  nvrtcResult compiled = nvrtcCompileProgram(program, 3, opts);
  std::string ptx;
  if (compiled == NVRTC_SUCCESS) {
    size_t size = 0;
    nvrtcGetPTXSize(program, &size);
    ptx.resize(size);
    nvrtcGetPTX(program, ptx.data());
    while (!ptx.empty() && ptx.back() == '\0') ptx.pop_back();
  } else {
    size_t size = 0;
    nvrtcGetProgramLogSize(program, &size);
    std::string log(size, '\0');
    nvrtcGetProgramLog(program, log.data());
    nvrtcDestroyProgram(&program);
    user_error(SourceLocation::unknown(), "CUDA compilation failed:\n", log);
  }
  nvrtcDestroyProgram(&program);
  return ptx;
}

}  // namespace tessel
