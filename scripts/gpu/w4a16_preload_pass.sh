#!/bin/bash
# W4A16 with `overlap_launches = preload` (the pass form of the hand-made preload of
# bench/results/2026-11-28-w4a16-preload-ready-h100.md: each producer's first ring-depth weight
# and scale loads issued before the launch's grid_wait), one device call from the repository root
# (carry [".carry-gpu"]), within the 600 s a call may run:
# round 1: overlap_gpu_test; every variant checked against the interpreter on the GPU;
#   compute-sanitizer (memcheck, racecheck, synccheck) on the 8-token preload; then the 8-token
#   variant at M = 1 and 8 and the 16-token one at M = 16, each with and without the preload, as
#   CUDA graphs of 8 launches over four weight copies;
# round 2: the 8-token pair at M = 1 and 8 again (the bar's figures: 0.8 of a copy at
#   M = 1 ... 16; 0.79 / 0.77 before, 0.3 µs a launch short at M = 1 and 8).
set -u
here=$(dirname "$0")
A=c64x8_k256_h2_w3_p1_st8
B=c64x16_k256_h2_w3_p1_st6
echo "== round 1"
TESTS=overlap SAN=1 CHECK_ALL=1 BENCH_TIMEOUT=200 \
  VARIANTS=${A}_ovpreload,$A,${B}_ovpreload,$B SHAPES=1x8192x8192g128,8x8192x8192g128,16x8192x8192g128 \
  timeout 380 bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|relative error|rc=|SUMMARY|FAIL|rror"
echo "== round 2"
TESTS=0 SAN=0 BENCH_TIMEOUT=120 VARIANTS=${A}_ovpreload,$A SHAPES=1x8192x8192g128,8x8192x8192g128 \
  timeout 140 bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|FAIL|rror"
