#include "bench/harness/gemm_kernels.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <random>
#include <span>
#include <sstream>
#include <thread>

#include "ir/parser.h"
#include "runtime/numerics.h"
#include "support/diagnostics.h"
#include "tessel/example_kernels.h"

namespace tessel::bench {
namespace {

using ir::OpKind;
using Step = GemmEpilogue::Step;

// The kernel parameter that `v` views, following the ops that move or reshape a tensor without
// computing on it (tile, copy, transpose, global_view, rearrange); -1 when `v` comes from anything
// else. `transposes` counts the transposes on the way.
int traced_param(const ir::Block& body, const ir::Value* v, int* transposes = nullptr) {
  while (v != nullptr) {
    const ir::Operation* def = v->def();
    if (def == nullptr) return v->owner_block() == &body ? v->index() : -1;
    switch (def->kind()) {
      case OpKind::transpose:
        if (transposes) ++*transposes;
        v = def->operand(0);
        break;
      case OpKind::tile:
      case OpKind::global_view:
      case OpKind::rearrange:
        v = def->operand(0);
        break;
      case OpKind::copy:
        if (def->num_operands() != 1) return -1;
        v = def->operand(0);
        break;
      default:
        return -1;
    }
  }
  return -1;
}

std::string format_number(double v) {
  std::ostringstream out;
  out << v;
  return out.str();
}

// Compiles the epilogue of one store: the stored value, back to the products and the inputs.
class EpilogueCompiler {
 public:
  EpilogueCompiler(const ir::Operation& kernel, const std::map<const ir::Value*, int>& products,
                   const std::vector<int>& grid_axis, const std::vector<int64_t>& tile_shape,
                   GemmRoles& roles, GemmEpilogue& out)
      : kernel_(kernel),
        body_(*kernel.region(0)),
        products_(products),
        grid_axis_(grid_axis),
        tile_shape_(tile_shape),
        roles_(roles),
        out_(out) {}

  int compile(const ir::Value* v) {
    auto found = memo_.find(v);
    if (found != memo_.end()) return found->second;
    int step = build(v);
    memo_[v] = step;
    return step;
  }

 private:
  [[noreturn]] void unsupported(const ir::Operation& op, const std::string& why) {
    user_error(op.loc(), "tessel bench gemm: the epilogue of @", kernel_.signature().name, " ",
               why);
  }

  int add(Step step) {
    out_.steps.push_back(std::move(step));
    return static_cast<int>(out_.steps.size()) - 1;
  }

  // The output axis (0: rows i, 1: columns j) that a tile coordinate follows: a block_grid result
  // that indexes an output dimension.
  int axis_of(const ir::Operation& load, const ir::Value* coordinate) {
    const ir::Operation* def = coordinate->def();
    if (def != nullptr && def->kind() == OpKind::block_grid) {
      int r = coordinate->index();
      if (r < static_cast<int>(grid_axis_.size()) && grid_axis_[r] >= 0) return grid_axis_[r];
    }
    unsupported(load, "reads a tile whose coordinate %" + coordinate->name() +
                          " is not a block index of the output tile");
  }

  // A register tile loaded from a global tensor of the kernel: an input of the epilogue.
  int input(const ir::Operation& load, const ir::Value* v) {
    const ir::Operation* t = load.operand(0)->def();
    while (t != nullptr && t->kind() == OpKind::copy && t->num_operands() == 1)
      t = t->operand(0)->def();  // global -> shared -> register
    int p = traced_param(body_, load.operand(0));
    if (t == nullptr || t->kind() != OpKind::tile || p < 0 || t->operand(0)->def() != nullptr) {
      unsupported(load, "computes %" + v->name() + " from something other than a tile of a " +
                            "kernel parameter");
    }
    const ir::Type& param = body_.argument(p)->type();
    const auto& shape = t->ints_attr("shape");
    if (t->has_attr("squeeze") || param.rank() != t->num_operands() - 1 || param.rank() > 2) {
      unsupported(load,
                  "reads %" + body_.argument(p)->name() +
                      " in a way the bench cannot replay (expected a [N], [M] or [M,N] tile)");
    }
    Step step{};
    step.what = Step::Kind::input;
    step.index = p;
    step.element = v->type().element();
    for (int d = 0; d < param.rank(); ++d) {
      int axis = axis_of(*t, t->operand(d + 1));
      if (shape[d] != tile_shape_[axis]) {
        unsupported(*t, "reads %" + body_.argument(p)->name() + " in tiles of " +
                            std::to_string(shape[d]) + " along the output's dimension " +
                            std::to_string(axis) + ", whose tiles are " +
                            std::to_string(tile_shape_[axis]));
      }
      if (param.rank() == 1) step.axis = axis;
      if (param.rank() == 2 && axis != d) {
        unsupported(*t, "reads %" + body_.argument(p)->name() + " transposed");
      }
    }
    step.rank2 = param.rank() == 2;
    if (!step.rank2) step.vector_axis = step.axis;
    if (std::find(roles_.inputs.begin(), roles_.inputs.end(), p) == roles_.inputs.end())
      roles_.inputs.push_back(p);
    return add(step);
  }

  int build(const ir::Value* v) {
    const ir::Operation* def = v->def();
    if (def == nullptr) {
      user_error(kernel_.loc(), "tessel bench gemm: the epilogue of @", kernel_.signature().name,
                 " stores %", v->name(), " directly; expected values computed from the products");
    }
    ir::ScalarKind kind = v->type().element();
    Step step{};
    step.element = kind;
    switch (def->kind()) {
      case OpKind::for_: {
        auto it = products_.find(v);
        if (it == products_.end()) {
          unsupported(*def, "uses the loop result %" + v->name() + ", which no mma computes");
        }
        step.what = Step::Kind::product;
        step.index = it->second;
        return add(step);
      }
      case OpKind::constant:
      case OpKind::fill:
        step.what = Step::Kind::constant;
        step.value = interp::element_from_attr(kind, *def->attr("value"));
        return add(step);
      case OpKind::cast:
        step.what = Step::Kind::convert;
        step.from = def->operand(0)->type().element();
        step.args = {compile(def->operand(0))};
        step.vector_axis = out_.steps[step.args[0]].vector_axis;
        return add(step);
      case OpKind::rearrange:
        return compile(def->operand(0));
      case OpKind::transpose: {
        // Swapped operands (GemmRoles::swapped): the transposed accumulator is the GEMM's C tile.
        const ir::Value* product = def->operand(0);
        while (product->def() != nullptr && product->def()->kind() == OpKind::rearrange)
          product = product->def()->operand(0);
        if (!roles_.swapped || !products_.count(product)) {
          unsupported(*def, "transposes %" + def->operand(0)->name() +
                                "; the bench replays only the transpose of a swapped product");
        }
        return compile(product);
      }
      case OpKind::broadcast: {
        int arg = compile(def->operand(0));
        const Step& src = out_.steps[arg];
        const auto& dims = def->ints_attr("dims");
        // [X] broadcast along dims [d] of an [.., ..] tile keeps dimension 1 - d: the vector must
        // follow that axis.
        if (src.vector_axis >= 0 && dims.size() == 1 && src.vector_axis != 1 - dims[0]) {
          unsupported(*def, "broadcasts %" + def->operand(0)->name() +
                                " along the dimension it is indexed by");
        }
        return arg;
      }
      case OpKind::copy:
        if (def->num_operands() == 1) return input(*def, v);
        break;
      default:
        if (ir::is_elementwise(def->kind())) {
          step.what = Step::Kind::elementwise;
          step.op = def;
          int typed = def->kind() == OpKind::select ? 1 : 0;
          step.compute = def->operand(typed)->type().element();
          for (const ir::Value* operand : def->operands()) {
            step.args.push_back(compile(operand));
            if (operand->type().is_tensor() && operand->type().rank() == 1)
              step.vector_axis = out_.steps[step.args.back()].vector_axis;
          }
          return add(step);
        }
    }
    unsupported(*def, "uses `" + std::string(def->name()) +
                          "`, which the bench cannot replay on the host (it replays casts, " +
                          "broadcasts and elementwise ops over the products)");
  }

  const ir::Operation& kernel_;
  const ir::Block& body_;
  const std::map<const ir::Value*, int>& products_;
  const std::vector<int>& grid_axis_;
  const std::vector<int64_t>& tile_shape_;
  GemmRoles& roles_;
  GemmEpilogue& out_;
  std::map<const ir::Value*, int> memo_;
};

}  // namespace

std::string GemmEpilogue::describe() const {
  std::vector<std::string> text(steps.size());
  for (size_t s = 0; s < steps.size(); ++s) {
    const Step& step = steps[s];
    switch (step.what) {
      case Step::Kind::product:
        text[s] = "P" + std::to_string(step.index);
        break;
      case Step::Kind::input:
        text[s] = "#" + std::to_string(step.index) +
                  (step.rank2       ? "[i,j]"
                   : step.axis == 0 ? "[i]"
                                    : "[j]");
        break;
      case Step::Kind::constant:
        text[s] = format_number(interp::element_as_double(step.element, step.value));
        break;
      case Step::Kind::convert:
        text[s] = std::string(ir::to_string(step.element)) + "(" + text[step.args[0]] + ")";
        break;
      case Step::Kind::elementwise: {
        std::string call = std::string(step.op->name()) + "(";
        for (size_t a = 0; a < step.args.size(); ++a) call += (a ? ", " : "") + text[step.args[a]];
        text[s] = call + ")";
        break;
      }
    }
  }
  return text.empty() ? "" : text.back();
}

GemmKernelInfo::GemmKernelInfo(const ir::Operation& kernel) : kernel_(kernel) {
  const std::string& name = kernel.signature().name;
  const ir::Block& body = *kernel.region(0);
  auto fail = [&](const std::string& why) {
    user_error(kernel.loc(), "tessel bench gemm: @", name,
               " is not a GEMM the bench can run: ", why);
  };
  // Products: each top-level loop result that the loop's body yields from an mma.
  std::map<const ir::Value*, int> products;
  for (const auto& op : body.ops()) {
    if (op->kind() != OpKind::for_) continue;
    const ir::Operation* yield = op->region(0)->terminator();
    for (int r = 0; r < op->num_results() && yield != nullptr; ++r) {
      const ir::Value* yielded = yield->operand(r);
      while (yielded->def() != nullptr && yielded->def()->kind() == OpKind::rearrange)
        yielded = yielded->def()->operand(0);
      const ir::Operation* mma = yielded->def();
      if (mma == nullptr || mma->kind() != OpKind::mma) continue;
      int a_transposes = 0, b_transposes = 0;
      int a = traced_param(body, mma->operand(0), &a_transposes);
      int b = traced_param(body, mma->operand(1), &b_transposes);
      if (a < 0 || b < 0) fail("an mma's operands do not come from tiles of its parameters");
      const bool a_k_major = a_transposes % 2 == 0, b_k_major = b_transposes % 2 == 1;
      if (!roles_.b.empty() && b_k_major != roles_.b_k_major)
        fail("its products read their B operands in different layouts");
      roles_.a_k_major = a_k_major;
      roles_.b_k_major = b_k_major;
      if (roles_.a >= 0 && roles_.a != a) fail("its products do not share one A operand");
      roles_.a = a;
      products[op->result(r)] = static_cast<int>(roles_.b.size());
      roles_.b.push_back(b);
    }
  }
  if (roles_.b.empty()) fail("no loop yields the result of an mma");
  if (roles_.b.size() > 8) fail("it computes more than 8 products");
  const ir::Type& a_type = body.argument(roles_.a)->type();
  roles_.element = a_type.element();
  // A batched GEMM's operands and outputs lead with one more dimension: the batch.
  const int lead = a_type.rank() - 2;
  if (lead != 0 && lead != 1) fail("A must be a matrix, or a batch of matrices [L,M,K]");
  if (lead == 1) {
    roles_.batch = a_type.shape()[0].symbol;
    if (roles_.batch.empty()) fail("the batch extent must be a size parameter");
  }
  const int a_k = lead + (roles_.a_k_major ? 1 : 0), b_k = lead + (roles_.b_k_major ? 1 : 0);
  for (int b : roles_.b) {
    const ir::Type& b_type = body.argument(b)->type();
    if (b_type.rank() != 2 + lead || b_type.element() != roles_.element ||
        !(b_type.shape()[b_k] == a_type.shape()[a_k]) ||
        (lead == 1 && b_type.shape()[0].symbol != roles_.batch)) {
      fail("A and B must be [M,K] (or [K,M]) and [N,K] (or [K,N]) tensors of one element type" +
           std::string(lead ? ", with the same leading batch extent" : ""));
    }
    const int n_dim = 2 * lead + 1 - b_k;
    if (!roles_.n.empty() && b_type.shape()[n_dim].symbol != roles_.n)
      fail("its B operands have different N");
    roles_.n = b_type.shape()[n_dim].symbol;
  }
  roles_.m = a_type.shape()[2 * lead + 1 - a_k].symbol;
  roles_.k = a_type.shape()[a_k].symbol;
  if (roles_.m.empty() || roles_.n.empty() || roles_.k.empty())
    fail("M, N and K must be size parameters (the bench picks them)");
  // Swapped operands: a kernel that computes Cᵀ = B·Aᵀ (the weights as wgmma's M, few tokens as
  // its N) and stores its accumulator through a register transpose into an [M,N] tensor whose
  // extents are the mma's [N,M]. The GEMM's A is then the mma's B and the other way round.
  for (const auto& op : body.ops()) {
    if (op->kind() != OpKind::copy || op->num_operands() != 2 || roles_.b.size() != 1) continue;
    const int out = traced_param(body, op->operand(1));
    if (out < 0 || op->operand(1)->def() == nullptr ||
        op->operand(1)->def()->kind() != OpKind::tile)
      continue;
    const ir::Type& t = body.argument(out)->type();
    if (t.rank() == 2 + lead && roles_.m != roles_.n && t.shape()[lead].symbol == roles_.n &&
        t.shape()[lead + 1].symbol == roles_.m) {
      std::swap(roles_.a, roles_.b[0]);
      std::swap(roles_.m, roles_.n);
      const bool a_k_major = roles_.a_k_major;
      roles_.a_k_major = roles_.b_k_major;
      roles_.b_k_major = a_k_major;
      roles_.swapped = true;
      break;
    }
  }

  // Outputs: top-level stores into tiles of [M,N] parameters; the tile's coordinates say which
  // block index runs along the rows and which along the columns.
  for (const auto& op : body.ops()) {
    if (op->kind() != OpKind::copy || op->num_operands() != 2) continue;
    const ir::Operation* tile = op->operand(1)->def();
    int out = traced_param(body, op->operand(1));
    if (tile == nullptr || tile->kind() != OpKind::tile || out < 0) continue;
    const ir::Type& t = body.argument(out)->type();
    if (t.rank() != 2 + lead || t.shape()[lead].symbol != roles_.m ||
        t.shape()[lead + 1].symbol != roles_.n || (lead && t.shape()[0].symbol != roles_.batch)) {
      fail("it stores to %" + body.argument(out)->name() + ", which is not an " +
           (lead ? "[" + roles_.batch + ",M,N]" : std::string("[M,N]")) + " tensor");
    }
    std::vector<int> grid_axis;
    for (int d = 0; d < 2; ++d) {
      const ir::Value* coordinate = tile->operand(lead + d + 1);
      if (coordinate->def() == nullptr || coordinate->def()->kind() != OpKind::block_grid)
        fail("its output tiles are not indexed by block indices");
      int r = coordinate->index();
      if (static_cast<int>(grid_axis.size()) <= r) grid_axis.resize(r + 1, -1);
      grid_axis[r] = d;
    }
    GemmEpilogue epilogue;
    epilogue.output = out;
    const std::vector<int64_t>& shape = tile->ints_attr("shape");
    const std::vector<int64_t> tile_shape(shape.end() - 2, shape.end());  // the batch squeezed
    EpilogueCompiler compiler(kernel, products, grid_axis, tile_shape, roles_, epilogue);
    compiler.compile(op->operand(0));
    roles_.outputs.push_back(out);
    epilogues_.push_back(std::move(epilogue));
  }
  if (epilogues_.empty()) fail("it stores no [M,N] output tile after its loops");
  // Every tensor parameter has a role; anything else could not be filled by the bench.
  for (int p = 0; p < static_cast<int>(body.arguments().size()); ++p) {
    const ir::Value* arg = body.argument(p);
    bool known =
        p == roles_.a || std::find(roles_.b.begin(), roles_.b.end(), p) != roles_.b.end() ||
        std::find(roles_.outputs.begin(), roles_.outputs.end(), p) != roles_.outputs.end() ||
        std::find(roles_.inputs.begin(), roles_.inputs.end(), p) != roles_.inputs.end();
    if (!arg->type().is_tensor()) fail("its parameter %" + arg->name() + " is a scalar");
    if (!known)
      fail("its parameter %" + arg->name() + " is neither an operand, an output nor " +
           "read by the epilogue");
  }
}

std::string GemmKernelInfo::describe() const {
  const ir::Block& body = *kernel_.region(0);
  auto name = [&](int p) { return "%" + body.argument(p)->name(); };
  std::string text = "A=" + name(roles_.a);
  for (size_t p = 0; p < roles_.b.size(); ++p)
    text +=
        " B" + (roles_.b.size() > 1 ? std::to_string(p) : std::string()) + "=" + name(roles_.b[p]);
  for (int in : roles_.inputs) text += " in=" + name(in);
  text += ";";
  for (const GemmEpilogue& e : epilogues_) {
    std::string expr = e.describe();
    // Products and inputs by name: P0 -> A·%B^T (as each operand is stored), #3[j] -> %bias[j].
    for (size_t p = 0; p < roles_.b.size(); ++p) {
      std::string token = "P" + std::to_string(p);
      for (size_t at; (at = expr.find(token)) != std::string::npos;)
        expr.replace(at, token.size(),
                     std::string(roles_.a_k_major ? "(A·" : "(A^T·") + name(roles_.b[p]) +
                         (roles_.b_k_major ? "^T)" : ")"));
    }
    for (int in : roles_.inputs) {
      std::string token = "#" + std::to_string(in) + "[";
      for (size_t at; (at = expr.find(token)) != std::string::npos;)
        expr.replace(at, token.size(), name(in) + "[");
    }
    text += " " + name(e.output) + " = " + expr + ";";
  }
  text.pop_back();
  return text;
}

int GemmKernelInfo::bias_relu_input() const {
  // cuBLASLt's fused baseline is set up for A [M,K] and B [N,K] (cublaslt_baseline.cpp).
  if (products() != 1 || epilogues_.size() != 1 || !roles_.a_k_major || !roles_.b_k_major)
    return -1;
  const std::vector<Step>& st = epilogues_.front().steps;
  auto strip = [&](int s) {  // through casts
    while (st[s].what == Step::Kind::convert) s = st[s].args[0];
    return s;
  };
  auto is = [&](int s, OpKind kind) {
    return st[s].what == Step::Kind::elementwise && st[s].op->kind() == kind &&
           st[s].args.size() == 2;
  };
  int relu = strip(static_cast<int>(st.size()) - 1);
  if (!is(relu, OpKind::max)) return -1;
  int x = strip(st[relu].args[0]), zero = strip(st[relu].args[1]);
  if (st[x].what == Step::Kind::constant) std::swap(x, zero);
  if (st[zero].what != Step::Kind::constant ||
      interp::element_as_double(st[zero].element, st[zero].value) != 0 || !is(x, OpKind::add)) {
    return -1;
  }
  int p = strip(st[x].args[0]), q = strip(st[x].args[1]);
  if (st[p].what != Step::Kind::product) std::swap(p, q);
  if (st[p].what != Step::Kind::product || st[q].what != Step::Kind::input || st[q].rank2 ||
      st[q].axis != 1) {
    return -1;
  }
  const ir::Block& body = *kernel_.region(0);
  if (body.argument(st[q].index)->type().element() != roles_.element ||
      body.argument(roles_.outputs.front())->type().element() != roles_.element) {
    return -1;
  }
  return st[q].index;
}

double GemmKernelInfo::evaluate(int o, const double* products, int64_t i, int64_t j,
                                const EpilogueInputs& inputs) const {
  const GemmEpilogue& e = epilogues_[o];
  interp::Element regs[64];
  std::vector<interp::Element> spill;
  interp::Element* r = regs;
  if (e.steps.size() > 64) {
    spill.resize(e.steps.size());
    r = spill.data();
  }
  for (size_t s = 0; s < e.steps.size(); ++s) {
    const Step& step = e.steps[s];
    switch (step.what) {
      case Step::Kind::product:
        r[s] = interp::Element{products[step.index], 0};
        break;
      case Step::Kind::input: {
        const std::vector<double>& t = inputs.tensors->at(step.index);
        double x = step.rank2 ? t[i * inputs.n + j] : t[step.axis == 0 ? i : j];
        r[s] = interp::element_of_double(step.element, x);
        break;
      }
      case Step::Kind::constant:
        r[s] = step.value;
        break;
      case Step::Kind::convert:
        r[s] = interp::convert(step.from, step.element, r[step.args[0]]);
        break;
      case Step::Kind::elementwise: {
        interp::Element operands[3];
        for (size_t a = 0; a < step.args.size() && a < 3; ++a) operands[a] = r[step.args[a]];
        r[s] = interp::apply_elementwise(*step.op, step.compute, operands);
        break;
      }
    }
  }
  return interp::element_as_double(e.steps.back().element, r[e.steps.size() - 1]);
}

std::string gemm_layout(const GemmRoles& roles) {
  return std::string(roles.a_k_major ? "n" : "t") + (roles.b_k_major ? "t" : "n");
}

GemmCheck check_gemm(const GemmKernelInfo& info, const GemmShape& shape,
                     const std::vector<std::vector<float>>& values,
                     const std::vector<std::vector<float>>& products,
                     const std::vector<std::vector<float>>& outputs, std::uint64_t seed,
                     const std::vector<std::vector<float>>* baseline_outputs) {
  const GemmRoles& roles = info.roles();
  const int count = info.products();
  TESSEL_ASSERT(count <= 8 && static_cast<int>(products.size()) == count &&
                    outputs.size() == roles.outputs.size(),
                "check_gemm: ", count, " products, ", outputs.size(), " outputs");
  std::map<int, std::vector<double>> tensors;
  for (int in : roles.inputs) tensors[in].assign(values[in].begin(), values[in].end());
  EpilogueInputs inputs{&tensors, shape.n};
  GemmCheck check;

  // Every element against the epilogue over the library's products, rows spread over the cores
  // (8192 x 8192 outputs are 67 M replays).
  int workers = static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 32u));
  std::vector<double> num(workers, 0), den(workers, 0);
  std::vector<std::thread> threads;
  int64_t chunk = (shape.m + workers - 1) / workers;
  for (int w = 0; w < workers; ++w) {
    int64_t lo = w * chunk, hi = std::min<int64_t>(shape.m, lo + chunk);
    if (lo >= hi) break;
    threads.emplace_back([&, lo, hi, w] {
      double at[8] = {};
      for (size_t o = 0; o < outputs.size(); ++o) {
        for (int64_t i = lo; i < hi; ++i) {
          for (int64_t j = 0; j < shape.n; ++j) {
            int64_t e = i * shape.n + j;
            for (int p = 0; p < count; ++p) at[p] = products[p][e];
            double ref = info.evaluate(static_cast<int>(o), at, i, j, inputs);
            double d = outputs[o][e] - ref;
            num[w] += d * d;
            den[w] += ref * ref;
          }
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  double total_num = 0, total_den = 0;
  for (int w = 0; w < workers; ++w) {
    total_num += num[w];
    total_den += den[w];
  }
  // NaN (an unwritten, poisoned element) or infinity never passes; an all-zero reference passes
  // only an all-zero output.
  if (!std::isfinite(total_num)) {
    check.rel_err_vs_library = INFINITY;
  } else if (total_den == 0) {
    check.rel_err_vs_library = total_num == 0 ? 0 : INFINITY;
  } else {
    check.rel_err_vs_library = std::sqrt(total_num / total_den);
  }

  // Sampled entries (every corner, then random ones) against float64 dot products.
  std::vector<std::pair<int64_t, int64_t>> entries = {
      {0, 0}, {0, shape.n - 1}, {shape.m - 1, 0}, {shape.m - 1, shape.n - 1}};
  std::mt19937_64 generator(seed);
  for (int s = 0; s < 1024; ++s) entries.emplace_back(generator() % shape.m, generator() % shape.n);
  std::vector<float> out, library, baseline;
  std::vector<double> exact_ref;
  for (auto [i, j] : entries) {
    double exact[8] = {}, from_library[8] = {};
    for (int p = 0; p < count; ++p) {
      // Element (i, q) of A and (q, j) of B, wherever each layout keeps it.
      const float* a = values[roles.a].data();
      const float* b = values[roles.b[p]].data();
      const size_t a_row = roles.a_k_major ? static_cast<size_t>(shape.k) : 1;
      const size_t a_step = roles.a_k_major ? 1 : static_cast<size_t>(shape.m);
      const size_t b_col = roles.b_k_major ? static_cast<size_t>(shape.k) : 1;
      const size_t b_step = roles.b_k_major ? 1 : static_cast<size_t>(shape.n);
      double sum = 0;
      for (int q = 0; q < shape.k; ++q) {
        sum += static_cast<double>(a[i * a_row + q * a_step]) * b[j * b_col + q * b_step];
      }
      exact[p] = sum;
      from_library[p] = products[p][i * shape.n + j];
    }
    for (size_t o = 0; o < outputs.size(); ++o) {
      out.push_back(outputs[o][i * shape.n + j]);
      if (baseline_outputs) baseline.push_back((*baseline_outputs)[o][i * shape.n + j]);
      exact_ref.push_back(info.evaluate(static_cast<int>(o), exact, i, j, inputs));
      library.push_back(
          static_cast<float>(info.evaluate(static_cast<int>(o), from_library, i, j, inputs)));
    }
  }
  check.rel_err =
      runtime::relative_error(std::span<const float>(out), std::span<const double>(exact_ref));
  check.library_rel_err =
      runtime::relative_error(std::span<const float>(library), std::span<const double>(exact_ref));
  return check;
}

std::unique_ptr<ir::Module> load_gemm_kernel(const std::string& spec, std::string* name) {
  std::string text;
  if (spec.size() > 4 && spec.compare(spec.size() - 4, 4, ".tir") == 0) {
    std::ifstream in(spec);
    if (!in) user_error(SourceLocation::unknown(), "cannot read kernel file '", spec, "'");
    std::stringstream buffer;
    buffer << in.rdbuf();
    text = buffer.str();
    size_t slash = spec.find_last_of('/');
    *name = spec.substr(slash == std::string::npos ? 0 : slash + 1);
    name->resize(name->size() - 4);
  } else {
    auto it = examples::lowered_kernels().find(spec);
    if (it == examples::lowered_kernels().end()) {
      std::string known;
      for (const auto& [k, unused] : examples::lowered_kernels()) {
        if (k.find("gemm") != std::string::npos && k != "gemv")
          known += (known.empty() ? "" : ", ") + k;
      }
      user_error(SourceLocation::unknown(), "no example kernel '", spec,
                 "' (give a path to a .tir file, or one of: ", known, ")");
    }
    text = it->second;
    *name = spec;
  }
  auto module = ir::parse_module(text, spec);
  if (module->kernels.empty()) user_error(SourceLocation::unknown(), "'", spec, "' has no kernel");
  return module;
}

std::string gemm_target_name(const ir::Operation& kernel, const std::string& name) {
  std::string pinned;
  ir::walk(const_cast<ir::Operation*>(&kernel), [&](ir::Operation* op) {
    if (op->kind() == OpKind::block_grid && op->has_attr("target")) pinned = op->str_attr("target");
  });
  if (!pinned.empty()) return pinned;
  if (name.size() >= 5 && name.compare(name.size() - 5, 5, "_sm80") == 0) return "sm_80";
  return "sm_90a";
}

}  // namespace tessel::bench
