#!/bin/bash
# SM clock and power while the plain GEMM and the fused LSTM cell of the same M, N, K run back to
# back (bench/python/clock_under_load.py), one device call from the repository root.
set -u
source "$(dirname "$0")/common.sh"
build_python || { tail -20 $LOG/pybuild.log; exit 1; }
PYTHONPATH=$PWD/build-py/python:$PWD/bench/python timeout 200 python3 bench/python/clock_under_load.py \
  --launches ${LAUNCHES:-150}
