#!/bin/bash
# The Python-backed `tessel bench` suites on the lent H100, one short run each (a smoke test of
# the commands, not a measurement for bench/results): tessel bench w4a16 and tessel bench moe.
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python || exit 1
export PYTHONPATH=$PWD/build-py/python
T=build-dev/bin/tessel
timeout 120 $T bench w4a16 --shapes 16x8192x8192g128 --variants c64x16_k128_sk3_b4 --iterations 10 2>&1 | tail -3
echo "w4a16 rc=${PIPESTATUS[0]}"
timeout 200 $T bench moe --tokens 64 --weights fp8 --variants t16_r128_b2 --iterations 5 2>&1 | tail -3
echo "moe rc=${PIPESTATUS[0]}"
