// The epilogues of examples/kernels/gemm_bias_relu.tir and dual_gemm.tir as kernels of their own,
// with the products read from global f32 tensors instead of computed by a mainloop: the
// accumulator load pins the wgmma m64nNk16 accumulator layout over two warpgroups (what synthesis
// gives the mma in the full kernels), and synthesis derives the rest of the epilogue from it. They
// exercise the emitter's epilogue paths (broadcast, elementwise, cast, global <-> register copies
// in the accumulator layout, ragged edges) on their own; used by test/unit/codegen (NVRTC) and
// test/gpu/kernels/gemm_epilogue_gpu_test.cpp (the GPU).
#pragma once

namespace tessel::testing {

// C = relu(P + bias) cast to f16: P [M,N] f32 products, bias [N] f16; 128x256 tiles.
inline const char* kBiasReluEpilogueTir = R"tir(
kernel @bias_relu_epilogue[M, N](%P: global<f32>[M,N], %bias: global<f16>[N], %C: global<f16>[M,N]) {
  %M = size {name = M} : index
  %N = size {name = N} : index
  %c128 = const {value = 128} : index
  %c256 = const {value = 256} : index
  %tiles_m = cdiv %M, %c128 : index
  %tiles_n = cdiv %N, %c256 : index
  %bm, %bn = block_grid %tiles_m, %tiles_n : index, index
  %P_tile = tile %P, %bm, %bn {masked, pad = 0.0, shape = [128,256]} : global<f32>[128,256]
  %acc = copy %P_tile : register<f32, (((4,8,4),2),(2,2,32)):(((256,1,16),64),(128,8,1024))>[128,256]
  %bias_tile = tile %bias, %bn {masked, pad = 0.0, shape = [256]} : global<f16>[256]
  %rbias = copy %bias_tile : register<f16>[256]
  %fbias = cast %rbias : register<f32>[256]
  %bias_rows = broadcast %fbias {dims = [0]} : register<f32>[128,256]
  %h = add %acc, %bias_rows : register<f32>[128,256]
  %f0 = const {value = 0.0} : f32
  %y = max %h, %f0 : register<f32>[128,256]
  %out = cast %y : register<f16>[128,256]
  %C_tile = tile %C, %bm, %bn {masked, pad = 0.0, shape = [128,256]} : global<f16>[128,256]
  copy %out, %C_tile
}
)tir";

// D = silu(G) * U cast to f16: G, U [M,N] f32 products (gate, up); 128x128 tiles.
inline const char* kSiluGateEpilogueTir = R"tir(
kernel @silu_gate_epilogue[M, N](%G: global<f32>[M,N], %U: global<f32>[M,N], %D: global<f16>[M,N]) {
  %M = size {name = M} : index
  %N = size {name = N} : index
  %c128 = const {value = 128} : index
  %tiles_m = cdiv %M, %c128 : index
  %tiles_n = cdiv %N, %c128 : index
  %bm, %bn = block_grid %tiles_m, %tiles_n : index, index
  %G_tile = tile %G, %bm, %bn {masked, pad = 0.0, shape = [128,128]} : global<f32>[128,128]
  %gate = copy %G_tile : register<f32, (((4,8,4),2),(2,2,16)):(((256,1,16),64),(128,8,1024))>[128,128]
  %U_tile = tile %U, %bm, %bn {masked, pad = 0.0, shape = [128,128]} : global<f32>[128,128]
  %up = copy %U_tile : register<f32>[128,128]
  %sig = sigmoid %gate : register<f32>[128,128]
  %silu = mul %gate, %sig : register<f32>[128,128]
  %prod = mul %silu, %up : register<f32>[128,128]
  %out = cast %prod : register<f16>[128,128]
  %D_tile = tile %D, %bm, %bn {masked, pad = 0.0, shape = [128,128]} : global<f16>[128,128]
  copy %out, %D_tile
}
)tir";

}  // namespace tessel::testing
