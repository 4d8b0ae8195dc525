#!/bin/bash
# Device-machine bandwidth check of the memory-bound kernels (issue 6). Carry $B/bin, $B/test and
# .commit (B defaults to build-bw-carry: stripped copies of a Release build's bin/tessel and
# test/kernels_gpu_test). Runs the GPU correctness tests, `tessel bench memory-bound` at 8192x8192
# f16 (the example kernels plus any extra .tir variants given as arguments), the launch overhead,
# and a SASS summary (vector widths of global accesses, registers) of each kernel. Logs under $OUT.
set -u
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export PATH=/usr/local/cuda/bin:$PATH
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
B=${B:-build-bw-carry}
export TESSEL_CACHE_DIR=$(mktemp -d)
export TESSEL_COMMIT=${TESSEL_COMMIT:-$(cat .commit 2>/dev/null || echo unknown)}
nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.mem,temperature.gpu --format=csv,noheader
echo "== kernels_gpu_test"
timeout 120 $B/test/kernels_gpu_test 2>&1 | tee $OUT/kernels_gpu_test.log |
  grep -E "^\[  (FAILED|PASSED|SKIPPED|  OK) |Failure|Expected" | head -40
echo "== bench memory-bound 8192x8192 f16"
list=bias_gelu,softmax,rmsnorm,layernorm,softmax_n8192,rmsnorm_n8192,layernorm_n8192,gemv
for v in "$@"; do list=$list,$v; done
timeout 240 $B/bin/tessel bench memory-bound --kernels $list --json $OUT/memory_bench.jsonl 2>&1 |
  tee $OUT/bench.log
echo "== SASS: global accesses by width, registers"
for f in examples/kernels/{softmax_n8192,rmsnorm_n8192,layernorm_n8192,gemv}.tir "$@"; do
  k=$(basename $f .tir)
  $B/bin/tessel compile $f --emit=cubin -o /tmp/$k.cubin > /dev/null 2>&1 || { echo "$k: compile failed"; continue; }
  cuobjdump -sass /tmp/$k.cubin > /tmp/$k.sass 2>&1
  echo "$k: $(grep -oE '(LDG|STG)[.A-Z0-9]*' /tmp/$k.sass | sort | uniq -c | tr -s ' ' | tr '\n' ';')" \
    "$(cuobjdump -res-usage /tmp/$k.cubin 2>&1 | grep -oE 'REG:[0-9]+' | head -1)"
  cat /tmp/$k.sass >> $OUT/sass.txt
done
if [ -x $B/bin/tessel-oldemit ]; then
  # Ablation: the same kernels from a tessel built with the previous emitter (masked vector loads
  # converted inside their bounds branch, one after another).
  echo "== ablation: previous emitter"
  timeout 90 $B/bin/tessel-oldemit bench memory-bound \
    --kernels softmax_n8192,rmsnorm_n8192,layernorm_n8192,gemv 2>&1 | tee $OUT/ablation.log
fi
if [ -n "${MEMCHECK:-}" ]; then
  echo "== memcheck (kernels_gpu_test)"
  timeout 150 compute-sanitizer --tool memcheck $B/test/kernels_gpu_test > $OUT/memcheck.log 2>&1
  echo "memcheck rc=$? $(grep -E 'ERROR SUMMARY' $OUT/memcheck.log | head -1) $(grep -cE '^\[       OK' $OUT/memcheck.log) tests ok"
fi
