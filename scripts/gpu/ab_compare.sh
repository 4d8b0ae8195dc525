#!/bin/bash
# Before / after on one device machine: the tree in .carry-base (made here with
# `rm -rf .carry-base && mkdir .carry-base && git archive BASE | tar -x -C .carry-base`, carried
# with carry [".carry-base"]) against the working tree. Builds both (tool and Python extension),
# then for each side, in its own process:
#   - SASS=name: the kernel of that W4A16 variant, its SASS instruction counts ($OUT/<side>.sass);
#   - CHECK="a.tir ...": `tessel run --gpu --check` of each against the interpreter (sizes in
#     CHECK_SIZE, default M=70,N=328,K=1280,KG=10);
#   - W4A16="variants": bench/python/w4a16.py at W4A16_SHAPES with W4A16_ARGS (e.g. --graph 8)
#     (records $OUT/<side>_w4a16.jsonl);
#   - ATTN=1: bench/python/attention.py (the example for D) at ATTN_SHAPES, not causal and causal
#     (records $OUT/<side>_attention.jsonl).
# Each bench process times its kernels against the library in that process; compare the ratios.
set -u
source "$(dirname "$0")/common.sh"
nvidia-smi --query-gpu=name,clocks.sm,clocks.mem --format=csv,noheader
build_base_and_new || exit 1
for side in base new; do
  tree=$(side_tree $side)
  T=$tree/build-dev/bin/tessel
  echo "=================== $side"
  if [ -n "${SASS:-}" ]; then
    (cd $tree && PYTHONPATH=$tree/bench/python python3 -c "import w4a16; open('$LOG/$side.tir','w').write(w4a16.named_variant_text('$SASS'))")
    $T compile $LOG/$side.tir --emit=cubin -o $LOG/$side.cubin && cuobjdump -sass $LOG/$side.cubin > $OUT/$side.sass
    echo "$SASS SASS: $(grep -cE '^\s+/\*[0-9a-f]+\*/' $OUT/$side.sass) instructions, R2UR $(grep -c R2UR $OUT/$side.sass), HGMMA $(grep -c HGMMA $OUT/$side.sass), BSSY $(grep -c BSSY $OUT/$side.sass)"
  fi
  for f in ${CHECK:-}; do
    echo "check $f: $($T run $tree/$f --gpu --check --size ${CHECK_SIZE:-M=70,N=328,K=1280,KG=10} 2>&1 | grep -E 'relative error|rel|rror' | head -2)"
  done
  export PYTHONPATH=$tree/build-py/python:$tree/bench/python
  if [ -n "${W4A16:-}" ]; then
    (cd $tree/bench/python && TESSEL_COMMIT=$side timeout 300 python3 w4a16.py --json $OUT/${side}_w4a16.jsonl \
      --iterations ${ITER:-30} --shapes ${W4A16_SHAPES:-1x8192x8192g128,16x8192x8192g128} --variants $W4A16 \
      ${W4A16_ARGS:-} 2>&1 | tail -20)
  fi
  if [ -n "${ATTN:-}" ]; then
    for causal in "" --causal; do
      (cd $tree/bench/python && TESSEL_COMMIT=$side timeout 200 python3 attention.py --json $OUT/${side}_attention.jsonl \
        $causal --shapes ${ATTN_SHAPES:-4,32,1024,128 4,32,4096,128} 2>&1 | tail -6)
    done
  fi
done
