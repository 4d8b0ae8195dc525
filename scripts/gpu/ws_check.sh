#!/bin/bash
# One device call while warp specialization is being built (issue 10): builds the tessel tool
# (Release, no tests), runs the plain GEMM (examples/kernels/gemm.tir, default pipeline) and a
# warp-specialized GEMM given as lowered IR (default: test/lit/async/gemm_barriers.tir, compiled
# with --passes=verify) on the same random inputs at several shapes, and compares the outputs'
# checksums (the two issue the same wgmma instances in the same order: the outputs must be
# bit-identical). Usage (device tool, repo root): scripts/gpu/ws_check.sh [LOWERED.tir]
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=/tmp/tessel-cache
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
LOG=${LOG:-/tmp/tessel-logs}; mkdir -p $LOG
ws=${1:-test/lit/async/gemm_barriers.tir}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF > $OUT/cmake.log 2>&1 &&
  cmake --build build-dev -j16 > $LOG/build.log 2>&1 || { echo "build failed"; tail -30 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
printf "%-18s %-10s %s\n" shape result checksums
for s in M=129,N=257,K=64 M=129,N=257,K=200 M=256,N=512,K=8 M=1000,N=1000,K=1000 M=3000,N=5000,K=704 M=4096,N=4096,K=4096; do
  for seed in 1 2; do
    a=$($T run examples/kernels/gemm.tir --gpu --size $s --seed $seed 2>&1 | grep -E "^%C|error" | head -2)
    b=$($T run $ws --gpu --passes=verify --size $s --seed $seed 2>&1 | grep -E "^%C|error" | head -2)
    echo "$s seed $seed plain: $a" >> $OUT/ws_check.log; echo "$s seed $seed ws: $b" >> $OUT/ws_check.log
    ca=$(echo "$a" | grep -o "fnv1a=[0-9a-f]*"); cb=$(echo "$b" | grep -o "fnv1a=[0-9a-f]*")
    if [ -n "$ca" ] && [ "$ca" = "$cb" ]; then r=same; else r=DIFFERENT; fi
    printf "%-18s %-10s %s | %s\n" "$s/$seed" $r "$ca" "$cb"
  done
done
