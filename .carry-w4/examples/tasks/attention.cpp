// FlashAttention-2 forward as a task program: O = softmax(Q Kᵀ / sqrt(D)) V per head, the tile
// program examples/kernels/flash_attention.tir written as tasks. Q, K, V, O are [BH, S, 128] (batch
// and heads flattened); the program says what is computed, sequentially: for each 128-row (U)
// query tile of each head, a loop over W-key tiles keeping the running row max m, row sum l and
// output accumulator o (the online softmax), and O = o · (1 / l) at the end. Which variant runs where,
// the tile sizes, the memories (the accumulators in registers, P in registers as the A operand of
// the second mma, Q/K/V tiles in shared memory), warp specialization and pipeline depth are the
// mapping's (flash_attention.tmap).
#include <cmath>

#include "tasks/programs.h"

namespace tessel::examples {

using namespace tessel::task;

namespace {

// 1/sqrt(128) with log2(e) folded in: the softmax's exponent is exp2 of one fma.
const double kScale = 1.0 / std::sqrt(128.0) * 1.4426950408889634;

// The rows of a [1, rows, cols] tensor split over `parts` warpgroups (pieces [1, rows/parts,
// cols]).
PartitionRef rows_of(Inner& b, const TensorRef& t, const Expr& parts) {
  return b.blocks(t, {1, t.dim(1) / parts, t.dim(2)});
}

}  // namespace

namespace {

TaskProgram attention(ScalarKind element, bool causal) {
  TaskProgram p(causal ? "flash_attention_causal" : "flash_attention");
  p.global("Q", element, {"BH", "S", "128"});
  p.global("K", element, {"BH", "S", "128"});
  p.global("V", element, {"BH", "S", "128"});
  p.global("O", element, {"BH", "S", "128"});
  p.task("attention", {{"O", Privilege::write},
                       {"Q", Privilege::read},
                       {"K", Privilege::read},
                       {"V", Privilege::read}});
  p.task("clear", {{"C", Privilege::write}});
  p.task("init_max", {{"m", Privilege::write}});
  // s = q · kᵀ for one key tile (s [1,U,W], q [1,U,D], k [1,W,D]).
  p.task("scores", {{"s", Privilege::write}, {"q", Privilege::read}, {"k", Privilege::read}});
  // The scores of keys past the sequence's end set to -inf (k: the key tile, only its position).
  p.task("mask_keys", {{"s", Privilege::read_write}, {"k", Privilege::read}});
  // Causal: the scores of keys after the query set to -inf (q, k: only their positions); this
  // also masks keys past the sequence's end for every query row that is stored.
  p.task("mask_causal",
         {{"s", Privilege::read_write}, {"q", Privilege::read}, {"k", Privilege::read}});
  // One step of the online softmax: m = max(m, rowmax s); p = exp2(s·scale - m·scale);
  // alpha = exp2((m_old - m)·scale); l = l·alpha + rowsum p; o = o·alpha. alpha and neg_m are
  // scratch row vectors.
  p.task("online_softmax", {{"m", Privilege::read_write},
                            {"l", Privilege::read_write},
                            {"o", Privilege::read_write},
                            {"p", Privilege::write},
                            {"s", Privilege::read_write},
                            {"alpha", Privilege::write},
                            {"neg_m", Privilege::write}});
  // o += p · v (p [1,U,W], v [1,W,D]: B is [k, n]).
  p.task("pv", {{"o", Privilege::read_write}, {"p", Privilege::read}, {"v", Privilege::read}});
  // O = o / l.
  // (l becomes its reciprocal: one division per row, then a product per element, as the tile
  // program does.)
  p.task("normalize",
         {{"O", Privilege::write}, {"o", Privilege::read}, {"l", Privilege::read_write}});

  p.leaf("clear", "clear_leaf", [](Leaf& b) { b.fill(b.param("C"), 0.0); });
  p.leaf("init_max", "init_max_leaf", [](Leaf& b) { b.fill(b.param("m"), -INFINITY); });
  p.leaf("scores", "scores_leaf", [](Leaf& b) {
    b.fill(b.param("s"), 0.0);
    b.mma(b.param("s"), b.param("q"), b.param("k"));
  });
  p.leaf("mask_keys", "mask_leaf",
         [](Leaf& b) { b.mask(b.param("s"), b.param("k"), 2, 1, -INFINITY); });
  p.leaf("mask_causal", "causal_leaf",
         [](Leaf& b) { b.mask_causal(b.param("s"), b.param("q"), b.param("k"), 1, -INFINITY); });
  p.leaf("online_softmax", "softmax_leaf", [](Leaf& b) {
    int m = b.param("m"), l = b.param("l"), o = b.param("o"), pr = b.param("p"), s = b.param("s");
    int alpha = b.param("alpha"), neg_m = b.param("neg_m");
    b.copy(m, alpha);  // the old row max
    b.reduce_max(m, s, 2);
    b.elementwise(neg_m, "mul", {m, Leaf::number(kScale)});
    b.elementwise(neg_m, "neg", {neg_m});
    b.elementwise(s, "fma", {s, Leaf::number(kScale), neg_m});  // neg_m broadcast along columns
    b.elementwise(s, "exp2", {s});
    b.elementwise(alpha, "sub", {alpha, m});
    b.elementwise(alpha, "mul", {alpha, Leaf::number(kScale)});
    b.elementwise(alpha, "exp2", {alpha});
    b.elementwise(l, "mul", {l, alpha});
    b.reduce_sum(l, s, 2);
    b.elementwise(o, "mul", {o, alpha});
    b.copy(s, pr);  // P in the inputs' element type, the A operand of the second mma
  });
  p.leaf("pv", "pv_leaf", [](Leaf& b) { b.mma_kn(b.param("o"), b.param("p"), b.param("v")); });
  p.leaf("normalize", "normalize_leaf", [](Leaf& b) {
    b.elementwise(b.param("l"), "div", {Leaf::number(1.0), b.param("l")});
    b.elementwise(b.param("O"), "mul", {b.param("o"), b.param("l")});
  });

  // The two mmas split by rows over WGS warpgroups (each warpgroup its 64 rows of the scores and
  // of o: FlashAttention's consumer warpgroups).
  p.inner("scores", "scores_rows", [](Inner& b) {
    auto [s, q, k] = b.params<3>();
    auto WGS = b.tunable("WGS");
    auto sp = rows_of(b, s, WGS), qp = rows_of(b, q, WGS);
    b.prange({"w"}, {WGS}, [&](const Indices& w) {
      b.launch("scores", {sp({0, w[0], 0}), qp({0, w[0], 0}), k});
    });
  });
  p.inner("pv", "pv_rows", [](Inner& b) {
    auto [o, pr, v] = b.params<3>();
    auto WGS = b.tunable("WGS");
    auto op = rows_of(b, o, WGS), pp = rows_of(b, pr, WGS);
    b.prange({"w"}, {WGS}, [&](const Indices& w) {
      b.launch("pv", {op({0, w[0], 0}), pp({0, w[0], 0}), v});
    });
  });

  // The grid: one block per (head, U-row query tile), with its head's keys and values (causal:
  // those up to the query tile's last row, a piece whose extent grows with i).
  p.inner("attention", "attn_grid", [causal](Inner& b) {
    auto [O, Q, K, V] = b.params<4>();
    auto U = b.tunable("U");
    auto Op = b.blocks(O, {1, U, O.dim(2)});
    auto Qp = b.blocks(Q, {1, U, Q.dim(2)});
    b.prange({"h", "i"}, {Q.dim(0), cdiv(Q.dim(1), U)}, [&](const Indices& hi) {
      Expr keys = causal ? (hi[1] + 1) * U : K.dim(1);
      auto Kp = b.blocks(K, {1, keys, K.dim(2)});
      auto Vp = b.blocks(V, {1, keys, V.dim(2)});
      b.launch("attention", {Op({hi[0], hi[1], 0}), Qp({hi[0], hi[1], 0}), Kp({hi[0], 0, 0}),
                             Vp({hi[0], 0, 0})});
    });
  });
  // A block: the online softmax over W-key tiles (FlashAttention-2's loop).
  p.inner("attention", "attn_block", [element, causal](Inner& b) {
    auto [O, Q, K, V] = b.params<4>();
    auto W = b.tunable("W");
    Expr U = O.dim(1), D = O.dim(2);
    auto m = b.make_tensor(ScalarKind::f32, {1, U, 1});
    auto l = b.make_tensor(ScalarKind::f32, {1, U, 1});
    auto o = b.make_tensor(ScalarKind::f32, {1, U, D});
    auto s = b.make_tensor(ScalarKind::f32, {1, U, W});
    auto pr = b.make_tensor(element, {1, U, W});
    auto alpha = b.make_tensor(ScalarKind::f32, {1, U, 1});
    auto neg_m = b.make_tensor(ScalarKind::f32, {1, U, 1});
    auto Kp = b.blocks(K, {1, W, K.dim(2)});
    auto Vp = b.blocks(V, {1, W, V.dim(2)});
    b.launch("init_max", {m});
    b.launch("clear", {l});
    b.launch("clear", {o});
    b.srange("j", cdiv(K.dim(1), W), [&](const Expr& j) {
      b.launch("scores", {s, Q, Kp({0, j, 0})});
      if (causal) {
        b.launch("mask_causal", {s, Q, Kp({0, j, 0})});
      } else {
        b.launch("mask_keys", {s, Kp({0, j, 0})});
      }
      b.launch("online_softmax", {m, l, o, pr, s, alpha, neg_m});
      b.launch("pv", {o, pr, Vp({0, j, 0})});
    });
    b.launch("normalize", {O, o, l});
  });
  p.entry("attention", {"O", "Q", "K", "V"});
  return p;
}

}  // namespace

TaskProgram attention_tasks(ScalarKind element) {
  return attention(element, false);
}
TaskProgram attention_causal_tasks(ScalarKind element) {
  return attention(element, true);
}

}  // namespace tessel::examples
