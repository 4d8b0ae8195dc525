#!/bin/bash
# Attention at short L (issue 12's 1K / 4K bar) on the lent H100, one device call from the
# repository root: builds tessel and the Python extension, runs the carried attention_gpu_test
# (strip -o .carry-gpu/attention_gpu_test build/test/attention_gpu_test), checks every attention
# example and each variant against the interpreter on the GPU, compute-sanitizer on the D = 128
# kernels, then times the examples and the variants against cuDNN in the same process
# (bench/python/attention.py, B = 4, H = 32, D = 128, SHAPES, causal and not). With PROFILE=1, an
# ncu profile of PROFILE_KERNEL (default flash_attention) at BH = 128, L = 1024 with per-SASS stall
# samples ($OUT/fa1k_sass.csv). EXTRA=1 adds D = 64, GQA, bf16 and D = 256.
# Variants (VARIANTS, made by sed from the examples): pingpong = `pingpong = true` on the grid;
# defer = `defer_stores = true` (the opt-in defer-stores pass: tile t's output stored beside tile
# t+1's first wgmma; not measured yet); g4 = raster groups of 4 heads (g4pp: and pingpong; on the causal examples, which have groups of 4
# already, g4 is the example again and g4pp the pingpong variant); divide = the output divided
# per element as the examples did before 827a8f6 (`div %o, %lb`); role = the output's staged
# stores synced and sent by the whole consumer role (`stores_by = role`), as before stage-stores
# went by warpgroup; cast = `cast_at_issue = true` (coarse-pipeline carries P in f32 and converts
# it just before P·V instead of carrying it packed: opt-in, measured slower 2026-11-27);
# nospec = `specialize_masks = false` (the masks stay selects: no per-tile branch, whose join made
# ptxas drain P·V before the next softmax; not measured yet); unswitch = `unswitch_iterations =
# true` (the mask test hoisted over the whole steady iteration, two copies of it: the branch's
# join after the iteration's last wait; not measured yet);
# uvalues / uoff = `uniform_roles = values / off` (the roles' branch on the thread index, the
# per-warpgroup values on the warp-uniform index / neither: bench/results/2026-11-28-uniform-roles-h200.md);
# rotate = `rotate_tiles = true` (rotate-tiles: tile t+1's first key tile
# beside tile t's last P·V; opt-in, measured slower at 1K; not causal: there the key tile count
# depends on the query tile, which the pass refuses with a message). CAUSAL_KERNELS: more .tir files, checked and timed causal;
# KERNELS: more .tir files, checked and timed not causal (e.g. bench/kernel-variants/attention/*b2.tir).
# D256_KERNELS: causal D = 256 files, timed beside the D = 256 causal example.
# CHECK / SANITIZE / SANITIZE_MEM: the examples to check / run under compute-sanitizer's memcheck,
# racecheck and synccheck / under memcheck only.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvidia-smi --query-gpu=name,clocks.sm --format=csv,noheader
build_tool &
build_python &
if [ -x .carry-gpu/attention_gpu_test ]; then
  (timeout 250 .carry-gpu/attention_gpu_test > $OUT/attention_gpu_test.log 2>&1; echo "attention_gpu_test rc=$?" >> $OUT/attention_gpu_test.log) &
fi
wait
grep -E "^\[  (FAILED|PASSED)|Failure|rc=" $OUT/attention_gpu_test.log 2>/dev/null | head -12
ls build-dev/bin/tessel build-py/python/tessel >/dev/null || { tail -20 $LOG/build.log $LOG/pybuild.log; exit 1; }
mkdir -p build-dev/variants
for f in flash_attention flash_attention_causal; do
  for v in ${VARIANTS:-pingpong}; do
    [ $v = rotate ] && [ $f = flash_attention_causal ] && continue  # refused: see above
    case $v in
      pingpong) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, pingpong = true} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {pingpong = true} :/' examples/kernels/$f.tir ;;
      defer) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, defer_stores = true} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {defer_stores = true} :/' examples/kernels/$f.tir ;;
      g4) sed 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {raster_group = 4} :/' examples/kernels/$f.tir ;;
      g4pp) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, pingpong = true} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {raster_group = 4, pingpong = true} :/' examples/kernels/$f.tir ;;
      rotate) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, rotate_tiles = true} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {rotate_tiles = true} :/' examples/kernels/$f.tir ;;
      cast) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, cast_at_issue = true} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {cast_at_issue = true} :/' examples/kernels/$f.tir ;;
      unswitch) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, unswitch_iterations = true} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {unswitch_iterations = true} :/' examples/kernels/$f.tir ;;
      uvalues) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, uniform_roles = values} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {uniform_roles = values} :/' examples/kernels/$f.tir ;;
      uoff) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, uniform_roles = off} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {uniform_roles = off} :/' examples/kernels/$f.tir ;;
      nospec) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, specialize_masks = false} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {specialize_masks = false} :/' examples/kernels/$f.tir ;;
      role) sed -e 's/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, stores_by = role} :/' -e 's/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {stores_by = role} :/' examples/kernels/$f.tir ;;
      divide) sed -e '/^  %one = fill {value = 1.0}/d' -e '/^  %linv = div %one, %l/d' -e 's/^  %lb = broadcast %linv/  %lb = broadcast %l/' -e 's/^  %out = mul %o, %lb/  %out = div %o, %lb/' examples/kernels/$f.tir ;;
    esac > build-dev/variants/${f}_$v.tir
  done
done
for f in ${CHECK:-examples/kernels/flash_attention*.tir} build-dev/variants/*.tir ${CAUSAL_KERNELS:-} ${KERNELS:-} ${D256_KERNELS:-}; do
  size="BH=3,S=1000"; case $f in *varlen*) size="T=700,H=3,B=4";; *gqa*) size="BH=4,BHK=2,S=1000";; *d256*) size="BH=2,S=300";; esac
  echo "$(basename $f) $size: $(timeout 120 build-dev/bin/tessel run $f --gpu --check --size $size 2>&1 | grep -i 'error\|relative\|mismatch' | head -2)"
done
if [ -z "${NO_SANITIZE:-}" ]; then
  for f in ${SANITIZE:-examples/kernels/flash_attention.tir examples/kernels/flash_attention_causal.tir build-dev/variants/flash_attention_pingpong.tir}; do
    for tool in memcheck racecheck synccheck; do
      timeout 100 compute-sanitizer --tool $tool build-dev/bin/tessel run $f --gpu --size BH=3,S=300 > $OUT/san.log 2>&1
      echo "$(basename $f) $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $OUT/san.log)"
    done
  done
  for f in ${SANITIZE_MEM:-}; do  # memcheck only
    timeout 100 compute-sanitizer --tool memcheck build-dev/bin/tessel run $f --gpu --size BH=3,S=300 > $OUT/san.log 2>&1
    echo "$(basename $f) memcheck rc=$? $(grep -E 'ERROR SUMMARY' $OUT/san.log)"
  done
fi
export PYTHONPATH=$PWD/build-py/python
B="python3 bench/python/attention.py --iterations ${ITER:-20} --json $OUT/attention.jsonl"
S="${SHAPES:-4,32,1024,128 4,32,4096,128 4,32,16384,128}"
for v in "" ${VARIANTS:-pingpong}; do
  k=""; [ -n "$v" ] && k="--kernel build-dev/variants/flash_attention_$v.tir"
  kc=""; [ -n "$v" ] && kc="--kernel build-dev/variants/flash_attention_causal_$v.tir"
  echo "== ${v:-examples}"
  timeout 200 $B $k --shapes $S 2>&1 | tail -3
  [ -z "$v" ] || [ -f build-dev/variants/flash_attention_causal_$v.tir ] &&
    timeout 200 $B --causal $kc --shapes $S 2>&1 | tail -3
done
for f in ${CAUSAL_KERNELS:-}; do
  echo "== $f"
  timeout 200 $B --causal --kernel $f --shapes $S 2>&1 | tail -3
done
for f in ${KERNELS:-}; do
  echo "== $f"
  timeout 200 $B --kernel $f --shapes $S 2>&1 | tail -3
done
if [ -n "${D256_KERNELS:-}" ]; then  # causal D = 256: the example, then each file (B = 4, H = 16)
  for f in examples/kernels/flash_attention_causal_d256.tir $D256_KERNELS; do
    echo "== $f"
    timeout 200 $B --causal --kernel $f --shapes 4,16,1024,256 4,16,4096,256 4,16,16384,256 2>&1 | tail -3
  done
fi
if [ -n "${EXTRA:-}" ]; then
  timeout 100 $B --shapes 4,32,4096,64 4,32,16384,64 2>&1 | tail -2
  timeout 100 $B --shapes 4,32,4096,128,8 4,32,16384,128,8 2>&1 | tail -2
  timeout 100 $B --dtype bf16 --shapes 4,32,1024,128 4,32,4096,128 2>&1 | tail -2
  timeout 100 $B --shapes 4,32,1024,256 4,32,4096,256 2>&1 | tail -2
fi
if [ -n "${PROFILE:-}" ]; then
  timeout 200 ncu --kernel-name regex:flash --launch-count 1 --import-source no \
    --section SpeedOfLight --section WarpStateStats --section SourceCounters --section SchedulerStats \
    -o $OUT/fa1k build-dev/bin/tessel run ${PROFILE_KERNEL:-examples/kernels/flash_attention.tir} --gpu --size BH=128,S=1024 > $OUT/ncu_run.log 2>&1
  ncu -i $OUT/fa1k.ncu-rep --page source --csv --print-source sass > $OUT/fa1k_sass.csv 2>&1
  ncu -i $OUT/fa1k.ncu-rep > $OUT/fa1k.txt 2>&1
  grep -E "Duration|Eligible|Active Warps" $OUT/fa1k.txt | head -6
fi
python3 - <<'PY'
import json, os
print("%-34s %-17s %-6s %8s %8s %7s %9s" % ("kernel", "shape", "causal", "ms", "cudnn_ms", "ratio", "rel_err"))
for l in open(os.environ["OUT"] + "/attention.jsonl"):
    r = json.loads(l)
    print("%-34s %-17s %-6s %8.4f %8.4f %7.3f %9.2e" % (r["name"] + ("_bf16" if r["dtype"] == "bf16" else ""), r["shape"], r["causal"], r["ms"],
          r.get("cudnn_ms", 0), r.get("cudnn_ratio", 0), r["rel_err"]))
PY
