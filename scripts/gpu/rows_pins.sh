#!/bin/bash
# The row programs under schedule-rows' pins beside its own choice, on the lent H100 (device tool),
# one call from the repository root: builds tessel, checks the unpinned examples
# (examples/kernels/*_auto.tir) against the interpreter on ragged shapes, then times, per shape,
# the examples as the model schedules them and variants made by sed with pins on the block_grid
# (`hold_rows = registers | shared | none`, `tile_cols = C`), each against copy16 in the same
# process (`tessel bench memory-bound`). Variant names: <kernel>_auto_<pins>, e.g.
# softmax_auto_shared_c2048 = `hold_rows = shared, tile_cols = 2048`; reg = registers, two = none,
# tT = `threads = T`, bB = `blocks_per_sm = B` (the launch bound; at 32 registers or fewer a
# thread the emitter chunks the runs).
# CHECK=0 skips the check (a caller that ran it). Writes $OUT/rows-pins.jsonl, $OUT/rows-pins-check.log, $OUT/rows-pins-bench.log.
# PLAN (default below): "SHAPE:kernel[+pins],..." entries separated by spaces, pins joined by "+",
# e.g. "8191x8200:softmax,softmax+shared+c2048"; an entry with a '/' is a kernel file as it is
# (its reference is the base kernel's its name starts with: bench/harness/memory_kernels.cpp).
# PLAN=h200 is the H200 plan below the default (bench/results/2026-11-28-bars-deeper-rings-h200.md:
# bias + GELU issue-bound, wide rows under 0.95).
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 "$LOG/build.log"; exit 1; }
T=build-dev/bin/tessel
V=build-dev/variants; mkdir -p $V
PLAN=${PLAN:-"4096x16384:rmsnorm,layernorm,softmax,layernorm+reg,softmax+reg
2048x32768:rmsnorm,layernorm,softmax
8191x8200:rmsnorm,layernorm,softmax,bias_gelu,rmsnorm+shared+c2048,softmax+shared+c2048,softmax+shared+c1024,bias_gelu+c256,bias_gelu+c512,bias_gelu+c1024,bias_gelu+c2048
2047x32760:rmsnorm,layernorm,softmax,bias_gelu,bias_gelu+c256,bias_gelu+c1024"}
if [ "$PLAN" = h200 ]; then
  G=bench/kernel-variants/bias_gelu_auto
  PLAN="65536x1024:bias_gelu,${G}_tanh_approx.tir,softmax_exp2
8191x8200:bias_gelu,${G}_tanh_approx.tir,layernorm,layernorm+two,layernorm+shared+c2048,softmax_exp2
4096x16384:layernorm,layernorm+two,layernorm+shared,softmax,softmax_exp2,softmax_exp2+shared,bias_gelu,${G}_tanh_approx.tir
2048x32768:rmsnorm,rmsnorm+two,rmsnorm+reg,rmsnorm+shared+t256,softmax_exp2,softmax_exp2+two,softmax_exp2+shared+t512,layernorm,layernorm+two,bias_gelu,${G}_tanh_approx.tir
2047x32760:rmsnorm,rmsnorm+two,softmax_exp2,softmax_exp2+two,layernorm+two,bias_gelu,${G}_tanh_approx.tir"
fi
# A variant file for "kernel+pin+pin": the pins written on the example's block_grid.
variant() {
  local spec=$1 k=${1%%+*} attrs="" name
  [ "$spec" = "$k" ] && { echo $k; return; }
  name=${k}_auto
  for p in $(echo ${spec#*+} | tr '+' ' '); do
    case $p in
      reg) a="hold_rows = registers"; name=${name}_reg ;;
      shared) a="hold_rows = shared"; name=${name}_shared ;;
      two) a="hold_rows = none"; name=${name}_two ;;
      c*) a="tile_cols = ${p#c}"; name=${name}_$p ;;
      t*) a="threads = ${p#t}"; name=${name}_$p ;;
      b*) a="blocks_per_sm = ${p#b}"; name=${name}_$p ;;
    esac
    attrs="${attrs:+$attrs, }$a"
  done
  sed -e "s/block_grid %rows :/block_grid %rows {$attrs} :/" \
      -e "s/block_grid %rows, %cols :/block_grid %rows, %cols {$attrs} :/" \
      examples/kernels/${k}_auto.tir > $V/$name.tir
  echo $V/$name.tir
}
[ "${CHECK:-1}" = 0 ] || check_row_programs >"$OUT/rows-pins-check.log" 2>&1
for entry in $PLAN; do
  shape=${entry%%:*}; kernels=""
  for spec in $(echo ${entry#*:} | tr ',' ' '); do
    case $spec in
      */*) kernels="$kernels,$spec" ;;  # a kernel file, e.g. bench/kernel-variants/bias_gelu_auto_tanh_approx.tir
      *+*) kernels="$kernels,$(variant $spec)" ;;
      *) kernels="$kernels,${spec}_auto" ;;
    esac
  done
  timeout ${TIMEOUT:-240} $T bench memory-bound --shape $shape --kernels ${kernels#,} --json "$OUT/rows-pins.jsonl"
done >"$OUT/rows-pins-bench.log" 2>&1
[ "${CHECK:-1}" = 0 ] || cat "$OUT/rows-pins-check.log"
grep -E "^baselines|_auto|FAIL" "$OUT/rows-pins-bench.log"
