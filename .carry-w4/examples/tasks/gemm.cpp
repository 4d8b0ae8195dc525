// GEMM as a task program (Cypress Figure 5, with an f32 accumulator): the logical description
// only. Which variant runs where, the tile sizes, the memories, warp specialization and pipeline
// depth are the mapping's (gemm.tmap).
#include "tasks/programs.h"

namespace tessel::examples {

using namespace tessel::task;

// Tasks and leaf variants the GEMM family shares: clear (C = 0), store (dst = src, converted),
// gemm_acc (C += A·Bᵀ), mma_leaf.
static void common_tasks(TaskProgram& p) {
  p.task("clear", {{"C", Privilege::write}});
  p.task("store", {{"dst", Privilege::write}, {"src", Privilege::read}});
  p.task("gemm_acc",
         {{"C", Privilege::read_write}, {"A", Privilege::read}, {"B", Privilege::read}});
  p.leaf("clear", "clear_leaf", [](Leaf& b) { b.fill(b.param("C"), 0.0); });
  p.leaf("store", "store_leaf", [](Leaf& b) { b.copy(b.param("src"), b.param("dst")); });
  p.leaf("gemm_acc", "mma_leaf", [](Leaf& b) { b.mma(b.param("C"), b.param("A"), b.param("B")); });
  // gemm_tile: the block's accumulator split by rows over WGS warpgroups (the paper's gemm_tile:
  // a 128-row tile over 2 warpgroups keeps each thread under 255 registers).
  p.inner("gemm_acc", "gemm_tile", [](Inner& b) {
    auto [C, A, B] = b.params<3>();
    auto WGS = b.tunable("WGS");
    auto Cp = b.blocks(C, {C.dim(0) / WGS, C.dim(1)});
    auto Ap = b.blocks(A, {A.dim(0) / WGS, A.dim(1)});
    b.prange({"w"}, {WGS}, [&](const Indices& w) {
      b.launch("gemm_acc", {Cp({w[0], 0}), Ap({w[0], 0}), B});
    });
  });
  // gemm_atoms: the same split, by the mma partition (Cypress's gemm_inner): one warpgroup per
  // 64 rows of the accumulator, as many as the tile has; B whole for each.
  p.inner("gemm_acc", "gemm_atoms", [](Inner& b) {
    auto [C, A, B] = b.params<3>();
    auto Cp = b.mma_partition(C, MmaOperand::C);
    auto Ap = b.mma_partition(A, MmaOperand::A);
    auto Bp = b.mma_partition(B, MmaOperand::B);
    b.prange({"w"}, {C.dim(0) / 64}, [&](const Indices& w) {
      b.launch("gemm_acc", {Cp({w[0]}), Ap({w[0]}), Bp({w[0]})});
    });
  });
}

TaskProgram gemm_tasks(ScalarKind element) {
  TaskProgram p("gemm");
  p.global("A", element, {"M", "K"});
  p.global("B", element, {"N", "K"});
  p.global("C", element, {"M", "N"});
  p.task("gemm", {{"C", Privilege::write}, {"A", Privilege::read}, {"B", Privilege::read}});
  common_tasks(p);
  // The grid: one task per U×V tile of C, with the rows of A and B it needs.
  p.inner("gemm", "gemm_grid", [](Inner& b) {
    auto [C, A, B] = b.params<3>();
    auto U = b.tunable("U"), V = b.tunable("V");
    auto Cp = b.blocks(C, {U, V});
    auto Ap = b.blocks(A, {U, A.dim(1)});
    auto Bp = b.blocks(B, {V, B.dim(1)});
    b.prange({"i", "j"}, {cdiv(C.dim(0), U), cdiv(C.dim(1), V)}, [&](const Indices& ij) {
      b.launch("gemm", {Cp({ij[0], ij[1]}), Ap({ij[0], 0}), Bp({ij[1], 0})});
    });
  });
  // A block: clear an f32 accumulator, add the products of W-wide slices of A and B in order,
  // store the accumulator into C.
  p.inner("gemm", "gemm_block", [](Inner& b) {
    auto [C, A, B] = b.params<3>();
    auto W = b.tunable("W");
    auto acc = b.make_tensor(ScalarKind::f32, {C.dim(0), C.dim(1)});
    auto Ap = b.blocks(A, {A.dim(0), W});
    auto Bp = b.blocks(B, {B.dim(0), W});
    b.launch("clear", {acc});
    b.srange("k", cdiv(A.dim(1), W), [&](const Expr& k) {
      b.launch("gemm_acc", {acc, Ap({0, k}), Bp({0, k})});
    });
    b.launch("store", {C, acc});
  });
  p.entry("gemm", {"C", "A", "B"});
  return p;
}

TaskProgram dual_gemm_tasks(ScalarKind element) {
  TaskProgram p("dual_gemm");
  p.global("A", element, {"M", "K"});
  p.global("B0", element, {"N", "K"});
  p.global("B1", element, {"N", "K"});
  p.global("D", element, {"M", "N"});
  p.task("dual_gemm", {{"D", Privilege::write},
                       {"A", Privilege::read},
                       {"B0", Privilege::read},
                       {"B1", Privilege::read}});
  // D = silu(G) * U: G is gated in place, so the task reads and writes it.
  p.task("swiglu", {{"D", Privilege::write}, {"G", Privilege::read_write}, {"U", Privilege::read}});
  common_tasks(p);
  p.leaf("swiglu", "swiglu_leaf", [](Leaf& b) {
    b.elementwise(b.param("G"), "silu", {b.param("G")});
    b.elementwise(b.param("D"), "mul", {b.param("G"), b.param("U")});
  });
  p.inner("dual_gemm", "dual_grid", [](Inner& b) {
    auto [D, A, B0, B1] = b.params<4>();
    auto U = b.tunable("U"), V = b.tunable("V");
    auto Dp = b.blocks(D, {U, V});
    auto Ap = b.blocks(A, {U, A.dim(1)});
    auto B0p = b.blocks(B0, {V, B0.dim(1)}), B1p = b.blocks(B1, {V, B1.dim(1)});
    b.prange({"i", "j"}, {cdiv(D.dim(0), U), cdiv(D.dim(1), V)}, [&](const Indices& ij) {
      b.launch("dual_gemm", {Dp({ij[0], ij[1]}), Ap({ij[0], 0}), B0p({ij[1], 0}), B1p({ij[1], 0})});
    });
  });
  // Two accumulators over the same K steps; A's slice is read by both GEMMs (copy elimination
  // loads it once).
  p.inner("dual_gemm", "dual_block", [](Inner& b) {
    auto [D, A, B0, B1] = b.params<4>();
    auto W = b.tunable("W");
    auto gate = b.make_tensor(ScalarKind::f32, {D.dim(0), D.dim(1)});
    auto up = b.make_tensor(ScalarKind::f32, {D.dim(0), D.dim(1)});
    auto Ap = b.blocks(A, {A.dim(0), W});
    auto B0p = b.blocks(B0, {B0.dim(0), W}), B1p = b.blocks(B1, {B1.dim(0), W});
    b.launch("clear", {gate});
    b.launch("clear", {up});
    b.srange("k", cdiv(A.dim(1), W), [&](const Expr& k) {
      b.launch("gemm_acc", {gate, Ap({0, k}), B0p({0, k})});
      b.launch("gemm_acc", {up, Ap({0, k}), B1p({0, k})});
    });
    b.launch("swiglu", {D, gate, up});
  });
  p.entry("dual_gemm", {"D", "A", "B0", "B1"});
  return p;
}

}  // namespace tessel::examples

namespace tessel::examples {

TaskProgram gemm_rowsum_tasks(ScalarKind element) {
  TaskProgram p("gemm_rowsum");
  p.global("A", element, {"M", "K"});
  p.global("B", element, {"N", "K"});
  p.global("C", element, {"M", "N"});
  p.global("y", ScalarKind::f32, {"M", "1"});
  p.task("gemm_rowsum", {{"C", Privilege::write},
                         {"y", Privilege::write},
                         {"A", Privilege::read},
                         {"B", Privilege::read}});
  p.task("rowsum_acc", {{"r", Privilege::read_write}, {"A", Privilege::read}});
  common_tasks(p);
  p.leaf("rowsum_acc", "rowsum_leaf", [](Leaf& b) { b.reduce_sum(b.param("r"), b.param("A"), 1); });
  // The grid: y [M, 1] is cut like C, so that the piece of tile (i, j) is y's rows of block i in
  // column j: only j = 0 lies inside y, and the other blocks' row sums fall outside it (a piece
  // outside its tensor drops its writes). No two launches write the same part of y.
  p.inner("gemm_rowsum", "rowsum_grid", [](Inner& b) {
    auto [C, y, A, B] = b.params<4>();
    auto U = b.tunable("U"), V = b.tunable("V");
    auto Cp = b.blocks(C, {U, V});
    auto yp = b.blocks(y, {U, 1});
    auto Ap = b.blocks(A, {U, A.dim(1)});
    auto Bp = b.blocks(B, {V, B.dim(1)});
    b.prange({"i", "j"}, {cdiv(C.dim(0), U), cdiv(C.dim(1), V)}, [&](const Indices& ij) {
      b.launch("gemm_rowsum",
               {Cp({ij[0], ij[1]}), yp({ij[0], ij[1]}), Ap({ij[0], 0}), Bp({ij[1], 0})});
    });
  });
  // A block: the GEMM's K loop also sums the rows of each A slice it loads (Cypress §5.2: the
  // reduction runs on the SIMT threads while the tensor cores multiply).
  p.inner("gemm_rowsum", "rowsum_block", [](Inner& b) {
    auto [C, y, A, B] = b.params<4>();
    auto W = b.tunable("W");
    auto acc = b.make_tensor(ScalarKind::f32, {C.dim(0), C.dim(1)});
    auto rows = b.make_tensor(ScalarKind::f32, {y.dim(0), 1});
    auto Ap = b.blocks(A, {A.dim(0), W});
    auto Bp = b.blocks(B, {B.dim(0), W});
    b.launch("clear", {acc});
    b.launch("clear", {rows});
    b.srange("k", cdiv(A.dim(1), W), [&](const Expr& k) {
      b.launch("gemm_acc", {acc, Ap({0, k}), Bp({0, k})});
      b.launch("rowsum_acc", {rows, Ap({0, k})});
    });
    b.launch("store", {C, acc});
    b.launch("store", {y, rows});
  });
  p.entry("gemm_rowsum", {"C", "y", "A", "B"});
  return p;
}

}  // namespace tessel::examples
