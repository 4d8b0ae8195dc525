#!/bin/bash
# Call C of the second 2026-11-29 session (H200): tessel's emitted LayerNorm at the two chunked
# schedules (1024 threads x 4 vectors, hinted 2047 x 32760; 512 x 4, hinted 3000 x 16376) compiled
# by nvcc beside edited copies (scripts/gpu/emitted_variants.sh; `colhalf`: weight and bias by two
# 8-byte loads a chunk, which ptxas compiles without spills) and the hand-written register forms,
# against both copy kernels in one process (scripts/gpu/rows_emitted_probe.cu).
# Since the review after call J this runs scripts/gpu/rows_emitted.sh (the probe's one driver);
# the tree of the call, in the record, has the script as it ran.
exec bash "$(dirname "$0")/rows_emitted.sh"
