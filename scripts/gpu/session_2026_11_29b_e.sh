#!/bin/bash
# Call E of the second 2026-11-29 session (H200), from the repository root: the emitter fetching a
# chunked run's column vectors 8 bytes at a time beside a held row (LayerNorm's weight and bias at
# 32 registers: no spills; calls C and D measured the edit by hand), checked against the
# interpreter at ragged sizes, then an A/B of `tessel bench memory-bound` against .carry-base
# (the tree before it) at the shapes whose code changes and at two whose code does not, three
# rounds.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_rows e check_at_sizes layernorm examples/kernels/layernorm_auto.tir M=9,N=16376 \
  M=130,N=32760 M=3,N=16384 M=2,N=32768
ab_rows e 3 "2047x32760 3000x16376 4096x16384 2048x32768 8191x8200 8192x8192" layernorm_auto
