#!/bin/bash
# Call I of the third 2026-11-29 session (H200), from the repository root (carry .carry-base, the
# tree before the change): a chunked run's column vectors beside a held row fetched by 8-byte
# halves only in the first half of the chunks, 16 bytes at a time after (call H: the halves'
# extra load instructions, 2.7x the hand-written kernel's LSU-queue stalls; ptxas spills nothing
# either way, and nothing at 8191 x 8200 where all-halves spilled 8 bytes). LayerNorm checked
# against the interpreter at ragged sizes, then an A/B against the base at its chunked shapes,
# three rounds.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
{
  for s in M=37,N=1048 M=3,N=8184 M=2,N=32760 M=5,N=16384 M=9,N=8200 M=33,N=4096; do
    check_at_sizes layernorm examples/kernels/layernorm_auto.tir $s
  done
  check_at_sizes layernorm examples/kernels/layernorm_auto.tir M=300,N=32760 M=70,N=16376 M=900,N=8200
} > $OUT/check-i.log 2>&1
summarize_checks $OUT/check-i.log
ab_rows i 3 "2047x32760 2048x32768 3000x16376 4096x16384 8191x8200" layernorm_auto
