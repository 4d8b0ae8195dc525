// A cost model for GEMM variants: which of several tile programs of one GEMM to launch at a shape
// before any tuning measured them (src/compile/variants.h).
//
// The model, per variant: tiles = ceil(M / tile_m) ceil(N / tile_n) (each count rounded up to
// whole clusters), K blocks = ceil(K / tile_k), parts S (split-K: split-k's own choice,
// max(1, min(SMs / tiles, K blocks / 4, 16)); else 1), units = tiles S over min(units, SMs)
// persistent blocks, each doing ceil(units / blocks) units of ceil(K blocks / S) blocks. A K block
// costs the larger of its tensor-core time (2 tile_m tile_n tile_k flops at a per-SM rate, lower
// for one consumer warpgroup) and its load time: the larger of its bytes at the SM's share of the
// bandwidth and the load latency over the ring's depth (a ring of S slots hides all but 1/S of
// it). The bytes are A's and B's tiles, the one a cluster multicasts divided among its blocks, an
// operand whose rows are not whole 128-byte lines counted twice (a line-crossing row fetches two
// lines). A unit adds a fixed cost (prologue, epilogue, the pipeline filling); a split adds its
// reduction (a fixed part and the partials its last part reads, at one block's pace).
//
// The constants (kGemmCost in gemm_cost.cpp) were fitted with bench/python/gemm_cost_fit.py --fit
// on the per-variant timings (`tuned_ms`) of 576 points: the H200 sweep of all eight families
// (2026-11-28-gemm-sweep-deeper-h200) and three H100 sweeps (2026-11-27-gemm-sweep-roles-h100,
// -a-km-swap-h100, 2026-11-26-gemm-sweep-tuned2-h100, the previous fit's). Choosing by the model
// costs 0.5% against the measured best there (geometric mean; 0.3-0.9% per H200 family, at most
// 1.08x, at 512x512x512 and 64x4096x11008; on the H100 at most 1.11x, at 256x4096x4096), 1.1% on
// the 772 points of the other records that time every variant (H100 and H200, older trees; at most
// 1.36x, at 16x14336x4096 in a sweep of 2026-11-26; it picks the 2x1 cluster, 1.28x faster, at
// 2000x3000x5000, a misaligned shape no fit saw); the previous constants cost 2.5% and 3.1%
// (1.8-2.4% per H200 family, up to 1.27x at 64x4096x11008 and 1.24x at 3000x5000x704):
// bench/results/2026-11-28-gemm-cost-refit-h200.md. One set of constants fits both devices: the
// H200's 1.43x memory bandwidth is no parameter, as scaling the shared bandwidth by it makes the
// H200's choices worse (1.006 -> 1.020); what changed its skinny shapes is the deeper rings, which
// the model sees. It is a default for shapes nobody tuned, not a substitute for `tessel tune`; the
// numbers mean time only up to a scale.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>

#include "ir/ir.h"

namespace tessel {

struct GemmTraits {
  int64_t tile_m = 0, tile_n = 0, tile_k = 0;  // the output tile [tile_m, tile_n] of C [M,N]
  // The rows of the wgmma's accumulator (its M, which sets the consumer warpgroups): tile_m, or
  // tile_n for swapped operands (Cᵀ = B·Aᵀ stored through a register transpose).
  int64_t mma_rows = 0;
  bool split_k = false;       // the grid pins split_k (auto or a count)
  int64_t parts = 0;          // a pinned count of parts; 0 for auto
  std::string m, n, k;        // the size symbols of M, N and K
  int64_t stages = 0;         // the K loop's pinned ring depth; 0: the compiler's (gemm_ring_depth)
  int64_t element_bytes = 2;  // of A's elements (B's are alike in every GEMM the model sees)
  // The size symbol of each operand's contiguous extent, the length of its rows in memory: K for
  // A [M,K], M for A [K,M]; K for B [N,K], N for B [K,N].
  std::string a_row, b_row;
  // The grid's cluster along M and N (1 without clusters): the blocks of a cluster along M share
  // B's tile (multicast), those along N share A's.
  int64_t cluster_m = 1, cluster_n = 1;
};

// The traits of a tile program with one mma whose accumulator is stored to a global tile of its
// shape or of its transpose's (a GEMM with any epilogue, or swapped operands); nullopt for anything
// else (two mmas, no output tile, an extent that is not a size symbol).
std::optional<GemmTraits> gemm_traits(const ir::Operation& kernel);

// The ring depth the model counts for the K loop: the pin, else what pipeline-loops and
// pipeline-arefs give an unpinned ring (as many slots of A's and B's tiles as fit the shared
// memory less the reserve, at most transforms::kMaxStages). An estimate: a kernel that also
// stages its epilogue in shared memory gets fewer (128x128 tiles 6, not 7).
int64_t gemm_ring_depth(const GemmTraits& traits);

// The model's cost (arbitrary units, comparable between variants) at `sizes` on `sms` SMs.
double gemm_cost(const GemmTraits& traits, const std::map<std::string, int64_t>& sizes,
                 int64_t sms);

}  // namespace tessel
