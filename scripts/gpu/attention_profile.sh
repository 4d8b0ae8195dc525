#!/bin/bash
# Attention experiments on the lent H100, one device call from the repository root: the causal
# kernel with its query tiles in reverse order (longest first: the variant made by sed below)
# against the example, and an ncu profile of flash_attention at B*H = 128, L = 4096 (one launch).
set -u
source "$(dirname "$0")/common.sh"
build_tool &
build_python &
wait
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
mkdir -p build-dev/variants
sed -e 's/%h, %i = block_grid %BH, %tiles_q :/%h, %i_grid = block_grid %BH, %tiles_q :/' \
    -e '/%i_grid = block_grid/a\  %q_last = sub %tiles_q, %c1 : index\n  %i = sub %q_last, %i_grid : index' \
    examples/kernels/flash_attention_causal.tir > build-dev/variants/flash_attention_causal_reversed.tir
grep -n "i_grid\|q_last" build-dev/variants/flash_attention_causal_reversed.tir
build-dev/bin/tessel run build-dev/variants/flash_attention_causal_reversed.tir --gpu --check --size BH=3,S=1000 2>&1 | grep -i "error\|relative" | head -2
export PYTHONPATH=$PWD/build-py/python
B="python3 bench/python/attention.py --iterations 20 --json $OUT/attention.jsonl"
S="4,32,1024,128 4,32,4096,128 4,32,16384,128"
timeout 200 $B --causal --kernel build-dev/variants/flash_attention_causal_reversed.tir --shapes $S 2>&1 | tail -3
timeout 200 $B --causal --shapes $S 2>&1 | tail -3
timeout 240 ncu --kernel-name regex:flash --launch-count 1 --section SpeedOfLight --section WarpStateStats --section ComputeWorkloadAnalysis --section Occupancy --section SchedulerStats \
  build-dev/bin/tessel run examples/kernels/flash_attention.tir --gpu --size BH=128,S=4096 > $OUT/ncu.txt 2>&1
grep -E "Duration|Throughput|Pipe|Issue|Stall|Warp Cycles|Eligible|Active Warps|No Eligible|Tensor|Registers|Executed Ipc|One or More" $OUT/ncu.txt | head -60
