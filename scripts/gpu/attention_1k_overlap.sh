#!/bin/bash
# Attention at L = 1K (issue 12's last bar), fifteenth session: does overlapping the first
# softmax of tile t+1 with the last P·V of tile t pay once ptxas does not drain the wgmmas at the
# mask branch's join? One device call from the repository root:
#   variants of examples/kernels/flash_attention.tir (sed on its block_grid): nospec
#   (specialize_masks = false: no per-tile branch, masks as selects every tile), rotate
#   (rotate_tiles = true: the join drains in the rotated transition too), rotnospec (both: the
#   SASS has the next tile's softmax between the waits for its S and for the last P·V), g4pp
#   (raster groups of 4, pingpong), g4rotnospec;
#   1. each checked against the interpreter on the GPU at BH = 3, S = 1000, racecheck and
#      synccheck on rotnospec at S = 300;
#   2. all timed in one process beside cuDNN (bench/python/attention.py --variants) at
#      L = 1K (H = 32, 33) and 4K;
#   3. the SM clock and power while the example and cuDNN each run alone for ~2 s.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool_and_python || exit 1
V=build-dev/variants; mkdir -p $V
for v in "nospec:specialize_masks = false" "rotate:rotate_tiles = true" \
         "rotnospec:rotate_tiles = true, specialize_masks = false" \
         "g4pp:raster_group = 4, pingpong = true" \
         "g4rotnospec:raster_group = 4, rotate_tiles = true, specialize_masks = false"; do
  n=${v%%:*}
  attention_variant fa_$n "${v#*:}"
  echo "fa_$n BH=3,S=1000: $(timeout 100 build-dev/bin/tessel run $V/fa_$n.tir --gpu --check --size BH=3,S=1000 2>&1 | grep -i 'error\|relative' | head -2)"
done
for tool in racecheck synccheck; do
  timeout 100 compute-sanitizer --tool $tool build-dev/bin/tessel run $V/fa_rotnospec.tir --gpu --size BH=3,S=300 > $LOG/san.log 2>&1
  echo "fa_rotnospec $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san.log)"
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout 300 python3 bench/python/attention.py --iterations 30 --json $OUT/attention.jsonl \
  --shapes 4,32,1024,128 4,33,1024,128 4,32,4096,128 \
  --variants $V/fa_nospec.tir $V/fa_rotate.tir $V/fa_rotnospec.tir $V/fa_g4pp.tir $V/fa_g4rotnospec.tir 2>&1 |
  grep -v "^ *$" | tail -20
timeout 60 python3 - <<'PY'
import subprocess, time, statistics, torch, tessel
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q, k, v = (torch.randn(4, 32, 1024, 128, device="cuda", dtype=torch.float16) for _ in range(3))
o = torch.empty_like(q)
kern = tessel.compile(open("examples/kernels/flash_attention.tir").read(), file="flash_attention.tir")
flat = lambda t: t.reshape(-1, 1024, 128)
def cudnn():
    with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
        F.scaled_dot_product_attention(q, k, v)
for name, fn in (("tessel", lambda: kern(flat(q), flat(k), flat(v), flat(o))), ("cudnn", cudnn)):
    for _ in range(50): fn()
    torch.cuda.synchronize()
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=clocks.sm,power.draw", "--format=csv,noheader,nounits",
                            "-lms", "50"], stdout=subprocess.PIPE, text=True)
    t0 = time.time(); n = 0
    while time.time() - t0 < 2.0:
        for _ in range(100): fn()
        torch.cuda.synchronize(); n += 100
    smi.terminate(); lines = smi.communicate()[0].split("\n")
    vals = [tuple(float(x) for x in l.split(",")) for l in lines if l.count(",") == 1]
    vals = vals[4:]  # skip the start
    print("%-6s %d launches in 2 s: SM clock median %.0f MHz (min %.0f), power median %.0f W (max %.0f)" % (
        name, n, statistics.median(c for c, _ in vals), min(c for c, _ in vals),
        statistics.median(p for _, p in vals), max(p for _, p in vals)))
PY
