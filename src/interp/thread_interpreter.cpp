// The thread-level interpreter: the walk over the IR (parameters, blocks, views, elementwise ops,
// reductions, loops); the copy and mma atoms it executes live in thread_atoms.cpp.
#include "interp/thread_interpreter.h"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <unordered_map>

#include "interp/element_ops.h"
#include "interp/numerics.h"
#include "interp/thread_interpreter_internal.h"
#include "layout/parse.h"
#include "layout/swizzle.h"
#include "layout/table.h"
#include "support/diagnostics.h"

namespace tessel::interp {
namespace detail {

std::string vname(const Value* v) {
  return "%" + v->name();
}

int64_t product(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t e : s) n *= e;
  return n;
}

// Colexicographic index <-> coordinate over a shape (the TV layouts' tile index).
int64_t colex(const std::vector<int64_t>& c, const std::vector<int64_t>& shape) {
  int64_t i = 0, m = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    i += c[d] * m;
    m *= shape[d];
  }
  return i;
}
std::vector<int64_t> coord_of(int64_t i, const std::vector<int64_t>& shape) {
  std::vector<int64_t> c(shape.size());
  for (size_t d = 0; d < shape.size(); ++d) {
    c[d] = i % shape[d];
    i /= shape[d];
  }
  return c;
}

ThreadRun::ThreadRun(const Operation& kernel, const std::vector<Argument>& args,
                     const RunOptions& options)
    : kernel_(kernel), options_(options) {
  const ir::Block& body = *kernel.region(0);
  if (args.size() != body.arguments().size())
    user_error(kernel.loc(), "kernel @", kernel.signature().name, " takes ",
               body.arguments().size(), " arguments, not ", args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    const Value* p = body.argument(int(i));
    RV v;
    if (std::holds_alternative<HostTensor*>(args[i])) {
      if (p->type().has_layout())
        user_error(kernel.loc(), "thread interpreter: parameter ", vname(p),
                   " has a layout; only row-major global tensors are supported");
      v.kind = RV::global;
      v.g.host = std::get<HostTensor*>(args[i]);
      v.g.root_shape = v.g.host->shape();
      v.g.shape = v.g.root_shape;
      v.g.origin.assign(v.g.shape.size(), 0);
      for (size_t d = 0; d < v.g.shape.size(); ++d) v.g.dim_map.push_back(int(d));
    } else if (std::holds_alternative<double>(args[i])) {
      v.s = element_from_double(p->type().element(), std::get<double>(args[i]));
    } else {
      v.s = element_from_int(p->type().element(), std::get<int64_t>(args[i]));
    }
    env_[p] = v;
  }
}

ThreadRunStats ThreadRun::run() {
  std::vector<int64_t> grid = grid_extents(kernel_, options_.sizes);
  const Operation* block_grid = nullptr;
  for (const auto& op : kernel_.region(0)->ops())
    if (op->kind() == OpKind::block_grid) block_grid = op.get();
  threads_ = block_grid && block_grid->has_attr("threads") ? block_grid->int_attr("threads") : 128;
  stats_.threads = threads_;
  int64_t blocks = product(grid);
  for (int64_t b = 0; b < blocks; ++b) {
    std::vector<int64_t> idx(grid.size());
    int64_t rest = b;
    for (size_t d = grid.size(); d-- > 0;) {
      idx[d] = rest % grid[d];
      rest /= grid[d];
    }
    block_index_ = idx;
    run_block(*kernel_.region(0));
    ++stats_.blocks;
  }
  return stats_;
}

std::vector<RV> ThreadRun::run_block(const ir::Block& block) {
  for (const auto& op : block.ops()) {
    if (op->kind() == OpKind::yield) {
      std::vector<RV> out;
      for (const Value* v : op->operands()) out.push_back(get(v));
      return out;
    }
    exec(*op);
  }
  return {};
}

const RV& ThreadRun::get(const Value* v) {
  auto it = env_.find(v);
  TESSEL_ASSERT(it != env_.end(), "value ", vname(v), " has no value");
  return it->second;
}

void ThreadRun::unsupported(const Operation& op) {
  user_error(op.loc(), "thread interpreter: ", op.name(), " is not supported");
}

// ---- layouts ----
Regs ThreadRun::new_regs(const Value* v, const Operation& op) {
  const ir::Type& t = v->type();
  if (!t.has_layout())
    user_error(op.loc(), op.name(), ": register tensor ", vname(v),
               " has no thread-value layout (run synthesize-layouts first)");
  Regs r;
  r.shape = t.static_shape();
  layout::Layout l = layout::parse_layout(t.layout());
  r.table = layout::layout_table(l);
  r.T = l.mode(0).size();
  r.V = l.mode(1).size();
  if (r.T > threads_)
    user_error(op.loc(), op.name(), ": the layout of ", vname(v), " spans ", r.T,
               " threads but the block has ", threads_);
  r.data = std::make_shared<std::vector<double>>(size_t(r.T * r.V),
                                                 std::numeric_limits<double>::quiet_NaN());
  return r;
}

// slot[t][element] -> value index, for looking up what a thread holds.
std::vector<std::unordered_map<int64_t, int64_t>> ThreadRun::slots(const Regs& r) {
  std::vector<std::unordered_map<int64_t, int64_t>> out(size_t(r.T));
  for (int64_t t = 0; t < r.T; ++t)
    for (int64_t v = 0; v < r.V; ++v) out[size_t(t)].emplace(r.elem(t, v), v);
  return out;
}

Shared ThreadRun::shared_view(const Value* v, std::shared_ptr<std::vector<double>> mem) {
  const ir::Type& t = v->type();
  if (!t.has_layout())
    user_error(SourceLocation::unknown(), "thread interpreter: shared tensor ", vname(v),
               " has no layout (run synthesize-shared-layouts first)");
  Shared s;
  s.shape = t.static_shape();
  const std::string& text = t.layout();
  size_t o = text.rfind(" o ");
  layout::Layout base = layout::parse_layout(o == std::string::npos ? text : text.substr(o + 3));
  s.table = layout::layout_table(base);
  if (o != std::string::npos) {
    int b = 0, m = 0, sh = 0;
    long long off = 0;
    std::sscanf(text.c_str(), "Sw<%d,%d,%d> o %lld", &b, &m, &sh, &off);
    layout::Swizzle sw(b, m, sh);
    for (int64_t& x : s.table) x = sw(off + x);
  }
  int64_t need = 0;
  for (int64_t x : s.table) need = std::max(need, x + 1);
  if (!mem)
    mem = std::make_shared<std::vector<double>>(size_t(need),
                                                std::numeric_limits<double>::quiet_NaN());
  s.mem = mem;
  return s;
}

// ---- global memory ----
bool ThreadRun::inside(const Global& g, const std::vector<int64_t>& c, std::vector<int64_t>* root) {
  *root = g.origin;
  for (size_t d = 0; d < c.size(); ++d) (*root)[size_t(g.dim_map[d])] += c[d];
  for (size_t d = 0; d < root->size(); ++d)
    if ((*root)[d] < 0 || (*root)[d] >= g.root_shape[d]) return false;
  return true;
}

int64_t ThreadRun::row_major(const std::vector<int64_t>& c, const std::vector<int64_t>& shape) {
  int64_t i = 0;
  for (size_t d = 0; d < shape.size(); ++d) i = i * shape[d] + c[d];
  return i;
}

double ThreadRun::load(const Operation& op, const Global& g, const std::vector<int64_t>& c) {
  std::vector<int64_t> root;
  if (!inside(g, c, &root)) {
    if (g.masked) return g.pad;
    user_error(op.loc(), op.name(), ": element outside the tensor");
  }
  int64_t i = row_major(root, g.root_shape);
  return ir::is_float(g.host->element()) ? g.host->get_float(i) : double(g.host->get_int(i));
}

void ThreadRun::store(const Operation& op, const Global& g, const std::vector<int64_t>& c,
                      double x) {
  std::vector<int64_t> root;
  if (!inside(g, c, &root)) {
    if (g.masked) return;
    user_error(op.loc(), op.name(), ": element outside the tensor");
  }
  int64_t i = row_major(root, g.root_shape);
  if (ir::is_float(g.host->element())) {
    g.host->set_float(i, x);
  } else {
    g.host->set_int(i, int64_t(x));
  }
}

// ---- ops ----
void ThreadRun::set_scalar(const Value* v, Element s) {
  RV r;
  r.s = s;
  env_[v] = r;
}

void ThreadRun::set_regs(const Value* v, Regs r) {
  RV x;
  x.kind = RV::reg;
  x.r = std::move(r);
  env_[v] = x;
}

void ThreadRun::exec(const Operation& op) {
  OpKind k = op.kind();
  if (ir::is_elementwise(k)) return elementwise(op);
  switch (k) {
    case OpKind::size: {
      Element s;
      s.i = options_.sizes.at(op.str_attr("name"));
      return set_scalar(op.result(), s);
    }
    case OpKind::constant: {
      return set_scalar(op.result(),
                        element_from_attr(op.result()->type().element(), *op.attr("value")));
    }
    case OpKind::block_grid:
      for (int i = 0; i < op.num_results(); ++i) {
        Element s;
        s.i = block_index_[size_t(i)];
        set_scalar(op.result(i), s);
      }
      return;
    case OpKind::tile:
      return tile(op);
    // One launch at a time (see the tile-level interpreter).
    case OpKind::grid_wait:
    case OpKind::launch_dependents:
    case OpKind::prefetch:
      return;
    case OpKind::transpose:
      return transpose(op);
    case OpKind::alloc:
    case OpKind::fill:
      return create(op);
    case OpKind::iota:
      return iota(op);
    case OpKind::copy:
      return copy(op);
    case OpKind::mma:
      return mma(op);
    case OpKind::cast:
      return cast(op);
    case OpKind::reduce:
      return reduce(op);
    case OpKind::broadcast:
      return broadcast(op);
    case OpKind::rearrange:
      return rearrange(op);
    case OpKind::for_:
      return for_op(op);
    case OpKind::if_: {
      const ir::Block& taken = *op.region(scalar(op.operand(0)).i ? 0 : 1);
      std::vector<RV> out = run_block(taken);
      for (int i = 0; i < op.num_results(); ++i) env_[op.result(i)] = clone(out.at(size_t(i)));
      return;
    }
    case OpKind::tile_extent: {
      const RV& v = get(op.operand(0));
      if (v.kind != RV::global) unsupported(op);
      int64_t d = op.int_attr("dim");
      int root = v.g.dim_map[size_t(d)];
      Element e;
      e.i = std::clamp<int64_t>(v.g.root_shape[size_t(root)] - v.g.origin[size_t(root)], 0,
                                v.g.shape[size_t(d)]);
      return set_scalar(op.result(), e);
    }
    default:
      unsupported(op);
  }
}

void ThreadRun::tile(const Operation& op) {
  const RV& src = get(op.operand(0));
  if (src.kind != RV::global || ir::tile_indirect_dim(op) >= 0) unsupported(op);
  const auto& shape = op.ints_attr("shape");
  std::vector<int64_t> squeeze =
      op.has_attr("squeeze") ? op.ints_attr("squeeze") : std::vector<int64_t>{};
  Global g = src.g;
  Global out = g;
  out.shape.clear();
  out.dim_map.clear();
  for (size_t d = 0; d < shape.size(); ++d) {
    int64_t start = scalar(op.operand(int(d) + 1)).i * shape[d];
    out.origin[size_t(g.dim_map[d])] += start;
    if (std::find(squeeze.begin(), squeeze.end(), int64_t(d)) != squeeze.end()) continue;
    out.shape.push_back(shape[d]);
    out.dim_map.push_back(g.dim_map[d]);
  }
  if (op.has_attr("masked")) {
    out.masked = true;
    ir::ScalarKind k = g.host->element();
    out.pad = element_as_double(
        k, element_from_double(k, op.has_attr("pad") ? op.real_attr("pad") : 0.0));
  }
  RV r;
  r.kind = RV::global;
  r.g = out;
  env_[op.result()] = r;
}

void ThreadRun::transpose(const Operation& op) {
  const RV& src = get(op.operand(0));
  RV r = src;
  if (src.kind == RV::shared) {
    r.sh = shared_view(op.result(), src.sh.mem);
  } else if (src.kind == RV::reg && src.r.shape.size() == 2) {
    // Each thread keeps its values; only their tile coordinates turn. The result's layout must be
    // exactly that (synthesize-layouts makes it so).
    Regs out = new_regs(op.result(), op);
    int64_t rows = src.r.shape[0], cols = src.r.shape[1];
    if (out.T != src.r.T || out.V != src.r.V)
      user_error(op.loc(), "transpose: the layouts of ", vname(op.operand(0)), " and ",
                 vname(op.result()), " do not hold the same values per thread");
    for (int64_t t = 0; t < out.T; ++t)
      for (int64_t v = 0; v < out.V; ++v) {
        int64_t e = src.r.elem(t, v);
        if (out.elem(t, v) != e / rows + cols * (e % rows))
          user_error(op.loc(), "transpose: thread ", t, " value ", v, " of ", vname(op.result()),
                     " is not its source value transposed");
        out.at(t, v) = src.r.at(t, v);
      }
    r.r = out;
  } else if (src.kind == RV::global && src.g.shape.size() == 2) {
    std::swap(r.g.shape[0], r.g.shape[1]);
    std::swap(r.g.dim_map[0], r.g.dim_map[1]);
  } else {
    unsupported(op);
  }
  env_[op.result()] = r;
}

void ThreadRun::create(const Operation& op) {
  const Value* v = op.result();
  double fill = 0;
  bool is_fill = op.kind() == OpKind::fill;
  if (is_fill) {
    ir::ScalarKind k = v->type().element();
    fill = element_as_double(k, element_from_attr(k, *op.attr("value")));
  }
  if (v->type().space() == MemorySpace::shared) {
    RV r;
    r.kind = RV::shared;
    r.sh = shared_view(v, nullptr);
    if (is_fill)
      for (int64_t x : r.sh.table) (*r.sh.mem)[size_t(x)] = fill;
    env_[v] = r;
    return;
  }
  Regs regs = new_regs(v, op);
  if (is_fill) std::fill(regs.data->begin(), regs.data->end(), fill);
  set_regs(v, regs);
}

// Each thread computes its own values with the tile interpreter's element semantics
// (interp/element_ops.h); registers hold elements as doubles.
void ThreadRun::elementwise(const Operation& op) {
  const Value* res = op.result();
  ir::ScalarKind out_kind = res->type().element();
  int arity = ir::op_info(op.kind()).arity;
  ir::ScalarKind k = op.operand(op.kind() == OpKind::select ? 1 : 0)->type().element();
  Element x[3];
  if (!res->type().is_tensor()) {
    for (int i = 0; i < arity; ++i) x[i] = scalar(op.operand(i));
    return set_scalar(res, apply_elementwise(op, k, x));
  }
  Regs out = new_regs(res, op);
  std::vector<const RV*> in;
  std::vector<ir::ScalarKind> kinds;
  for (const Value* v : op.operands()) {
    in.push_back(&get(v));
    kinds.push_back(v->type().element());
    if (in.back()->kind == RV::reg && in.back()->r.table != out.table)
      user_error(op.loc(), op.name(), ": operand ", vname(v),
                 " is distributed differently from the result (", v->type().layout(), " vs ",
                 res->type().layout(), ")");
    if (in.back()->kind == RV::global || in.back()->kind == RV::shared) unsupported(op);
  }
  for (int64_t th = 0; th < out.T; ++th) {
    for (int64_t v = 0; v < out.V; ++v) {
      for (int i = 0; i < arity; ++i) {
        const RV& a = *in[size_t(i)];
        x[i] = a.kind == RV::reg ? element_of_double(kinds[size_t(i)], a.r.at(th, v)) : a.s;
      }
      out.at(th, v) = element_as_double(out_kind, apply_elementwise(op, k, x));
    }
  }
  set_regs(res, out);
}

void ThreadRun::iota(const Operation& op) {
  Regs out = new_regs(op.result(), op);
  ir::ScalarKind k = op.result()->type().element();
  int64_t dim = op.int_attr("dim");
  for (int64_t t = 0; t < out.T; ++t)
    for (int64_t v = 0; v < out.V; ++v)
      out.at(t, v) = element_as_double(
          k, element_from_int(k, coord_of(out.elem(t, v), out.shape)[size_t(dim)]));
  set_regs(op.result(), out);
}

void ThreadRun::cast(const Operation& op) {
  const Value* res = op.result();
  const RV& src = get(op.operand(0));
  ir::ScalarKind from = op.operand(0)->type().element();
  ir::ScalarKind to = res->type().element();
  if (!res->type().is_tensor()) return set_scalar(res, convert(from, to, src.s));
  Regs out = new_regs(res, op);
  if (src.r.table != out.table)
    user_error(op.loc(), "cast: ", vname(op.operand(0)), " is distributed differently from ",
               vname(res));
  for (size_t i = 0; i < out.data->size(); ++i)
    (*out.data)[i] =
        element_as_double(to, convert(from, to, element_of_double(from, (*src.r.data)[i])));
  set_regs(res, out);
}

// The element each thread needs, looked up in what it holds; a thread that does not hold it is
// an inconsistent layout.
double ThreadRun::held(const Operation& op, const Value* v, const Regs& r,
                       const std::vector<std::unordered_map<int64_t, int64_t>>& slot, int64_t t,
                       int64_t elem) {
  if (t < r.T) {
    auto it = slot[size_t(t)].find(elem);
    if (it != slot[size_t(t)].end()) return r.at(t, it->second);
  }
  missing(op, v, r, t, elem);
}

void ThreadRun::missing(const Operation& op, const Value* v, const Regs& r, int64_t t,
                        int64_t elem) {
  std::vector<int64_t> c = coord_of(elem, r.shape);
  std::string cs;
  for (size_t d = 0; d < c.size(); ++d) cs += (d ? "," : "") + std::to_string(c[d]);
  user_error(op.loc(), op.name(), ": thread ", t, " needs element (", cs, ") of ", vname(v),
             " but its layout ", v->type().layout(), " does not give it that element");
}

void ThreadRun::reduce(const Operation& op) {
  const Regs& src = get(op.operand(0)).r;
  std::vector<int64_t> dims = op.ints_attr("dims");
  const std::string& kind = op.str_attr("kind");
  ir::ScalarKind t = op.operand(0)->type().element();
  if (!op.result()->type().is_tensor()) unsupported(op);
  Regs out = new_regs(op.result(), op);
  OpKind fold = kind == "sum" ? OpKind::add : kind == "max" ? OpKind::max : OpKind::min;
  auto combine = [&](double a, double b) {
    return element_as_double(t, *binary(fold, t, element_of_double(t, a), element_of_double(t, b)));
  };
  auto out_index = [&](int64_t e) {
    std::vector<int64_t> c = coord_of(e, src.shape), keep;
    for (size_t d = 0; d < c.size(); ++d)
      if (std::find(dims.begin(), dims.end(), int64_t(d)) == dims.end()) keep.push_back(c[d]);
    return colex(keep, out.shape);
  };
  // Per thread partials, folding the thread's values in order of their reduced coordinates.
  std::vector<std::map<int64_t, std::pair<int64_t, double>>> part(static_cast<size_t>(threads_));
  for (int64_t th = 0; th < src.T; ++th) {
    std::vector<std::pair<int64_t, int64_t>> order;  // (element, value)
    for (int64_t v = 0; v < src.V; ++v) order.push_back({src.elem(th, v), v});
    std::sort(order.begin(), order.end());
    int64_t last = -1;
    for (auto [e, v] : order) {
      if (e == last) continue;  // a value the thread holds twice counts once
      last = e;
      int64_t o = out_index(e);
      auto it = part[size_t(th)].find(o);
      if (it == part[size_t(th)].end()) {
        part[size_t(th)][o] = {e, src.at(th, v)};
      } else {
        it->second.second = combine(it->second.second, src.at(th, v));
      }
    }
  }
  // Butterfly over the thread bits that the result's layout broadcasts.
  layout::Layout threads =
      layout::flatten(layout::parse_layout(op.result()->type().layout()).mode(0));
  int64_t mult = 1;
  for (const layout::Layout& mode :
       threads.rank() == 1 ? std::vector<layout::Layout>{threads} : threads.modes()) {
    int64_t size = mode.size();
    if (size > 1 && mode.stride() == layout::IntTuple(0) && (size & (size - 1)) != 0) {
      // A mode of any other extent (a row over 288 threads: 9 warps, which the emitter combines
      // by shuffles within each warp and through shared memory across warps): each group of
      // threads that differ only in this mode's coordinate folds its partials in coordinate
      // order, and every member gets the result. (An XOR butterfly over 288 threads would pair
      // thread 32 with thread 288, which does not exist, and miss the last warp's partials.)
      auto next = part;
      for (int64_t th = 0; th < src.T; ++th) {
        const int64_t digit = (th / mult) % size;
        const int64_t base = th - digit * mult;
        for (auto& [o, p] : next[size_t(th)]) {
          std::optional<double> total;
          for (int64_t d = 0; d < size; ++d) {
            const int64_t q = base + d * mult;
            if (q >= src.T) continue;
            auto it = part[size_t(q)].find(o);
            if (it == part[size_t(q)].end()) continue;
            total = total ? combine(*total, it->second.second) : it->second.second;
          }
          if (total) p.second = *total;
        }
      }
      part = std::move(next);
      ++stats_.shuffle_rounds;
    } else if (size > 1 && mode.stride() == layout::IntTuple(0)) {
      for (int64_t m = mult; m < mult * size; m *= 2) {
        auto next = part;
        for (int64_t th = 0; th < src.T; ++th) {
          int64_t q = th ^ m;
          if (q >= src.T) continue;
          for (auto& [o, p] : next[size_t(th)]) {
            auto it = part[size_t(q)].find(o);
            if (it != part[size_t(q)].end())
              p.second = combine(part[size_t(th)][o].second, it->second.second);
          }
        }
        part = std::move(next);
        ++stats_.shuffle_rounds;
      }
    }
    mult *= size;
  }
  for (int64_t th = 0; th < out.T; ++th)
    for (int64_t v = 0; v < out.V; ++v) {
      auto it = part[size_t(th)].find(out.elem(th, v));
      if (it == part[size_t(th)].end())
        user_error(op.loc(), "reduce: thread ", th, " holds no partial for output element ",
                   out.elem(th, v), " of ", vname(op.result()));
      out.at(th, v) = it->second.second;
    }
  set_regs(op.result(), out);
}

void ThreadRun::broadcast(const Operation& op) {
  const RV& src = get(op.operand(0));
  Regs out = new_regs(op.result(), op);
  std::vector<int64_t> dims = op.ints_attr("dims");
  if (src.kind == RV::scalar) {
    double x = element_as_double(op.operand(0)->type().element(), src.s);
    std::fill(out.data->begin(), out.data->end(), x);
    return set_regs(op.result(), out);
  }
  auto slot = slots(src.r);
  for (int64_t th = 0; th < out.T; ++th)
    for (int64_t v = 0; v < out.V; ++v) {
      std::vector<int64_t> c = coord_of(out.elem(th, v), out.shape), keep;
      for (size_t d = 0; d < c.size(); ++d)
        if (std::find(dims.begin(), dims.end(), int64_t(d)) == dims.end()) keep.push_back(c[d]);
      out.at(th, v) = held(op, op.operand(0), src.r, slot, th, colex(keep, src.r.shape));
    }
  set_regs(op.result(), out);
}

void ThreadRun::rearrange(const Operation& op) {
  const Regs& src = get(op.operand(0)).r;
  Regs out = new_regs(op.result(), op);
  std::vector<double> smem(size_t(product(src.shape)), std::numeric_limits<double>::quiet_NaN());
  for (int64_t t = 0; t < src.T; ++t)
    for (int64_t v = 0; v < src.V; ++v) smem[size_t(src.elem(t, v))] = src.at(t, v);
  for (int64_t t = 0; t < out.T; ++t)
    for (int64_t v = 0; v < out.V; ++v) out.at(t, v) = smem[size_t(out.elem(t, v))];
  ++stats_.rearranges;
  set_regs(op.result(), out);
}

RV ThreadRun::clone(const RV& x) {
  RV y = x;
  if (x.kind == RV::reg) y.r.data = std::make_shared<std::vector<double>>(*x.r.data);
  return y;
}

void ThreadRun::for_op(const Operation& op) {
  int64_t lo = scalar(op.operand(0)).i, hi = scalar(op.operand(1)).i,
          step = scalar(op.operand(2)).i;
  const ir::Block& body = *op.region(0);
  std::vector<RV> carried;
  for (int i = 3; i < op.num_operands(); ++i) carried.push_back(clone(get(op.operand(i))));
  for (int64_t k = lo; k < hi; k += step) {
    Element s;
    s.i = k;
    set_scalar(body.argument(0), s);
    for (size_t i = 0; i < carried.size(); ++i) env_[body.argument(int(i) + 1)] = carried[i];
    std::vector<RV> out = run_block(body);
    for (size_t i = 0; i < carried.size(); ++i) carried[i] = clone(out[i]);
  }
  for (int i = 0; i < op.num_results(); ++i) env_[op.result(i)] = carried[size_t(i)];
}

}  // namespace detail

ThreadRunStats interpret_threads(const ir::Operation& kernel, const std::vector<Argument>& args,
                                 const RunOptions& options) {
  return detail::ThreadRun(kernel, args, options).run();
}

}  // namespace tessel::interp
