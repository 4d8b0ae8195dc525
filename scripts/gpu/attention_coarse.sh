#!/bin/bash
# coarse-pipeline on the lent H100, one device call from the repository root: attention_gpu_test
# (carried: strip -o .carry-gpu/attention_gpu_test build/test/attention_gpu_test; carry
# [".carry-gpu"]), compute-sanitizer on the rotated kernels, then bench/python/attention.py with
# each kernel as compiled (coarse-pipelined) and pinned `coarse_pipeline = false` (the wait-at-use
# loop) in the same process order, B=4 H=32. JSON records in $OUT/attention.jsonl.
# VARIANTS (default "pingpong"; e.g. "sync pingpong"), SHAPES, EXTRA=1 (GQA and bf16 too).
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool &
build_python &
(timeout 200 .carry-gpu/attention_gpu_test > $OUT/attention_gpu_test.log 2>&1; echo "attention_gpu_test rc=$?" >> $OUT/attention_gpu_test.log) &
wait
grep -E "^\[  (FAILED|PASSED|  OK)|Failure|rc=" $OUT/attention_gpu_test.log | head -12
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
mkdir -p build-dev/variants
# Variants by sed: `coarse_pipeline = false` (the wait-at-use loop) and `pingpong = true` (turns).
for f in flash_attention flash_attention_causal flash_attention_d64; do
  sed 's/block_grid %BH, %tiles_q\( {[^}]*}\)\? :/block_grid %BH, %tiles_q {coarse_pipeline = false} :/' examples/kernels/$f.tir > build-dev/variants/${f}_sync.tir
  sed 's/block_grid %BH, %tiles_q\( {[^}]*}\)\? :/block_grid %BH, %tiles_q {pingpong = true} :/' examples/kernels/$f.tir > build-dev/variants/${f}_pingpong.tir
done
grep -h "block_grid" build-dev/variants/*.tir | sort | uniq -c
for f in examples/kernels/flash_attention.tir examples/kernels/flash_attention_causal.tir build-dev/variants/flash_attention_pingpong.tir; do
  for tool in memcheck racecheck synccheck; do
    compute-sanitizer --tool $tool build-dev/bin/tessel run $f --gpu --size BH=3,S=300 > $OUT/san.log 2>&1
    echo "$(basename $f) $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
  done
done
for f in build-dev/variants/*_pingpong.tir; do
  echo "$(basename $f) $(build-dev/bin/tessel run $f --gpu --check --size BH=3,S=1000 2>&1 | grep -i 'error\|relative' | head -2)"
done
export PYTHONPATH=$PWD/build-py/python
B="python3 bench/python/attention.py --iterations 20 --json $OUT/attention.jsonl"
S="${SHAPES:-4,32,1024,128 4,32,4096,128 4,32,16384,128}"
for v in "" ${VARIANTS:-pingpong}; do
  k=""; [ -n "$v" ] && k="--kernel build-dev/variants/flash_attention_$v.tir"
  kc=""; [ -n "$v" ] && kc="--kernel build-dev/variants/flash_attention_causal_$v.tir"
  kd=""; [ -n "$v" ] && kd="--kernel build-dev/variants/flash_attention_d64_$v.tir"
  timeout 200 $B $k --shapes $S 2>&1 | tail -3
  timeout 200 $B --causal $kc --shapes $S 2>&1 | tail -3
  timeout 100 $B $kd --shapes 4,32,4096,64 4,32,16384,64 2>&1 | tail -2
done
[ -n "${EXTRA:-}" ] && { timeout 100 $B --shapes 4,32,4096,128,8 4,32,16384,128,8 2>&1 | tail -2; timeout 100 $B --dtype bf16 --shapes 4,32,4096,128 4,32,16384,128 2>&1 | tail -2; }
