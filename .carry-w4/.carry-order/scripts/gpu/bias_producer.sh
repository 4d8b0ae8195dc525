#!/bin/bash
# Epilogue operands through the producer (issue 10, gemm_bias_relu), one device call: builds the
# tessel tool of this tree and of BASE (default ..: the device tool ships /work/main's checkout
# and this tree as .carry-bias; a `git archive` of the base commit carried beside it is cleaner
# than a working tree others edit), benches gemm_bias_relu with each
# against cuBLASLt's fused bias + ReLU epilogue at the shapes (each ratio measured in its
# own process, interleaved with cuBLASLt), then runs this tree's kernel under compute-sanitizer
# memcheck, racecheck and synccheck against the interpreter on shapes with partial tiles.
# Usage (device tool): cd .carry-bias && TESSEL_COMMIT=<sha> BASE=../.carry-base bash scripts/gpu/bias_producer.sh
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=/tmp/tessel-cache
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
export TESSEL_COMMIT=${TESSEL_COMMIT:-unknown}
SHAPES=${SHAPES:-8192x8192x8192,8192x8192x4096,4096x4096x4096,8192x8192x1024,3000x5000x704,8191x4097x520}
ITER=${ITER:-30}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for t in new base; do
  src=.; [ $t = base ] && src=${BASE:-..}
  (cmake -S $src -B build-$t -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF > $OUT/cmake_$t.log 2>&1 &&
    cmake --build build-$t -j16 > $OUT/build_$t.log 2>&1 && rm $OUT/cmake_$t.log $OUT/build_$t.log) ||
    { echo "build $t failed"; tail -30 $OUT/build_$t.log; exit 1; }
done
for t in base new; do
  echo "== gemm_bias_relu, $t"
  timeout 240 build-$t/bin/tessel bench gemm --kernels examples/kernels/gemm_bias_relu.tir \
    --shapes "$SHAPES" --iterations $ITER --json $OUT/$t.jsonl > $OUT/bench_$t.log 2>&1
  echo "rc=$?"; grep -E "FAIL|rror" $OUT/bench_$t.log | head
  build-$t/bin/tessel bench summary $OUT/$t.jsonl 2>&1 | tail -12
done
T=build-new/bin/tessel
for tool in memcheck racecheck synccheck; do
  for size in M=300,N=520,K=136 M=129,N=257,K=200; do
    log=/tmp/san.log
    timeout 120 compute-sanitizer --tool $tool $T run examples/kernels/gemm_bias_relu.tir --gpu --check --size $size > $log 2>&1
    rc=$?
    echo "== $tool gemm_bias_relu $size (rc=$rc)" >> $OUT/sanitize.log; cat $log >> $OUT/sanitize.log
    echo "$tool $size: rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $log | tr '\n' ' ') $(grep -iE 'rel.*err' $log | head -1)"
  done
done
