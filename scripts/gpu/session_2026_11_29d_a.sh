#!/bin/bash
# Call A of the fourth 2026-11-29 session (H200), from the repository root, carrying .carry-gpu
# (scripts/carry_gpu_tests.sh): the alternate-tiles pass measured for the first time
# (scripts/gpu/alternate_tiles.sh), then, with the time left, issue 14's row bar in one run
# (session_2026_11_29_x.sh as CALL=k).
set -u
export OUT
start=$SECONDS
bash scripts/gpu/alternate_tiles.sh
left=$((560 - (SECONDS - start)))
echo "== rows with ${left}s left"
[ $left -gt 120 ] && CALL=k timeout $left bash scripts/gpu/session_2026_11_29_x.sh 2>&1 | tail -30
