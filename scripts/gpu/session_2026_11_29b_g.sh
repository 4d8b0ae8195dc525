#!/bin/bash
# Call G of the second 2026-11-29 session (H200), from the repository root: call F's change
# (schedule-rows' fetched-whole rows, copy_async {from_line}) emitted with a constant trip count
# (each thread's accesses rotated by the line's head, not counted from the line with the head
# skipped: call F measured that 1-3% slower everywhere), checked against the interpreter at ragged
# sizes, then an A/B against .carry-base (the tree before from_line), two rounds.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_rows g check_fetched_whole_rows
ab_rows g 2 "2047x32760 3000x16376 2048x32768 4096x16384" softmax_auto,softmax_exp2_auto
