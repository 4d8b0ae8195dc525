// FlashAttention-2 forward in the tile language: one block per (head, query tile); an online
// softmax over key tiles keeps the running row max m, row sum l and output accumulator acc.
#include <cmath>

#include "kernels.h"

namespace tessel::examples {

TileKernel flash_attention(bool causal, int64_t bm, int64_t bn, int64_t d) {
  return tile_kernel(causal ? "flash_attention_causal" : "flash_attention", [&](TileBuilder& b) {
    auto H = b.size("H"), S = b.size("S");
    auto Q = b.global("Q", f16, {H, S, d}), K = b.global("K", f16, {H, S, d});
    auto V = b.global("V", f16, {H, S, d}), O = b.global("O", f16, {H, S, d});
    // Causal: query tile i has i + 1 key tiles, so the blocks take them heavy and light in turns,
    // 4 heads at a time (flash_attention_causal.tir's order, written there by hand).
    std::vector<Index> grid = b.grid({H, cdiv(S, bm)}, causal ? GridOrder{4, 1} : GridOrder{});
    Index h = grid[0], i = grid[1];
    TileOptions rows = masked();
    rows.squeeze = {0};
    auto q = b.copy(Q.tile({1, bm, d}, {h, i, 0}, rows), Shared);
    const double scale = 1.0 / std::sqrt(static_cast<double>(d));
    // Key tiles to visit: all of them, or (causal) those that start at or before this tile's last
    // row.
    Index tiles = cdiv(S, bn);
    if (causal) tiles = min(tiles, cdiv((i + 1) * bm, bn));
    auto row = b.iota(ScalarKind::index, {bm, bn}, 0) + b.as_tensor(i * bm);
    auto neg_inf = b.fill(f32, {bm, bn}, -INFINITY);
    auto init = std::vector<Tensor>{b.fill(f32, {bm}, -INFINITY), b.fill(f32, {bm}, 0.0),
                                    b.fill(f32, {bm, d}, 0.0)};
    auto out = b.loop(tiles, init, [&](Index j, std::vector<Tensor> state) {
      auto m = state[0], l = state[1], acc = state[2];
      auto k = b.copy(K.tile({1, bn, d}, {h, j, 0}, rows), Shared);
      auto v = b.copy(V.tile({1, bn, d}, {h, j, 0}, rows), Shared);
      auto s = b.mma(q, transpose(k), b.fill(f32, {bm, bn}, 0.0)) * scale;
      auto col = b.iota(ScalarKind::index, {bm, bn}, 1) + b.as_tensor(j * bn);
      auto keep = col < b.as_tensor(S);
      s = select(keep, s, neg_inf);
      if (causal) s = select(col <= row, s, neg_inf);
      auto m_new = max(m, b.reduce_max(s, {1}));
      auto p = exp(s - b.broadcast(m_new, {bm, bn}, {1}));
      auto alpha = exp(m - m_new);
      auto l_new = l * alpha + b.reduce_sum(p, {1});
      auto scaled = acc * b.broadcast(alpha, {bm, d}, {1});
      auto acc_new = b.mma(b.cast(p, f16), v, scaled);
      return std::vector<Tensor>{m_new, l_new, acc_new};
    });
    auto o = out[2] / b.broadcast(out[1], {bm, d}, {1});
    b.copy(b.cast(o, f16), O.tile({1, bm, d}, {h, i, 0}, rows));
  });
}

}  // namespace tessel::examples
