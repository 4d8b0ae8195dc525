// Row-wise kernels in the tile language: softmax, RMSNorm, LayerNorm. Each block owns `bm` rows
// and walks them in column tiles of `bn`, so any row length works; masked tiles pad the ragged
// last column tile with a value that leaves the reduction unchanged (-inf for max, 0 for sums).
#include <cmath>

#include "kernels.h"

namespace tessel::examples {
namespace {

// The columns of tile `k` that lie inside a row of length n, as an i1 [bm,bn] mask.
Tensor inside_columns(TileBuilder& b, const Tensor& tile, int64_t bm, int64_t bn) {
  auto col = b.iota(ScalarKind::index, {bm, bn}, 1);
  return col < b.as_tensor(tile.extent(1));
}

}  // namespace

TileKernel softmax(ScalarKind in, int64_t bm, int64_t bn) {
  return tile_kernel("softmax", [&](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N");
    auto X = b.global("X", in, {M, N}), Y = b.global("Y", in, {M, N});
    auto [i] = b.block_grid(cdiv(M, bm));
    auto tiles = cdiv(N, bn);
    auto load = [&](Index k, double pad) {
      return b.cast(b.copy(X.tile({bm, bn}, {i, k}, masked(pad))), f32);
    };
    auto row_max = b.loop(tiles, b.fill(f32, {bm}, -INFINITY), [&](Index k, Tensor m) {
      return max(m, b.reduce_max(load(k, -INFINITY), {1}));
    });
    auto m = b.broadcast(row_max, {bm, bn}, {1});
    auto row_sum = b.loop(tiles, b.fill(f32, {bm}, 0.0), [&](Index k, Tensor s) {
      return s + b.reduce_sum(exp(load(k, -INFINITY) - m), {1});
    });
    auto sum = b.broadcast(row_sum, {bm, bn}, {1});
    b.loop(b.index(0), tiles, b.index(1), {}, [&](Index k, std::vector<Tensor>) {
      auto y = exp(load(k, -INFINITY) - m) / sum;
      b.copy(b.cast(y, in), Y.tile({bm, bn}, {i, k}, masked()));
      return std::vector<Tensor>{};
    });
  });
}

TileKernel rmsnorm(ScalarKind in, int64_t bm, int64_t bn) {
  return tile_kernel("rmsnorm", [&](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N");
    auto X = b.global("X", in, {M, N}), w = b.global("w", in, {N}), Y = b.global("Y", in, {M, N});
    auto eps = b.scalar("eps", f32);
    auto [i] = b.block_grid(cdiv(M, bm));
    auto tiles = cdiv(N, bn);
    auto load = [&](Index k) { return b.cast(b.copy(X.tile({bm, bn}, {i, k}, masked())), f32); };
    auto squares = b.loop(tiles, b.fill(f32, {bm}, 0.0), [&](Index k, Tensor s) {
      auto x = load(k);
      return s + b.reduce_sum(x * x, {1});
    });
    auto mean = squares / b.cast(b.as_tensor(N), f32);
    auto r = b.broadcast(rsqrt(mean + eps), {bm, bn}, {1});
    b.loop(b.index(0), tiles, b.index(1), {}, [&](Index k, std::vector<Tensor>) {
      auto wv = b.broadcast(b.cast(b.copy(w.tile({bn}, {k}, masked())), f32), {bm, bn}, {0});
      b.copy(b.cast(load(k) * r * wv, in), Y.tile({bm, bn}, {i, k}, masked()));
      return std::vector<Tensor>{};
    });
  });
}

TileKernel layernorm(ScalarKind in, int64_t bm, int64_t bn) {
  return tile_kernel("layernorm", [&](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N");
    auto X = b.global("X", in, {M, N}), w = b.global("w", in, {N}), bias = b.global("b", in, {N});
    auto Y = b.global("Y", in, {M, N});
    auto eps = b.scalar("eps", f32);
    auto [i] = b.block_grid(cdiv(M, bm));
    auto tiles = cdiv(N, bn);
    auto n = b.cast(b.as_tensor(N), f32);
    auto load = [&](Index k) { return b.cast(b.copy(X.tile({bm, bn}, {i, k}, masked())), f32); };
    auto sum = b.loop(tiles, b.fill(f32, {bm}, 0.0),
                      [&](Index k, Tensor s) { return s + b.reduce_sum(load(k), {1}); });
    auto mean = b.broadcast(sum / n, {bm, bn}, {1});
    // Padded columns would contribute (0 - mean)²: select them away.
    auto zero = b.fill(f32, {bm, bn}, 0.0);
    auto var_sum = b.loop(tiles, b.fill(f32, {bm}, 0.0), [&](Index k, Tensor s) {
      auto tile = X.tile({bm, bn}, {i, k}, masked());
      auto d = select(inside_columns(b, tile, bm, bn), load(k) - mean, zero);
      return s + b.reduce_sum(d * d, {1});
    });
    auto r = b.broadcast(rsqrt(var_sum / n + eps), {bm, bn}, {1});
    b.loop(b.index(0), tiles, b.index(1), {}, [&](Index k, std::vector<Tensor>) {
      auto wv = b.broadcast(b.cast(b.copy(w.tile({bn}, {k}, masked())), f32), {bm, bn}, {0});
      auto bv = b.broadcast(b.cast(b.copy(bias.tile({bn}, {k}, masked())), f32), {bm, bn}, {0});
      auto y = (load(k) - mean) * r * wv + bv;
      b.copy(b.cast(y, in), Y.tile({bm, bn}, {i, k}, masked()));
      return std::vector<Tensor>{};
    });
  });
}

}  // namespace tessel::examples
