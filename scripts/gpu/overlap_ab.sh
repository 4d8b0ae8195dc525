#!/bin/bash
# The same kernels launched overlapping the launch before them and not (TESSEL_OVERLAP_LAUNCHES=0:
# the same cubins without programmatic stream serialization), one device call from the
# repository root: flash-decoding (split + combine) at DECODE_SHAPES, eager and as CUDA graphs
# (records in $OUT/decode_overlap.jsonl and $OUT/decode_serial.jsonl).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_python > /dev/null 2>&1 || { tail -20 $LOG/pybuild.log; exit 1; }
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
cd bench/python
SHAPES=${DECODE_SHAPES:-1,32,8,4096 1,32,8,32768 1,32,32,4096 8,32,8,4096 8,32,32,4096}
for mode in overlap serial; do
  echo "== $mode"
  TESSEL_OVERLAP_LAUNCHES=$([ $mode = overlap ] && echo 1 || echo 0) \
    timeout 240 python3 decode.py --iterations 30 --graph-reps 20 --json $OUT/decode_$mode.jsonl \
    --shapes $SHAPES 2>&1 | tail -12
done
