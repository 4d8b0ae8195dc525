#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

#include "ir/async.h"
#include "ir/column_blocks.h"
#include "ir/pins.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda {
namespace detail {
namespace {

// Generated kernels include the device library and the emitter's own helpers
// (runtime/device/emitted_support.cuh: conversions, vector accesses).
constexpr const char* kPrelude = R"(#include "tessel_device.cuh"
#include "emitted_support.cuh"
)";

KernelParam param(KernelParam::Kind kind, const std::string& name, const Type& type) {
  KernelParam p;
  p.kind = kind;
  p.name = name;
  p.type = type;
  return p;
}

}  // namespace

bool is_register_float(ScalarKind k) {
  return k == ScalarKind::f16 || k == ScalarKind::bf16 || k == ScalarKind::f32;
}

std::string register_c_type(ScalarKind k) {
  // Packed 4-bit integers (a W4A16 GEMM's weights) are unpacked where they are read from shared
  // memory: each value is held as the float of its exact value, which every cast to f16, bf16
  // or f32 keeps exactly (ints of 4 bits are exact in all three).
  if (is_register_float(k) || k == ScalarKind::u4 || k == ScalarKind::i4) return "float";
  if (k == ScalarKind::index || k == ScalarKind::i32) return "int";
  if (k == ScalarKind::i1) return "bool";
  return {};
}

std::string float_literal(double v) {
  if (std::isnan(v)) return "__int_as_float(0x7fc00000)";
  if (std::isinf(v)) return v > 0 ? "__int_as_float(0x7f800000)" : "__int_as_float(0xff800000)";
  char buffer[64];
  std::snprintf(buffer, sizeof buffer, "%.9g", v);
  std::string s = buffer;
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s + "f";
}

std::string leaf_coord_expr(const Leaf& l, int64_t threads) {
  std::string e = l.prefix == 1 ? "tid" : "tid / " + std::to_string(l.prefix);
  if (l.prefix * l.extent < threads) {
    e = (l.prefix == 1 ? e : "(" + e + ")") + " % " + std::to_string(l.extent);
  }
  return e;
}

EmittedKernel Emitter::run() {
  TESSEL_ASSERT(kernel_.kind() == OpKind::kernel, "emit_cuda needs a kernel op");
  const ir::KernelSignature& sig = kernel_.signature();
  for (const ir::Fact& f : sig.facts) {
    int64_t& d = divisor_[f.symbol];
    d = d == 0 ? f.divisor : std::lcm(d, f.divisor);
  }
  for (const char* reserved : {"tid", "tsl_smem", "tsl_warp", "tsl_wg", "p", "v", "g", "acc", "row",
                               "c0", "c1", "c2"}) {
    used_.insert(reserved);
  }
  // A warp-specialized kernel's block is its roles' threads (block_grid's `threads`); each
  // role's register layouts are over the role's own threads.
  roles_ = has_roles();
  ir::walk(const_cast<Operation*>(&kernel_),
           [&](Operation* op) { has_mma_ = has_mma_ || op->kind() == OpKind::mma; });
  for (const auto& op : kernel_.region(0)->ops()) {
    if (op->kind() != OpKind::block_grid) continue;
    if (op->has_attr("blocks_per_sm")) blocks_per_sm_ = op->int_attr("blocks_per_sm");
    // The emitter's pins (read by ir/pins.h, as the passes read theirs).
    // `uniform_roles = all | values | off` (all unless pinned): what the roles take from the
    // warp-uniform warp index (warpgroup_index_): their branch and per-warpgroup values, only
    // the values, or neither (the thread index, as before 2026-11-28; an A/B pin:
    // bench/results/2026-11-28-uniform-roles-h200.md measured attention at 1K 1.8% slower with the
    // uniform branch alone).
    const std::string uniform = ir::pinned_choice(*op, "uniform_roles", {"all", "values", "off"});
    if (!uniform.empty()) uniform_roles_ = uniform;
    // `unpack_at = slices | load` (slices unless pinned): where packed 4-bit weights read only
    // by slices are unpacked (packed_words_to_register): each slice's pairs where the slice
    // stands, so a part's unpacking follows the wgmma of the part before it and runs under it,
    // or all at the load (as before the seventeenth session, 2026-11-29; an A/B pin).
    unpack_at_slices_ = ir::pinned_choice(*op, "unpack_at", {"slices", "load"}) != "load";
    // `share_role_code = false` emits every role with its own copy of its code (an A/B pin;
    // emit_shared_roles.cpp).
    share_role_code_ = ir::pinned_flag(*op, "share_role_code").value_or(true);
  }
  if (roles_) {
    for (const auto& op : kernel_.region(0)->ops()) {
      if (op->kind() == OpKind::block_grid && op->has_attr("threads"))
        threads_ = op->int_attr("threads");
    }
    if (threads_ == 0)
      user_error(kernel_.loc(), "emit: a kernel with roles needs block_grid's threads");
  }
  collect_plans(*kernel_.region(0));
  if (threads_ == 0) threads_ = 1;
  out_.threads = threads_;
  out_.entry = c_name(sig.name);

  // Parameters.
  std::set<const Value*> written;
  ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* op) {
    if (op->kind() == OpKind::copy && op->num_operands() == 2) {
      const Value* dst = op->operand(1);
      while (dst->def() && dst->def()->kind() == OpKind::tile) dst = dst->def()->operand(0);
      written.insert(dst);
    }
  });
  std::vector<std::string> params;
  const ir::Block& body = *kernel_.region(0);
  for (const auto& arg : body.arguments()) {
    const Type& t = arg->type();
    std::string name = fresh(arg->name());
    if (t.is_tensor()) {
      if (t.space() != MemorySpace::global) {
        user_error(kernel_.loc(), "emit: kernel parameter %", arg->name(),
                   " must be a global tensor");
      }
      // A packed 4-bit or fp8 tensor stored in permuted column blocks (ir/column_blocks.h) is
      // row-major to TMA, which is how the emitter reads it: the permutation is in its tiles'
      // layouts.
      const ScalarKind e = t.element();
      const bool blocked = (e == ScalarKind::u4 || e == ScalarKind::i4 || e == ScalarKind::f8e4m3 ||
                            e == ScalarKind::f8e5m2) &&
                           ir::column_blocks(t).has_value();
      if (t.has_layout() && !blocked) {
        user_error(kernel_.loc(), "emit: kernel parameter %", arg->name(),
                   " has a layout; the emitter addresses global tensors row-major only (and "
                   "packed 4-bit or fp8 ones stored in permuted column blocks)");
      }
      // FP8 tensors reach shared memory by TMA and wgmma reads them there; an op that would
      // hold them in registers is refused where it is emitted.
      // i32 tensors are groups' row ends, read by find_group. Packed 4-bit tensors (two values
      // a byte, value 2k in the low nibble of byte k) reach shared memory by TMA as bytes and
      // registers by ld.shared (emit_shared_load.cpp).
      if (!is_register_float(t.element()) && t.element() != ScalarKind::f8e4m3 &&
          t.element() != ScalarKind::f8e5m2 && t.element() != ScalarKind::i32 &&
          t.element() != ScalarKind::u4 && t.element() != ScalarKind::i4) {
        user_error(kernel_.loc(), "emit: kernel parameter %", arg->name(), " has element type ",
                   ir::to_string(t.element()),
                   "; the emitter handles f16, bf16, f32, and f8e4m3 / f8e5m2 / u4 / i4 read by "
                   "TMA");
      }
      bool w = written.count(arg.get()) > 0;
      params.push_back(std::string(w ? "" : "const ") + storage_type(t.element()) +
                       "* __restrict__ " + name);
      views_[arg.get()] = whole_tensor(name, t);
      out_.params.push_back(param(KernelParam::Kind::tensor, arg->name(), t));
    } else {
      if (t.element() != ScalarKind::f32 && t.element() != ScalarKind::index &&
          t.element() != ScalarKind::i32) {
        user_error(kernel_.loc(), "emit: scalar parameter %", arg->name(), " has type ",
                   ir::to_string(t.element()), "; the emitter handles f32, i32 and index");
      }
      params.push_back(std::string(t.element() == ScalarKind::f32 ? "float " : "int ") + name);
      scalars_[arg.get()] = name;
      out_.params.push_back(param(KernelParam::Kind::scalar, arg->name(), t));
    }
  }
  for (const std::string& s : sig.sizes) {
    if (used_.count(s)) user_error(kernel_.loc(), "emit: size symbol ", s, " clashes with a name");
    used_.insert(s);
    params.push_back("int " + s);
    out_.params.push_back(param(KernelParam::Kind::size, s, Type::scalar(ScalarKind::index)));
  }

  // Body first (it decides the shared memory), then the header around it.
  indent_ = 1;
  block(body);
  // Parameters the body asked for (TMA descriptors) come last, in the order they were made.
  for (const std::string& p : extra_params_) params.push_back(p);
  if (smem_bytes_ > 0 && smem_align_ > 16) smem_bytes_ += smem_align_ - 16;
  std::ostringstream src;
  src << "// Generated by tessel from kernel @" << sig.name << ". Block: " << threads_
      << " threads; dynamic shared memory: " << smem_bytes_ << " bytes.\n";
  src << kPrelude << "\n";
  // A warp-specialized kernel declares how many blocks share an SM (block_grid's
  // `blocks_per_sm`, 1 unless pinned): setmaxnreg moves registers between the roles of a block
  // within 64K / blocks, the registers per thread the launch bound guarantees at entry.
  src << "extern \"C\" __global__ void __launch_bounds__(" << threads_;
  if (roles_ || blocks_per_sm_ > 1) src << ", " << blocks_per_sm_;
  src << ") " << out_.entry << "(";
  for (size_t i = 0; i < params.size(); ++i) src << (i ? ", " : "") << params[i];
  src << ") {\n";
  src << "  const int tid = threadIdx.x;\n";
  // Roles branch on the warp index taken from lane 0, which ptxas treats as warp-uniform (it
  // cannot prove threadIdx.x / 32 is): the role's branch is then uniform and values built only
  // from uniform ones (ring slots, loop counters, shared addresses) live in uniform registers.
  // (A role's threads are whole warpgroups, so every warp is whole here.)
  if (roles_ && uniform_roles_ != "off") {
    src << "  const int tsl_warp = __shfl_sync(0xffffffffu, static_cast<int>(threadIdx.x) / 32, 0);"
           "  // warp-uniform\n";
  }
  if (smem_bytes_ > 0 && smem_align_ <= 16) {
    src << "  extern __shared__ __align__(16) unsigned char tsl_smem[];\n";
  } else if (smem_bytes_ > 0) {
    // The dynamic allocation's base is only 16-byte aligned: round it up by hand (the launch
    // asks for smem_align_ - 16 bytes more).
    src << "  extern __shared__ __align__(16) unsigned char tsl_smem_raw[];\n";
    src << "  unsigned char* tsl_smem = tsl_smem_raw + ((" << smem_align_
        << " - (tessel::device::smem_u32(tsl_smem_raw) % " << smem_align_ << ")) % " << smem_align_
        << ");\n";
  }
  for (const auto& plan : plans_) {
    if (roles_) break;  // declared in each role, over the role's own thread index
    src << "  // layout " << plan->id << ": " << plan->text << "\n";
    for (size_t d = 0; d < plan->tile.size(); ++d) {
      if (plan->var[d] == "0") continue;
      src << "  const int " << plan->var[d] << " = " << thread_expr(*plan, d) << ";\n";
    }
  }
  for (const std::string& l : prologue_) src << "  " << l << "\n";
  src << body_.str() << "}\n";
  out_.source = src.str();
  out_.dynamic_shared_bytes = static_cast<int>(smem_bytes_);
  return out_;
}

std::string Emitter::c_name(const std::string& hint) {
  // IR names are free text; a value called %new or %int must not become a C++ keyword.
  static const std::set<std::string> keywords = {
      "alignas",   "alignof", "and",      "asm",    "auto",      "bool",     "break",    "case",
      "catch",     "char",    "class",    "const",  "constexpr", "continue", "default",  "delete",
      "do",        "double",  "else",     "enum",   "explicit",  "extern",   "false",    "float",
      "for",       "friend",  "goto",     "if",     "inline",    "int",      "long",     "mutable",
      "namespace", "new",     "noexcept", "not",    "nullptr",   "operator", "or",       "private",
      "protected", "public",  "register", "return", "short",     "signed",   "sizeof",   "static",
      "struct",    "switch",  "template", "this",   "throw",     "true",     "try",      "typedef",
      "typename",  "union",   "unsigned", "using",  "virtual",   "void",     "volatile", "while",
      "xor"};
  std::string s;
  for (char c : hint) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
  if (keywords.count(s)) s += "_";
  return s;
}

std::string Emitter::fresh(const std::string& hint) {
  std::string base = c_name(hint), s = base;
  for (int i = 1; used_.count(s); ++i) s = base + "_" + std::to_string(i);
  used_.insert(s);
  return s;
}

std::string Emitter::extent_expr(const ir::Extent& e) {
  return e.is_static() ? std::to_string(e.value) : e.symbol;
}

int64_t Emitter::extent_divisor(const ir::Extent& e) {
  if (e.is_static()) return e.value;
  auto it = divisor_.find(e.symbol);
  return it == divisor_.end() ? 1 : it->second;
}

View Emitter::whole_tensor(const std::string& base, const Type& t) {
  View v;
  v.base = base;
  if (is_static(t.shape())) v.shape = t.static_shape();  // a whole static tensor is a tile
  v.element = t.element();
  int r = t.rank();
  for (int d = 0; d < r; ++d) {
    v.extent.push_back(extent_expr(t.shape()[d]));
    v.extent_divisor.push_back(extent_divisor(t.shape()[d]));
    v.origin.push_back("0");
    v.origin_align.push_back(0);  // 0: origin is zero (divisible by anything)
    v.full.push_back(true);
  }
  for (int d = 0; d < r; ++d) {
    std::string s = "1";
    for (int e = d + 1; e < r; ++e) s = s == "1" ? v.extent[e] : s + " * " + v.extent[e];
    v.stride.push_back(s);
  }
  return v;
}

const char* Emitter::storage_type(ScalarKind k) {
  if (k == ScalarKind::f8e4m3 || k == ScalarKind::f8e5m2 || k == ScalarKind::u4 ||
      k == ScalarKind::i4)
    return "unsigned char";
  if (k == ScalarKind::i32) return "int";
  return k == ScalarKind::f32 ? "float" : "unsigned short";
}

[[noreturn]] void Emitter::unsupported(const Operation& op, const std::string& why) {
  user_error(op.loc(), "emit: ", op.name(), " ", why);
}

std::string Emitter::scalar(const Operation& op, const Value* v) {
  auto it = scalars_.find(v);
  if (it == scalars_.end()) unsupported(op, "uses %" + v->name() + " as a scalar");
  return it->second;
}

const Reg& Emitter::reg_words(const Operation& op, const Value* v) {
  auto it = regs_.find(v);
  if (it == regs_.end()) unsupported(op, "needs %" + v->name() + " to be a register tensor");
  emit_deferred_pairs(v);
  return it->second;
}

void Emitter::emit_deferred_pairs(const Value* v, const std::vector<int64_t>& pairs) {
  auto it = deferred_pairs_.find(v);
  if (it == deferred_pairs_.end()) return;
  std::vector<std::string>& lines = it->second;
  auto emit = [&](int64_t j) {
    if (j < 0 || j >= static_cast<int64_t>(lines.size()) || lines[size_t(j)].empty()) return;
    line(lines[size_t(j)]);
    lines[size_t(j)].clear();
  };
  if (pairs.empty()) {
    for (int64_t j = 0; j < static_cast<int64_t>(lines.size()); ++j) emit(j);
    deferred_pairs_.erase(it);
    return;
  }
  for (int64_t j : pairs) emit(j);
}

const Reg& Emitter::reg(const Operation& op, const Value* v) {
  const Reg& r = reg_words(op, v);
  if (!r.packed) return r;
  Reg& f = unpacked_.emplace_back(Reg{fresh(r.name + "_f32"), r.plan, r.element, false});
  line("float " + f.name + "[" + std::to_string(r.plan->values) + "];  // " + r.name + " unpacked");
  const auto [lo, hi] = value_range(r.plan->values);
  for (int64_t v2 = lo; v2 < hi; ++v2)
    line(f.name + "[" + std::to_string(v2) + "] = " + value_expr(r, v2) + ";");
  return f;
}

bool Emitter::packable(ScalarKind element, int64_t values) {
  return (element == ScalarKind::f16 || element == ScalarKind::bf16) && values % 2 == 0;
}

std::string Emitter::value_expr(const Reg& r, int64_t v) const {
  if (!r.packed) return r.name + "[" + std::to_string(v) + "]";
  return std::string(v % 2 ? "tsl_hi16(" : "tsl_lo16(") + r.name + "[" + std::to_string(v / 2) +
         "], " + (r.element == ScalarKind::bf16 ? "true" : "false") + ")";
}

std::string Emitter::pair_expr(const Reg& r, int64_t lo, int64_t hi) const {
  if (r.packed && lo % 2 == 0 && hi == lo + 1) return r.name + "[" + std::to_string(lo / 2) + "]";
  return std::string("tessel::device::") +
         (r.element == ScalarKind::bf16 ? "pack_bf16x2(" : "pack_f16x2(") + value_expr(r, lo) +
         ", " + value_expr(r, hi) + ")";
}

std::optional<int64_t> Emitter::const_int(const Value* v) {
  if (v->def() && v->def()->kind() == OpKind::constant) {
    const ir::Attribute* a = v->def()->attr("value");
    if (a && a->kind == ir::Attribute::Kind::integer) return a->i;
  }
  return std::nullopt;
}

// Whether `v` is the size of extent `e`.
bool Emitter::is_extent(const Value* v, const ir::Extent& e) {
  if (!v->def()) return false;
  if (e.is_static()) return const_int(v) == e.value;
  return v->def()->kind() == OpKind::size && v->def()->str_attr("name") == e.symbol;
}

// The bound an index is known to stay below: the grid extent of a block index, or the end of a
// loop from 0 by 1 for its index; null for any other index.
const Value* Emitter::index_bound(const Value* idx) {
  if (idx->def() && idx->def()->kind() == OpKind::block_grid)
    return idx->def()->operand(idx->index());
  if (!idx->def() && idx->index() == 0 && idx->owner_block() && idx->owner_block()->parent() &&
      idx->owner_block()->parent()->kind() == OpKind::for_) {
    const Operation* f = idx->owner_block()->parent();
    if (const_int(f->operand(0)) == 0 && const_int(f->operand(2)) == 1) return f->operand(1);
  }
  return nullptr;
}

// Whether index `idx` is known to lie in [0, cdiv(e, s)).
bool Emitter::below_cdiv(const Value* idx, const ir::Extent& e, int64_t s) {
  const Value* bound = index_bound(idx);
  // cdiv(E, s), or E / s once canonicalization used the fact E % s == 0.
  if (!bound || !bound->def()) return false;
  if (bound->def()->kind() != OpKind::cdiv && bound->def()->kind() != OpKind::div) return false;
  return is_extent(bound->def()->operand(0), e) && const_int(bound->def()->operand(1)) == s;
}

// Whether index `idx` is known to lie in [0, e).
bool Emitter::below_extent(const Value* idx, const ir::Extent& e) {
  const Value* bound = index_bound(idx);
  return bound && is_extent(bound, e);
}

void Emitter::block(const ir::Block& b) {
  block_ops(b, [&](const Operation& yield) { emit(yield); });
}

void Emitter::block_ops(const ir::Block& b, const std::function<void(const Operation&)>& yield) {
  const auto& ops = b.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    if (ops[i]->kind() == OpKind::yield) {
      yield(*ops[i]);
      continue;
    }
    if (ops[i]->kind() == OpKind::warp_group && &b == kernel_.region(0)) {
      const size_t roles = shared_roles(b, i);
      if (roles > 1) {
        emit_shared_roles(b, i, roles);
        i += roles - 1;
        continue;
      }
    }
    const ChunkedRun run = chunked_run(b, i);
    if (run.end > i) {
      emit_chunked(b, i, run);
      i = run.end - 1;
      continue;
    }
    emit(*ops[i]);
  }
}

void Emitter::emit(const Operation& op) {
  if (fused_.count(&op)) return;
  switch (op.kind()) {
    case OpKind::size:
      scalars_[op.result()] = op.str_attr("name");
      return;
    case OpKind::constant: {
      const ir::Attribute* a = op.attr("value");
      bool is_f = is_float(op.result()->type().element());
      double x = a->kind == ir::Attribute::Kind::real ? a->f : static_cast<double>(a->i);
      scalars_[op.result()] = is_f ? float_literal(x) : std::to_string(static_cast<int64_t>(x));
      return;
    }
    case OpKind::block_grid:
      return block_grid(op);
    case OpKind::sm_count: {
      // A parameter the launch fills: the grid was sized from the same value on the host.
      std::string name = fresh("sm_count");
      KernelParam p;
      p.kind = KernelParam::Kind::sm_count;
      p.name = name;
      p.type = Type::scalar(ScalarKind::index);
      out_.params.push_back(p);
      extra_params_.push_back("int " + name);
      scalars_[op.result()] = name;
      return;
    }
    case OpKind::workspace:
      return workspace(op);
    case OpKind::workspace_part:
      return workspace_part(op);
    case OpKind::counter_arrive:
      return counter_arrive(op);
    case OpKind::cluster_rank: {
      std::string name = fresh(op.result()->name());
      line("const int " + name + " = static_cast<int>(tessel::device::cluster_cta_rank());");
      scalars_[op.result()] = name;
      return;
    }
    case OpKind::tile:
      return tile(op);
    case OpKind::find_group: {
      // src/ir/grouped.h; the device library's walk (runtime/device/common.cuh).
      const View& ends = view(op, op.operand(0));
      if (ends.is_tile || ends.element != ScalarKind::i32) {
        unsupported(op, "reads the row ends from a whole i32 kernel parameter");
      }
      std::string name = fresh("group_of_" + op.operand(1)->name());
      line("const tessel::device::GroupTile " + name + " = tessel::device::find_group(" +
           ends.base + ", " + ends.extent[0] + ", " + scalar(op, op.operand(1)) + ", " +
           std::to_string(op.int_attr("tile")) + ");");
      const char* fields[] = {"group", "tile", "first", "rows"};
      for (int i = 0; i < 4; ++i) {
        std::string r = fresh(op.result(i)->name());
        line("const int " + r + " = " + name + "." + fields[i] + ";");
        scalars_[op.result(i)] = r;
      }
      return;
    }
    case OpKind::tile_extent: {
      const View& v = view(op, op.operand(0));
      int64_t d = op.int_attr("dim");
      std::string name = fresh(op.result()->name());
      line("const int " + name + " = min(max(" + v.extent[d] + " - (" + v.origin[d] + "), 0), " +
           std::to_string(v.shape[d]) + ");");
      scalars_[op.result()] = name;
      return;
    }
    case OpKind::copy:
      return copy(op);
    case OpKind::fill: {
      const Reg& r = new_reg(op);
      // A zero tile whose only use is a wgmma's accumulator (attention's S = Q Kᵀ each
      // iteration): the wgmma's first k-step runs with scale-d = 0 and overwrites it, so it is
      // never written here (zeroing registers beside wgmma groups also serializes them, C7515).
      if (op.real_attr("value") == 0.0 && only_wgmma_accumulator(op.result())) {
        zero_start_[op.result()] = "0";
        return;
      }
      line("#pragma unroll");
      line("for (int v = 0; v < " + std::to_string(r.plan->values) + "; ++v) " + r.name +
           "[v] = " + float_literal(op.real_attr("value")) + ";");
      return;
    }
    case OpKind::cast:
      return cast(op);
    case OpKind::broadcast:
      return broadcast(op);
    case OpKind::reduce:
      return reduce(op);
    case OpKind::for_:
      if (!is_mainloop(op)) return for_op(op);
      // The copies' and mma's atoms say which path synthesis chose. The sm_90a one is IR by now:
      // its ring, barriers and waits are lower-mainloops' ops, emitted one by one.
      for (const auto& inner : op.region(0)->ops()) {
        std::string atom = inner->has_attr("atom") ? inner->str_attr("atom") : "";
        if (atom.rfind("tma.", 0) == 0 || atom.rfind("wgmma.", 0) == 0) {
          unsupported(op,
                      "is a TMA + wgmma mainloop, which must "
                      "be lowered to mbarriers and TMA loads (lower-mainloops, or "
                      "warp-specialize and lower-arefs) before emission");
        }
      }
      return cp_async_mma_mainloop(op);
    case OpKind::rearrange:
      return rearrange(op);
    case OpKind::if_:
      return if_op(op);
    case OpKind::cmp:
      return cmp(op);
    case OpKind::iota:
      return iota(op);
    case OpKind::transpose:
      return shared_transpose(op);
    case OpKind::slice:
      return slice(op);
    case OpKind::alloc:
      return shared_alloc(op);
    case OpKind::mma:
      if (op.has_attr("atom") && op.str_attr("atom").rfind("wgmma.", 0) == 0) return wgmma_op(op);
      unsupported(op,
                  "without a wgmma atom is not supported by the CUDA emitter yet outside a "
                  "mainloop (only wgmma over shared tiles is emitted op by op)");
    default:
      if (ir::is_async_op(op.kind())) return async_op(op);
      if (ir::is_elementwise(op.kind())) return elementwise(op);
      unsupported(op, "is not supported by the CUDA emitter yet");
  }
}

const View& Emitter::view(const Operation& op, const Value* v, bool indirect_ok) {
  auto it = views_.find(v);
  if (it == views_.end()) unsupported(op, "needs %" + v->name() + " to be a global tensor or tile");
  if (it->second.indirect_dim >= 0 && !indirect_ok) {
    unsupported(op, "reads or writes the indirect tile %" + v->name() +
                        ", whose rows only threads' loads and stores and TMA loads address "
                        "(not a TMA store, not a view of it)");
  }
  return it->second;
}

void Emitter::tile(const Operation& op) {
  const Type& t = op.result()->type();
  if (t.space() == MemorySpace::shared) return shared_tile(op);
  if (t.space() != MemorySpace::global) unsupported(op, "of a " + t.str() + " is not emitted");
  const View& src = view(op, op.operand(0));
  if (op.has_attr("squeeze") && src.is_tile) {
    unsupported(op, "squeezes dimensions of a tile of a tile; squeeze the first tile instead");
  }
  const auto& shape = op.ints_attr("shape");
  View v = src;
  v.is_tile = true;
  v.shape.assign(shape.begin(), shape.end());
  v.masked = op.has_attr("masked");
  if (v.masked) v.pad = op.has_attr("pad") ? op.real_attr("pad") : 0.0;
  const Type& root = op.operand(0)->type();
  // A window (src/ir/grouped.h): the origin moves to its first element and, unless reads past
  // it are unspecified (`over_read`, either kind), its end bounds the tile as the tensor's does.
  // The bound is the tensor's end for over_read: every load of such a tile is allowed to read
  // there (the other groups' rows, finite when the inputs are: `over_read = finite` relies on it).
  const int window = ir::tile_window_dim(op);
  if (window >= 0 && src.is_tile) unsupported(op, "has a window on a tile of a tile");
  std::vector<std::string> origin0 = src.origin;
  std::vector<int64_t> align0 = src.origin_align;
  // An indirect dimension (src/ir/grouped.h): positions in the row map, which bounds them.
  const int indirect = ir::tile_indirect_dim(op);
  if (indirect >= 0) {
    if (src.is_tile) unsupported(op, "is an indirect tile of a tile");
    const View& map = view(op, ir::tile_indirect_map(op));
    if (map.is_tile) unsupported(op, "reads its row map from a tile; pass the whole i32 tensor");
    v.indirect_rows = v.extent[indirect];
    v.extent[indirect] = map.extent[0];
    v.extent_divisor[indirect] = 1;
    v.indirect_dim = indirect;
    v.indirect_map = map.base;
  }
  if (window >= 0) {
    const int rank = static_cast<int>(shape.size());
    const std::string first = scalar(op, op.operand(rank + 1));
    const std::string rows = scalar(op, op.operand(rank + 2));
    origin0[window] = "(" + first + ")";
    align0[window] = 1;
    if (!op.has_attr("over_read")) {
      v.extent[window] = "min(" + v.extent[window] + ", (" + first + ") + (" + rows + "))";
      v.extent_divisor[window] = 1;
    }
  }
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string idx = scalar(op, op.operand(static_cast<int>(d) + 1));
    std::optional<int64_t> ci = const_int(op.operand(static_cast<int>(d) + 1));
    std::string start =
        ci ? std::to_string(*ci * shape[d]) : idx + " * " + std::to_string(shape[d]);
    v.origin[d] = origin0[d] == "0" ? start
                  : start == "0"    ? origin0[d]
                                    : origin0[d] + " + " + start;
    int64_t a = align0[d];
    v.origin_align[d] = a == 0 ? shape[d] : std::gcd(a, shape[d]);
    // Graphene §3.4: a tile indexed below cdiv(E, s) of an extent E divisible by s is full;
    // so is tile c of a static extent E when (c + 1) * s <= E.
    const Value* index = op.operand(static_cast<int>(d) + 1);
    std::optional<int64_t> c = const_int(index);
    const ir::Extent& e = root.shape()[d];
    v.full[d] = !src.is_tile && static_cast<int>(d) != window && static_cast<int>(d) != indirect &&
                ((src.extent_divisor[d] % shape[d] == 0 && below_cdiv(index, e, shape[d])) ||
                 (c && e.is_static() && (*c + 1) * shape[d] <= e.value));
  }
  if (op.has_attr("squeeze")) v = squeezed(op, v);
  views_[op.result()] = v;
}

// The view of tile `v` (all of its tensor's dimensions) without the dimensions of extent 1 that
// `op` squeezes (a batch index of a batched GEMM): `base` moves to their coordinates, and a
// masked tile whose squeezed coordinates are not proven inside the tensor gets an empty first
// dimension when they are not (every element then reads the pad and no write lands).
View Emitter::squeezed(const Operation& op, const View& v) {
  View out = v;
  out.extent.clear();
  out.stride.clear();
  out.origin.clear();
  out.extent_divisor.clear();
  out.shape.clear();
  out.origin_align.clear();
  out.full.clear();
  out.root_dims = ir::tile_kept_dims(op);
  out.root_origin = v.origin;
  if (out.root_dims.empty()) unsupported(op, "squeezes every dimension of its tile");
  if (v.indirect_dim >= 0) {  // (the verifier keeps it from being squeezed)
    auto at = std::find(out.root_dims.begin(), out.root_dims.end(), v.indirect_dim);
    out.indirect_dim = static_cast<int>(at - out.root_dims.begin());
  }
  for (int d : out.root_dims) {
    out.extent.push_back(v.extent[d]);
    out.stride.push_back(v.stride[d]);
    out.origin.push_back(v.origin[d]);
    out.extent_divisor.push_back(v.extent_divisor[d]);
    out.shape.push_back(v.shape[d]);
    out.origin_align.push_back(v.origin_align[d]);
    out.full.push_back(v.full[d]);
  }
  std::string offset, inside;
  for (int d = 0; d < static_cast<int>(v.origin.size()); ++d) {
    const bool kept =
        std::find(out.root_dims.begin(), out.root_dims.end(), d) != out.root_dims.end();
    if (kept || v.origin[d] == "0") continue;
    offset += " + static_cast<long long>(" + v.origin[d] + ") * (" + v.stride[d] + ")";
    const Value* index = op.operand(d + 1);
    const bool proven = v.full[d] || below_extent(index, op.operand(0)->type().shape()[d]);
    if (!proven)
      inside += (inside.empty() ? "" : " && ") + ("(" + v.origin[d] + ") < " + v.extent[d]);
  }
  if (!offset.empty()) out.base = "(" + v.base + offset + ")";
  if (!inside.empty() && v.masked) {
    out.extent[0] = "((" + inside + ") ? " + out.extent[0] + " : 0)";
    out.full[0] = false;
  }
  return out;
}

Reg& Emitter::new_reg(const Operation& op, int result) {
  const Value* value = op.result(result);
  const Plan* plan = plan_for(op, value->type());
  const std::string ctype = register_c_type(value->type().element());
  if (ctype.empty()) {
    unsupported(op, "makes " + value->type().str() +
                        "; register tensors must be f16, bf16, f32, index, i32 or i1");
  }
  Reg r{fresh(value->name()), plan, value->type().element()};
  line(ctype + " " + r.name + "[" + std::to_string(plan->values) + "];");
  declared_in_[r.name] = op.parent_block();  // (an mma_wait fences only what is in scope)
  return regs_[value] = r;
}

Reg& Emitter::new_packed_reg(const Operation& op, int result) {
  const Value* value = op.result(result);
  const Plan* plan = plan_for(op, value->type());
  if (!packable(value->type().element(), plan->values)) {
    unsupported(op, "makes " + value->type().str() + ", which cannot be held as 16-bit pairs");
  }
  Reg r{fresh(value->name()), plan, value->type().element(), true};
  line("unsigned " + r.name + "[" + std::to_string(plan->values / 2) + "];  // packed pairs");
  return regs_[value] = r;
}

}  // namespace detail

EmittedKernel emit_cuda(const ir::Operation& kernel) {
  return detail::Emitter(kernel).run();
}

}  // namespace tessel::target::cuda
