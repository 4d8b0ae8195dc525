// SynthesizeLayouts: anchors, constraint propagation through a ready queue, rearrange insertion,
// and the depth-first search over the mma choices (mma_choices.cpp builds and costs them).
#include "transforms/layout/synthesize_layouts.h"

#include <algorithm>
#include <cstdio>
#include <deque>
#include <functional>
#include <map>
#include <numeric>
#include <optional>
#include <set>
#include <sstream>
#include <unordered_map>

#include "layout/parse.h"
#include "support/diagnostics.h"
#include "transforms/layout/layout_utils.h"
#include "transforms/report.h"

namespace tessel::transforms {

using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Value;
using layout::IntTuple;
using layout::Layout;
using layout::TVLayout;
using target::cuda::Atom;

namespace {

// Model parameters (the shared-memory bandwidth and the register budget: mma_choices.h).
constexpr double kRearrangeFixedCycles = 100;  // the barrier and address math of a rearrange

bool is_register_tensor(const Value* v) {
  return v->type().is_tensor() && v->type().space() == MemorySpace::reg;
}

}  // namespace

// ---- The pass -----------------------------------------------------------------------------------

namespace {

struct Use {
  Operation* op;
  int index;
};

// A rearrange to insert: value `v` used by operand `index` of `op` must have layout `want`.
struct OperandFix {
  Operation* op;
  int index;
  TVLayout want;
};

class Synthesis {
 public:
  Synthesis(Operation* kernel, const SynthesisOptions& options)
      : kernel_(kernel), target_(options.target) {
    walk(kernel, [&](Operation* op) {
      ops_.push_back(op);
      for (int i = 0; i < op->num_operands(); ++i) uses_[op->operand(i)].push_back({op, i});
      if (op->kind() == OpKind::block_grid) grid_ = op;
    });
    // `target = "sm_80"` on block_grid picks the architecture for this kernel.
    if (grid_ && grid_->has_attr("target"))
      target_ = target::cuda::Target::named(grid_->str_attr("target"));
  }

  void run() {
    int64_t pinned_threads = 0;
    if (grid_ && grid_->has_attr("threads")) pinned_threads = grid_->int_attr("threads");
    std::vector<Operation*> mmas;
    for (Operation* op : ops_) {
      if (op->kind() == OpKind::mma) mmas.push_back(op);
    }
    // Candidate lists per mma.
    std::vector<std::vector<MmaChoice>> choices;
    for (Operation* op : mmas) {
      choices.push_back(candidates(op, pinned_threads));
      if (report_enabled("search")) {
        int feasible = 0, infeasible = 0;
        report("search", "candidates for " + ir::op_where(*op) + " (" +
                             std::to_string(choices.back().size()) + "):");
        for (const MmaChoice& c : choices.back()) {
          int& n = c.feasible ? feasible : infeasible;
          if (n++ < (c.feasible ? 6 : 2)) report("search", "  " + c.str());
        }
      }
    }
    // Depth-first search with branch and bound over the mma choices (one thread count for all).
    std::vector<int> pick(mmas.size(), 0), best_pick;
    double best = 1e300;
    std::function<void(size_t, double, int64_t)> dfs = [&](size_t i, double so_far,
                                                           int64_t threads) {
      if (so_far >= best) return;
      if (i == mmas.size()) {
        State s = solve(mmas, choices, pick, threads ? threads : 128);
        double total = so_far + s.rearrange_cycles;
        if (report_enabled("search")) {
          std::string line = "search " + kernel_->signature().name + ": threads " +
                             std::to_string(threads ? threads : 128);
          for (size_t j = 0; j < mmas.size(); ++j)
            line += "; " + choices[j][pick[j]].atom.name + " x[" +
                    std::to_string(choices[j][pick[j]].tm) + "," +
                    std::to_string(choices[j][pick[j]].tn) + "]";
          char buf[128];
          std::snprintf(buf, sizeof buf, "; %zu rearrange(s) %.0f cyc; total %.0f cyc",
                        s.fixes.size() + s.result_fixes.size(), s.rearrange_cycles, total);
          report("search", line + buf);
        }
        if (total < best) {
          best = total;
          best_pick = pick;
        }
        return;
      }
      int tried = 0;
      for (size_t c = 0; c < choices[i].size() && tried < kBeam; ++c) {
        const MmaChoice& ch = choices[i][c];
        if (!ch.feasible) continue;
        if (threads && ch.threads != threads) continue;
        ++tried;
        pick[i] = static_cast<int>(c);
        dfs(i + 1, so_far + ch.cycles, threads ? threads : ch.threads);
      }
    };
    dfs(0, 0, pinned_threads);
    if (!mmas.empty() && best_pick.empty()) {
      // Name the first mma that has no feasible choice.
      for (size_t i = 0; i < mmas.size(); ++i) no_choice_error(mmas[i], choices[i], pinned_threads);
      user_error(mmas[0]->loc(), "mma: no combination of atoms fits one thread count");
    }
    int64_t threads = pinned_threads;
    if (!threads && !mmas.empty()) threads = choices[0][best_pick[0]].threads;
    // Without an mma, a register layout the writer pinned fixes the block (every register tensor
    // of a kernel spans the same threads); otherwise 128.
    for (Operation* op : ops_) {
      if (threads) break;
      for (const auto& r : op->results()) {
        if (eligible(r.get()) && r->type().has_layout()) {
          threads = parse_tv(r.get()).num_threads();
          break;
        }
      }
    }
    // A block size that a pin, an mma or a pinned layout fixed is every tensor's: defaults span it.
    span_threads_ = threads != 0;
    if (!threads) threads = 128;
    for (size_t i = 0; i < mmas.size(); ++i) {
      const MmaChoice& c = choices[i][best_pick[i]];
      report("search", "chose for " + ir::op_where(*mmas[i]) + ": " + c.str());
    }
    State s = solve(mmas, choices, best_pick, threads);
    apply(s, mmas, choices, best_pick, threads);
  }

 private:
  static constexpr int kBeam = 6;
  bool span_threads_ = false;  // coalesced defaults replicated over the whole block (see run())

  struct State {
    std::unordered_map<Value*, TVLayout> layout;
    std::set<Value*> pinned;
    std::vector<OperandFix> fixes;
    // Results whose producer makes `made` while their users already hold `held`.
    std::vector<std::pair<Value*, TVLayout>> result_fixes;
    double rearrange_cycles = 0;
    std::deque<Value*> ready;
  };

  std::vector<MmaChoice> candidates(Operation* op, int64_t pinned_threads) {
    const ir::Type& a = op->operand(0)->type();
    const ir::Type& b = op->operand(1)->type();
    const ir::Type& c = op->operand(2)->type();
    auto as = a.static_shape(), bs = b.static_shape();
    std::vector<MmaChoice> list =
        mma_choices(target_, a.element(), c.element(), as[0], bs[1], as[1],
                    a.space() == MemorySpace::reg, b.space() == MemorySpace::reg, pinned_threads);
    // wgmma reads its shared operands through descriptors: they must be tiles that TMA writes (the
    // canonical layouts), and fp8 operands must be K-major.
    std::string why;
    bool fp8 = a.element() == ScalarKind::f8e4m3 || a.element() == ScalarKind::f8e5m2;
    bool wgmma_ok = (a.space() == MemorySpace::reg || descriptor_operand(op, 0, fp8, &why)) &&
                    descriptor_operand(op, 1, fp8, &why);
    if (!wgmma_ok) {
      std::vector<MmaChoice> kept;
      for (MmaChoice& ch : list) {
        if (ch.atom.group_threads != 128) kept.push_back(std::move(ch));
      }
      if (kept.size() != list.size())
        report("search", "no wgmma for " + ir::op_where(*op) + ": " + why);
      list = std::move(kept);
    }
    // A pinned atom or tiling restricts the search to it.
    if (const ir::Attribute* pinned_atom = op->attr("atom")) {
      std::vector<MmaChoice> kept;
      for (MmaChoice& ch : list) {
        if (ch.atom.name == pinned_atom->s) kept.push_back(std::move(ch));
      }
      if (kept.empty()) {
        user_error(op->loc(), "mma: the pinned atom ", pinned_atom->s,
                   " cannot tile an mma of [M,N,K] = [", as[0], ",", bs[1], ",", as[1], "] on ",
                   target_.name(),
                   list.empty() ? std::string(" (no atom can)")
                                : " (the search would choose " + list.front().atom.name + ")");
      }
      list = std::move(kept);
    }
    if (const ir::Attribute* tiling = op->attr("tiling")) {
      std::vector<MmaChoice> kept;
      for (MmaChoice& ch : list) {
        if (tiling->list.size() == 2 && ch.tm == tiling->list[0] && ch.tn == tiling->list[1])
          kept.push_back(std::move(ch));
      }
      if (kept.empty()) {
        user_error(op->loc(), "mma: no atom tiled ", tiling->str(),
                   " implements an mma of [M,N,K] = [", as[0], ",", bs[1], ",", as[1], "]");
      }
      list = std::move(kept);
    }
    // A pinned accumulator or result keeps its layout: only tilings that make it qualify.
    for (Value* v : {op->operand(2), op->result()}) {
      if (!v->type().has_layout()) continue;
      TVLayout pinned = parse_tv(v);
      std::vector<MmaChoice> kept;
      for (MmaChoice& ch : list) {
        if (same_tv(ch.c, pinned)) kept.push_back(std::move(ch));
      }
      if (kept.empty()) {
        user_error(op->loc(), "mma: the pinned layout ", pinned.str(), " of ", ir::value_ref(v),
                   " is not the accumulator of any atom tiling; the best tiling gives ",
                   list.empty() ? std::string("nothing") : list.front().c.str(), " (",
                   list.empty() ? std::string("no atom") : list.front().atom.name, ")");
      }
      list = std::move(kept);
    }
    return list;
  }

  // Whether operand i of an mma can be read by wgmma through a descriptor; `why` says why not.
  bool descriptor_operand(Operation* op, int i, bool fp8, std::string* why) {
    Value* v = op->operand(i);
    int transposes = 0;
    while (v->def() && v->def()->kind() == OpKind::transpose) {
      ++transposes;
      v = v->def()->operand(0);
    }
    auto no = [&](const std::string& w) {
      *why = ir::value_ref(op->operand(i)) + " " + w;
      return false;
    };
    if (v->type().space() != MemorySpace::shared || !v->def() || v->def()->kind() != OpKind::copy ||
        v->def()->num_results() != 1)
      return no("is not a shared tile copied from global memory");
    if (fp8 && (transposes % 2 == 1) != (i == 1))
      return no("is not K-major, which fp8 wgmma requires");
    Value* g = v->def()->operand(0);
    while (g->def() && g->def()->kind() == OpKind::tile) {
      if (const ir::Attribute* p = g->def()->attr("pad")) {
        bool zero = (p->kind == ir::Attribute::Kind::real && p->f == 0.0) ||
                    (p->kind == ir::Attribute::Kind::integer && p->i == 0);
        if (!zero) return no("is padded with a value TMA cannot fill");
      }
      g = g->def()->operand(0);
    }
    if (g->def() || g->type().space() != MemorySpace::global || g->type().has_layout())
      return no("does not come from a plain global tensor");
    std::vector<int64_t> shape = v->type().static_shape();
    int bits = ir::bit_width(v->type().element());
    if (shape.size() != 2 || shape[0] % 8 != 0 || (shape[1] * bits) % 128 != 0 || shape[0] > 256)
      return no("has no canonical TMA layout (rows % 8, 16-byte rows, at most 256 rows)");
    if (!divisible(g->type().shape().back(), 128 / bits))
      return no("has global rows whose 16-byte alignment the kernel's facts do not prove");
    return true;
  }

  void no_choice_error(Operation* op, const std::vector<MmaChoice>& list, int64_t threads) {
    const ir::Type& a = op->operand(0)->type();
    const ir::Type& b = op->operand(1)->type();
    auto as = a.static_shape(), bs = b.static_shape();
    std::string shape = "[" + std::to_string(as[0]) + "," + std::to_string(bs[1]) + "," +
                        std::to_string(as[1]) + "]";
    if (list.empty()) {
      user_error(op->loc(), "mma: no ", target_.name(), " atom tiles an mma of [M,N,K] = ", shape,
                 " with ", ir::to_string(a.element()), " inputs and ",
                 ir::to_string(op->operand(2)->type().element()),
                 " accumulation (wgmma needs M % 64, N % 8 and K % 16 (fp8: K % 32) to be 0; "
                 "mma.sync M % 16, "
                 "N % 8 and K % 16)");
    }
    for (const MmaChoice& c : list) {
      if (c.feasible && (!threads || c.threads == threads)) return;
    }
    user_error(op->loc(), "mma: every tiling of [M,N,K] = ", shape,
               threads ? " over " + std::to_string(threads) + " threads" : std::string(),
               " needs more than ", kMaxAccumulatorsPerThread,
               " accumulator registers per thread (best: ", list.front().str(), ")");
  }

  TVLayout parse_tv(const Value* v) {
    const ir::Type& t = v->type();
    std::vector<int64_t> shape = t.static_shape();
    return TVLayout(layout::parse_layout(t.layout()), tuple_of(shape));
  }

  bool eligible(const Value* v) const {
    return is_register_tensor(v) && ir::is_static(v->type().shape()) && v->type().rank() >= 1 &&
           v->type().rank() <= 2;
  }

  // Sets v's layout if unknown; returns false when it is known and different.
  bool assign(State& s, Value* v, const TVLayout& tv) {
    if (!eligible(v)) return true;
    auto it = s.layout.find(v);
    if (it == s.layout.end()) {
      s.layout.emplace(v, tv);
      s.ready.push_back(v);
      return true;
    }
    return same_tv(it->second, tv);
  }

  void need_operand(State& s, Operation* op, int index, const TVLayout& want) {
    Value* v = op->operand(index);
    if (!eligible(v)) return;
    if (assign(s, v, want)) return;
    s.fixes.push_back({op, index, want});
    s.rearrange_cycles += rearrange_cost(v);
  }

  void need_result(State& s, Value* v, const TVLayout& made) {
    if (!eligible(v)) return;
    if (assign(s, v, made)) return;
    s.result_fixes.push_back({v, made});
    s.rearrange_cycles += rearrange_cost(v);
  }

  double rearrange_cost(const Value* v) const {
    const ir::Type& t = v->type();
    double bytes = ir::bit_width(t.element()) / 8.0;
    for (int64_t e : t.static_shape()) bytes *= double(e);
    return 2 * bytes / kSharedBytesPerCycle + kRearrangeFixedCycles;
  }

  const TVLayout* known(State& s, Value* v) {
    auto it = s.layout.find(v);
    return it == s.layout.end() ? nullptr : &it->second;
  }

  // The loop-carried group of a for op: (init operand index, region arg, yield operand, result).
  void visit_for(State& s, Operation* op) {
    Operation* yield = op->region(0)->terminator();
    for (int i = 0; i + 3 < op->num_operands(); ++i) {
      Value* init = op->operand(3 + i);
      Value* arg = op->region(0)->argument(1 + i);
      Value* res = op->result(i);
      Value* yv = yield ? yield->operand(i) : nullptr;
      const TVLayout* t = nullptr;
      for (Value* v : {arg, res, init, yv}) {
        if (v && s.pinned.count(v) && known(s, v)) {
          t = known(s, v);
          break;
        }
      }
      for (Value* v : {arg, res, init, yv}) {
        if (!t && v) t = known(s, v);
      }
      if (!t) continue;
      TVLayout target = *t;
      need_result(s, arg, target);
      need_result(s, res, target);
      need_operand(s, op, 3 + i, target);
      if (yield) need_operand(s, yield, i, target);
    }
  }

  void visit_if(State& s, Operation* op) {
    for (int i = 0; i < op->num_results(); ++i) {
      Value* res = op->result(i);
      const TVLayout* t = known(s, res);
      std::vector<Operation*> yields;
      for (int r = 0; r < 2; ++r) {
        if (Operation* y = op->region(r)->terminator()) yields.push_back(y);
      }
      for (Operation* y : yields) {
        if (!t && i < y->num_operands()) t = known(s, y->operand(i));
      }
      if (!t) continue;
      TVLayout target = *t;
      need_result(s, res, target);
      for (Operation* y : yields) {
        if (i < y->num_operands()) need_operand(s, y, i, target);
      }
    }
  }

  void visit(State& s, Operation* op) {
    OpKind k = op->kind();
    if (ir::is_elementwise(k) || k == OpKind::cast) {
      if (op->num_results() != 1 || !eligible(op->result())) return;
      const TVLayout* t = known(s, op->result());
      for (int i = 0; !t && i < op->num_operands(); ++i) {
        Value* v = op->operand(i);
        if (eligible(v) && v->type().shape() == op->result()->type().shape()) t = known(s, v);
      }
      if (!t) return;
      TVLayout target = *t;
      need_result(s, op->result(), target);
      for (int i = 0; i < op->num_operands(); ++i) {
        Value* v = op->operand(i);
        if (eligible(v) && v->type().shape() == op->result()->type().shape())
          need_operand(s, op, i, target);
      }
      return;
    }
    switch (k) {
      case OpKind::for_:
        return visit_for(s, op);
      case OpKind::if_:
        return visit_if(s, op);
      case OpKind::yield:
        if (Operation* parent = op->parent_op()) {
          if (parent->kind() == OpKind::for_) return visit_for(s, parent);
          if (parent->kind() == OpKind::if_) return visit_if(s, parent);
        }
        return;
      case OpKind::reduce: {
        const TVLayout* src = known(s, op->operand(0));
        if (!src || !eligible(op->result())) return;
        TVLayout p =
            project_layout(*src, op->operand(0)->type().static_shape(), op->ints_attr("dims"));
        need_result(s, op->result(), p);
        return;
      }
      case OpKind::broadcast: {
        const TVLayout* res = known(s, op->result());
        if (!res || !eligible(op->operand(0))) return;
        TVLayout p =
            project_layout(*res, op->result()->type().static_shape(), op->ints_attr("dims"));
        need_operand(s, op, 0, p);
        return;
      }
      case OpKind::transpose: {
        // A register transpose keeps each thread's values and turns their coordinates.
        Value* src = op->operand(0);
        Value* res = op->result();
        if (!eligible(src) || !eligible(res) || src->type().rank() != 2) return;
        std::vector<int64_t> ss = src->type().static_shape();
        int64_t rows = ss[0], cols = ss[1];
        Layout fwd(IntTuple::tuple({rows, cols}), IntTuple::tuple({cols, 1}));
        Layout back(IntTuple::tuple({cols, rows}), IntTuple::tuple({rows, 1}));
        if (const TVLayout* t = known(s, src)) {
          need_result(
              s, res,
              TVLayout(layout::composition(fwd, t->layout()), IntTuple::tuple({cols, rows})));
        } else if (const TVLayout* t2 = known(s, res)) {
          need_operand(
              s, op, 0,
              TVLayout(layout::composition(back, t2->layout()), IntTuple::tuple({rows, cols})));
        }
        return;
      }
      case OpKind::slice: {
        // A slice keeps each thread's values of the window (see slice_layout).
        const TVLayout* src = known(s, op->operand(0));
        if (!src || !eligible(op->result()) || !eligible(op->operand(0))) return;
        if (auto p = slice_layout(*src, op->operand(0)->type().static_shape(),
                                  op->ints_attr("offsets"), op->ints_attr("shape"))) {
          need_result(s, op->result(), *p);
        }
        return;
      }
      case OpKind::rearrange: {
        // A pinned target layout (`layout` attribute or the result type) is the result's.
        return;
      }
      default:
        return;
    }
  }

  void drain(State& s) {
    while (!s.ready.empty()) {
      Value* v = s.ready.front();
      s.ready.pop_front();
      if (v->def()) visit(s, v->def());
      if (!v->def() && v->owner_block() && v->owner_block()->parent()) {
        Operation* parent = v->owner_block()->parent();
        if (parent->kind() == OpKind::for_) visit_for(s, parent);
      }
      auto it = uses_.find(v);
      if (it == uses_.end()) continue;
      for (const Use& u : it->second) visit(s, u.op);
    }
  }

  // The layouts for one assignment of mma choices: pins, then anchors, then coalesced copies and
  // defaults, each followed by propagation. The IR is not touched (apply() does that), so the
  // search calls it at every leaf.
  State solve(const std::vector<Operation*>& mmas,
              const std::vector<std::vector<MmaChoice>>& choices, const std::vector<int>& pick,
              int64_t threads) {
    State s;
    // Pinned values first: they are facts.
    auto pin = [&](Value* v) {
      if (eligible(v) && v->type().has_layout()) {
        s.pinned.insert(v);
        assign(s, v, parse_tv(v));
      }
    };
    for (Operation* op : ops_) {
      for (const auto& r : op->results()) pin(r.get());
      for (const auto& region : op->regions())
        for (const auto& arg : region->arguments()) pin(arg.get());
    }
    drain(s);
    // Anchors: the mmas.
    for (size_t i = 0; i < mmas.size(); ++i) {
      Operation* op = mmas[i];
      const MmaChoice& c = choices[i][pick[i]];
      if (op->operand(0)->type().space() == MemorySpace::reg) need_operand(s, op, 0, c.a);
      if (op->operand(1)->type().space() == MemorySpace::reg) {
        // The fragment is over (N,K); the operand is the [K,N] tensor.
        int64_t n = c.b.tile_shape()[0].as_int(), k = c.b.tile_shape()[1].as_int();
        Layout to_kn(IntTuple::tuple({n, k}), IntTuple::tuple({k, 1}));
        need_operand(s, op, 1,
                     TVLayout(layout::composition(to_kn, c.b.layout()), IntTuple::tuple({k, n})));
      }
      need_operand(s, op, 2, c.c);
      need_result(s, op->result(), c.c);
      drain(s);
    }
    // Then the largest copies into registers, made coalesced: from global memory first, then from
    // shared memory. A register tile read from a shared tile (a row reduction over the A tile a
    // wgmma also reads) is a source of layouts as much as one read from global memory: left to
    // the defaults below, which go in program order, a small value it feeds but that comes first
    // (the reduction's accumulator, filled before the loop) would get its own coalesced layout
    // — over fewer threads than the block when it is small — and the reduction's result a
    // rearrange into it in every iteration.
    auto elems = [](const Value* v) {
      int64_t n = 1;
      for (int64_t e : v->type().static_shape()) n *= e;
      return n;
    };
    for (MemorySpace from : {MemorySpace::global, MemorySpace::shared}) {
      std::vector<Operation*> copies;
      for (Operation* op : ops_) {
        if (op->kind() == OpKind::copy && op->num_results() == 1 && eligible(op->result()) &&
            op->operand(0)->type().space() == from)
          copies.push_back(op);
      }
      std::stable_sort(copies.begin(), copies.end(), [&](Operation* x, Operation* y) {
        return elems(x->result()) > elems(y->result());
      });
      for (Operation* op : copies) {
        if (known(s, op->result())) continue;
        const ir::Type& t = op->result()->type();
        need_result(
            s, op->result(),
            coalesced_layout(t.static_shape(), ir::bit_width(t.element()), threads, span_threads_));
        drain(s);
      }
    }
    // Whatever is left (fills, iotas, allocs no constraint reached): coalesced, in program order.
    for (Operation* op : ops_) {
      for (const auto& r : op->results()) {
        Value* v = r.get();
        if (!eligible(v) || known(s, v)) continue;
        const ir::Type& t = v->type();
        need_result(
            s, v,
            coalesced_layout(t.static_shape(), ir::bit_width(t.element()), threads, span_threads_));
        drain(s);
      }
    }
    return s;
  }

  std::string text(const TVLayout& tv) { return layout::to_string(tv.layout()); }

  void apply(State& s, const std::vector<Operation*>& mmas,
             const std::vector<std::vector<MmaChoice>>& choices, const std::vector<int>& pick,
             int64_t threads) {
    // Types first (so that inserted rearranges see the final layouts).
    for (auto& [v, tv] : s.layout) v->set_type(v->type().with_layout(text(tv)));
    // Results whose users hold another layout: the producer makes `made`, a rearrange after it
    // gives the users what they already assumed.
    for (auto& [v, made] : s.result_fixes) {
      std::string held = v->type().layout();
      if (s.pinned.count(v)) {
        user_error(v->def() ? v->def()->loc() : kernel_->loc(),
                   v->def() ? std::string(v->def()->name()) : std::string("for"), ": ",
                   ir::value_ref(v), " is pinned to ", held, " but its producer makes ",
                   text(made));
      }
      std::vector<Use> users = uses_[v];
      v->set_type(v->type().with_layout(text(made)));
      Operation* def = v->def();
      ir::Block* block = def ? def->parent_block() : v->owner_block();
      size_t pos = def ? ir::position_in_block(*def) + 1 : 0;
      auto op = std::make_unique<Operation>(OpKind::rearrange, def ? def->loc() : SourceLocation{});
      op->add_operand(v);
      Value* nv = op->add_result(v->type().with_layout(held), v->name() + "_r");
      block->insert(pos, std::move(op));
      for (const Use& u : users) u.op->set_operand(u.index, nv);
    }
    for (const OperandFix& f : s.fixes) {
      Value* v = f.op->operand(f.index);
      if (v->type().layout() == text(f.want) || same_tv(parse_tv(v), f.want)) continue;
      Operation* at = f.op;
      ir::OpBuilder b(at->parent_block());
      b.set_insertion_point_before(at);
      Operation* r =
          b.create(OpKind::rearrange, {v}, {v->type().with_layout(text(f.want))}, at->loc());
      r->result()->set_name(v->name() + "_r");
      f.op->set_operand(f.index, r->result());
      report("search", "rearrange " + ir::value_ref(v) + " for " + ir::op_where(*f.op) + ": " +
                           v->type().layout() + " -> " + text(f.want));
    }
    if (grid_ && !grid_->has_attr("threads"))
      grid_->set_attr("threads", ir::Attribute::integer(threads));
    for (size_t i = 0; i < mmas.size(); ++i) {
      Operation* op = mmas[i];
      const MmaChoice& c = choices[i][pick[i]];
      op->set_attr("atom", ir::Attribute::string(c.atom.name));
      op->set_attr("tiling", ir::Attribute::ints({c.tm, c.tn}));
      // The loop over atom repetitions each executing group runs (Hexcute §6): along M, N, K.
      int64_t m = c.c.tile_shape()[0].as_int(), n = c.c.tile_shape()[1].as_int();
      int64_t k = c.a.tile_shape()[1].as_int();
      op->set_attr("repeat", ir::Attribute::ints(
                                 {m / (c.atom.m * c.tm), n / (c.atom.n * c.tn), k / c.atom.k}));
      if (op->operand(0)->type().space() == MemorySpace::shared && c.atom.a_in_registers)
        op->set_attr("a_fragment", ir::Attribute::layout(text(c.a)));
      if (op->operand(1)->type().space() == MemorySpace::shared && c.atom.group_threads != 128)
        op->set_attr("b_fragment", ir::Attribute::layout(text(c.b)));
    }
    for (Operation* op : ops_) {
      if (op->kind() == OpKind::reduce) annotate_reduce(op);
      if (op->kind() == OpKind::copy) annotate_global_copy(op);
    }
  }

  void annotate_reduce(Operation* op) {
    Value* src = op->operand(0);
    if (!src->type().has_layout() || !ir::is_static(src->type().shape())) return;
    TVLayout tv = parse_tv(src);
    TVLayout p = project_layout(tv, src->type().static_shape(), op->ints_attr("dims"));
    // Threads that share an output: the stride-0 leaves of the projected thread mode.
    Layout threads = layout::flatten(p.thread_layout());
    int64_t lanes = 1, span = 1, mult = 1;
    for (int i = 0; i < threads.rank(); ++i) {
      Layout mode = threads.rank() == 1 ? threads : threads.mode(i);
      int64_t size = mode.size();
      if (size > 1 && mode.stride() == IntTuple(0)) {
        lanes *= size;
        span = std::max(span, mult * size);
      }
      mult *= size;
    }
    if (lanes == 1) {
      op->set_attr("atom", ir::Attribute::string("thread-local"));
    } else if (span <= 32 && (lanes & (lanes - 1)) == 0) {
      op->set_attr("atom",
                   ir::Attribute::string(target::cuda::warp_shuffle_reduce(int(lanes)).name));
    } else {
      op->set_attr("cross_warp", ir::Attribute::integer(lanes));
    }
  }

  // The global tensor a tile view reads, and the extent of its last dimension.
  std::optional<ir::Extent> global_last_extent(Value* v) {
    while (v->def() && (v->def()->kind() == OpKind::tile)) v = v->def()->operand(0);
    if (v->def() || v->type().space() != MemorySpace::global || v->type().has_layout())
      return std::nullopt;
    return v->type().shape().back();
  }

  bool divisible(const ir::Extent& e, int64_t d) {
    if (e.is_static()) return e.value % d == 0;
    for (const ir::Fact& f : kernel_->signature().facts) {
      if (f.symbol == e.symbol && f.divisor % d == 0) return true;
    }
    return false;
  }

  // Copies between registers and global memory: the widest vector each thread's values allow
  // (consecutive values along the last dimension) that the global extents' facts keep aligned.
  void annotate_global_copy(Operation* op) {
    Value* src = op->operand(0);
    Value* reg = op->num_results() == 1 ? op->result() : nullptr;
    Value* mem = src;
    if (!reg) {
      if (op->num_operands() != 2) return;
      reg = src;
      mem = op->operand(1);
    }
    if (!is_register_tensor(reg) || mem->type().space() != MemorySpace::global) return;
    if (!reg->type().has_layout() || !ir::is_static(reg->type().shape())) return;
    TVLayout tv = parse_tv(reg);
    std::vector<int64_t> shape = reg->type().static_shape();
    int bits = ir::bit_width(reg->type().element());
    int64_t rows = shape.size() == 2 ? shape[0] : 1;
    int64_t step = shape.size() == 2 ? rows : 1;  // tile-index step along the last dimension
    std::vector<int64_t> table = tv_table(tv);
    int64_t T = tv.num_threads(), V = tv.num_values();
    std::optional<ir::Extent> last = global_last_extent(mem);
    int64_t w = std::max<int64_t>(1, std::min<int64_t>(V, 128 / bits));
    for (; w > 1; w /= 2) {
      if (V % w != 0 || !last || !divisible(*last, w) || shape.back() % w != 0) continue;
      bool ok = true;
      for (int64_t t = 0; t < T && ok; ++t) {
        for (int64_t v = 0; v < V && ok; v += w) {
          int64_t base = table[size_t(t + T * v)];
          if ((base / step) % w != 0) ok = false;
          for (int64_t u = 1; u < w && ok; ++u)
            ok = table[size_t(t + T * (v + u))] == base + u * step;
        }
      }
      if (ok) break;
    }
    int bytes = static_cast<int>(std::max<int64_t>(1, w * bits / 8));
    bool load = op->num_results() == 1;
    Atom atom = target::cuda::vector_copy(load ? MemorySpace::global : MemorySpace::reg,
                                          load ? MemorySpace::reg : MemorySpace::global, bytes,
                                          bits < 8 ? 8 : bits);
    op->set_attr("atom", ir::Attribute::string(atom.name));
  }

  Operation* kernel_;
  target::cuda::Target target_;
  Operation* grid_ = nullptr;
  std::vector<Operation*> ops_;
  std::unordered_map<Value*, std::vector<Use>> uses_;
};

}  // namespace

void synthesize_layouts(ir::Module& module, const SynthesisOptions& options) {
  for (auto& kernel : module.kernels) Synthesis(kernel.get(), options).run();
}

}  // namespace tessel::transforms
