#!/bin/bash
# Which half of the warp-uniform role dispatch costs attention at L = 1K ~1% (uniform_warp_ab.sh:
# 0.976 / 0.974 -> 0.965 / 0.963x cuDNN): three trees built on one H200, one device call from the
# repository root (carry [".carry-base", ".carry-mid"]): base (before), mid (roles branch on the
# shfl'd warp index, per-warpgroup values still `tid / 128`), new (the working tree: both), then
# attention at 1K and 4K, not causal, in turns base, mid, new, three rounds.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
ROOT=$PWD
build_side .carry-base base python 5; build_side .carry-mid mid python 5; build_side . new python 5
wait
for round in 1 2 3; do
  for side in base mid new; do
    tree=$ROOT; [ $side = base ] && tree=$ROOT/.carry-base; [ $side = mid ] && tree=$ROOT/.carry-mid
    (cd $tree && export PYTHONPATH=$tree/build-py/python:$tree/bench/python &&
     timeout 60 python3 bench/python/attention.py --iterations 30 --json $OUT/${side}_attention.jsonl \
       --shapes 4,32,1024,128 4,32,4096,128 2>&1 | grep -E "cudnn" | sed "s/^/$side $round /" | cut -c1-100)
  done
done
