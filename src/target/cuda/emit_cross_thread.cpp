// Ops whose values cross threads: broadcasts, rearranges (through shared memory) and
// reductions (shuffles, then shared-memory scratch across warps).
#include <algorithm>
#include <cmath>
#include <numeric>

#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

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

std::optional<std::vector<int64_t>> Emitter::local_broadcast(const Operation& op) {
  const Plan& src = *plan_for(op, op.operand(0)->type());
  const Plan& dst = *plan_for(op, op.result()->type());
  const auto& dims = op.ints_attr("dims");
  if (src.tile.size() != 1 || dst.tile.size() != 2 || dims.size() != 1) return std::nullopt;
  const size_t kept = dims[0] == 0 ? 1 : 0;
  std::vector<int64_t> coords;
  for (int64_t v = 0; v < src.values; ++v) coords.push_back(src.value_coord[v][0]);
  std::vector<int64_t> from;
  for (int64_t v = 0; v < dst.values; ++v) {
    auto p = local_source(src, dst, kept, v, coords);
    if (!p) return std::nullopt;
    from.push_back(*p);
  }
  return from;
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
  if (const auto from = local_broadcast(op)) {
    const auto [lo, hi] = value_range(dst.values);
    for (int64_t v = lo; v < hi; ++v) {
      line(r.name + "[" + std::to_string(v) + "] = " + a.name + "[" +
           std::to_string((*from)[v]) + "];");
    }
    return;
  }
  // Through shared memory: one writer per element, everyone reads.
  std::string s = scratch(r.name, src.tile[0]);
  line(threads_barrier());
  std::vector<bool> none(src.leaves.size(), false);
  line("if (" + representative(src, none) + ") {");
  for (int64_t v = 0; v < src.values; ++v) {
    line("  " + s + "[" + src.var[0] + " + " + std::to_string(src.value_coord[v][0]) +
         "] = " + a.name + "[" + std::to_string(v) + "];");
  }
  line("}");
  line(threads_barrier());
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
  line(threads_barrier());
  line("if (" + representative(src, std::vector<bool>(src.leaves.size(), false)) + ") {");
  for (int64_t v = 0; v < src.values; ++v) {
    line("  " + s + "[" + index(src, v) + "] = " + a.name + "[" + std::to_string(v) + "];");
  }
  line("}");
  line(threads_barrier());
  for (int64_t v = 0; v < dst.values; ++v) {
    line(r.name + "[" + std::to_string(v) + "] = " + s + "[" + index(dst, v) + "];");
  }
}

void Emitter::reduce(const Operation& op) {
  const Reg& a = reg(op, op.operand(0));
  ReduceParts s = reduce_begin(op, /*accumulate=*/false);
  reduce_fold(s, a, 0, a.plan->values);
  reduce_end({&s});
}

// A reduce in three steps, so that a chunked run (emit_chunked.cpp) can fold its operand's
// values chunk by chunk into the thread's partials and cross threads once after the last chunk.
// begin: the result's array and the partials (at the identity when folds accumulate into them).
Emitter::ReduceParts Emitter::reduce_begin(const Operation& op, bool accumulate) {
  ReduceParts s;
  s.op = &op;
  s.accumulate = accumulate;
  const auto& dims = op.ints_attr("dims");
  s.kind = op.str_attr("kind");
  s.src = *plan_for(op, op.operand(0)->type());
  Plan& src = s.src;
  if (src.tile.size() != 2 || dims.size() != 1)
    unsupported(op, "is supported from rank 2 to rank 1 only");
  s.red = static_cast<size_t>(dims[0]);
  s.kept = 1 - s.red;
  const size_t red = s.red, kept = s.kept;
  // A thread leaf along the reduced dimension that spans lanes and warps (a row over 512
  // threads: one leaf of extent 512) is split at the warp: its lanes combine by shuffles, only
  // one partial per warp goes through shared memory (else every thread would read all 512).
  // The leaf's extent need only be a multiple of the lanes it spans: a row over 544 threads
  // (17 warps, schedule-rows' near fit of N = 8200) splits into 32 lanes and 17 warps.
  for (size_t i = 0; i < src.leaves.size(); ++i) {
    Leaf l = src.leaves[i];
    if ((l.prefix & (l.prefix - 1)) != 0 || l.coef[red] == 0 || l.prefix >= 32 ||
        l.prefix * l.extent <= 32 || l.extent % (32 / l.prefix) != 0)
      continue;
    const int64_t lanes = 32 / l.prefix;
    Leaf warps = l;
    warps.extent = l.extent / lanes;
    warps.prefix = 32;
    for (int64_t& c : warps.coef) c *= lanes;
    src.leaves[i].extent = lanes;
    src.leaves.insert(src.leaves.begin() + static_cast<std::ptrdiff_t>(i) + 1, warps);
  }
  s.identity = s.kind == "sum"   ? "0.0f"
               : s.kind == "max" ? float_literal(-INFINITY)
               : s.kind == "min" ? float_literal(INFINITY)
                                 : "";
  if (s.identity.empty()) unsupported(op, "of kind " + s.kind + " is not supported yet");
  const Reg& r = new_reg(op);
  s.result = r.name;
  s.dst = r.plan;
  // 1. Each thread folds its own values, one partial per distinct kept coordinate.
  s.part_of.resize(static_cast<size_t>(src.values));
  for (int64_t v = 0; v < src.values; ++v) {
    int64_t c = src.value_coord[v][kept];
    auto it = std::find(s.kept_coord.begin(), s.kept_coord.end(), c);
    s.part_of[v] = it - s.kept_coord.begin();
    if (it == s.kept_coord.end()) s.kept_coord.push_back(c);
  }
  s.part = fresh(r.name + "_part");
  const int64_t parts = static_cast<int64_t>(s.kept_coord.size());
  s.temps.assign(static_cast<size_t>(parts), 0);
  line("float " + s.part + "[" + std::to_string(parts) + "];");
  if (accumulate) {
    line("#pragma unroll");
    line("for (int p = 0; p < " + std::to_string(parts) + "; ++p) " + s.part + "[p] = " +
         s.identity + ";");
  }
  return s;
}

std::string Emitter::ReduceParts::combine(const std::string& x, const std::string& y) const {
  return kind == "sum"   ? x + " + " + y
         : kind == "max" ? "fmaxf(" + x + ", " + y + ")"
                         : "fminf(" + x + ", " + y + ")";
}

// fold: the operand's values lo .. hi - 1 (held in `a`) into the partials.
// As a balanced tree per partial (pairs, then pairs of pairs): the chain of one combine after
// another is as long as the thread's values (64 for a row of a 128-wide wgmma accumulator
// tile), and a warp alone on its scheduler (attention's softmax) waits out every link.
// Folds that accumulate (a chunked run's, emit_chunked.cpp) chain instead: those runs fill the
// SM with warps at 32 registers a thread, where the latency of a chain hides among the warps and
// a tree's temporaries do not fit (LayerNorm's [1,32768] row: 44 bytes spilled with trees over
// its two sums, 8 with chains).
void Emitter::reduce_fold(ReduceParts& s, const Reg& a, int64_t lo, int64_t hi) {
  const int64_t parts = static_cast<int64_t>(s.kept_coord.size());
  if (s.accumulate) {
    for (int64_t v = lo; v < hi; ++v) {
      const std::string dst = s.part + "[" + std::to_string(s.part_of[v]) + "]";
      line(dst + " = " + s.combine(dst, a.name + "[" + std::to_string(v) + "]") + ";");
    }
    return;
  }
  for (int64_t p = 0; p < parts; ++p) {
    std::vector<std::string> level;
    for (int64_t v = lo; v < hi; ++v)
      if (s.part_of[v] == p) level.push_back(a.name + "[" + std::to_string(v) + "]");
    if (level.empty()) continue;
    while (level.size() > 1) {
      std::vector<std::string> next;
      for (size_t i = 0; i + 1 < level.size(); i += 2) {
        if (level.size() == 2) {
          next.push_back(s.combine(level[i], level[i + 1]));
          continue;
        }
        std::string t = s.part + "_" + std::to_string(p) + "_" + std::to_string(s.temps[p]++);
        line("const float " + t + " = " + s.combine(level[i], level[i + 1]) + ";");
        next.push_back(t);
      }
      if (level.size() % 2) next.push_back(level.back());
      level = std::move(next);
    }
    const std::string dst = s.part + "[" + std::to_string(p) + "]";
    line(dst + " = " + (s.accumulate ? s.combine(dst, level.front()) : level.front()) + ";");
  }
}

// end: the partials across threads into the results. Several reduces (a chunked run's sinks)
// end together: where their partials cross warps through shared memory, all of them share one
// barrier pair (LayerNorm's two sums over a row of 1024 threads: two barriers a row instead of
// four, each of which stalls the whole block).
void Emitter::reduce_end(const std::vector<const ReduceParts*>& all) {
  // The part of each reduce that goes through shared memory, between the barriers.
  struct Crossing {
    const ReduceParts* s;
    std::vector<bool> shuffled;
    std::string sc, g;
    int64_t groups = 1;
  };
  std::vector<Crossing> crossing;
  for (const ReduceParts* sp : all) {
    const ReduceParts& s = *sp;
    const Operation& op = *s.op;
    const Plan& src = s.src;
    const Plan& dst = *s.dst;
    const size_t red = s.red, kept = s.kept;
    const std::string& part = s.part;
    const int64_t parts = static_cast<int64_t>(s.kept_coord.size());
    const std::vector<int64_t>& kept_coord = s.kept_coord;
    auto combine = [&](const std::string& x, const std::string& y) { return s.combine(x, y); };
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
                       "__shfl_xor_sync(0xffffffffu, " + part + "[p], " + std::to_string(m) +
                           ")") +
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
        line(s.result + "[" + std::to_string(v) + "] = " + part + "[" + std::to_string(from[v]) +
             "];");
      }
      continue;
    }
    Crossing c{&s, shuffled, "", "0", 1};
    for (size_t i : cross) {
      const Leaf& l = src.leaves[i];
      std::string e = leaf_coord_expr(l, src.threads);
      c.g = c.g == "0" ? "(" + e + ")" : c.g + " + (" + e + ") * " + std::to_string(c.groups);
      c.groups *= l.extent;
    }
    c.sc = scratch(s.result, src.tile[kept] * c.groups);
    crossing.push_back(std::move(c));
  }
  if (crossing.empty()) return;
  // Scratch buffers are never shared between reduces (scratch() hands out fresh space), so the
  // barrier before the partials are stored only keeps a loop's next iteration from overwriting
  // what threads still read from its last: outside every loop nothing was read there before.
  bool in_loop = false;
  for (const Crossing& c : crossing) {
    for (const Operation* p = c.s->op->parent_op(); p && !in_loop; p = p->parent_op())
      in_loop = p->kind() == OpKind::for_;
  }
  if (in_loop) line(threads_barrier());
  for (const Crossing& c : crossing) {
    const ReduceParts& s = *c.s;
    const Plan& src = s.src;
    const int64_t parts = static_cast<int64_t>(s.kept_coord.size());
    std::string k = src.var[s.kept] == "0" ? "" : src.var[s.kept] + " + ";
    line("if (" + representative(src, c.shuffled) + ") {");
    for (int64_t p = 0; p < parts; ++p) {
      line("  " + c.sc + "[(" + k + std::to_string(s.kept_coord[p]) + ") * " +
           std::to_string(c.groups) + " + " + c.g + "] = " + s.part + "[" + std::to_string(p) +
           "];");
    }
    line("}");
  }
  line(threads_barrier());
  for (const Crossing& c : crossing) {
    const ReduceParts& s = *c.s;
    const Plan& dst = *s.dst;
    const int64_t groups = c.groups;
    const std::string& sc = c.sc;
    auto combine = [&](const std::string& x, const std::string& y) { return s.combine(x, y); };
    std::string dk = dst.var[0] == "0" ? "" : dst.var[0] + " + ";
    // Where every thread wants the same kept coordinates (a tile of one row) and the partials fit
    // a warp, each warp reads them a lane each and combines them by shuffles: 1 shared load and
    // log2 steps instead of a load and a combine per partial in every thread (softmax over 512
    // threads: 16 partials twice a tile, issue-bound at 2 blocks a SM, ncu's not_selected 3.7,
    // bench/results/2026-11-27-rows-near-fit-h100.md).
    if (dst.var[0] == "0" && groups > 1 && groups <= 32 && threads_ % 32 == 0) {
      const bool pow2 = (groups & (groups - 1)) == 0;
      for (int64_t v = 0; v < dst.values; ++v) {
        line("{");
        line("  const float* row = " + sc + " + (" + std::to_string(dst.value_coord[v][0]) +
             ") * " + std::to_string(groups) + ";");
        const std::string lane = "(threadIdx.x & 31)";
        // A power of two: every run of `groups` lanes holds all partials; else lanes past them
        // hold the identity and the butterfly spans the warp.
        line(pow2 ? "  float acc = row[" + lane + " & " + std::to_string(groups - 1) + "];"
                  : "  float acc = " + lane + " < " + std::to_string(groups) + " ? row[" + lane +
                        "] : " + s.identity + ";");
        for (int64_t m = 1; m < (pow2 ? groups : 32); m *= 2)
          line("  acc = " +
               combine("acc", "__shfl_xor_sync(0xffffffffu, acc, " + std::to_string(m) + ")") +
               ";");
        line("  " + s.result + "[" + std::to_string(v) + "] = acc;");
        line("}");
      }
      continue;
    }
    for (int64_t v = 0; v < dst.values; ++v) {
      line("{");
      line("  const float* row = " + sc + " + (" + dk + std::to_string(dst.value_coord[v][0]) +
           ") * " + std::to_string(groups) + ";");
      line("  float acc = row[0];");
      line("  for (int g = 1; g < " + std::to_string(groups) +
           "; ++g) acc = " + combine("acc", "row[g]") + ";");
      line("  " + s.result + "[" + std::to_string(v) + "] = acc;");
      line("}");
    }
  }
}

}  // namespace tessel::target::cuda::detail
