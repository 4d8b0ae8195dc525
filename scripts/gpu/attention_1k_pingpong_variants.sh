#!/bin/bash
# Attention at L = 1K with pingpong (issue 12's last bar; fifteenth session): the orders and
# store modes beside pingpong, in one process per round beside cuDNN (attention.py --variants),
# ROUNDS rounds (default 3) at 1K (H = 32) and 4K. Variants by sed on the example's block_grid:
# g4pp (raster groups of 4, pingpong: 0.998-1.006 at 1K in the two calls before), g2pp, g1pp,
# g16pp, g4ppdefer (defer_stores = true), g4pprole (stores_by = role), g4ppuv (uniform_roles =
# values). Each checked against the interpreter at BH = 3, S = 1000 first. ONLY="g1pp g2pp": those
# alone; SHAPES: other shapes.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_tool_and_python || exit 1
V=build-dev/variants; mkdir -p $V
list=""
for v in "g4pp:raster_group = 4, pingpong = true" "g2pp:raster_group = 2, pingpong = true" \
         "g1pp:raster_group = 1, pingpong = true" "g16pp:raster_group = 16, pingpong = true" \
         "g4ppdefer:raster_group = 4, pingpong = true, defer_stores = true" \
         "g4pprole:raster_group = 4, pingpong = true, stores_by = role" \
         "g4ppuv:raster_group = 4, pingpong = true, uniform_roles = values"; do
  n=fa_${v%%:*}
  case " ${ONLY:-${v%%:*}} " in *" ${v%%:*} "*) ;; *) continue ;; esac
  attention_variant $n "${v#*:}"
  echo "$n BH=3,S=1000: $(timeout 100 build-dev/bin/tessel run $V/$n.tir --gpu --check --size BH=3,S=1000 2>&1 | grep -i 'error\|relative' | head -2)"
  list="$list $V/$n.tir"
done
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
for round in $(seq ${ROUNDS:-3}); do
  timeout 200 python3 bench/python/attention.py --iterations 30 --json $OUT/attention.jsonl \
    --shapes ${SHAPES:-4,32,1024,128 4,32,4096,128} --variants $list 2>&1 | grep -E "TFLOP" > /dev/null
done
python3 - <<'PY'
import json, os, collections
r = collections.defaultdict(list)
for l in open(os.environ["OUT"] + "/attention.jsonl"):
    x = json.loads(l); r[(x["name"], x["shape"].split(",")[2])].append(x["cudnn_ratio"])
print("%-24s %6s  cudnn ratios" % ("kernel", "L"))
for k in sorted(r, key=lambda k: (k[1], -min(r[k]))): print("%-24s %6s  %s" % (k[0], k[1], " ".join("%.3f" % v for v in r[k])))
PY
