#!/bin/bash
# Call U of the 2026-11-29 sessions (H200, twelfth session), from the repository root: at
# 3000 x 16376 the row programs keep the row in registers over 512 threads, 2 blocks a SM, and
# lose 4-9% against N = 16384, where the probe's register form (more blocks a SM) loses nothing
# (call T). Do more blocks a SM (more bytes in flight) recover it? Each program pinned to the row
# in registers over 512 threads with blocks_per_sm = 2, 3, 4 (checked against the interpreter at
# ragged sizes), timed at 3000 x 16376 and 3000 x 16384 beside the unpinned programs, two rounds.
set -u
source "$(dirname "$0")/common.sh"
export OUT
ROOT=$PWD
build_tool || { tail -20 $LOG/build.log; exit 1; }
V=""
for B in 2 3 4; do
  mkdir -p /tmp/v$B
  for k in softmax_exp2 rmsnorm layernorm; do
    f=$(registers_variant $k 512 $B /tmp/v$B)
    mv $f /tmp/v$B/${k}_auto_regs512b$B.tir
    V=$V,/tmp/v$B/${k}_auto_regs512b$B.tir
  done
done
for f in /tmp/v*/*_regs512b*.tir; do
  check_at_sizes $(basename $f) $f M=9,N=16376 M=5,N=16384 M=3,N=8184
done > $OUT/check-u.log 2>&1
summarize_checks $OUT/check-u.log
for round in 1 2; do
  for shape in 3000x16376 3000x16384; do
    bench_rows $ROOT $shape softmax_exp2_auto,rmsnorm_auto,layernorm_auto$V $OUT/rows-u.jsonl "$round"
  done
done
