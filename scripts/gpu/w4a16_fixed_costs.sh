#!/bin/bash
# W4A16's fixed cost per launch, one device call from the repository root:
#   TESTS=1     every carried GPU test binary (scripts/carry_gpu_tests.sh; carry [".carry-gpu"]);
#   CHECK_ALL=1 every variant checked against the interpreter on the GPU (else the first);
#   SAN=1       compute-sanitizer memcheck, racecheck, synccheck on the first of VARIANTS
#               (split-k's partial tiles and arrival counter);
#   then bench/python/w4a16.py over VARIANTS at SHAPES, each timed launch by launch (an event pair
#   around every launch, interleaved with cuBLAS and a copy) and as CUDA graphs of GRAPH launches
#   rotating over 4 weight copies (records in $OUT/w4a16.jsonl). SHAPES over several K give the
#   fixed cost: time = fixed + bytes / rate.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
[ "${TESTS:-0}" = 1 ] && run_gpu_test_binaries
w4a16_check_and_bench "${VARIANTS:-c64x16_k128_sk3_b4,c64x16_k128_sk2_b3_st8}" \
  "${SHAPES:-16x8192x2048g128,16x8192x8192g128,16x8192x32768g128,1x8192x8192g128}"
