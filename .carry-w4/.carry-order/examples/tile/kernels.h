// Example kernels written in the C++ tile language. Each is tested in the CPU interpreter against
// an independent C++ reference on random inputs with sizes that are not tile multiples
// (test/unit/frontend/examples_test.cpp).
#pragma once

#include <cstdint>

#include "tessel/tile.h"

namespace tessel::examples {

struct GemmTiles {
  int64_t bm = 32, bn = 32, bk = 16;
};

// C[M,N] = A[M,K] · B[N,K]ᵀ, inputs of `in` (f16, bf16, f8e4m3), f32 accumulation, output `out`.
TileKernel gemm(ScalarKind in, ScalarKind out, GemmTiles t = {});
// C[b] = A[b] · B[b]ᵀ for each batch b: A [Bt,M,K], B [Bt,N,K], C [Bt,M,N].
TileKernel batched_gemm(ScalarKind in, GemmTiles t = {});
// C = A·B1ᵀ + A·B2ᵀ (two accumulators sharing the A tile).
TileKernel dual_gemm(ScalarKind in, GemmTiles t = {});
// C = A·Bᵀ and R[m] = Σ_k A[m,k] in f32 (Cypress §5.2); the blocks of column 0 write R.
TileKernel gemm_rowsum(ScalarKind in, GemmTiles t = {});
// C = relu(A·Bᵀ + bias[N]) with an f32 epilogue.
TileKernel gemm_bias_relu(ScalarKind in, GemmTiles t = {});
// C = A · dequant(W)ᵀ with A f16 [M,K], W i4 [N,K], S f16 [N,K/group]:
// dequant(W)[n,k] = f16(W[n,k] · S[n, k/group]) (Hexcute §2.1). The K tile is one group.
TileKernel gemm_int4(int64_t group, GemmTiles t = {});
// y[M] = A[M,K] · x[K], f32 accumulation, output f32.
TileKernel gemv(ScalarKind in, int64_t bm, int64_t bk);
// Y = softmax(X) along rows, in three passes over column tiles (max, sum, write).
TileKernel softmax(ScalarKind in, int64_t bm, int64_t bn);
// Y = X · rsqrt(mean(X²) + eps) · w, rows of X, w [N], eps a scalar parameter.
TileKernel rmsnorm(ScalarKind in, int64_t bm, int64_t bn);
// Y = (X - mean) · rsqrt(var + eps) · w + b along rows.
TileKernel layernorm(ScalarKind in, int64_t bm, int64_t bn);
// O = softmax(Q·Kᵀ · scale) · V per head: Q, K, V, O f16 [H,S,D]; online softmax over key tiles
// (FlashAttention-2 forward), optionally causal.
TileKernel flash_attention(bool causal, int64_t bm, int64_t bn, int64_t d);

}  // namespace tessel::examples
