// A cost model for GEMM variants: which of several tile programs of one GEMM to launch at a shape
// before any tuning measured them (src/compile/variants.h).
//
// The model, per variant: tiles = ceil(M / tile_m) ceil(N / tile_n), K blocks = ceil(K / tile_k),
// parts S (split-K: split-k's own choice, max(1, min(SMs / tiles, K blocks / 4, 16)); else 1),
// units = tiles S over min(units, SMs) persistent blocks, each doing ceil(units / blocks) units of
// ceil(K blocks / S) blocks. A K block costs the larger of its tensor-core time (2 tile_m tile_n
// tile_k flops at a per-SM rate, lower for one consumer warpgroup) and its load time
// ((tile_m + tile_n) tile_k 2 bytes at the SM's share of the memory bandwidth); a unit adds a
// fixed cost (prologue, epilogue, the pipeline filling); a split adds its reduction (a fixed part
// and the partials' bytes). The constants were fitted on the H100 (kGemmCost in gemm_cost.cpp)
// to the per-variant timings of the 32-shape sweep
// (bench/results/2026-11-26-gemm-sweep-tuned2-h100.md, the `tuned_ms` of each record): choosing by
// the model costs 0.4% against the measured best (geometric mean over 64 points; at most 1.20x, at
// 3000x5000x704 with B [K,N], where the 2x1 cluster wins for a reason the model does not see:
// misaligned rows). Fitted on one layout and checked on the other: 0.2-0.7%. It is a default for
// shapes nobody tuned, not a substitute for `tessel tune`; the numbers mean time only up to a
// scale. Not modelled yet: a pinned ring depth (`stages`: the 8-stage variants of
// 2026-11-26-gemm-sweep-tuned3-h100.md tie with their originals, which the model then picks,
// 3.1% regret there) and row alignment (clusters).
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
  bool split_k = false;  // the grid pins split_k (auto or a count)
  int64_t parts = 0;     // a pinned count of parts; 0 for auto
  std::string m, n, k;   // the size symbols of M, N and K
};

// The traits of a tile program with one mma whose accumulator is stored to a global tile of its
// shape or of its transpose's (a GEMM with any epilogue, or swapped operands); nullopt for anything else (two mmas, no output tile, an
// extent that is not a size symbol).
std::optional<GemmTraits> gemm_traits(const ir::Operation& kernel);

// The model's cost (arbitrary units, comparable between variants) at `sizes` on `sms` SMs.
double gemm_cost(const GemmTraits& traits, const std::map<std::string, int64_t>& sizes,
                 int64_t sms);

}  // namespace tessel
