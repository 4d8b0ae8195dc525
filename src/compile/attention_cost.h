// Which of several attention variants to launch at a sequence length before any tuning measured
// them (src/compile/variants.h): FA3's ping-pong schedule at short sequences, the free-running
// warpgroups at long ones.
//
// Measured on the H200 (B = 4, H = 32, D = 128 f16, ratios to cuDNN in one process,
// bench/results/2026-11-29-attention-pingpong-h200.md): examples/kernels/flash_attention.tir
// against its ping-pong form (bench/kernel-variants/attention/flash_attention_g1pp.tir): at
// L = 1K (8 key tiles a query tile) 0.955-0.975 against 1.005-1.011, at 4K (32) 1.009-1.014
// against 1.003-1.009, at 16K (128) 1.108-1.167 against 0.985-1.051. Without the turns the two
// consumer warpgroups meet at every query tile's start and end (the first softmax, the last P·V
// and the store in step, the tensor cores idle), which weighs where a tile has few key tiles;
// with them they stay half an iteration apart, at a cost in the steady loop. So the model prefers
// a variant with pinned turns up to kPingpongKeyTiles key tiles (the longest sequence measured to
// gain) and one without beyond; not measured in between (2K), where tuning decides.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tessel {

struct AttentionTraits {
  bool pingpong = false;  // the grid pins `pingpong = true`
  std::string length;     // the size symbol of the key sequence
  int64_t key_tile = 0;   // keys per iteration of the key loop
};

// The most key tiles a query tile may have for the model to prefer the ping-pong schedule.
constexpr int64_t kPingpongKeyTiles = 8;

// The traits of a tile program with an online-softmax key loop: a `for` holding two mmas and an
// exp or exp2 whose trip count is `cdiv %L, %c` of a size %L and a constant %c; nullopt for
// anything else (a GEMM, a causal loop whose count depends on the query tile, variable lengths).
std::optional<AttentionTraits> attention_traits(const ir::Operation& kernel);

// The model's choice at `sizes`: when every variant has traits, the first whose `pingpong`
// matches the preference above (the first variant if none does); 0 otherwise.
size_t attention_model_choice(const std::vector<std::optional<AttentionTraits>>& traits,
                              const std::map<std::string, int64_t>& sizes);

}  // namespace tessel
