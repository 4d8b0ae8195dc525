#!/bin/bash
# Call X of the 2026-11-29 sessions (H200, twelfth session), from the repository root: issue 14's
# row bar at the end of the session — every unpinned row program at the eight bar shapes and the
# ragged 3000 x 16376, two rounds, after a check of each against the interpreter at ragged sizes.
set -u
source "$(dirname "$0")/common.sh"
export OUT
ROOT=$PWD
build_tool || { tail -20 $LOG/build.log; exit 1; }
# CALL names the records (check-CALL.log, rows-CALL.jsonl): call J of the second 2026-11-29
# session reran this script as CALL=j.
CALL=${CALL:-x}
check_rows $CALL
K=rmsnorm_auto,layernorm_auto,softmax_auto,softmax_exp2_auto,bias_gelu_auto
for round in 1 2; do
  for shape in 65536x1024 32768x2048 16384x4096 8192x8192 4096x16384 2048x32768 8191x8200 \
               2047x32760 3000x16376; do
    bench_rows $ROOT $shape $K $OUT/rows-$CALL.jsonl "$round"
  done
done
