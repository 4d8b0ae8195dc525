#!/bin/bash
# Call D of the third 2026-11-29 session (H200), from the repository root (carry .carry-base, the
# tree before the change): the emitter now chunks wherever the launch bound leaves 32 registers
# counted as ptxas allocates them (steps of 8: six blocks of 288 or 320 threads get 32, which the
# emitter had counted as 37 / 34 and left unchunked, spilling: 0.26 of a copy in call C).
# LayerNorm at 8191 x 8200 so picks 320 threads x 6 blocks, chunked. Checked against the
# interpreter, an A/B at 8191 x 8200 against the base, three rounds; pins of the other chunked
# block sizes (288 x 7 / 6, and with 3 vectors a thread 384 x 5, 448 x 4) there.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_rows d
ab_rows d 3 "8191x8200" layernorm_auto
PLAN="8191x8200:layernorm+reg+t288+b7,layernorm+reg+t288+b6,layernorm+reg+t384+b5,layernorm+reg+t448+b4,layernorm+reg+t288+b7,layernorm+reg+t288+b6,layernorm+reg+t384+b5,layernorm+reg+t448+b4" \
  CHECK=0 bash scripts/gpu/rows_pins.sh 2>&1 | grep -E "_auto|FAIL|rror"
