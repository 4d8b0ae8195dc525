#!/bin/bash
# Call F of the second 2026-11-29 session (H200), from the repository root: schedule-rows' rows
# fetched whole by cp.async counted from the 128-byte line each row's tile starts in
# (copy_async {from_line}; the probe of call T, 2026-11-29-rows-misaligned-h200.md, read exactly
# the row's L2 sectors so), checked against the interpreter at ragged sizes, then an A/B of
# `tessel bench memory-bound` against .carry-base (the tree before it) at the shapes where the
# softmax programs fetch rows whole and at one where they do not, three rounds.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_rows f check_fetched_whole_rows
ab_rows f 3 "2047x32760 3000x16376 2048x32768 4096x16384 8192x8192" softmax_auto,softmax_exp2_auto
