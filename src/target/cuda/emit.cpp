#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "layout/parse.h"
#include "layout/table.h"
#include "layout/tv_layout.h"
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
  for (const char* reserved : {"tid", "tsl_smem", "p", "v", "g", "acc", "row", "c0", "c1", "c2"}) {
    used_.insert(reserved);
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
      if (t.has_layout()) {
        user_error(kernel_.loc(), "emit: kernel parameter %", arg->name(),
                   " has a layout; the emitter addresses global tensors row-major only");
      }
      if (!is_register_float(t.element())) {
        user_error(kernel_.loc(), "emit: kernel parameter %", arg->name(), " has element type ",
                   ir::to_string(t.element()), "; the emitter handles f16, bf16 and f32");
      }
      bool w = written.count(arg.get()) > 0;
      params.push_back(std::string(w ? "" : "const ") + storage_type(t.element()) +
                       "* __restrict__ " + name);
      View v;
      v.base = name;
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
      views_[arg.get()] = v;
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
  src << "extern \"C\" __global__ void __launch_bounds__(" << threads_ << ") " << out_.entry << "(";
  for (size_t i = 0; i < params.size(); ++i) src << (i ? ", " : "") << params[i];
  src << ") {\n";
  src << "  const int tid = threadIdx.x;\n";
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
  std::string s;
  for (char c : hint) s += std::isalnum(static_cast<unsigned char>(c)) ? c : '_';
  if (s.empty() || std::isdigit(static_cast<unsigned char>(s[0]))) s = "v_" + s;
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

const char* Emitter::storage_type(ScalarKind k) {
  return k == ScalarKind::f32 ? "float" : "unsigned short";
}

[[noreturn]] void Emitter::unsupported(const Operation& op, const std::string& why) {
  user_error(op.loc(), "emit: ", op.name(), " ", why);
}

void Emitter::collect_plans(const ir::Block& block) {
  for (const auto& op : block.ops()) {
    for (const auto& r : op->results()) plan_for(*op, r->type());
    for (const auto& region : op->regions()) collect_plans(*region);
  }
}

const Plan* Emitter::plan_for(const Operation& op, const Type& t) {
  if (!t.is_tensor() || t.space() != MemorySpace::reg) return nullptr;
  if (!t.has_layout()) {
    user_error(op.loc(), "emit: the register tensor made by ", op.name(), " (", t.str(),
               ") has no layout; run layout synthesis or pin one");
  }
  auto key = t.layout() + "|" + ir::to_string(t.shape());
  auto it = plan_index_.find(key);
  if (it != plan_index_.end()) return it->second;
  if (!is_static(t.shape()))
    unsupported(op, "needs a register tensor of static shape, not " + t.str());
  std::vector<int64_t> tile = t.static_shape();
  std::vector<layout::IntTuple> modes(tile.begin(), tile.end());
  layout::TVLayout tv(layout::parse_layout(t.layout()),
                      modes.size() == 1 ? layout::IntTuple(modes[0]) : layout::IntTuple(modes));
  auto plan = std::make_unique<Plan>();
  plan->text = tv.str();
  plan->id = static_cast<int>(plans_.size());
  plan->tile = tile;
  plan->threads = tv.num_threads();
  plan->values = tv.num_values();
  if (threads_ == 0) threads_ = plan->threads;
  if (plan->threads != threads_) {
    unsupported(op, "result has a layout over " + std::to_string(plan->threads) +
                        " threads but the kernel's other register tensors use " +
                        std::to_string(threads_) + " (" + t.str() + ")");
  }
  if (threads_ > 1024) unsupported(op, "needs more than 1024 threads");
  auto decompose = [&](int64_t index) {
    std::vector<int64_t> c(tile.size());
    for (size_t d = 0; d < tile.size(); ++d) {
      c[d] = index % tile[d];
      index /= tile[d];
    }
    return c;
  };
  // Thread leaves: each stride moves along the last dimension whose colexicographic weight
  // divides it.
  const layout::Layout& thr = tv.thread_layout();
  std::vector<layout::Extent> shapes = layout::leaves(thr.shape()),
                              strides = layout::leaves(thr.stride());
  // A leaf that runs past the end of its dimension (e.g. 64 threads of stride 1 over an (8,8)
  // tile) is split where it crosses: (64):(1) -> (8,8):(1,8).
  int64_t prefix = 1;
  for (size_t i = 0; i < shapes.size(); ++i) {
    int64_t extent = shapes[i].constant(), s = strides[i].constant();
    while (extent > 1) {
      Leaf leaf;
      leaf.extent = extent;
      leaf.prefix = prefix;
      leaf.coef.assign(tile.size(), 0);
      int64_t weight = 1;
      size_t dim = 0;
      for (size_t d = 0; d < tile.size(); ++d) {
        if (s != 0 && s % weight == 0) dim = d;
        weight *= tile[d];
      }
      weight = 1;
      for (size_t d = 0; d < dim; ++d) weight *= tile[d];
      int64_t span = weight * tile[dim];  // where dimension `dim` ends
      if (s != 0 && s * extent > span && span % s == 0 && extent % (span / s) == 0 &&
          dim + 1 < tile.size()) {
        leaf.extent = span / s;
      }
      if (s != 0) leaf.coef[dim] = s / weight;
      prefix *= leaf.extent;
      extent /= leaf.extent;
      if (leaf.extent > 1) plan->leaves.push_back(leaf);
      s *= leaf.extent;
    }
  }
  // Integer tables of each mode (the layout library evaluates symbolically one index at a time:
  // too slow for every element of a tile).
  std::vector<int64_t> thread_offset = layout::layout_table(thr),
                       value_offset = layout::layout_table(tv.value_layout());
  for (int64_t v = 0; v < plan->values; ++v) {
    plan->value_coord.push_back(decompose(value_offset[v]));
  }
  // The split must reproduce the layout exactly: coord(t, v) == decompose(offset(t) + offset(v))
  // for every thread and value. Checked without allocating (a 128x256 accumulator over 256 threads
  // is 32768 pairs): each thread's part once, then each pair's coordinates in place.
  const size_t rank = tile.size();
  std::vector<int64_t> thread_coord(static_cast<size_t>(plan->threads) * rank);
  for (int64_t t = 0; t < plan->threads; ++t) {
    std::vector<int64_t> c = plan->thread_part(t);
    std::copy(c.begin(), c.end(), thread_coord.begin() + t * rank);
  }
  for (int64_t t = 0; t < plan->threads; ++t) {
    const int64_t* part = thread_coord.data() + t * rank;
    for (int64_t v = 0; v < plan->values; ++v) {
      const std::vector<int64_t>& value = plan->value_coord[v];
      int64_t index = thread_offset[t] + value_offset[v];
      bool same = true;
      for (size_t d = 0; d < rank; ++d) {
        same = same && part[d] + value[d] == index % tile[d];
        index /= tile[d];
      }
      if (!same) {
        unsupported(op, "result layout " + plan->text +
                            " does not split into per-dimension thread and value parts");
      }
    }
  }
  for (size_t d = 0; d < tile.size(); ++d) {
    bool any = false;
    for (const Leaf& l : plan->leaves) any = any || l.coef[d] != 0;
    plan->var.push_back(any ? "thr" + std::to_string(plan->id) + "_d" + std::to_string(d) : "0");
    if (any) used_.insert(plan->var.back());
  }
  const Plan* p = plan.get();
  plans_.push_back(std::move(plan));
  plan_index_[key] = p;
  return p;
}

std::string Emitter::thread_expr(const Plan& plan, size_t d) {
  // Coalesce leaves that continue each other in this dimension (lane, then warp, with
  // matching strides) so that e.g. `tid % 32 + (tid / 32) * 32` is emitted as `tid`.
  std::vector<Leaf> merged;
  for (const Leaf& l : plan.leaves) {
    if (l.coef[d] == 0) continue;
    if (!merged.empty()) {
      Leaf& m = merged.back();
      if (m.prefix * m.extent == l.prefix && m.coef[d] * m.extent == l.coef[d]) {
        m.extent *= l.extent;
        continue;
      }
    }
    merged.push_back(l);
  }
  std::string e;
  for (const Leaf& l : merged) {
    if (l.coef[d] == 0) continue;
    std::string term = leaf_coord_expr(l, plan.threads);
    if (l.coef[d] != 1) term = "(" + term + ") * " + std::to_string(l.coef[d]);
    e += (e.empty() ? "" : " + ") + term;
  }
  return e.empty() ? "0" : e;
}

std::string Emitter::scalar(const Operation& op, const Value* v) {
  auto it = scalars_.find(v);
  if (it == scalars_.end()) unsupported(op, "uses %" + v->name() + " as a scalar");
  return it->second;
}

const Reg& Emitter::reg(const Operation& op, const Value* v) {
  auto it = regs_.find(v);
  if (it == regs_.end()) unsupported(op, "needs %" + v->name() + " to be a register tensor");
  return it->second;
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

// Whether index `idx` is known to lie in [0, cdiv(e, s)).
bool Emitter::below_cdiv(const Value* idx, const ir::Extent& e, int64_t s) {
  const Value* bound = nullptr;
  if (idx->def() && idx->def()->kind() == OpKind::block_grid) {
    bound = idx->def()->operand(idx->index());
  } else if (!idx->def() && idx->index() == 0 && idx->owner_block() &&
             idx->owner_block()->parent() && idx->owner_block()->parent()->kind() == OpKind::for_) {
    const Operation* f = idx->owner_block()->parent();
    if (const_int(f->operand(0)) != 0 || const_int(f->operand(2)) != 1) return false;
    bound = f->operand(1);
  }
  // cdiv(E, s), or E / s once canonicalization used the fact E % s == 0.
  if (!bound || !bound->def()) return false;
  if (bound->def()->kind() != OpKind::cdiv && bound->def()->kind() != OpKind::div) return false;
  return is_extent(bound->def()->operand(0), e) && const_int(bound->def()->operand(1)) == s;
}

void Emitter::block(const ir::Block& b) {
  for (const auto& op : b.ops()) emit(*op);
}

void Emitter::emit(const Operation& op) {
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
    case OpKind::tile:
      return tile(op);
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
      // The copies' and mma's atoms say which path synthesis chose.
      for (const auto& inner : op.region(0)->ops()) {
        std::string atom = inner->has_attr("atom") ? inner->str_attr("atom") : "";
        if (atom.rfind("tma.", 0) == 0 || atom.rfind("wgmma.", 0) == 0)
          return tma_wgmma_mainloop(op);
      }
      return cp_async_mma_mainloop(op);
    case OpKind::rearrange:
      return rearrange(op);
    default:
      if (ir::is_elementwise(op.kind())) return elementwise(op);
      unsupported(op, "is not supported by the CUDA emitter yet");
  }
}

const View& Emitter::view(const Operation& op, const Value* v) {
  auto it = views_.find(v);
  if (it == views_.end()) unsupported(op, "needs %" + v->name() + " to be a global tensor or tile");
  return it->second;
}

void Emitter::tile(const Operation& op) {
  const Type& t = op.result()->type();
  if (t.space() != MemorySpace::global) unsupported(op, "of a shared tensor is not supported yet");
  if (op.has_attr("squeeze")) unsupported(op, "with squeezed dimensions is not supported yet");
  const View& src = view(op, op.operand(0));
  const auto& shape = op.ints_attr("shape");
  View v = src;
  v.is_tile = true;
  v.shape.assign(shape.begin(), shape.end());
  v.masked = op.has_attr("masked");
  if (v.masked) v.pad = op.has_attr("pad") ? op.real_attr("pad") : 0.0;
  const Type& root = op.operand(0)->type();
  for (size_t d = 0; d < shape.size(); ++d) {
    std::string idx = scalar(op, op.operand(static_cast<int>(d) + 1));
    std::optional<int64_t> ci = const_int(op.operand(static_cast<int>(d) + 1));
    std::string start =
        ci ? std::to_string(*ci * shape[d]) : idx + " * " + std::to_string(shape[d]);
    v.origin[d] = src.origin[d] == "0" ? start
                  : start == "0"       ? src.origin[d]
                                       : src.origin[d] + " + " + start;
    int64_t a = src.origin_align[d];
    v.origin_align[d] = a == 0 ? shape[d] : std::gcd(a, shape[d]);
    // Graphene §3.4: a tile indexed below cdiv(E, s) of an extent E divisible by s is full;
    // so is tile c of a static extent E when (c + 1) * s <= E.
    const Value* index = op.operand(static_cast<int>(d) + 1);
    std::optional<int64_t> c = const_int(index);
    const ir::Extent& e = root.shape()[d];
    v.full[d] = !src.is_tile &&
                ((src.extent_divisor[d] % shape[d] == 0 && below_cdiv(index, e, shape[d])) ||
                 (c && e.is_static() && (*c + 1) * shape[d] <= e.value));
  }
  views_[op.result()] = v;
}

Reg& Emitter::new_reg(const Operation& op, int result) {
  const Value* value = op.result(result);
  const Plan* plan = plan_for(op, value->type());
  if (!is_register_float(value->type().element())) {
    unsupported(op, "makes " + value->type().str() + "; register tensors must be f16, bf16 or f32");
  }
  Reg r{fresh(value->name()), plan, value->type().element()};
  line("float " + r.name + "[" + std::to_string(plan->values) + "];");
  return regs_[value] = r;
}

std::string Emitter::round_to(ScalarKind k, const std::string& e) {
  if (k == ScalarKind::f16) return "tsl_round_f16(" + e + ")";
  if (k == ScalarKind::bf16) return "tsl_round_bf16(" + e + ")";
  return e;
}

// copy global tile -> register (a result) or register -> global tile (no result).
void Emitter::copy(const Operation& op) {
  bool load = op.num_results() == 1;
  const Value* gv = op.operand(load ? 0 : 1);
  const Value* rv = load ? op.result() : op.operand(0);
  if (gv->type().space() != MemorySpace::global || rv->type().space() != MemorySpace::reg) {
    unsupported(op, "between " + std::string(to_string(op.operand(0)->type().space())) + " and " +
                        std::string(to_string(load ? op.result()->type().space()
                                                   : op.operand(1)->type().space())) +
                        " memory is not supported yet (only global <-> register)");
  }
  const View& g = view(op, gv);
  // `cache = "stream"` on a load: data read once, 16-byte loads that skip L1 and leave L2 first.
  std::string stream;
  if (op.has_attr("cache")) {
    std::string cache = op.str_attr("cache");
    if (cache != "stream" || !load) {
      unsupported(op, "has cache = \"" + cache + "\"; only loads take a cache hint, \"stream\"");
    }
    stream = ", true";
  }
  Reg r = load ? new_reg(op) : reg(op, rv);
  const Plan& plan = *r.plan;
  size_t rank = g.shape.size();
  if (plan.tile != g.shape) unsupported(op, "between tiles of different shapes");
  if (load && r.element != g.element) unsupported(op, "changes the element type; cast instead");
  line("{  // " + std::string(load ? "load " : "store ") + r.name + (load ? " <- " : " -> ") +
       g.base + " tile");
  ++indent_;
  std::string off;
  for (size_t d = 0; d < rank; ++d) {
    std::string c = "c" + std::to_string(d);
    std::string e = g.origin[d];
    if (plan.var[d] != "0") e = e == "0" ? plan.var[d] : e + " + " + plan.var[d];
    line("const int " + c + " = " + e + ";");
    std::string term = g.stride[d] == "1" ? c : "(long long)" + c + " * " + g.stride[d];
    off += (off.empty() ? "" : " + ") + term;
  }
  std::string ptype = std::string(load ? "const " : "") + storage_type(g.element) + "*";
  line(ptype + " p = " + g.base + " + " + off + ";");
  std::string bf = g.element == ScalarKind::bf16 ? "true" : "false";
  int64_t bytes = g.element == ScalarKind::f32 ? 4 : 2;
  size_t last = rank - 1;
  // The accesses of the whole tile as `view` describes it (its facts decide predicates and widths).
  auto accesses = [&](const View& g) {
    std::vector<std::string> unpacks;  // conversions of masked vector loads, after all fetches
    for (int64_t v = 0; v < plan.values;) {
      int64_t w = vector_width(g, plan, v, bytes);
      const auto& vc = plan.value_coord[v];
      std::string voff;
      for (size_t d = 0; d < rank; ++d) {
        if (vc[d] == 0) continue;
        std::string term = g.stride[d] == "1" ? std::to_string(vc[d])
                                              : std::to_string(vc[d]) + " * " + g.stride[d];
        voff += (voff.empty() ? "" : " + ") + term;
      }
      std::string addr = voff.empty() ? "p" : "p + " + voff;
      std::string pred;
      if (g.masked) {
        for (size_t d = 0; d < rank; ++d) {
          if (g.full[d]) continue;
          pred += (pred.empty() ? "" : " && ") + std::string("c") + std::to_string(d) +
                  (vc[d] ? " + " + std::to_string(vc[d]) : "") + " < " + g.extent[d];
        }
      }
      (void)last;
      std::string slot = r.name + "[" + std::to_string(v) + "]";
      std::string stmt;
      if (load) {
        if (w > 1) {
          stmt = bytes == 2 ? "tsl_load16<" + std::to_string(w) + stream + ">(" + addr + ", &" +
                                  slot + ", " + bf + ");"
                            : "tsl_load32<" + std::to_string(w) + ">(" + addr + ", &" + slot + ");";
        } else {
          stmt = slot + " = " +
                 (bytes == 2 ? "tsl_load(" + addr + ", " + bf + ")" : "*(" + addr + ")") + ";";
        }
        if (!pred.empty() && w > 1) {
          // Fetch now, convert after the tile's last fetch (see tsl_fetch16).
          std::string n = std::to_string(v), ws = std::to_string(w);
          line("const bool ok" + n + " = " + pred + ";");
          stmt = "const auto raw" + n + " = tsl_fetch" + (bytes == 2 ? "16" : "32") + "<" + ws +
                 (bytes == 2 ? stream : "") + ">(" + addr + ", ok" + n + ");";
          unpacks.push_back(bytes == 2 ? "tsl_unpack16<" + ws + ">(raw" + n + ", &" + slot + ", " +
                                             bf + ", ok" + n + ", " + float_literal(g.pad) + ");"
                                       : "tsl_unpack32<" + ws + ">(raw" + n + ", &" + slot +
                                             ", ok" + n + ", " + float_literal(g.pad) + ");");
        } else if (!pred.empty()) {
          std::string pad;
          for (int64_t i = 0; i < w; ++i) {
            pad += r.name + "[" + std::to_string(v + i) + "] = " + float_literal(g.pad) + "; ";
          }
          stmt = "if (" + pred + ") " + stmt + " else { " + pad + "}";
        }
      } else {
        if (w > 1) {
          stmt = bytes == 2
                     ? "tsl_store16<" + std::to_string(w) + ">(" + addr + ", &" + slot + ", " + bf +
                           ");"
                     : "tsl_store32<" + std::to_string(w) + ">(" + addr + ", &" + slot + ");";
        } else {
          stmt = "*(" + addr +
                 ") = " + (bytes == 2 ? "tsl_cvt16(" + slot + ", " + bf + ")" : slot) + ";";
        }
        // Threads that hold copies of the same element (stride-0 thread leaves): one writes.
        std::string rep = representative(plan, std::vector<bool>(plan.leaves.size(), false));
        if (rep != "true") pred = pred.empty() ? rep : rep + " && " + pred;
        if (!pred.empty()) stmt = "if (" + pred + ") " + stmt;
      }
      line(stmt);
      v += w;
    }
    for (const std::string& u : unpacks) line(u);
  };
  // A store of a tile the facts cannot prove full or row-aligned (a GEMM epilogue at ragged M, N:
  // predicated 2-byte stores of the wgmma accumulator's column pairs) gets a second version for the
  // tiles that are full and whose rows are aligned at run time (every tile but the last row and
  // column of tiles, for every even N): no predicates, vector stores. Loads keep the one version
  // the facts give (their widths are what the memory-bound kernels' facts were chosen for).
  std::string fast_when;
  View fast = g;
  if (!load) {
    for (size_t d = 0; d < rank; ++d) {
      if (!g.masked || g.full[d]) continue;
      fast_when += (fast_when.empty() ? "" : " && ") + g.origin[d] + " + " +
                   std::to_string(g.shape[d]) + " <= " + g.extent[d];
      fast.full[d] = true;
    }
    fast.masked = false;
    const std::string& row = g.extent[last];
    bool symbolic = !row.empty() && !std::isdigit(static_cast<unsigned char>(row[0]));
    int64_t widest = 1;
    if (symbolic && rank > 1) {
      fast.extent_divisor[last] = std::lcm(g.extent_divisor[last], 16 / bytes);
      for (int64_t v = 0; v < plan.values;) {
        int64_t w = vector_width(fast, plan, v, bytes);
        widest = std::max(widest, w);
        v += w;
      }
      if (g.extent_divisor[last] % widest != 0) {
        fast.extent_divisor[last] = std::lcm(g.extent_divisor[last], widest);
        fast_when +=
            (fast_when.empty() ? "" : " && ") + row + " % " + std::to_string(widest) + " == 0";
      } else {
        fast.extent_divisor[last] = g.extent_divisor[last];
      }
    }
  }
  if (fast_when.empty()) {
    accesses(g);
  } else {
    line("if (" + fast_when + ") {  // full tile, aligned rows");
    ++indent_;
    accesses(fast);
    --indent_;
    line("} else {");
    ++indent_;
    accesses(g);
    --indent_;
    line("}");
  }
  --indent_;
  line("}");
}

// The widest vector (elements) that values v, v+1, ... of `plan` form in `g`: consecutive
// elements of the contiguous last dimension, aligned by the facts, wholly in or out of bounds.
int64_t Emitter::vector_width(const View& g, const Plan& plan, int64_t v, int64_t bytes) {
  size_t rank = g.shape.size(), last = rank - 1;
  for (int64_t w = 16 / bytes; w >= 2; w /= 2) {
    if (v + w > plan.values) continue;
    bool ok = plan.value_coord[v][last] % w == 0;
    for (int64_t i = 1; ok && i < w; ++i) {
      for (size_t d = 0; d < rank; ++d) {
        int64_t expect = plan.value_coord[v][d] + (d == last ? i : 0);
        ok = ok && plan.value_coord[v + i][d] == expect;
      }
    }
    for (const Leaf& l : plan.leaves) ok = ok && l.coef[last] % w == 0;
    ok = ok && (g.origin_align[last] == 0 || g.origin_align[last] % w == 0);
    // Row starts aligned (the extent of the last dimension is the row stride), and a vector
    // never straddles the end of a row.
    bool row_ok = g.extent_divisor[last] % w == 0;
    if (rank > 1 || (g.masked && !g.full[last])) ok = ok && row_ok;
    if (ok) return w;
  }
  return 1;
}

void Emitter::cast(const Operation& op) {
  const Value* src = op.operand(0);
  const Type& to = op.result()->type();
  if (to.is_scalar()) {
    std::string name = fresh(op.result()->name());
    std::string ctype = is_float(to.element()) ? "float" : "int";
    line("const " + ctype + " " + name + " = (" + ctype + ")(" + scalar(op, src) + ");");
    scalars_[op.result()] = name;
    return;
  }
  const Reg& a = reg(op, src);
  // A cast to f16 or bf16 whose only uses are stores into global tensors of that type needs no
  // rounding of its own: each store rounds to nearest even as it converts, and rounding twice is
  // rounding once. Its result names its source's registers (a GEMM epilogue saves a conversion
  // pair per accumulator value).
  bool stored_only = to.element() == ScalarKind::f16 || to.element() == ScalarKind::bf16;
  int uses = 0;
  ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
    for (int i = 0; i < user->num_operands(); ++i) {
      if (user->operand(i) != op.result()) continue;
      ++uses;
      stored_only = stored_only && user->kind() == OpKind::copy && user->num_results() == 0 &&
                    i == 0 && user->operand(1)->type().space() == MemorySpace::global &&
                    user->operand(1)->type().element() == to.element();
    }
  });
  if (stored_only && uses > 0 && a.plan == plan_for(op, to)) {
    line("// " + op.result()->name() + ": " + a.name + " as " +
         std::string(ir::to_string(to.element())) + " (rounded by the store)");
    regs_[op.result()] = Reg{a.name, a.plan, to.element()};
    return;
  }
  const Reg& r = new_reg(op);
  if (a.plan != r.plan) unsupported(op, "changes the layout; rearrange first");
  line("#pragma unroll");
  line("for (int v = 0; v < " + std::to_string(r.plan->values) + "; ++v) " + r.name +
       "[v] = " + round_to(r.element, a.name + "[v]") + ";");
}

std::string Emitter::apply(OpKind k, const std::vector<std::string>& a, bool is_f) {
  switch (k) {
    case OpKind::neg:
      return "-(" + a[0] + ")";
    case OpKind::abs:
      return is_f ? "fabsf(" + a[0] + ")" : "abs(" + a[0] + ")";
    case OpKind::exp:
      return "expf(" + a[0] + ")";
    case OpKind::exp2:
      return "exp2f(" + a[0] + ")";
    case OpKind::log:
      return "logf(" + a[0] + ")";
    case OpKind::log2:
      return "log2f(" + a[0] + ")";
    case OpKind::sqrt:
      return "sqrtf(" + a[0] + ")";
    case OpKind::rsqrt:
      return "(1.0f / sqrtf(" + a[0] + "))";
    case OpKind::tanh:
      return "tanhf(" + a[0] + ")";
    case OpKind::sigmoid:
      return "(1.0f / (1.0f + expf(-(" + a[0] + "))))";
    case OpKind::floor:
      return "floorf(" + a[0] + ")";
    case OpKind::add:
      return a[0] + " + " + a[1];
    case OpKind::sub:
      return a[0] + " - (" + a[1] + ")";
    case OpKind::mul:
      return "(" + a[0] + ") * (" + a[1] + ")";
    case OpKind::div:
      return "(" + a[0] + ") / (" + a[1] + ")";
    case OpKind::rem:
      return is_f ? "fmodf(" + a[0] + ", " + a[1] + ")" : "(" + a[0] + ") % (" + a[1] + ")";
    case OpKind::max:
      return is_f ? "fmaxf(" + a[0] + ", " + a[1] + ")" : "max(" + a[0] + ", " + a[1] + ")";
    case OpKind::min:
      return is_f ? "fminf(" + a[0] + ", " + a[1] + ")" : "min(" + a[0] + ", " + a[1] + ")";
    case OpKind::cdiv:
      return "(" + a[0] + " + " + a[1] + " - 1) / (" + a[1] + ")";
    case OpKind::fma:
      return "fmaf(" + a[0] + ", " + a[1] + ", " + a[2] + ")";
    default:
      return {};
  }
}

void Emitter::elementwise(const Operation& op) {
  const Type& t = op.result()->type();
  bool is_f = is_float(t.element());
  if (t.is_scalar()) {
    std::vector<std::string> args;
    for (const Value* v : op.operands()) args.push_back(scalar(op, v));
    std::string e = apply(op.kind(), args, is_f);
    if (e.empty()) unsupported(op, "is not supported by the CUDA emitter yet");
    std::string name = fresh(op.result()->name());
    line(std::string("const ") + (is_f ? "float " : "int ") + name + " = " + e + ";");
    scalars_[op.result()] = name;
    return;
  }
  if (t.space() != MemorySpace::reg) unsupported(op, "on a " + t.str() + " is not supported yet");
  std::vector<std::string> args;
  for (const Value* v : op.operands()) {
    if (v->type().is_scalar()) {
      args.push_back(scalar(op, v));
      continue;
    }
    const Reg& a = reg(op, v);
    if (a.plan != plan_for(op, t)) {
      unsupported(op, "mixes layouts: %" + v->name() + " has " + a.plan->text +
                          " but the result has " + t.layout() + "; rearrange first");
    }
    args.push_back(a.name + "[v]");
  }
  std::string e = apply(op.kind(), args, true);
  if (e.empty()) unsupported(op, "is not supported by the CUDA emitter yet");
  const Reg& r = new_reg(op);
  line("#pragma unroll");
  line("for (int v = 0; v < " + std::to_string(r.plan->values) + "; ++v) " + r.name +
       "[v] = " + round_to(r.element, e) + ";");
}

// A scratch array of `count` floats carved from the one dynamic shared allocation.
std::string Emitter::scratch(const std::string& hint, int64_t count) {
  std::string name = fresh(hint + "_smem");
  line("float* " + name + " = reinterpret_cast<float*>(tsl_smem + " + std::to_string(smem_bytes_) +
       ");  // " + std::to_string(count) + " floats");
  smem_bytes_ += (count * 4 + 15) / 16 * 16;
  return name;
}

// Whether thread t holds the element of `dst` value v2's kept coordinate as its own value v1.
std::optional<int64_t> Emitter::local_source(const Plan& src, const Plan& dst, size_t kept,
                                             int64_t v2,
                                             const std::vector<int64_t>& candidates_coord) {
  for (size_t p = 0; p < candidates_coord.size(); ++p) {
    bool ok = true;
    for (int64_t t = 0; ok && t < threads_; ++t) {
      ok = src.thread_part(t)[0] + candidates_coord[p] == dst.coord(t, v2)[kept];
    }
    if (ok) return static_cast<int64_t>(p);
  }
  return std::nullopt;
}

// A condition true in exactly one thread of each group that holds the same data: leaves that
// do not move the coordinate (stride 0) or that `ignore` marks are at 0.
std::string Emitter::representative(const Plan& plan, const std::vector<bool>& ignore) {
  std::string e;
  for (size_t i = 0; i < plan.leaves.size(); ++i) {
    const Leaf& l = plan.leaves[i];
    bool zero = std::all_of(l.coef.begin(), l.coef.end(), [](int64_t c) { return c == 0; });
    if (!zero && !ignore[i]) continue;
    e += (e.empty() ? "" : " && ") + std::string("(") + leaf_coord_expr(l, plan.threads) + ") == 0";
  }
  return e.empty() ? "true" : e;
}

void Emitter::broadcast(const Operation& op) {
  const Reg& a = reg(op, op.operand(0));
  const auto& dims = op.ints_attr("dims");
  const Type& t = op.result()->type();
  if (a.plan->tile.size() != 1 || t.rank() != 2 || dims.size() != 1) {
    unsupported(op, "is supported from rank 1 to rank 2 only");
  }
  size_t kept = dims[0] == 0 ? 1 : 0;
  const Reg& r = new_reg(op);
  const Plan& src = *a.plan;
  const Plan& dst = *r.plan;
  std::vector<int64_t> coords;
  for (int64_t v = 0; v < src.values; ++v) coords.push_back(src.value_coord[v][0]);
  std::vector<int64_t> from;
  for (int64_t v = 0; v < dst.values; ++v) {
    auto p = local_source(src, dst, kept, v, coords);
    if (!p) break;
    from.push_back(*p);
  }
  if (static_cast<int64_t>(from.size()) == dst.values) {
    for (int64_t v = 0; v < dst.values; ++v) {
      line(r.name + "[" + std::to_string(v) + "] = " + a.name + "[" + std::to_string(from[v]) +
           "];");
    }
    return;
  }
  // Through shared memory: one writer per element, everyone reads.
  std::string s = scratch(r.name, src.tile[0]);
  line("__syncthreads();");
  std::vector<bool> none(src.leaves.size(), false);
  line("if (" + representative(src, none) + ") {");
  for (int64_t v = 0; v < src.values; ++v) {
    line("  " + s + "[" + src.var[0] + " + " + std::to_string(src.value_coord[v][0]) +
         "] = " + a.name + "[" + std::to_string(v) + "];");
  }
  line("}");
  line("__syncthreads();");
  for (int64_t v = 0; v < dst.values; ++v) {
    line(r.name + "[" + std::to_string(v) + "] = " + s + "[" + dst.var[kept] + " + " +
         std::to_string(dst.value_coord[v][kept]) + "];");
  }
}

// A register tensor to another layout over the same tile: through shared memory (each element
// written once by one of its holders, then every thread reads what its new layout gives it).
void Emitter::rearrange(const Operation& op) {
  const Reg& a = reg(op, op.operand(0));
  const Reg& r = new_reg(op);
  const Plan& src = *a.plan;
  const Plan& dst = *r.plan;
  if (src.tile != dst.tile) unsupported(op, "between different tile shapes");
  if (&src == &dst) {
    line("#pragma unroll");
    line("for (int v = 0; v < " + std::to_string(dst.values) + "; ++v) " + r.name +
         "[v] = " + a.name + "[v];");
    return;
  }
  int64_t count = 1;
  for (int64_t e : src.tile) count *= e;
  std::string s = scratch(r.name, count);
  auto index = [&](const Plan& plan, int64_t v) {
    std::string e, w = "";
    int64_t weight = 1;
    for (size_t d = 0; d < plan.tile.size(); ++d) {
      std::string c = plan.var[d] == "0"
                          ? std::to_string(plan.value_coord[v][d])
                          : plan.var[d] + " + " + std::to_string(plan.value_coord[v][d]);
      std::string term = weight == 1 ? "(" + c + ")" : "(" + c + ") * " + std::to_string(weight);
      e += (e.empty() ? "" : " + ") + term;
      weight *= plan.tile[d];
    }
    return e;
  };
  line("__syncthreads();");
  line("if (" + representative(src, std::vector<bool>(src.leaves.size(), false)) + ") {");
  for (int64_t v = 0; v < src.values; ++v) {
    line("  " + s + "[" + index(src, v) + "] = " + a.name + "[" + std::to_string(v) + "];");
  }
  line("}");
  line("__syncthreads();");
  for (int64_t v = 0; v < dst.values; ++v) {
    line(r.name + "[" + std::to_string(v) + "] = " + s + "[" + index(dst, v) + "];");
  }
}

void Emitter::reduce(const Operation& op) {
  const Reg& a = reg(op, op.operand(0));
  const auto& dims = op.ints_attr("dims");
  const std::string& kind = op.str_attr("kind");
  const Plan& src = *a.plan;
  if (src.tile.size() != 2 || dims.size() != 1)
    unsupported(op, "is supported from rank 2 to rank 1 only");
  size_t red = static_cast<size_t>(dims[0]), kept = 1 - red;
  std::string identity = kind == "sum"   ? "0.0f"
                         : kind == "max" ? float_literal(-INFINITY)
                         : kind == "min" ? float_literal(INFINITY)
                                         : "";
  if (identity.empty()) unsupported(op, "of kind " + kind + " is not supported yet");
  auto combine = [&](const std::string& x, const std::string& y) {
    return kind == "sum"   ? x + " + " + y
           : kind == "max" ? "fmaxf(" + x + ", " + y + ")"
                           : "fminf(" + x + ", " + y + ")";
  };
  const Reg& r = new_reg(op);
  const Plan& dst = *r.plan;
  // 1. Each thread folds its own values, one partial per distinct kept coordinate.
  std::vector<int64_t> kept_coord;
  std::vector<int64_t> part_of(src.values);
  for (int64_t v = 0; v < src.values; ++v) {
    int64_t c = src.value_coord[v][kept];
    auto it = std::find(kept_coord.begin(), kept_coord.end(), c);
    part_of[v] = it - kept_coord.begin();
    if (it == kept_coord.end()) kept_coord.push_back(c);
  }
  std::string part = fresh(r.name + "_part");
  int64_t parts = static_cast<int64_t>(kept_coord.size());
  line("float " + part + "[" + std::to_string(parts) + "];");
  std::vector<bool> seen(parts, false);
  for (int64_t v = 0; v < src.values; ++v) {
    std::string slot = part + "[" + std::to_string(part_of[v]) + "]";
    std::string x = a.name + "[" + std::to_string(v) + "]";
    line(slot + " = " + (seen[part_of[v]] ? combine(slot, x) : x) + ";");
    seen[part_of[v]] = true;
  }
  // 2. Lanes that split the reduced dimension combine by butterfly shuffles; leaves beyond the
  // warp (or of odd extent) go through shared memory.
  std::vector<bool> shuffled(src.leaves.size(), false);
  std::vector<size_t> cross;
  for (size_t i = 0; i < src.leaves.size(); ++i) {
    const Leaf& l = src.leaves[i];
    if (l.coef[red] == 0) continue;
    if (l.coef[kept] != 0) unsupported(op, "over a thread mode that moves both dimensions");
    bool pow2 = (l.extent & (l.extent - 1)) == 0 && (l.prefix & (l.prefix - 1)) == 0;
    if (pow2 && l.prefix * l.extent <= 32 && threads_ >= 32) {
      shuffled[i] = true;
      for (int64_t m = l.prefix; m < l.prefix * l.extent; m *= 2) {
        line("#pragma unroll");
        line("for (int p = 0; p < " + std::to_string(parts) + "; ++p) " + part + "[p] = " +
             combine(part + "[p]",
                     "__shfl_xor_sync(0xffffffffu, " + part + "[p], " + std::to_string(m) + ")") +
             ";");
      }
    } else {
      cross.push_back(i);
    }
  }
  // 3. The result: from the thread's own partials when it holds them, else from shared memory.
  std::vector<int64_t> from;
  if (cross.empty()) {
    std::vector<int64_t> coords = kept_coord;
    for (int64_t v = 0; v < dst.values; ++v) {
      bool ok = false;
      for (size_t p = 0; p < coords.size() && !ok; ++p) {
        ok = true;
        for (int64_t t = 0; ok && t < threads_; ++t) {
          ok = src.thread_part(t)[kept] + coords[p] == dst.coord(t, v)[0];
        }
        if (ok) from.push_back(static_cast<int64_t>(p));
      }
      if (!ok) break;
    }
  }
  if (static_cast<int64_t>(from.size()) == dst.values) {
    for (int64_t v = 0; v < dst.values; ++v) {
      line(r.name + "[" + std::to_string(v) + "] = " + part + "[" + std::to_string(from[v]) + "];");
    }
    return;
  }
  int64_t groups = 1;
  std::string g = "0";
  for (size_t i : cross) {
    const Leaf& l = src.leaves[i];
    std::string c = leaf_coord_expr(l, src.threads);
    g = g == "0" ? "(" + c + ")" : g + " + (" + c + ") * " + std::to_string(groups);
    groups *= l.extent;
  }
  std::string s = scratch(r.name, src.tile[kept] * groups);
  std::string k = src.var[kept] == "0" ? "" : src.var[kept] + " + ";
  line("__syncthreads();");
  line("if (" + representative(src, shuffled) + ") {");
  for (int64_t p = 0; p < parts; ++p) {
    line("  " + s + "[(" + k + std::to_string(kept_coord[p]) + ") * " + std::to_string(groups) +
         " + " + g + "] = " + part + "[" + std::to_string(p) + "];");
  }
  line("}");
  line("__syncthreads();");
  std::string dk = dst.var[0] == "0" ? "" : dst.var[0] + " + ";
  for (int64_t v = 0; v < dst.values; ++v) {
    line("{");
    line("  const float* row = " + s + " + (" + dk + std::to_string(dst.value_coord[v][0]) +
         ") * " + std::to_string(groups) + ";");
    line("  float acc = row[0];");
    line("  for (int g = 1; g < " + std::to_string(groups) +
         "; ++g) acc = " + combine("acc", "row[g]") + ";");
    line("  " + r.name + "[" + std::to_string(v) + "] = acc;");
    line("}");
  }
}

void Emitter::for_op(const Operation& op) {
  const ir::Block& body = *op.region(0);
  std::vector<std::string> carried;
  for (int i = 3; i < op.num_operands(); ++i) {
    const Value* init = op.operand(i);
    const Value* arg = body.argument(i - 2);
    if (init->type().is_scalar()) {
      std::string name = fresh(arg->name());
      std::string ctype = is_float(init->type().element()) ? "float" : "int";
      line(ctype + " " + name + " = " + scalar(op, init) + ";");
      scalars_[arg] = name;
      scalars_[op.result(i - 3)] = name;
      carried.push_back(name);
    } else {
      const Reg& a = reg(op, init);
      std::string name = fresh(arg->name());
      line("float " + name + "[" + std::to_string(a.plan->values) + "];");
      line("#pragma unroll");
      line("for (int v = 0; v < " + std::to_string(a.plan->values) + "; ++v) " + name +
           "[v] = " + a.name + "[v];");
      regs_[arg] = Reg{name, a.plan, a.element};
      regs_[op.result(i - 3)] = Reg{name, a.plan, a.element};
      carried.push_back(name);
    }
  }
  std::string iv = fresh(body.argument(0)->name());
  scalars_[body.argument(0)] = iv;
  line("for (int " + iv + " = " + scalar(op, op.operand(0)) + "; " + iv + " < " +
       scalar(op, op.operand(1)) + "; " + iv + " += " + scalar(op, op.operand(2)) + ") {");
  ++indent_;
  for (const auto& inner : body.ops()) {
    if (inner->kind() != OpKind::yield) {
      emit(*inner);
      continue;
    }
    for (int i = 0; i < inner->num_operands(); ++i) {
      const Value* y = inner->operand(i);
      if (y->type().is_scalar()) {
        line(carried[i] + " = " + scalar(*inner, y) + ";");
      } else {
        const Reg& yr = reg(*inner, y);
        if (yr.name == carried[i]) continue;
        line("#pragma unroll");
        line("for (int v = 0; v < " + std::to_string(yr.plan->values) + "; ++v) " + carried[i] +
             "[v] = " + yr.name + "[v];");
      }
    }
  }
  --indent_;
  line("}");
}

}  // namespace detail

EmittedKernel emit_cuda(const ir::Operation& kernel) {
  return detail::Emitter(kernel).run();
}

}  // namespace tessel::target::cuda
