#!/bin/bash
# Call E of the third 2026-11-29 session (H200), from the repository root: LayerNorm at 2047 x
# 32760 (issue 14's last row point at the edge) with every thread's columns rotated to the row's
# 128-byte line (emitted_variants.sh's `rot`: the row's loads and stores on whole lines, the
# weight and bias off theirs), beside the emitted kernel, three rounds, at both chunked schedules.
set -u
cd "$(dirname "$0")/../.."
VARIANTS=emitted,rot ROUNDS=3 bash scripts/gpu/rows_emitted.sh \
  2047x32760:n32k 2048x32768:n32k 3000x16376:n16k 2047x32760:n32k
