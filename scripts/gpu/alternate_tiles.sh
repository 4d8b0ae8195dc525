#!/bin/bash
# alternate-tiles on the device (written without device time, fourteenth 2026-11-29 session): two
# consumer roles taking a persistent block's tiles in turns, one's epilogue beside the other's
# mainloop (src/transforms/async/alternate_tiles.h). One call from the repository root:
#   1. the variants checked on the GPU against the interpreter at ragged sizes (tessel run --gpu
#      --check: poisoned outputs, fresh random inputs), GemmGpuTest.TilesTakenInTurnsByTwoConsumers
#      when .carry-gpu is carried, then compute-sanitizer racecheck and synccheck on one launch of
#      each alternating kernel;
#   2. the GEMM: examples' gemm (128 x 256 over two consumer warpgroups), the 128 x 128 and
#      64 x 256 controls (one consumer warpgroup; the 128 x 128 output stored from registers, the
#      64 x 256 one staged and stored by TMA) and their alternating forms, each against cuBLAS
#      (tessel bench gemm) at SHAPES;
#   3. the LSTM cell (bench/python/lstm_cell.py) at LSTM_SHAPES with the interleaved approx cell,
#      its 64-row control and the 64-row alternating form, against the unfused cuBLAS + PyTorch
#      sequence (issue 11's 1.2x point is 4096x8192x8192).
# Records: $OUT/alternate-check.log, $OUT/alternate-gemm.jsonl, $OUT/alternate-lstm.jsonl.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool_and_python || exit 1
G=bench/kernel-variants/alternate
L=bench/kernel-variants/lstm
{
  check_at_sizes gemm_128x128_alt $G/gemm_128x128_alt.tir M=300,N=520,K=200 M=1000,N=2100,K=520 \
    M=4000,N=4100,K=1000
  check_at_sizes gemm_64x256_alt $G/gemm_64x256_alt.tir M=300,N=520,K=200 M=1000,N=2100,K=520 \
    M=4000,N=4100,K=1000 M=1000,N=2052,K=520
  check_at_sizes gemm_128x128 $G/gemm_128x128.tir M=1000,N=2100,K=520
  check_at_sizes lstm_alt64 $L/lstm_cell_interleaved_approx_alt64.tir B=300,I=136,H=256,T=4 \
    B=1000,I=520,H=1024,T=16
} > $OUT/alternate-check.log 2>&1
summarize_checks $OUT/alternate-check.log
# With .carry-gpu carried (scripts/carry_gpu_tests.sh here): the GPU test against a float64
# reference, both tile shapes, ragged shapes, three launches each.
[ -x .carry-gpu/gemm_gpu_test ] &&
  timeout 300 .carry-gpu/gemm_gpu_test --gtest_filter='*TilesTakenInTurns*' 2>&1 | tail -3
for tool in racecheck synccheck; do
  for g in gemm_128x128_alt gemm_64x256_alt; do
    timeout 120 compute-sanitizer --tool $tool build-dev/bin/tessel run $G/$g.tir \
      --gpu --check --size M=1000,N=2100,K=520 2>&1 | grep -E "SUMMARY|rel" | sed "s/^/$tool $g: /"
  done
  timeout 120 compute-sanitizer --tool $tool build-dev/bin/tessel run \
    $L/lstm_cell_interleaved_approx_alt64.tir --gpu --check --size B=300,I=136,H=256,T=4 2>&1 |
    grep -E "SUMMARY|rel" | sed "s/^/$tool lstm: /"
done
timeout 300 build-dev/bin/tessel bench gemm \
  --kernels gemm,$G/gemm_128x128.tir,$G/gemm_128x128_alt.tir,$G/gemm_64x256.tir,$G/gemm_64x256_alt.tir \
  --iterations 20 --json $OUT/alternate-gemm.jsonl \
  --shapes ${SHAPES:-4096x4096x4096,8192x8192x8192,2048x8192x8192,4096x32768x16384,3000x5000x704} 2>&1 |
  grep -E "ratio|gemm|FAIL" | tail -20
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout 240 python3 bench/python/lstm_cell.py --json $OUT/alternate-lstm.jsonl --iterations 20 \
  --shapes ${LSTM_SHAPES:-4096x8192x8192,1024x8192x8192} \
  --variants $L/lstm_cell_interleaved_approx.tir $L/lstm_cell_interleaved_approx_m64.tir \
  $L/lstm_cell_interleaved_approx_alt64.tir 2>&1 | grep -E "ms|FAIL|ratio" | head -12
