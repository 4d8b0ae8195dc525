#!/bin/bash
# A/B of issuing W4A16's first ring-depth weight loads before grid_wait (an experiment by hand:
# bench/kernel-variants/w4a16_preload_ready.py), one device call from the repository root: the
# variant V (default c64x16_k256_h2_w3_p2_st6) as compiled, its lowered IR compiled with verify
# only (the same kernel: the control), and that IR with the preload, timed side by side by
# bench/python/w4a16.py as CUDA graphs of 8 launches (each checked against float64 and cuBLAS;
# records in $OUT/w4a16.jsonl), ROUNDS times.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_tool_and_python || exit 1
V=${V:-c64x16_k256_h2_w3_p2_st6}
write_w4a16_variants $V
build-dev/bin/tessel compile build-dev/variants/$V.tir --emit=ir > $OUT/base.lowered.tir || exit 1
python3 bench/kernel-variants/w4a16_preload_ready.py $OUT/base.lowered.tir $OUT/preload.lowered.tir || exit 1
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
cd bench/python
for r in $(seq ${ROUNDS:-2}); do
  echo "== round $r"
  timeout ${BENCH_TIMEOUT:-200} python3 w4a16.py --json $OUT/w4a16.jsonl --iterations ${ITER:-30} \
    --graph 8 --sets 4 --shapes ${SHAPES:-16x8192x8192g128,1x8192x8192g128,16x8192x2048g128} \
    --variants $V,$V@$OUT/base.lowered.tir,$V@$OUT/preload.lowered.tir 2>&1 | grep -E "graph|FAIL|rror"
done
