#!/bin/bash
# W4A16 variants launched many times on the same inputs (bench/python/w4a16_repeat.py), on the
# lent H100, one device call from the repository root: builds the Python extension, then
# VARIANTS (default: split-k with two blocks an SM, which failed intermittently on 2026-11-27
# before lower-arefs' proxy fence, beside each half alone and two tiles whose consumers do not
# spill) at SHAPE, ROUNDS fresh kernel objects x LAUNCHES launches each. GEMM="PINS;MxNxK"
# also repeats the f16 GEMM example with those pins (e.g. "split_k = 3;256x4096x8192").
set -u
source "$(dirname "$0")/common.sh"
build_python || { tail -20 $LOG/pybuild.log; exit 1; }
cd bench/python
PYTHONPATH=$PWD/../../build-py/python:$PWD timeout ${TIMEOUT:-420} python3 w4a16_repeat.py \
  --variants ${VARIANTS:-t128x64_sk3_b2,t128x64_sk3,t128x64_b2,t64x64_sk3_b2,t128x16_sk3_b2} \
  --shape ${SHAPE:-70x8192x4096g128} --rounds ${ROUNDS:-8} --launches ${LAUNCHES:-200} \
  ${GEMM:+--gemm "$GEMM"}
