#!/bin/bash
# Issue 12's Triton comparison on the lent H100, one device call from the repository root: the
# attention examples (B = 4, H = 32, D = 128, f16, causal and not, L = SHAPES_L) against cuDNN,
# FlashAttention-2 (both through SDPA) and bench/python/triton_attention.py (a Triton FA2 after the
# tutorial's algorithm, autotuned) in one process (bench/python/attention.py --triton).
# Records under $OUT (attention_triton.jsonl). KERNELS: .tir files timed non-causal in turn
# (default: the example); CAUSAL=0 leaves out the causal examples.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
python3 -c "import triton; print('triton', triton.__version__)"
build_python || { tail -20 $LOG/pybuild.log; exit 1; }
export PYTHONPATH=$PWD/build-py/python
shapes=""
for l in ${SHAPES_L:-1024 4096 16384}; do shapes="$shapes 4,32,$l,128"; done
for k in ${KERNELS:-examples/kernels/flash_attention.tir}; do
  echo "== $k"
  timeout 300 python3 bench/python/attention.py --triton --iterations 20 --kernel $k --shapes $shapes \
    --json $OUT/attention_triton.jsonl
done
if [ "${CAUSAL:-1}" = 1 ]; then
  timeout 300 python3 bench/python/attention.py --triton --iterations 20 --causal --shapes $shapes \
    --json $OUT/attention_triton.jsonl
fi
