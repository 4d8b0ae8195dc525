#!/bin/bash
# W4A16 with each part's weights unpacked where its slice stands (the emitter's unpack_at =
# slices, seventeenth session, 2026-11-29) against the same kernels pinned unpack_at = load
# (`_ul`), and K tiles in four 64-column parts that share groups of 128 (`_h4_gs_sg`: four wgmma
# chains a K tile), at M = 1 / 8 / 16, N = K = 8192 and at K = 32768, as graphs of 8 launches
# (records $OUT/w4a16.jsonl; every kernel's output checked against float64 and cuBLAS by the
# bench, every variant against the interpreter on ragged sizes, the default sanitized).
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python > $LOG/build.log 2>&1 || { tail -20 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
echo "tiled_groups against the interpreter: $($T run bench/kernel-variants/gemm_w4a16_tiled_groups.tir --gpu --check --size M=70,N=384,K=1280,KG=10,NQ=3840 2>&1 | grep -E 'relative error|error')"
B=c64x8_k256
V=${B}_h2_gs_w3_p1_st8_ovpreload,${B}_h2_gs_w3_p1_st8_ovpreload_ul
V=$V,${B}_h4_gs_w3_p1_st12_ovpreload_sg,${B}_h4_gs_w3_p1_st12_ovpreload_sg_ul
V=$V,${B}_h2_gs_w4_p1_st8_ovpreload
V=$V,c64x16_k256_h2_gs_w3_p1_st8_ovpreload,c64x16_k256_h2_gs_w3_p1_st8_ovpreload_ul
TESTS=0 SAN=1 CHECK_ALL=1 BENCH_TIMEOUT=330 GRAPH=8 w4a16_check_and_bench $V \
  1x8192x8192g128,8x8192x8192g128,16x8192x8192g128,1x8192x32768g128 2>&1 |
  grep -E "interpreter|rc=|graph of|relative|FAIL|rror|skipped"
