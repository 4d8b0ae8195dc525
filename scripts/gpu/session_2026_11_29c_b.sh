#!/bin/bash
# Call B of the third 2026-11-29 session (H200), from the repository root (carry .carry-base, the
# tree before the change): (1) does copy16's speed depend on its bytes (the bench's baseline
# copies 0x01 bytes, the row programs random rows; scripts/gpu/copy_data_probe.cu); (2)
# schedule-rows' chunked candidate over blocks that fill 7/8 of an SM's threads (LayerNorm at
# 8191 x 8200 picks 320 threads x 6 blocks, softmax 384 x 5): the row programs checked against
# the interpreter, an A/B at 8191 x 8200 against the base, three rounds, and pins of the other
# chunked block sizes there.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
nvcc -std=c++17 -O3 -arch=sm_90a -Iscripts/gpu scripts/gpu/copy_data_probe.cu -o $LOG/copy_data_probe &&
  $LOG/copy_data_probe 2047x32760 8191x8200 4096x16384 | tee $OUT/copy-data.log
check_rows b
ab_rows b 3 "8191x8200" layernorm_auto,softmax_auto,softmax_exp2_auto,rmsnorm_auto
PLAN="8191x8200:layernorm+reg+t288+b7,layernorm+reg+t384+b5,layernorm+reg+t448+b4,softmax+reg+t288+b7,softmax+reg+t320+b6" \
  CHECK=0 bash scripts/gpu/rows_pins.sh 2>&1 | grep -E "_auto|FAIL|rror"
