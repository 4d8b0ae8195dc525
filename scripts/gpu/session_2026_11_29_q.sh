#!/bin/bash
# Call Q of the 2026-11-29 sessions (H200), from the repository root: does a larger L1 keep
# LayerNorm's weight and bias at 2047 x 32760 (128 KiB of them beside two 64 KiB rows in flight,
# call M)? A variant tree whose launches first ask for the smallest shared-memory carveout
# (CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT = 0: the most L1; src/runtime/module.cpp
# edited here), timed in turns with the working tree's; ncu's L1 hit rate of both at 2047 x 32760.
set -u
source "$(dirname "$0")/common.sh"
export OUT
ROOT=$PWD
rm -rf /tmp/cv && mkdir /tmp/cv &&
  tar --exclude='./build*' --exclude='./.carry*' --exclude='./.git' -cf - . | tar -xf - -C /tmp/cv
python3 - <<'PY'
p = '/tmp/cv/src/runtime/module.cpp'
s = open(p).read()
old = '''  CUlaunchAttribute attributes[2];
  CUlaunchConfig launch = driver_launch(config, config.grid, attributes, cluster.count() > 1);'''
assert old in s
s = s.replace(old, '''  check(driver().cuFuncSetAttribute(function_, CU_FUNC_ATTRIBUTE_PREFERRED_SHARED_MEMORY_CARVEOUT, 0),
        "carveout");
''' + old)
open(p, 'w').write(s)
print("carveout edit applied")
PY
build_side . new tool
build_side /tmp/cv cv tool
wait
for t in . /tmp/cv; do [ -x $t/build-dev/bin/tessel ] || { echo "$t: build failed"; tail -20 $LOG/build_cv.log; exit 1; }; done
(cd /tmp/cv && check_at_sizes "cv layernorm" examples/kernels/layernorm_auto.tir M=37,N=32760 M=3,N=32768)
for round in 1 2; do
  for shape in 2048x32768 2047x32760 4096x16384; do
    for side in new cv; do
      tree=$ROOT; [ $side = cv ] && tree=/tmp/cv
      bench_rows $tree $shape layernorm_auto,rmsnorm_auto $OUT/rows-q-$side.jsonl "$round $side"
    done
  done
done
NCU_METRICS="gpu__time_duration.sum,l1tex__t_sector_hit_rate.pct,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,launch__shared_mem_config_size"
for side in new cv; do
  tree=$ROOT; [ $side = cv ] && tree=/tmp/cv
  (cd $tree && ncu_metrics ln_${side}_2047x32760 -k regex:layernorm ./build-dev/bin/tessel bench memory-bound --shape 2047x32760 --kernels layernorm_auto)
done
