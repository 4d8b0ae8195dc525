#!/bin/bash
# Attention tile experiments on the lent H100, one device call from the repository root:
# bench/kernel-variants/attention/ (176-key tiles; the output unstaged) against the example, each
# checked against the interpreter and compute-sanitizer, then `tessel bench attention` itself.
set -u
source "$(dirname "$0")/common.sh"
build_tool &
build_python &
wait
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
V=bench/kernel-variants/attention
for f in $V/flash_attention_n176.tir $V/flash_attention_unstaged.tir; do
  echo "$(basename $f) $(build-dev/bin/tessel run $f --gpu --check --size BH=3,S=1000 2>&1 | grep -i 'error\|relative' | head -2)"
  for tool in memcheck racecheck; do
    compute-sanitizer --tool $tool build-dev/bin/tessel run $f --gpu --size BH=3,S=300 > $OUT/san.log 2>&1
    echo "$(basename $f) $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
  done
done
export PYTHONPATH=$PWD/build-py/python
B="python3 bench/python/attention.py --iterations 20 --json $OUT/attention.jsonl"
S="4,32,1024,128 4,32,4096,128 4,32,16384,128"
timeout 150 $B --kernel $V/flash_attention_n176.tir --shapes $S 2>&1 | tail -3
timeout 150 $B --kernel $V/flash_attention_unstaged.tir --shapes $S 2>&1 | tail -3
timeout 150 $B --shapes $S 2>&1 | tail -3
timeout 150 build-dev/bin/tessel bench attention --shapes 2,4,4097,128 --iterations 10 --json $OUT/bench_command.jsonl 2>&1 | tail -3
