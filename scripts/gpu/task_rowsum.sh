#!/bin/bash
# GEMM + row reduction (issue 13) on the lent H100, one device call from the repository root:
# builds the tool and the Python extension, writes the tile IR of the task program gemm_rowsum
# under its default mapping (row sums over the GEMM's shared A tile) and under the register-A
# mapping, checks all three task programs on the GPU against the tile interpreter at ragged
# shapes, runs compute-sanitizer (memcheck, racecheck) on the shared-A kernel at a small ragged
# shape, then times task / task-reg / the tile program against cuBLAS + torch.sum in one process
# (bench/python/gemm_rowsum.py; records in $OUT/gemm_rowsum.jsonl). Table last.
# VARIANTS=1 skips the checks and sanitizers and times, beside those, what the row sums cost:
# the plain GEMM (examples/kernels/gemm.tir), the task kernel's lowered IR with one arrival per
# warp (after __syncwarp) on the ring's empty barriers instead of one per thread, and the tile
# program with the reduction sunk out of the K loop (bench/kernel-variants/gemm_rowsum_sunk.tir).
set -u
source "$(dirname "$0")/common.sh"
start=$(date +%s)
build_tool || { tail -20 $LOG/build.log; exit 1; }
build_python || { grep -E "error|FAILED" $LOG/pybuild.log | head -20; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
T=build-dev/bin/tessel
$T task gemm_rowsum > $OUT/gemm_rowsum_task.tir || exit 1
sed 's/mems = \[register, shared\] }/mems = [register, register] }/' examples/tasks/gemm_rowsum.tmap |
  $T task gemm_rowsum --mapping - > $OUT/gemm_rowsum_task_reg.tir || exit 1
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
if [ "${VARIANTS:-0}" = 1 ]; then
  $T opt $OUT/gemm_rowsum_task.tir --pipeline > $OUT/task_thread.lowered.tir || exit 1
  sed -e 's/%ring_empty = mbarrier_init {arrivals = 256}/%ring_empty = mbarrier_init {arrivals = 8}/' \
      -e 's/{by = thread}/{by = warp}/' $OUT/task_thread.lowered.tir > $OUT/task_warp.lowered.tir
  $T opt $OUT/task_warp.lowered.tir --passes=check-protocol > /dev/null || exit 1
  export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
  timeout 400 python3 bench/python/gemm_rowsum.py --task $OUT/gemm_rowsum_task.tir \
    --kernel task-warp=$OUT/task_warp.lowered.tir --kernel sunk=bench/kernel-variants/gemm_rowsum_sunk.tir \
    --gemm examples/kernels/gemm.tir --shapes 1000x520x272,8192x8192x8192,8192x8192x4096,4096x4096x4096,8191x4097x520 \
    --json $OUT/gemm_rowsum_variants.jsonl
  echo "total $(( $(date +%s) - start )) s"
  exit
fi
echo "== GPU vs the tile interpreter (relative error of the output, the last tensor parameter)"
for p in gemm_rowsum gemm dual_gemm; do
  $T task $p > $OUT/$p.tir
  for s in M=1000,N=520,K=272 M=257,N=129,K=88; do
    printf "%-12s %-22s " $p $s
    timeout 120 $T run $OUT/$p.tir --gpu --check --size $s 2>&1 | grep -i "rel\|error\|mismatch" | tail -1
  done
done
for s in M=1000,N=520,K=272 M=257,N=129,K=88; do
  printf "%-12s %-22s " gemm_rowsum:C $s
  timeout 120 $T run $OUT/gemm_rowsum.tir --gpu --check --output C --size $s 2>&1 | grep -i "rel\|error\|mismatch" | tail -1
  printf "%-12s %-22s " tile-prog:y $s
  timeout 120 $T run examples/kernels/gemm_rowsum.tir --gpu --check --size $s 2>&1 | grep -i "rel\|error\|mismatch" | tail -1
done
CS=/usr/local/cuda/bin/compute-sanitizer
if [ -x $CS ]; then
  for tool in memcheck racecheck; do
    echo "== compute-sanitizer --tool $tool (task gemm_rowsum, M=300,N=260,K=200)"
    timeout 150 $CS --tool $tool $T run $OUT/gemm_rowsum.tir --gpu --size M=300,N=260,K=200 2>&1 | grep -E "ERROR SUMMARY|RACECHECK SUMMARY|hazard|Error" | head -5
  done
fi
echo "== bench/python/gemm_rowsum.py"
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
timeout 300 python3 bench/python/gemm_rowsum.py --task $OUT/gemm_rowsum_task.tir \
  --task-reg $OUT/gemm_rowsum_task_reg.tir --json $OUT/gemm_rowsum.jsonl
echo "total $(( $(date +%s) - start )) s"
