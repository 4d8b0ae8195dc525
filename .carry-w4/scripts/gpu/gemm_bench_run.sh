#!/bin/bash
# The compiled GEMMs on the device, measured for bench/results/ (issue 6): builds nothing; carry
# build-lead/bin (a Release build of the tessel tool) and .commit, as final_check.sh does.
#   gemm      tessel bench gemm: gemm + gemm_bf16 (TMA + wgmma) at 8192^3, 8192x8192x4096 and a
#             ragged shape, against cuBLAS interleaved, with a fresh kernel cache (cold compile)
#   extra     the other GEMM kernels of examples/kernels that exist (bias+ReLU, dual, sm_80 path),
#             each in its own process so that one failure does not hide the others
#   hit       a second process: compile times from the disk cache, and in-process hits
#   torch     bench/torch_baselines.py: PyTorch's operators for every family, same shapes
#   summary   one table over all the JSON records above
#   sanitize  compute-sanitizer memcheck and racecheck on each GEMM through `tessel run --gpu
#             --check` (the kernel alone, checked against the interpreter) on ragged shapes
#   tour      the README's main job on the GPU (examples/tour.sh), its GPU part and final table
# Usage (device tool, repo root, carry build-lead/bin .commit):
#   scripts/gpu/gemm_bench_run.sh [steps...]      default: gemm extra hit torch summary
# (about 3 minutes; run `sanitize` and `tour` as separate calls, a few minutes each)
# JSON records land in $OUT (gemm.jsonl, torch.jsonl), logs beside them.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export TESSEL_CACHE_DIR=$(mktemp -d)
export TESSEL_COMMIT=$(cat .commit 2>/dev/null || git rev-parse HEAD 2>/dev/null || echo unknown)
T=build-lead/bin/tessel
K=examples/kernels
steps="${*:-gemm extra hit torch summary}"
echo "commit $TESSEL_COMMIT; steps: $steps"
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
if [ ! -x "$T" ]; then
  echo "no $T: carry build-lead/bin (a Release build of the tessel target)"
  exit 2
fi
status=0
for step in $steps; do
  case $step in
  gemm)
    echo "== tessel bench gemm (f16, bf16; cold compile: fresh cache $TESSEL_CACHE_DIR)"
    timeout 300 $T bench gemm --kernels $K/gemm.tir,$K/gemm_bf16.tir --iterations 100 \
      --json "$OUT/gemm.jsonl" 2>&1 | tee "$OUT/gemm.log"
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
  extra)
    for k in gemm_bias_relu dual_gemm gemm_sm80; do
      [ -f "$K/$k.tir" ] || { echo "== $k: no $K/$k.tir yet"; continue; }
      echo "== tessel bench gemm --kernels $K/$k.tir"
      timeout 200 $T bench gemm --kernels "$K/$k.tir" --iterations 100 \
        --shapes 8192x8192x8192,8192x8192x4096,8191x4097x520 --json "$OUT/gemm.jsonl" 2>&1 |
        tee "$OUT/$k.log"
      [ "${PIPESTATUS[0]}" = 0 ] || status=1
    done
    ;;
  hit)
    echo "== compile times in a second process (disk cache hit), then in-process hits"
    ks=$(ls $K/gemm.tir $K/gemm_bf16.tir $K/gemm_bias_relu.tir $K/dual_gemm.tir $K/gemm_sm80.tir \
      2>/dev/null | paste -sd,)
    $T bench gemm --compile-only --kernels "$ks" 2>&1 | tee "$OUT/compile_hit.log" | grep -E "compile|FAILED"
    ;;
  torch)
    echo "== PyTorch baselines"
    timeout 400 python3 bench/torch_baselines.py --json "$OUT/torch.jsonl" 2>&1 | tee "$OUT/torch.log"
    ;;
  summary)
    echo "== summary"
    files=$(ls "$OUT/gemm.jsonl" "$OUT/torch.jsonl" 2>/dev/null)
    [ -n "$files" ] && $T bench summary $files | tee "$OUT/summary.txt"
    ;;
  sanitize)
    for k in gemm gemm_bf16 gemm_bias_relu dual_gemm gemm_sm80; do
      [ -f "$K/$k.tir" ] || continue
      for tool in memcheck racecheck; do
        for size in M=300,N=520,K=136; do  # partial tiles in M, N and K
          timeout 240 compute-sanitizer --tool $tool $T run "$K/$k.tir" --gpu --check --size $size \
            > "$OUT/san_${k}_${tool}_${size//[=,]/_}.log" 2>&1
          rc=$?
          echo "$tool $k $size: rc=$rc $(grep -E 'SUMMARY' "$OUT/san_${k}_${tool}_${size//[=,]/_}.log" | tr '\n' ' ') $(grep -E 'rel_err|relative' "$OUT/san_${k}_${tool}_${size//[=,]/_}.log" | head -1)"
          [ $rc = 0 ] || status=1
        done
      done
    done
    ;;
  tour)
    echo "== the main job (examples/tour.sh), from its GPU step"
    timeout 500 examples/tour.sh $T 2>&1 | tee "$OUT/tour.log" | sed -n '/== GPU/,$p'
    [ "${PIPESTATUS[0]}" = 0 ] || status=1
    ;;
  *)
    echo "unknown step '$step' (gemm extra hit torch summary sanitize tour)"
    status=2
    ;;
  esac
done
nvidia-smi --query-gpu=clocks.sm,temperature.gpu,power.draw --format=csv,noheader
exit $status
