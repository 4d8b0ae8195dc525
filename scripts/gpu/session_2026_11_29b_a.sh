#!/bin/bash
# Call A of the second 2026-11-29 session (H200), from the repository root: tessel's emitted
# LayerNorm (row in registers, 1024 threads, 2 blocks a SM) compiled by nvcc beside edited copies
# of it and the hand-written register form, against both copy kernels in one process
# (scripts/gpu/rows_emitted_probe.cu); then the bench's own figure for the same kernel.
# Since the review after call J this runs scripts/gpu/rows_emitted.sh (the probe's one driver);
# the tree of the call, in the record, has the script as it ran.
set -u
bash "$(dirname "$0")/rows_emitted.sh" 2047x32760:n32k 2048x32768:n32k 2048x32760:n32k
source "$(dirname "$0")/common.sh"
for s in 2047x32760 2048x32768; do
  bench_rows $PWD $s layernorm_auto $OUT/rows-a.jsonl bench
done
