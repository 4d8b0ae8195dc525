#!/bin/bash
# A/B of the warp-uniform role dispatch (roles branch on a warp index taken with __shfl_sync, so
# wgmma descriptors and other per-warpgroup values stay in uniform registers: R2UR per kernel
# 275 -> 155 in the batched GEMM, 317 -> 159 in the GEMM example) on one H200, one device call
# from the repository root: the tree before it in .carry-base (`rm -rf .carry-base && mkdir
# .carry-base && git archive BASE | tar -x -C .carry-base`; carry [".carry-base"]) and the working
# tree, both built here, then in turns base, new, base, new (each bench process times its kernel
# against the library in that process: compare the ratios):
#   GEMM example at 4096³, 8192³ and the LSTM cell's 4096x32768x16384; the batched GEMM at
#   12 x 1000³ (gemm_batched_cluster2x1_n8) and 16 x 1024³ (gemm_batched_wg);
#   attention at L = 1K and 4K (the examples, not causal);
#   W4A16 c64x8_k256_h2_w4_p1_st8_ovpreload at M = 1, K = 8192 and 32768 as graphs of 8.
# Each kernel is checked by its bench (float64 samples and the library); the new side's W4A16
# variant also against the interpreter.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_base_and_new || exit 1
V=c64x8_k256_h2_w4_p1_st8_ovpreload
write_w4a16_variants $V
echo "new $V against the interpreter: $(build-dev/bin/tessel run build-dev/variants/$V.tir --gpu --check --size $(w4a16_check_sizes $V) 2>&1 | grep -E 'relative error|rror')"
for round in 1 2; do
  for side in base new; do
    tree=$(side_tree $side)
    T=$tree/build-dev/bin/tessel
    echo "== round $round $side"
    (cd $tree
     timeout 90 $T bench gemm --kernels gemm --iterations 20 --json $OUT/${side}_gemm.jsonl \
       --shapes 4096x4096x4096,8192x8192x8192,4096x32768x16384 2>&1 | grep -E "ratio [0-9]"
     timeout 60 $T bench gemm --kernels bench/kernel-variants/batched/gemm_batched_cluster2x1_n8.tir --batch 12 \
       --shapes 1000x1000x1000 --iterations 30 --json $OUT/${side}_gemm.jsonl 2>&1 | grep -E "ratio [0-9]"
     timeout 60 $T bench gemm --kernels bench/kernel-variants/batched/gemm_batched_wg.tir --batch 16 \
       --shapes 1024x1024x1024 --iterations 30 --json $OUT/${side}_gemm.jsonl 2>&1 | grep -E "ratio [0-9]"
     export PYTHONPATH=$tree/build-py/python:$tree/bench/python
     timeout 100 python3 bench/python/attention.py --iterations 20 --json $OUT/${side}_attention.jsonl \
       --shapes 4,32,1024,128 4,32,4096,128 2>&1 | grep -E "cudnn" | cut -c1-110
     cd bench/python && timeout 120 python3 w4a16.py --json $OUT/${side}_w4a16.jsonl --iterations 30 \
       --graph 8 --sets 4 --shapes 1x8192x8192g128,1x8192x32768g128 --variants $V 2>&1 | grep "graph of" | cut -c1-150)
  done
done
