// The mma instruction-selection candidates of SynthesizeLayouts: atoms tiled over an mma, and cost.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "layout/tv_layout.h"
#include "target/cuda/target.h"

namespace tessel::transforms {

// Model parameters (the pass's rearrange cost and its errors use them too).
inline constexpr double kSharedBytesPerCycle = 128;
// The accumulator registers per thread an mma may take: CUTLASS's budget under a 232-register cap.
inline constexpr int64_t kMaxAccumulatorsPerThread = 128;

// One way to implement an mma: an atom tiled tm x tn over the accumulator, and what it costs.
struct MmaChoice {
  target::cuda::Atom atom;
  int64_t threads = 0;       // the block's threads this choice uses
  int64_t tm = 1, tn = 1;    // executing groups (warps / warpgroups) along M and N
  layout::TVLayout a, b, c;  // fragments over (M,K), (N,K), (M,N)
  bool feasible = true;      // false when it needs too many accumulator registers
  int64_t instructions = 0;  // atom instances per block (whole K)
  double mma_cycles = 0, smem_cycles = 0, cycles = 0;
  std::string str() const;  // the figures, one line
};

// The thread-value layout of an atom tiled over an mma of (M,N,K): C = tile_atom(atom.c), and A
// and B with the groups along N (for A) or M (for B) holding the same fragment (stride-0 threads).
// UserError when the tiling does not divide the shapes.
MmaChoice tile_mma(const target::cuda::Atom& atom, int64_t m, int64_t n, int64_t k, int64_t tm,
                   int64_t tn);
// Every tiling of every mma atom of `target` for the shapes, types and operand places, with its
// cost, cheapest first (infeasible ones last). `threads` 0 means any of 128 or 256.
std::vector<MmaChoice> mma_choices(const target::cuda::Target& target, ir::ScalarKind ab,
                                   ir::ScalarKind acc, int64_t m, int64_t n, int64_t k,
                                   bool a_in_registers, bool b_in_registers, int64_t threads);

}  // namespace tessel::transforms
