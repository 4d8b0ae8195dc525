#!/bin/bash
# Call C of the third 2026-11-29 session (H200), from the repository root (carry .carry-base, the
# tree before the change): schedule-rows' chunked candidate over blocks that fill 7/8 of an SM's
# threads, now only with 4 vectors a thread and always under its launch bound (call B: unbounded
# it ran unchunked; 3 vectors chunked 0.42-0.45): LayerNorm at 8191 x 8200 picks 320 threads x 6
# blocks. Checked against the interpreter, an A/B at 8191 x 8200 against the base, three rounds,
# and the pins of 288 x 7 and 320 x 6 there.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_rows c
ab_rows c 3 "8191x8200" layernorm_auto,softmax_auto,rmsnorm_auto
PLAN="8191x8200:layernorm+reg+t288+b7,layernorm+reg+t320+b6,layernorm+reg+t288+b7,layernorm+reg+t320+b6" \
  CHECK=0 bash scripts/gpu/rows_pins.sh 2>&1 | grep -E "_auto|FAIL|rror"
