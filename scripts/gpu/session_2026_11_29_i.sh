#!/bin/bash
# Call I of the 2026-11-29 session (H200), from the repository root, nothing carried: the Python
# extension built here and python/tests/test_gpu.py run on the GPU (its row-program test now
# expects RMSNorm's chunked register form at 300 x 32760).
set -u
source "$(dirname "$0")/common.sh"
build_python || { tail -20 $LOG/pybuild.log; exit 1; }
cd python/tests && PYTHONPATH=$OLDPWD/build-py/python:$PWD timeout 150 python3 -m unittest -v test_gpu 2>&1 | tail -20
