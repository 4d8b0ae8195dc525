// The sm_90a mainloop: TMA loads completing on mbarriers, S stages ahead of wgmma from shared
// memory, with a configurable number of wgmma groups in flight (no warp specialization).
//
// The loop's body, as synthesis leaves it: global `tile`s, `copy` of each into shared memory with a
// TMA atom ("tma.load.2d.box<rows>x<cols>.sw<bytes>", the shared type in the canonical K-major
// swizzled layout that box writes), `transpose` of shared tiles, `mma` with a wgmma atom over them
// into a loop-carried accumulator, and the `yield` of that accumulator. It becomes:
//
//   prologue   thread 0 initializes full[S] (1 arrival + the stage's bytes) and empty[S] (one
//              arrival per warp), then issues the loads of iterations 0 .. S-G-1.
//   iteration k (slot s = k % S):
//              every thread waits full[s] with parity (k / S) & 1; each warpgroup issues its wgmma
//              instances for the tile's K steps and commits them as one group; `wait_group G`
//              leaves G groups (this and earlier iterations) in flight, so the group of iteration
//              k - G has finished reading its slot: lane 0 of every warp arrives on
//              empty[(k - G) % S]; thread 0 then waits for that slot to be empty and issues the
//              loads of iteration j = k - G + S into it.
//   after      wait_group 0.
//
// G is the loop's `mma_in_flight` attribute (default 1; 0 when S == 1) and S its `stages` (default
// 1), both chosen by the pipeline-loops pass. A thread waits for a slot to be empty with the parity
// of the previous use, ((j / S) & 1) ^ 1, which a fresh barrier reports complete (HOPPER.md §5).
//
// The accumulator is updated in place: each wgmma instance adds into the contiguous run of the
// accumulator's values that the instance's registers are, which is checked at emission time by
// evaluating the accumulator's layout for every thread of the warpgroup (nothing here assumes how
// synthesis ordered the values). An accumulator that starts at zero (a `fill 0.0`) is never
// zeroed: iteration 0's first wgmma of each instance runs with scale-d = 0. Zeroing registers that
// a pending wgmma group also writes makes ptxas serialize every wgmma (warning C7515, ~20% of the
// GEMM's speed; test/unit/codegen/emit_sm90_test.cpp watches for it).
#include <regex>

#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {
namespace {

struct TmaCopy {
  const Operation* copy = nullptr;
  const Operation* tile = nullptr;
  int argument = -1;  // the kernel argument the tile is of
  int64_t rows = 0, cols = 0, swizzle = 0;
  int64_t bytes = 0;   // one slot
  int64_t offset = 0;  // of slot 0 in the dynamic allocation
  std::string tmap;    // the descriptor parameter's name
};

// The wgmma C fragment of m64nNk16 (HOPPER.md §1): register i of thread t of the warpgroup.
std::pair<int64_t, int64_t> wgmma_c(int64_t t, int64_t i) {
  int64_t w = t / 32, l = t % 32;
  return {16 * w + l / 4 + 8 * ((i >> 1) & 1), 8 * (i / 4) + 2 * (l % 4) + (i & 1)};
}

}  // namespace

void Emitter::tma_wgmma_mainloop(const Operation& op) {
  const ir::Block& body = *op.region(0);
  if (const_int(op.operand(0)) != 0 || const_int(op.operand(2)) != 1) {
    unsupported(op, "with TMA copies must count from 0 in steps of 1");
  }
  if (op.parent_block() != kernel_.region(0)) {
    unsupported(op,
                "with TMA copies must be at the top level of the kernel (every thread runs it)");
  }
  const int64_t stages = op.has_attr("stages") ? op.int_attr("stages") : 1;
  const int64_t in_flight =
      op.has_attr("mma_in_flight") ? op.int_attr("mma_in_flight") : (stages > 1 ? 1 : 0);
  if (stages < 1 || in_flight < 0 || in_flight >= stages || in_flight > 7) {
    unsupported(op, "needs stages >= 1 and 0 <= mma_in_flight < stages (at most 7), not stages = " +
                        std::to_string(stages) + ", mma_in_flight = " + std::to_string(in_flight));
  }
  if (threads_ % 128 != 0) unsupported(op, "with wgmma needs whole warpgroups of threads");
  const int64_t warps = threads_ / 32;

  // ---- what the body holds ----
  std::vector<TmaCopy> copies;
  std::vector<const Operation*> mmas;
  const ir::Block& kernel_body = *kernel_.region(0);
  for (const auto& inner : body.ops()) {
    switch (inner->kind()) {
      case OpKind::tile: {
        if (inner->operand(0)->owner_block() != &kernel_body || inner->operand(0)->def()) {
          unsupported(*inner, "in a TMA mainloop must tile a kernel argument directly");
        }
        break;
      }
      case OpKind::copy: {
        if (inner->num_results() != 1 || inner->result()->type().space() != MemorySpace::shared) {
          unsupported(*inner, "in a TMA mainloop must copy a global tile into shared memory");
        }
        const Operation* tile = inner->operand(0)->def();
        if (!tile || tile->kind() != OpKind::tile || tile->parent_block() != &body) {
          unsupported(*inner, "in a TMA mainloop must copy a tile made in the loop");
        }
        static const std::regex atom_re(R"(tma\.load\.2d\.box(\d+)x(\d+)\.sw(\d+))");
        std::smatch m;
        std::string atom = inner->has_attr("atom") ? inner->str_attr("atom") : "";
        if (!std::regex_match(atom, m, atom_re)) {
          unsupported(*inner, "has atom '" + atom +
                                  "'; the TMA mainloop takes 2-D TMA loads (tma.load.2d.box...)");
        }
        TmaCopy c;
        c.copy = inner.get();
        c.tile = tile;
        c.argument = static_cast<int>(tile->operand(0)->index());
        c.rows = std::stoll(m[1]);
        c.cols = std::stoll(m[2]);
        c.swizzle = std::stoll(m[3]);
        const Type& t = inner->result()->type();
        if (!is_static(t.shape()) || t.rank() != 2 || t.static_shape()[0] != c.rows ||
            t.static_shape()[1] != c.cols) {
          unsupported(*inner, "has a box " + std::to_string(c.rows) + "x" + std::to_string(c.cols) +
                                  " that is not its whole tile " + t.str() +
                                  " (several boxes per tile are not emitted yet)");
        }
        if (t.element() != ScalarKind::f16 && t.element() != ScalarKind::bf16) {
          unsupported(*inner, "of " + std::string(ir::to_string(t.element())) +
                                  "; the TMA mainloop handles f16 and bf16 tiles");
        }
        // The wgmma descriptors below assume the canonical K-major layout of a swizzled box: rows
        // of `swizzle` bytes, 8-row atoms stacked densely.
        if (c.swizzle != 128 || c.cols * 2 != 128) {
          unsupported(*inner, "has a " + std::to_string(c.swizzle) + "-byte swizzle over " +
                                  std::to_string(c.cols * 2) +
                                  "-byte rows; the TMA mainloop takes 128-byte rows with the "
                                  "128-byte swizzle");
        }
        std::string expect = "Sw<3,3,3> o 0 o (" + std::to_string(c.rows) + ",64):(64,1)";
        if (t.layout() != expect) {
          unsupported(*inner, "has shared layout " + t.layout() + "; a 128B-swizzled TMA box of " +
                                  std::to_string(c.rows) + " rows lays down " + expect);
        }
        if (tile->has_attr("masked") && tile->has_attr("pad") && tile->real_attr("pad") != 0.0) {
          unsupported(*tile, "pads with " + std::to_string(tile->real_attr("pad")) +
                                 "; TMA fills out-of-bounds elements with zeros");
        }
        c.bytes = c.rows * c.cols * 2;
        copies.push_back(c);
        break;
      }
      case OpKind::transpose:
        if (inner->operand(0)->type().space() != MemorySpace::shared)
          unsupported(*inner, "in a TMA mainloop must transpose a shared tile");
        break;
      case OpKind::mma:
        mmas.push_back(inner.get());
        break;
      case OpKind::yield:
        break;
      default:
        unsupported(*inner, "is not emitted inside a TMA + wgmma mainloop yet");
    }
  }
  if (mmas.empty()) unsupported(op, "copies into shared memory but has no mma");

  // ---- loop-carried values: the accumulators, updated in place ----
  std::vector<std::string> carried;
  struct ZeroStart {
    std::string name, init;
    int64_t values = 0;
  };
  std::vector<ZeroStart> zero_started;
  for (int i = 3; i < op.num_operands(); ++i) {
    const Value* init = op.operand(i);
    const Value* arg = body.argument(i - 2);
    if (!init->type().is_tensor() || init->type().space() != MemorySpace::reg) {
      unsupported(op, "carries %" + arg->name() + "; a TMA mainloop carries only accumulators");
    }
    const Reg& a = reg(op, init);
    std::string name = fresh(arg->name());
    // An accumulator that starts at zero is not initialized: iteration 0's first wgmma of each
    // instance overwrites it (scale-d = 0), and a loop of no iterations copies the zeros after
    // it. Zeroing it before the loop instead makes ptxas serialize every wgmma (warning C7515:
    // the moves reach the loop where a group is in flight).
    const Operation* fill = init->def();
    bool zero_start = fill && fill->kind() == OpKind::fill && fill->real_attr("value") == 0.0;
    line("float " + name + "[" + std::to_string(a.plan->values) + "];" +
         (zero_start ? "  // zero: the first wgmma overwrites it" : ""));
    if (!zero_start) {
      line("#pragma unroll");
      line("for (int v = 0; v < " + std::to_string(a.plan->values) + "; ++v) " + name +
           "[v] = " + a.name + "[v];");
    } else {
      zero_started.push_back({name, a.name, a.plan->values});
    }
    regs_[arg] = Reg{name, a.plan, a.element};
    regs_[op.result(i - 3)] = Reg{name, a.plan, a.element};
    carried.push_back(name);
  }
  const Operation& yield = *body.ops().back();
  for (const Operation* mma : mmas) {
    bool yielded = false;
    for (int i = 0; i < yield.num_operands(); ++i) {
      if (yield.operand(i) == mma->result() && mma->operand(2) == body.argument(i + 1)) {
        yielded = true;
      }
    }
    if (!yielded) {
      unsupported(*mma, "must accumulate into a loop-carried value that the loop yields");
    }
  }

  // ---- shared memory: S slots per copy, then the barriers ----
  int64_t stage_bytes = 0;
  for (TmaCopy& c : copies) {
    c.offset = alloc_shared(stages * c.bytes, 1024);
    stage_bytes += c.bytes;
  }
  int64_t bar_offset = alloc_shared(2 * stages * 8, 8);
  std::string full = fresh("full_bar"), empty = fresh("empty_bar");
  line("// mainloop: " + std::to_string(stages) + " stages of " + std::to_string(stage_bytes) +
       " bytes (TMA), " + std::to_string(in_flight) + " wgmma group(s) in flight");
  line("unsigned long long* " + full + " = reinterpret_cast<unsigned long long*>(tsl_smem + " +
       std::to_string(bar_offset) + ");");
  line("unsigned long long* " + empty + " = " + full + " + " + std::to_string(stages) + ";");

  // The descriptors: one kernel parameter per copy.
  for (TmaCopy& c : copies) {
    const Value* tensor = c.tile->operand(0);
    c.tmap = fresh("tmap_" + tensor->name());
    KernelParam p;
    p.kind = KernelParam::Kind::tma_descriptor;
    p.name = c.tmap;
    p.type = tensor->type();
    p.tensor = c.argument;
    p.box = {c.cols, c.rows};
    p.swizzle_bytes = static_cast<int>(c.swizzle);
    out_.params.push_back(p);
    extra_params_.push_back("const __grid_constant__ tessel::device::TmaDescriptor " + c.tmap);
  }
  line("if (tid == 0) {");
  ++indent_;
  for (const TmaCopy& c : copies) line("tessel::device::tma_prefetch_descriptor(&" + c.tmap + ");");
  line("for (int s = 0; s < " + std::to_string(stages) + "; ++s) {");
  line("  tessel::device::mbarrier_init(&" + full + "[s], 1);");
  line("  tessel::device::mbarrier_init(&" + empty + "[s], " + std::to_string(warps) + ");");
  line("}");
  line("tessel::device::mbarrier_init_fence();");
  --indent_;
  line("}");
  line("__syncthreads();");

  std::string trip = fresh("k_tiles");
  line("const int " + trip + " = " + scalar(op, op.operand(1)) + ";");

  // Issuing the loads of iteration `kload` into its slot (thread 0 only). The tiles are views of
  // the loop variable: re-made with the variable bound to `kload`.
  const Value* iv = body.argument(0);
  auto issue = [&](const std::string& kload) {
    scalars_[iv] = kload;
    for (const auto& inner : body.ops()) {
      if (inner->kind() == OpKind::tile) tile(*inner);
    }
    std::string slot = "(" + kload + ") % " + std::to_string(stages);
    line("tessel::device::mbarrier_arrive_expect_tx(&" + full + "[" + slot + "], " +
         std::to_string(stage_bytes) + ");");
    for (const TmaCopy& c : copies) {
      const View& g = views_.at(c.tile->result());
      line("tessel::device::tma_load_2d(tsl_smem + " + std::to_string(c.offset) + " + (" + slot +
           ") * " + std::to_string(c.bytes) + ", &" + c.tmap + ", &" + full + "[" + slot + "], " +
           g.origin[1] + ", " + g.origin[0] + ");");
    }
  };
  std::string kload = fresh("kload");
  line("if (tid == 0) {");
  ++indent_;
  line("for (int " + kload + " = 0; " + kload + " < " + std::to_string(stages - in_flight) +
       " && " + kload + " < " + trip + "; ++" + kload + ") {");
  ++indent_;
  issue(kload);
  --indent_;
  line("}");
  --indent_;
  line("}");

  // ---- the loop: wait, the wgmma instances of each mma (wgmma_ss), release, refill ----
  std::string k = fresh(iv->name());
  scalars_[iv] = k;
  line("for (int " + k + " = 0; " + k + " < " + trip + "; ++" + k + ") {");
  ++indent_;
  std::string slot = fresh("slot");
  line("const int " + slot + " = " + k + " % " + std::to_string(stages) + ";");
  line("tessel::device::mbarrier_wait(&" + full + "[" + slot + "], (" + k + " / " +
       std::to_string(stages) + ") & 1);");
  // Thread 0 may arrive here from its producer branch while its warp's other lanes spun on the
  // barrier above: wgmma instructions are .sync.aligned, so the warp converges first.
  line("__syncwarp();");
  for (const auto& c : carried) line("tessel::device::wgmma_fence_operand(" + c + ");");
  line("tessel::device::wgmma_fence();");
  for (const Operation* mma : mmas) {
    // A: a shared tile [M, K] (K-major); B: the transpose of a shared [N, K] tile (K-major).
    auto source_copy = [&](const Value* v, bool transposed) -> const TmaCopy& {
      const Value* s = v;
      if (transposed) {
        if (!s->def() || s->def()->kind() != OpKind::transpose) {
          unsupported(*mma,
                      "takes B as the transpose of a K-major shared tile ([N,K]); "
                      "other operand forms are not emitted yet");
        }
        s = s->def()->operand(0);
      } else if (s->def() && s->def()->kind() == OpKind::transpose) {
        unsupported(*mma, "takes A as a transpose (M-major A) which is not emitted yet");
      }
      for (const TmaCopy& c : copies) {
        if (c.copy->result() == s) return c;
      }
      unsupported(*mma, "reads %" + s->name() + ", which is not loaded by this loop's TMA copies");
    };
    const TmaCopy& a = source_copy(mma->operand(0), false);
    const TmaCopy& b = source_copy(mma->operand(1), true);
    const Reg& acc = reg(*mma, mma->operand(2));
    bool overwrite = std::any_of(zero_started.begin(), zero_started.end(),
                                 [&](const ZeroStart& z) { return z.name == acc.name; });
    wgmma_ss(*mma, "tsl_smem + " + std::to_string(a.offset) + " + " + slot + " * " +
                       std::to_string(a.bytes), a.rows, a.cols,
             "tsl_smem + " + std::to_string(b.offset) + " + " + slot + " * " +
                 std::to_string(b.bytes), b.rows, b.cols,
             overwrite ? k + " > 0" : "");
  }
  line("tessel::device::wgmma_commit_group();");
  // No fence on the accumulators between the commit and the wait: ptxas counts it as a non-wgmma
  // definition inside the group and serializes every wgmma (warning C7515).
  line("tessel::device::wgmma_wait_group<" + std::to_string(in_flight) + ">();");
  for (const auto& c : carried) line("tessel::device::wgmma_fence_operand(" + c + ");");
  // Iteration k - G (if any) has finished reading its slot: release it. Iteration k - G + S
  // loads into that slot (for k < G, a slot the prologue left unused: its empty barrier is fresh,
  // and a fresh barrier reports the parity-1 phase complete).
  std::string done = in_flight == 0 ? k : "(" + k + " - " + std::to_string(in_flight) + ")";
  line("{");
  ++indent_;
  line("__syncwarp();");
  std::string releasing = "tid % 32 == 0";
  if (in_flight > 0) releasing = k + " >= " + std::to_string(in_flight) + " && " + releasing;
  line("if (" + releasing + ") tessel::device::mbarrier_arrive(&" + empty + "[" + done + " % " +
       std::to_string(stages) + "]);");
  line("const int " + kload + " = " + done + " + " + std::to_string(stages) + ";");
  line("if (tid == 0 && " + kload + " < " + trip + ") {");
  ++indent_;
  line("tessel::device::mbarrier_wait(&" + empty + "[" + kload + " % " + std::to_string(stages) +
       "], ((" + kload + " / " + std::to_string(stages) + ") & 1) ^ 1);");
  issue(kload);
  --indent_;
  line("}");
  --indent_;
  line("}");
  scalars_[iv] = k;
  --indent_;
  line("}");
  line("tessel::device::wgmma_wait_group<0>();");
  for (const auto& c : carried) line("tessel::device::wgmma_fence_operand(" + c + ");");
  for (const ZeroStart& z : zero_started) {
    line("if (" + trip + " <= 0) {");
    line("  #pragma unroll");
    line("  for (int v = 0; v < " + std::to_string(z.values) + "; ++v) " + z.name +
         "[v] = " + z.init + "[v];");
    line("}");
  }
}

void Emitter::wgmma_ss(const Operation& mma, const std::string& a_base, int64_t a_rows,
                       int64_t a_cols, const std::string& b_base, int64_t b_rows, int64_t b_cols,
                       const std::string& scale_d) {
  static const std::regex atom_re(R"(wgmma\.m64n(\d+)k16\.f32\.(f16|bf16)\.ss)");
  std::smatch m;
  std::string atom = mma.has_attr("atom") ? mma.str_attr("atom") : "";
  if (!std::regex_match(atom, m, atom_re)) {
    unsupported(mma, "has atom '" + atom + "'; sm_90a issues wgmma.m64nNk16.f32.{f16,bf16}.ss");
  }
  const int64_t atom_n = std::stoll(m[1]);
  const std::string type = m[2] == "f16" ? "f16" : "bf16";
  const Reg& acc = reg(mma, mma.operand(2));
  const Plan& plan = *acc.plan;
  if (plan.tile.size() != 2) unsupported(mma, "needs a 2-D accumulator");
  const int64_t tile_m = plan.tile[0], tile_n = plan.tile[1];
  const int64_t tile_k = a_cols;
  if (a_rows != tile_m || b_rows != tile_n || b_cols != tile_k) {
    unsupported(mma, "operand tiles do not match the accumulator " + std::to_string(tile_m) + "x" +
                         std::to_string(tile_n));
  }
  struct Instance {
    int64_t m0 = 0, n0 = 0;  // origin in the accumulator tile
    int64_t base = 0;        // first accumulator value
  };
  // For every warpgroup, the atom instances it holds: origin (m0, n0) and the accumulator value
  // that the instance's register 0 is; registers must follow contiguously, the same run for
  // every thread of the warpgroup.
  const int64_t regs = atom_n / 2;
  const int64_t groups = plan.threads / 128;
  if (plan.threads % 128 != 0) unsupported(mma, "with wgmma needs whole warpgroups of threads");
  std::vector<std::vector<Instance>> per_group(groups);
  for (int64_t g = 0; g < groups; ++g) {
    std::map<std::vector<int64_t>, int64_t> where;  // coordinate -> value, for thread 128g
    for (int64_t v = 0; v < plan.values; ++v) where[plan.coord(128 * g, v)] = v;
    std::vector<bool> covered(plan.values, false);
    for (int64_t m0 = 0; m0 < tile_m; m0 += 64) {
      for (int64_t n0 = 0; n0 < tile_n; n0 += atom_n) {
        auto [r0, c0] = wgmma_c(0, 0);
        auto it = where.find({m0 + r0, n0 + c0});
        if (it == where.end()) continue;  // another warpgroup's instance
        Instance in{m0, n0, it->second};
        bool ok = in.base + regs <= plan.values;
        for (int64_t t = 0; ok && t < 128; ++t) {
          for (int64_t i = 0; ok && i < regs; ++i) {
            auto [r, c] = wgmma_c(t, i);
            ok = plan.coord(128 * g + t, in.base + i) == std::vector<int64_t>{m0 + r, n0 + c};
          }
        }
        if (!ok) {
          unsupported(mma, "accumulator layout " + plan.text +
                               " does not hold each wgmma instance's registers as one contiguous "
                               "run of values");
        }
        for (int64_t i = 0; i < regs; ++i) covered[in.base + i] = true;
        per_group[g].push_back(in);
      }
    }
    if (std::find(covered.begin(), covered.end(), false) != covered.end()) {
      unsupported(mma, "accumulator layout " + plan.text +
                           " is not covered by wgmma instances of its warpgroup");
    }
  }
  // The same instance count and value runs in every warpgroup; origins may differ.
  for (int64_t g = 1; g < groups; ++g) {
    bool same = per_group[g].size() == per_group[0].size();
    for (size_t i = 0; same && i < per_group[g].size(); ++i)
      same = per_group[g][i].base == per_group[0][i].base;
    if (!same) unsupported(mma, "warpgroups hold different accumulator runs");
  }
  auto by_group = [&](auto field) {
    // A C expression selecting per-warpgroup values, e.g. `(tid / 128 == 0 ? 0 : 64)`.
    std::vector<int64_t> values;
    for (int64_t g = 0; g < groups; ++g) values.push_back(field(g));
    bool uniform =
        std::all_of(values.begin(), values.end(), [&](int64_t x) { return x == values[0]; });
    if (uniform) return std::to_string(values[0]);
    std::string e = std::to_string(values.back());
    for (int64_t g = groups - 2; g >= 0; --g)
      e = "(tid / 128 == " + std::to_string(g) + " ? " + std::to_string(values[g]) + " : " + e +
          ")";
    return e;
  };
  line("// " + std::string(mma.name()) + ": " + atom + ", " + std::to_string(per_group[0].size()) +
       " instance(s) per warpgroup x " + std::to_string(tile_k / 16) + " k-steps");
  line("{");
  ++indent_;
  for (size_t i = 0; i < per_group[0].size(); ++i) {
    std::string row = by_group([&](int64_t g) { return per_group[g][i].m0; });
    std::string col = by_group([&](int64_t g) { return per_group[g][i].n0; });
    // Row r of a K-major 128B-swizzled tile starts at r * 128 bytes (8-row atoms of 1024 B).
    line("const unsigned long long desc_a" + std::to_string(i) +
         " = tessel::device::make_smem_descriptor_k_major(tessel::device::smem_u32(" + a_base +
         " + " + row + " * 128), tessel::device::SmemSwizzle::b128);");
    line("const unsigned long long desc_b" + std::to_string(i) +
         " = tessel::device::make_smem_descriptor_k_major(tessel::device::smem_u32(" + b_base +
         " + " + col + " * 128), tessel::device::SmemSwizzle::b128);");
  }
  for (int64_t kk = 0; kk < tile_k / 16; ++kk) {
    for (size_t i = 0; i < per_group[0].size(); ++i) {
      // A k16 step inside the 128-byte swizzle row is +32 bytes of start address.
      std::string step = std::to_string(kk * 2);
      bool overwrite = kk == 0 && !scale_d.empty();
      line("tessel::device::wgmma_ss<" + std::to_string(atom_n) + ", tessel::device::MmaType::" +
           type + ">(*reinterpret_cast<float(*)[" + std::to_string(regs) + "]>(" + acc.name +
           " + " + std::to_string(per_group[0][i].base) + "), desc_a" + std::to_string(i) + " + " +
           step + ", desc_b" + std::to_string(i) + " + " + step +
           (overwrite ? ", " + scale_d : "") + ");");
    }
  }
  --indent_;
  line("}");
}

}  // namespace tessel::target::cuda::detail
