#!/bin/bash
# Call F of the third 2026-11-29 session (H200), from the repository root (carry .carry-base, the
# tree before the change): the `rsqrt` op emitted as rsqrtf (one MUFU.RSQ) instead of
# 1.0f / sqrtf (IEEE square root and division with their slow-path calls). The row programs
# checked against the interpreter at ragged sizes, then an A/B of RMSNorm and LayerNorm (the
# programs with an rsqrt) against the base at the wide-row bar shapes, three rounds.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_rows f
ab_rows f 3 "2047x32760 2048x32768 8191x8200 4096x16384 3000x16376" layernorm_auto,rmsnorm_auto
