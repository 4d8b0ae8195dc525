#!/bin/bash
# Call J of the third 2026-11-29 session (H200), from the repository root: LayerNorm at its two
# edge shapes after call I's change (halves only in the first half of a chunked run's chunks),
# four more rounds, the tool alone (no A/B).
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool || { tail -20 $LOG/build.log; exit 1; }
for round in 1 2 3 4; do
  for shape in 2047x32760 8191x8200; do
    bench_rows $PWD $shape layernorm_auto $OUT/rows-j.jsonl "$round"
  done
done
