#!/bin/bash
# Call E of the eighth 2026-11-28 session (H200), one device call from the repository root
# (~2 minutes): the rows fetched whole into shared memory under pins where the model's choice
# fell short in call D (2026-11-28-rows-h200.md): three blocks a SM instead of two at 2047 x
# 32760 (the probe's 1.003 against the model's 0.907), and the prefetch at 4096 x 16384 and
# 8191 x 8200, where the model keeps the row in registers (softmax_exp2 0.945 there).
set -u
source "$(dirname "$0")/common.sh"
export OUT
PLAN="2047x32760:rmsnorm,rmsnorm+shared+t256,rmsnorm+shared+t512+c8192,softmax_exp2,softmax_exp2+shared+t512+c8192
2048x32768:rmsnorm,rmsnorm+shared+t512+c8192,rmsnorm+shared+t256
4096x16384:rmsnorm,rmsnorm+shared+t512+c8192,softmax_exp2,softmax_exp2+shared,softmax_exp2+shared+t512+c8192,softmax,softmax+shared+t256,layernorm,layernorm+shared
8191x8200:rmsnorm,rmsnorm+shared+t352+c8448,softmax_exp2,softmax_exp2+shared,softmax_exp2+shared+t352+c8448"
CHECK=0 PLAN="$PLAN" bash scripts/gpu/rows_pins.sh 2>&1 | grep -E "^baselines|_auto|FAIL|rror" | cut -c1-112
