#!/bin/bash
# After a change to the emitted wgmma code (descriptors as two 32-bit words), one device call
# from the repository root: every carried GPU test binary (correctness; built here, stripped and
# carried: scripts/carry_gpu_tests.sh; carry [".carry-gpu"]), then,
# with the GPU to itself, tessel bench gemm (gemm, gemm_bf16 and the 64-token variant against
# cuBLAS) and bench/python/w4a16.py (VARIANTS at SHAPES against cuBLAS f16 and a copy).
# JSON records in $OUT (gemm.jsonl, few_tokens.jsonl, w4a16.jsonl), logs beside them.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool &
build_python &
TEST_TIMEOUT=${TEST_TIMEOUT:-280} run_gpu_test_binaries  # waits for the builds too
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
T=build-dev/bin/tessel
timeout 150 $T bench gemm --kernels gemm,gemm_bf16 --shapes ${GEMM_SHAPES:-8192x8192x8192,4096x4096x4096,2048x2048x2048} \
  --json $OUT/gemm.jsonl 2>&1 | tail -14
timeout 60 $T bench gemm --kernels bench/kernel-variants/gemm_m64_n32_s16_f4.tir --shapes 64x4096x4096 \
  --json $OUT/few_tokens.jsonl 2>&1 | tail -5
export PYTHONPATH=$PWD/build-py/python
cd bench/python
timeout 200 python3 w4a16.py --json $OUT/w4a16.jsonl --iterations ${ITER:-30} \
  --shapes ${SHAPES:-1x8192x8192g128,16x8192x8192g128} \
  --variants ${VARIANTS:-p64x16,p64x16_sk4_b4,p64x16_k128_sk2_b4,p64x16_k128_sk4_b4,p128x16_sk4_b2} 2>&1 | tail -20
