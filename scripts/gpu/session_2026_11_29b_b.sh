#!/bin/bash
# Call B of the second 2026-11-29 session (H200): call A's probe (scripts/gpu/rows_emitted_probe.cu)
# with the hand-written LayerNorm at other thread counts (512 x 8 and 256 x 16 vectors a thread) and
# launch bounds of two blocks a SM or more.
# Since the review after call J this runs scripts/gpu/rows_emitted.sh (the probe's one driver);
# the tree of the call, in the record, has the script as it ran.
exec bash "$(dirname "$0")/rows_emitted.sh" 2047x32760:n32k 2048x32768:n32k 2048x32760:n32k
