#!/bin/bash
# Call A of the third 2026-11-29 session (H200), from the repository root: what still separates
# tessel's chunked LayerNorm from the hand-written kernel of the same schedule at 2047 x 32760
# (issue 14's last row bar, 0.946-0.954 of a copy): the emitted kernel beside its edited copies
# (rsqrt: 1 / sqrtf by rsqrtf; nofull: no full-tile store version; col16: weight and bias by one
# 16-byte fetch) and the hand-written forms, three rounds, at both chunked schedules; then the
# 8191 x 8200 lead (the chunked form over seven blocks of 288 threads, pinned) beside the model's
# choice.
set -u
cd "$(dirname "$0")/../.."
VARIANTS=emitted,rsqrt,nofull,col16 ROUNDS=3 bash scripts/gpu/rows_emitted.sh \
  2047x32760:n32k 2048x32768:n32k 3000x16376:n16k
PLAN="8191x8200:layernorm,layernorm+reg+t288+b7,layernorm+reg+t288+b6" bash scripts/gpu/rows_pins.sh
