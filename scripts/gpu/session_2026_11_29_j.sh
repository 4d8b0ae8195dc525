#!/bin/bash
# Call J of the 2026-11-29 sessions (H200), from the repository root, carrying .carry-base (the
# commit before the change): chunked kernels whose reduces fold by chains (not trees) and whose
# masked fetches of weight and bias vectors take ld.global.nc (volatile asm, "new"), or the same
# with that asm left movable ("var", the header edited here). LayerNorm pinned to the chunked
# form (1024 threads, two blocks a SM) and the unpinned row programs, base / new / var in turns
# at the wide shapes; the new tree's row programs and chunked forms checked on the GPU against the
# interpreter.
set -u
source "$(dirname "$0")/common.sh"
export OUT
CALL=${CALL:-j}
ROOT=$PWD
rm -rf /tmp/var && mkdir /tmp/var &&
  tar --exclude='./build*' --exclude='./.carry*' --exclude='./.git' -cf - . | tar -xf - -C /tmp/var
sed -i 's|^  asm volatile("{\\n .reg .pred g;\\n setp.ne.b32 g, %5, 0;\\n mov.b32 %0, %6;\\n mov.b32 %1, %6;\\n"$|  asm("{\\n .reg .pred g;\\n setp.ne.b32 g, %5, 0;\\n mov.b32 %0, %6;\\n mov.b32 %1, %6;\\n"|' \
  /tmp/var/runtime/device/emitted_support.cuh
echo "var header edits: $(diff runtime/device/emitted_support.cuh /tmp/var/runtime/device/emitted_support.cuh | grep -c '^>')"
build_side .carry-base base tool
build_side . new tool
build_side /tmp/var var tool
wait
for t in .carry-base . /tmp/var; do [ -x $t/build-dev/bin/tessel ] || { echo "$t: build failed"; exit 1; }; done
V=$ROOT/build-dev/variants
for k in layernorm rmsnorm; do registers_variant $k 1024 2 $V > /dev/null; done
{
  check_row_programs
  for f in $V/*_chunked*.tir; do check_at_sizes $(basename $f) $f M=37,N=32760 M=3,N=32768 M=5,N=16384 M=9,N=16376 M=2,N=40000; done
} > $OUT/check.log 2>&1
for round in 1 2; do
  for shape in 2048x32768 2047x32760 4096x16384; do
    for side in base new var; do
      [ $round = 2 ] && [ $side = var ] && continue
      case $side in base) tree=$ROOT/.carry-base ;; new) tree=$ROOT ;; var) tree=/tmp/var ;; esac
      bench_rows $tree $shape rmsnorm_auto,layernorm_auto,$V/layernorm_auto_chunked1024.tir \
        $OUT/rows-$CALL-$side.jsonl "$round $side"
    done
  done
done > $OUT/bench.log
summarize_checks $OUT/check.log
cat $OUT/bench.log
