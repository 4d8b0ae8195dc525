#!/bin/bash
# The non-specialized sm_90a GEMM (bench/kernel-variants/gemm_plain.tir: gemm.tir pinned
# `warp_specialize = false`) before and after its mainloop became IR (lower-mainloops), in one
# device call: builds two source trees (BASE: the commit before, with the emitter's own mainloop;
# NEW: this one), benches them alternately (base, new, base, new; each `tessel bench gemm`
# against cuBLAS in its own process), then runs the new kernel under compute-sanitizer memcheck,
# racecheck and synccheck (`tessel run --gpu --check`: against the interpreter) on shapes with
# partial tiles and with fewer k-tiles than ring slots. At most 8 files come back: base.jsonl,
# new.jsonl, bench.log, sanitize.log, build logs.
# Usage (device tool, repo root): BASE=dir NEW=dir BASE_COMMIT=sha NEW_COMMIT=sha \
#   bash scripts/gpu/plain_before_after.sh
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
SHAPES=${SHAPES:-8192x8192x8192,8192x8192x4096,4096x4096x4096,8192x8192x1024,2048x8192x1024,3000x5000x704}
ITER=${ITER:-30}
ROUNDS=${ROUNDS:-2}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,temperature.gpu,power.draw --format=csv,noheader
for side in base new; do
  dir=$([ $side = base ] && echo $BASE || echo $NEW)
  ( cd $dir && cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
      > $OUT/build_$side.log 2>&1 && cmake --build build-dev -j8 >> $OUT/build_$side.log 2>&1 ) &
done
wait
for side in base new; do
  dir=$([ $side = base ] && echo $BASE || echo $NEW)
  [ -x $dir/build-dev/bin/tessel ] || { echo "$side build failed"; tail -20 $OUT/build_$side.log; exit 1; }
done
KERNEL=$(cd $NEW && pwd)/bench/kernel-variants/gemm_plain.tir
for round in $(seq 1 $ROUNDS); do
  for side in base new; do
    dir=$([ $side = base ] && echo $BASE || echo $NEW)
    commit=$([ $side = base ] && echo ${BASE_COMMIT:-unknown} || echo ${NEW_COMMIT:-unknown})
    echo "== round $round: $side ($commit)" | tee -a $OUT/bench.log
    TESSEL_CACHE_DIR=/tmp/tessel-cache-$side TESSEL_COMMIT=$commit timeout 200 \
      $dir/build-dev/bin/tessel bench gemm --kernels $KERNEL --shapes "$SHAPES" \
      --iterations $ITER --json $OUT/$side.jsonl >> $OUT/bench.log 2>&1
    echo "rc=$?"
  done
done
T=$NEW/build-dev/bin/tessel
for run in "memcheck M=129,N=257,K=520" "memcheck M=300,N=520,K=136" "synccheck M=129,N=257,K=520" \
           "synccheck M=300,N=520,K=136" "racecheck M=129,N=257,K=520"; do
  set -- $run
  TESSEL_CACHE_DIR=/tmp/tessel-cache-new timeout 120 compute-sanitizer --tool $1 $T run $KERNEL \
    --gpu --check --size $2 > /tmp/san.log 2>&1
  rc=$?
  echo "== $1 $2 (rc=$rc)" >> $OUT/sanitize.log; cat /tmp/san.log >> $OUT/sanitize.log
  echo "$1 $2: rc=$rc $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' /tmp/san.log | tr '\n' ' ') $(grep -iE 'rel.*err' /tmp/san.log | head -1)"
done
for side in base new; do
  echo "== $side"; $NEW/build-dev/bin/tessel bench summary $OUT/$side.jsonl 2>&1 | tail -15
done
