#!/bin/bash
# On the lent H100 (device tool), in a copy of the tree: builds tessel, checks the unpinned row
# programs (examples/kernels/*_auto.tir, scheduled by schedule-rows) against the interpreter on
# ragged shapes, and times them against copy16 at N = 1024 ... 32768 (128 MiB per row tensor) and
# at ragged shapes. KERNELS (comma-separated) replaces the four timed. Writes
# $OUT/rows-auto.jsonl, $OUT/bench.log, $OUT/check.log.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 "$LOG/build.log"; exit 1; }
T=build-dev/bin/tessel
KERNELS=${KERNELS:-rmsnorm_auto,layernorm_auto,softmax_auto,bias_gelu_auto}
# SHARED=1: also the variants holding the row in shared memory (bench/kernel-variants/*_auto_shared.tir)
[ "${SHARED:-0}" = 1 ] && KERNELS=$KERNELS,bench/kernel-variants/rmsnorm_auto_shared.tir,bench/kernel-variants/layernorm_auto_shared.tir,bench/kernel-variants/softmax_auto_shared.tir
check_row_programs $([ "${SHARED:-0}" = 1 ] && echo bench/kernel-variants) >"$OUT/check.log" 2>&1
{
  for shape in 65536x1024 32768x2048 16384x4096 8192x8192 4096x16384 2048x32768 \
               8191x8200 2047x32760; do
    timeout ${TIMEOUT:-240} $T bench memory-bound --shape $shape --kernels $KERNELS --json "$OUT/rows-auto.jsonl"
  done
} >"$OUT/bench.log" 2>&1
cat "$OUT/check.log"
grep -E "^device|baselines|_auto|_n8192|^rmsnorm |^softmax |^layernorm |^bias_gelu |FAIL" "$OUT/bench.log"
