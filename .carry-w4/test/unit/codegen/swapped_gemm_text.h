// The text of a swapped-operand GEMM, as bench/kernel-variants/make_swap_variants.py writes them:
// C = A·Bᵀ (B [N,K]) or A·B (b_kn: B [K,N]) computed as Cᵀ = B·Aᵀ, `rows` of B as wgmma's M and
// `tokens` of A as its N, the accumulator stored through a register transpose. `grid_pins` goes
// between the braces of the block_grid's attributes ("" for none), e.g. "split_k = auto".
#pragma once

#include <string>

namespace tessel::test_support {

inline std::string swapped_gemm_text(int rows, int tokens, bool b_kn,
                                     const std::string& grid_pins) {
  const std::string r = std::to_string(rows), t = std::to_string(tokens);
  const std::string b_load =
      b_kn ? "    %B_tile = tile %B, %k, %bn {masked, pad = 0.0, shape = [64," + r +
                 "]} : global<f16>[64," + r + "]\n    %sB = copy %B_tile : shared<f16>[64," + r +
                 "]\n    %sW = transpose %sB : shared<f16>[" + r + ",64]\n"
           : "    %B_tile = tile %B, %bn, %k {masked, pad = 0.0, shape = [" + r +
                 ",64]} : global<f16>[" + r + ",64]\n    %sW = copy %B_tile : shared<f16>[" + r +
                 ",64]\n";
  return "kernel @gemm_swap[M, N, K](%A: global<f16>[M,K], %B: global<f16>" +
         std::string(b_kn ? "[K,N]" : "[N,K]") +
         ", %C: global<f16>[M,N]) facts(K % 8 == 0, N % 8 == 0) {\n"
         "  %M = size {name = M} : index\n  %N = size {name = N} : index\n"
         "  %K = size {name = K} : index\n  %rows = const {value = " + r + "} : index\n"
         "  %tokens = const {value = " + t + "} : index\n  %c64 = const {value = 64} : index\n"
         "  %c0 = const {value = 0} : index\n  %c1 = const {value = 1} : index\n"
         "  %tiles_n = cdiv %N, %rows : index\n  %tiles_m = cdiv %M, %tokens : index\n"
         "  %bn, %bm = block_grid %tiles_n, %tiles_m" +
         (grid_pins.empty() ? std::string() : " {" + grid_pins + "}") + " : index, index\n"
         "  %zero = fill {value = 0.0} : register<f32>[" + r + "," + t + "]\n"
         "  %tiles_k = cdiv %K, %c64 : index\n"
         "  %acc = for %k = %c0 to %tiles_k step %c1 iter(%c = %zero) : register<f32>[" + r + "," +
         t + "] {\n" + b_load +
         "    %A_tile = tile %A, %bm, %k {masked, pad = 0.0, shape = [" + t + ",64]} : global<f16>[" +
         t + ",64]\n    %sA = copy %A_tile : shared<f16>[" + t + ",64]\n"
         "    %sAt = transpose %sA : shared<f16>[64," + t + "]\n"
         "    %c_next = mma %sW, %sAt, %c : register<f32>[" + r + "," + t + "]\n"
         "    yield %c_next\n  }\n"
         "  %accT = transpose %acc : register<f32>[" + t + "," + r + "]\n"
         "  %C_tile = tile %C, %bm, %bn {masked, pad = 0.0, shape = [" + t + "," + r +
         "]} : global<f16>[" + t + "," + r + "]\n"
         "  %out = cast %accT : register<f16>[" + t + "," + r + "]\n  copy %out, %C_tile\n}\n";
}

}  // namespace tessel::test_support
