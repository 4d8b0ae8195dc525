// Instruction atoms: the single CUDA instructions that tessel lowers copies, mmas and reductions
// to, each with its fixed thread-value contract.
//
// An atom is Graphene's *atomic spec* (paper 002 §4) and CuTe's Copy_Atom / MMA_Atom: one
// instruction, executed together by a fixed group of threads (one thread, a warp of 32, a
// warpgroup of 128), that moves or multiplies a small fixed tile. Its contract is stated with
// thread-value layouts (layout/tv_layout.h): a copy atom has a source and a destination TV layout
// `(T,V) -> tile`, both over the same tile, saying which element each thread supplies from the
// source and which one it receives in the destination; an mma atom has three, for A (M,K), B (N,K)
// and C (M,N). The tile index is colexicographic: element (r, c) of an (R, C) tile is r + R*c. The
// value mode counts elements of `elem_bits` bits; a per-thread vector is the first `vector_elems`
// values of the value mode, which the contract requires to be contiguous and aligned in memory.
//
// Operands that the hardware reads through a descriptor (wgmma's shared-memory A and B) are not
// distributed over threads: their TV layout has a single thread (1,(M,K)) — the warpgroup reads
// the operand as a whole and no thread holds any of it — and the real contract is the canonical
// swizzled shared layout that transforms/layout/shared_layout.h produces. TMA is issued by one
// thread for a whole box, so its TV layouts are (1, box) with a swizzle on the shared side.
//
// The thread layouts and TV layouts below are the documented ones (PTX ISA fragment figures,
// CuTe's mma/copy traits, /work/shared/HOPPER.md); test/unit/target checks every one of them
// element by element against the formulas stated there. `cost` feeds the analytic latency model
// of instruction selection; its figures are estimates for an H100 at ~1.7 GHz (they rank choices,
// they do not predict run time), and every atom prints them.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/type.h"
#include "layout/swizzle.h"
#include "layout/tv_layout.h"

namespace tessel::target::cuda {

enum class AtomKind { copy, mma, reduce };

// The analytic latency model's view of one instruction issue.
struct AtomCost {
  double issue_cycles = 1;    // cycles the issuing unit is busy (reciprocal throughput per SM)
  double latency_cycles = 1;  // cycles from issue until the result can be used
  std::string str() const;    // "issue 4 cyc, latency 33 cyc"
};

struct Atom {
  std::string name;  // PTX-like, e.g. "ldmatrix.x4.b16", "wgmma.m64n256k16.f32.f16.ss"
  AtomKind kind = AtomKind::copy;
  int min_sm = 80;        // the first architecture that has it (80, 90 = sm_90a)
  int group_threads = 1;  // threads that execute one instance together (1, 32, 128)
  // Atom thread index -> thread index within the executing group (identity for the atoms here;
  // kept explicit because Graphene's thread groups may be strided).
  layout::Layout thread_layout;

  // copy / reduce: source and destination contracts over the tile `src.tile_shape()`.
  std::optional<layout::TVLayout> src, dst;
  ir::MemorySpace src_space = ir::MemorySpace::reg, dst_space = ir::MemorySpace::reg;
  int elem_bits = 16;    // the unit the value modes count
  int vector_elems = 1;  // contiguous elements per thread address (per 16-byte row for ldmatrix)
  int align_bytes = 1;   // alignment of each thread's address
  bool transposed = false;
  // TMA: the box (tile extents, colexicographic) and the shared-side swizzle (identity if none).
  layout::Swizzle swizzle;

  // mma: A (M,K), B (N,K), C (M,N) contracts.
  std::optional<layout::TVLayout> a, b, c;
  int m = 0, n = 0, k = 0;
  ir::ScalarKind ab_type = ir::ScalarKind::f16, acc_type = ir::ScalarKind::f32;
  bool a_in_registers = false;  // mma.sync always; wgmma RS form

  AtomCost cost;

  int vector_bytes() const { return vector_elems * elem_bits / 8; }
  // Bytes moved (copy) or multiply-adds done (mma) by one instance.
  int64_t work() const;
  // One line: name, group, layouts and cost.
  std::string str() const;
};

// ---- Copy atoms ---------------------------------------------------------------------------------

// ld/st of `bytes` (1, 2, 4, 8, 16) by one thread between `src` and `dst` (global <-> register,
// shared <-> register) of `elem_bits`-bit elements: TV (1,V):(0,1) over (V).
Atom vector_copy(ir::MemorySpace src, ir::MemorySpace dst, int bytes, int elem_bits);
// cp.async.{ca,cg}.shared.global of 4, 8 or 16 bytes: global -> shared without registers.
Atom cp_async(int bytes, int elem_bits);
// ldmatrix.sync.aligned.m8n8.x{1,2,4}[.trans].shared.b16: shared -> register, one warp.
// Matrix j of the tile sits at rows 8*(j&1), columns 8*(j>>1) of a (8*min(count,2),
// 8*ceil(count/2)) tile (x4 is 16x16, x2 is 16x8, x1 is 8x8); lanes 8j..8j+7 give the 16-byte rows
// of matrix j.
Atom ldmatrix(int count, bool trans);
// stmatrix: the same contract, register -> shared (sm_90).
Atom stmatrix(int count, bool trans);
// cp.async.bulk.tensor (TMA) of a 2-D box {rows, cols} (cols contiguous in global memory, as the
// box's inner dimension) with a shared-side swizzle of 0, 32, 64 or 128 bytes. UserError when the
// box breaks TMA's rules (extents 1..256, inner bytes a multiple of 16 and within the swizzle
// span).
Atom tma_copy(bool load, int64_t rows, int64_t cols, int elem_bits, int swizzle_bytes);
// cp.async.bulk.tensor.1d (TMA) of a box of `extent` contiguous elements, unswizzled: a vector
// tile (a bias row or column). The tensor map of a 1-D tensor has no stride, so only the base
// address needs 16-byte alignment; elements past the end read as zeros. UserError unless the
// extent is 1..256 and the box a multiple of 16 bytes.
Atom tma_copy_1d(bool load, int64_t extent, int elem_bits);

// ---- MMA atoms ----------------------------------------------------------------------------------

// mma.sync.aligned.m16n8k16.row.col.f32.{f16,bf16}: one warp; A, B, C in registers.
Atom mma_sync_m16n8k16(ir::ScalarKind ab);
// mma.sync.aligned.m16n8k32.row.col.f32.{e4m3,e5m2} (sm_89 and later): one warp; the 8-bit
// fragments of PTX's m16n8k32 figures (4 elements per 32-bit register).
Atom mma_sync_m16n8k32_fp8(ir::ScalarKind ab);
// wgmma.mma_async m64nNk16 (f16/bf16, f32 accumulator) or m64nNk32 (f8e4m3/f8e5m2): one
// warpgroup; B from shared memory, A from shared (`a_in_registers` false) or registers.
// UserError when N is not a multiple of 8 in [8, 256] or the type has no wgmma.
Atom wgmma(ir::ScalarKind ab, int n, bool a_in_registers);

// ---- Reduction atoms ----------------------------------------------------------------------------

// shfl.sync.bfly.b32 butterfly over `lanes` (2..32, a power of two) lanes: log2(lanes) shuffles
// leave every lane of each group with the group's reduction. TV: source (lanes,1):(1,0) over
// (lanes); destination (lanes,1):(0,0) (the result is broadcast).
Atom warp_shuffle_reduce(int lanes);

}  // namespace tessel::target::cuda
