#!/bin/bash
# Task programs (examples/tasks, issue 13) against their tile-program versions on the lent H100,
# one device call from the repository root: `tessel task NAME` writes the tile IR a task program
# and its default mapping lower to; `tessel bench gemm` checks and times each beside the tile
# example and cuBLAS in one process. Records in $OUT/task.jsonl.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
$T task gemm > build-dev/gemm_task.tir && $T task dual_gemm > build-dev/dual_gemm_task.tir || exit 1
S=8192x8192x8192,8192x8192x4096,4096x4096x4096,8191x4097x520
timeout 280 $T bench gemm --kernels gemm,build-dev/gemm_task.tir --dtype f16 --shapes $S --json $OUT/task.jsonl 2>&1 | grep -v "^ *compile\|again in" | tail -14
timeout 200 $T bench gemm --kernels dual_gemm,build-dev/dual_gemm_task.tir --dtype f16 --shapes 8192x8192x4096,4096x4096x4096 --json $OUT/task.jsonl 2>&1 | grep -v "^ *compile\|again in" | tail -8
