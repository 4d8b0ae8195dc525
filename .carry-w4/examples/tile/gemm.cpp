// GEMM and its variants in the tile language.
#include <cmath>

#include "kernels.h"

namespace tessel::examples {

TileKernel gemm(ScalarKind in, ScalarKind out, GemmTiles t) {
  return tile_kernel("gemm", [&](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N"), K = b.size("K");
    auto A = b.global("A", in, {M, K}), B = b.global("B", in, {N, K}),
         C = b.global("C", out, {M, N});
    auto [i, j] = b.block_grid(cdiv(M, t.bm), cdiv(N, t.bn));
    auto acc = b.fill(f32, {t.bm, t.bn}, 0.0);
    acc = b.loop(cdiv(K, t.bk), acc, [&](Index k, Tensor acc) {
      auto a = b.copy(A.tile({t.bm, t.bk}, {i, k}, masked()), Shared);
      auto w = b.copy(B.tile({t.bn, t.bk}, {j, k}, masked()), Shared);
      return b.mma(a, transpose(w), acc);
    });
    b.copy(b.cast(acc, out), C.tile({t.bm, t.bn}, {i, j}, masked()));
  });
}

TileKernel batched_gemm(ScalarKind in, GemmTiles t) {
  return tile_kernel("batched_gemm", [&](TileBuilder& b) {
    auto Bt = b.size("Bt"), M = b.size("M"), N = b.size("N"), K = b.size("K");
    auto A = b.global("A", in, {Bt, M, K}), B = b.global("B", in, {Bt, N, K});
    auto C = b.global("C", in, {Bt, M, N});
    auto [z, i, j] = b.block_grid(Index(Bt), cdiv(M, t.bm), cdiv(N, t.bn));
    TileOptions edge = masked();
    edge.squeeze = {0};
    auto acc = b.loop(cdiv(K, t.bk), b.fill(f32, {t.bm, t.bn}, 0.0), [&](Index k, Tensor acc) {
      auto a = b.copy(A.tile({1, t.bm, t.bk}, {z, i, k}, edge), Shared);
      auto w = b.copy(B.tile({1, t.bn, t.bk}, {z, j, k}, edge), Shared);
      return b.mma(a, transpose(w), acc);
    });
    b.copy(b.cast(acc, in), C.tile({1, t.bm, t.bn}, {z, i, j}, edge));
  });
}

TileKernel dual_gemm(ScalarKind in, GemmTiles t) {
  return tile_kernel("dual_gemm", [&](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N"), K = b.size("K");
    auto A = b.global("A", in, {M, K}), B1 = b.global("B1", in, {N, K}),
         B2 = b.global("B2", in, {N, K});
    auto C = b.global("C", in, {M, N});
    auto [i, j] = b.block_grid(cdiv(M, t.bm), cdiv(N, t.bn));
    auto zero = b.fill(f32, {t.bm, t.bn}, 0.0);
    auto accs = b.loop(cdiv(K, t.bk), {zero, zero}, [&](Index k, std::vector<Tensor> acc) {
      auto a = b.copy(A.tile({t.bm, t.bk}, {i, k}, masked()), Shared);
      auto w1 = b.copy(B1.tile({t.bn, t.bk}, {j, k}, masked()), Shared);
      auto w2 = b.copy(B2.tile({t.bn, t.bk}, {j, k}, masked()), Shared);
      return std::vector<Tensor>{b.mma(a, transpose(w1), acc[0]), b.mma(a, transpose(w2), acc[1])};
    });
    b.copy(b.cast(accs[0] + accs[1], in), C.tile({t.bm, t.bn}, {i, j}, masked()));
  });
}

TileKernel gemm_rowsum(ScalarKind in, GemmTiles t) {
  return tile_kernel("gemm_rowsum", [&](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N"), K = b.size("K");
    auto A = b.global("A", in, {M, K}), B = b.global("B", in, {N, K});
    auto C = b.global("C", in, {M, N}), R = b.global("R", f32, {M});
    auto [i, j] = b.block_grid(cdiv(M, t.bm), cdiv(N, t.bn));
    auto out =
        b.loop(cdiv(K, t.bk), {b.fill(f32, {t.bm, t.bn}, 0.0), b.fill(f32, {t.bm}, 0.0)},
               [&](Index k, std::vector<Tensor> carried) {
                 auto a = b.copy(A.tile({t.bm, t.bk}, {i, k}, masked()), Shared);
                 auto w = b.copy(B.tile({t.bn, t.bk}, {j, k}, masked()), Shared);
                 auto rows = b.reduce_sum(b.cast(b.copy(a, Register), f32), {1});
                 return std::vector<Tensor>{b.mma(a, transpose(w), carried[0]), carried[1] + rows};
               });
    b.copy(b.cast(out[0], in), C.tile({t.bm, t.bn}, {i, j}, masked()));
    auto first_column = compare(b.as_tensor(j), b.as_tensor(b.index(0)), "eq");
    b.if_then_else(
        first_column,
        [&] {
          b.copy(out[1], R.tile({t.bm}, {i}, masked()));
          return std::vector<Tensor>{};
        },
        nullptr);
  });
}

TileKernel gemm_bias_relu(ScalarKind in, GemmTiles t) {
  return tile_kernel("gemm_bias_relu", [&](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N"), K = b.size("K");
    auto A = b.global("A", in, {M, K}), B = b.global("B", in, {N, K});
    auto bias = b.global("bias", in, {N}), C = b.global("C", in, {M, N});
    auto [i, j] = b.block_grid(cdiv(M, t.bm), cdiv(N, t.bn));
    auto acc = b.loop(cdiv(K, t.bk), b.fill(f32, {t.bm, t.bn}, 0.0), [&](Index k, Tensor acc) {
      auto a = b.copy(A.tile({t.bm, t.bk}, {i, k}, masked()), Shared);
      auto w = b.copy(B.tile({t.bn, t.bk}, {j, k}, masked()), Shared);
      return b.mma(a, transpose(w), acc);
    });
    auto bv = b.cast(b.copy(bias.tile({t.bn}, {j}, masked())), f32);
    auto y = max(acc + b.broadcast(bv, {t.bm, t.bn}, {0}), 0.0);
    b.copy(b.cast(y, in), C.tile({t.bm, t.bn}, {i, j}, masked()));
  });
}

TileKernel gemm_int4(int64_t group, GemmTiles t) {
  return tile_kernel("gemm_int4", [&](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N"), K = b.size("K", divisible_by(group));
    auto A = b.global("A", f16, {M, K}), W = b.global("W", i4, {N, K});
    auto groups = b.size("G");
    auto S = b.global("S", f16, {N, groups}), C = b.global("C", f16, {M, N});
    auto [i, j] = b.block_grid(cdiv(M, t.bm), cdiv(N, t.bn));
    TileOptions column = masked();
    column.squeeze = {1};
    auto acc = b.loop(cdiv(K, group), b.fill(f32, {t.bm, t.bn}, 0.0), [&](Index k, Tensor acc) {
      auto a = b.copy(A.tile({t.bm, group}, {i, k}, masked()), Shared);
      auto q = b.copy(W.tile({t.bn, group}, {j, k}, masked()), Register);
      auto scale = b.copy(S.tile({t.bn, 1}, {j, k}, column), Register);
      auto w = b.cast(q, f16) * b.broadcast(scale, {t.bn, group}, {1});
      return b.mma(a, transpose(w), acc);
    });
    b.copy(b.cast(acc, f16), C.tile({t.bm, t.bn}, {i, j}, masked()));
  });
}

TileKernel gemv(ScalarKind in, int64_t bm, int64_t bk) {
  return tile_kernel("gemv", [&](TileBuilder& b) {
    auto M = b.size("M"), K = b.size("K");
    auto A = b.global("A", in, {M, K}), x = b.global("x", in, {K}), y = b.global("y", f32, {M});
    auto [i] = b.block_grid(cdiv(M, bm));
    auto acc = b.loop(cdiv(K, bk), b.fill(f32, {bm}, 0.0), [&](Index k, Tensor acc) {
      auto a = b.cast(b.copy(A.tile({bm, bk}, {i, k}, masked())), f32);
      auto v = b.cast(b.copy(x.tile({bk}, {k}, masked())), f32);
      return acc + b.reduce_sum(a * b.broadcast(v, {bm, bk}, {0}), {1});
    });
    b.copy(acc, y.tile({bm}, {i}, masked()));
  });
}

}  // namespace tessel::examples
