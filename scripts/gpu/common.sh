# Sourced by the device scripts of scripts/gpu/ (run from any directory on the lent machine):
# goes to the repository root, sets the CUDA libraries' path, a fresh kernel cache and $OUT, and
# defines the two builds every script needs.
#   build_tool     the `tessel` tool into build-dev/ (tests and Python off; ~20 s on 16 cores)
#   build_python   the Python extension into build-py/ (PYTHONPATH=build-py/python)
#   build_tool_and_python   both at once; prints the build logs' tails and fails if either fails
#   write_w4a16_variants A,B  build-dev/variants/A.tir ... from bench/python/w4a16.py's variant names
#   w4a16_check_sizes NAME    the --size of a ragged check of that variant (NQ for tiled weights)
#   build_side TREE NAME [tool|python|both] [JOBS]  another checkout's build, in the background
#   build_base_and_new        an A/B's two trees (.carry-base and this one), tool and Python
#                             extension each, side by side; sets ROOT, fails naming the failed build
#   side_tree SIDE            the tree of side base (.carry-base) or new (this one)
#   build_base_and_new_tools  the `tessel` tool of both trees of an A/B side by side; sets ROOT,
#                             fails naming the failed build
#   registers_variant K T B DIR  DIR/K_auto_chunkedT.tir: examples/kernels/K_auto.tir pinned to
#                             the row in registers over T threads, B blocks a SM (printed)
#   sanitize NAME FILE SIZE   compute-sanitizer memcheck, racecheck and synccheck on
#                             `tessel run FILE --gpu --size SIZE`, one "NAME tool rc=... summary"
#                             line each
#   nvcc_cubin SRC.cu OUT     (probes) an emitted kernel's CUDA built by nvcc
#   cache_substitute V CUBIN  (probes) CUBIN launched for W4A16 variant V from $TESSEL_CACHE_DIR
#   w4a16_check_and_bench V SHAPES  W4A16 variants V (comma-separated) checked against the
#                             interpreter (every one with CHECK_ALL=1, else the first), sanitized
#                             (SAN=1, the first), then bench/python/w4a16.py at SHAPES as graphs of
#                             GRAPH launches (records in $OUT/w4a16.jsonl; PAD_M=P: --pad-m P)
#   run_gpu_test_binaries     every carried .carry-gpu/*_gpu_test side by side, one summary line each
#   GEMM_SWEEP                the 32 shapes of issue 11's GEMM sweep (MxNxK, comma-separated)
#   sweep_family LAYOUT FAM   one `tessel bench gemm --kernels FAM` over $SWEEP (default GEMM_SWEEP)
#                             into $OUT/sweep_LAYOUT.jsonl, one line with its time (FAMILY_TIMEOUT)
#   sweep_summary             `tessel bench summary` of those records and an SVG; the geomean lines
#   ncu_metrics NAME CMD...   Nsight Compute's NCU_METRICS (comma-separated) on CMD's first
#                             launch, the CSV in $OUT/ncu_NAME.csv, one line per metric printed
#   moe_test_and_sanitize F   the carried moe_gpu_test whole, then (SAN=1, the default)
#                             compute-sanitizer memcheck, racecheck, synccheck over its tests F
#   check_at_sizes L F S...   the tile program F (a path in the current tree) on the GPU against
#                             the interpreter at each size S, one "== L S: <error>" line each
#   summarize_checks LOG      how many checks LOG holds, the largest relative error, its failures
#   bench_rows T SHAPE K J P  `tessel bench memory-bound` of tree T's build-dev at SHAPE over the
#                             kernels K (records appended to J), its result lines prefixed P
#   ab_rows CALL ROUNDS "SHAPES" K   an A/B of bench_rows: base (.carry-base) and new in turns at
#                             each shape, ROUNDS rounds (records $OUT/rows-CALL-{base,new}.jsonl)
#   check_row_programs [V]    each unpinned row program (examples/kernels/*_auto.tir) against the
#                             interpreter on the GPU at ragged sizes, one line each; with V, also
#                             the file V/<kernel>_auto_shared.tir where there is one
#   check_rows CALL [CMD...]  check_row_programs, then CMD (more checks), into $OUT/check-CALL.log;
#                             prints summarize_checks' lines (the start of the row A/B calls)
#   check_fetched_whole_rows  softmax and softmax_exp2 at sizes whose rows are fetched whole into
#                             shared memory from inside a 128-byte line (N = 16376, 32760)
#   attention_variant NAME "ATTRS" [EXAMPLE]  build-dev/variants/NAME.tir: examples/kernels/
#                             EXAMPLE.tir (default flash_attention) with ATTRS added to the
#                             attributes of its block_grid
# Both log under $LOG and return non-zero when the build fails.
cd "$(dirname "${BASH_SOURCE[1]}")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=$(mktemp -d)
# The records' `commit`: the device tool's copy of the tree keeps the git HEAD of the session's
# first commit while its files are the latest ones, so `git rev-parse HEAD` named the wrong
# commit (2026-11-29 records: `commit_recorded`). Where the files differ from HEAD, the records
# name the tree instead, `tree:<hash>`, the hash of every file git does not ignore; it equals the
# tree of the commit they were carried from: `git log --format='%H %T' | grep <hash>` finds it.
if [ -z "${TESSEL_COMMIT:-}" ] && git rev-parse HEAD > /dev/null 2>&1; then
  tessel_index=$(mktemp -u)
  if GIT_INDEX_FILE=$tessel_index git add -A . 2> /dev/null; then
    tessel_tree=$(GIT_INDEX_FILE=$tessel_index git write-tree)
    [ "$tessel_tree" = "$(git rev-parse 'HEAD^{tree}')" ] || export TESSEL_COMMIT=tree:$tessel_tree
  fi
  rm -f $tessel_index
fi
OUT=${OUT:-/tmp/out}; mkdir -p $OUT
# Logs stay on the device machine (only a few files of $OUT come back; keep those for records).
LOG=${LOG:-/tmp/tessel-logs}; mkdir -p $LOG

build_tool() {
  cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
    -DTESSEL_BUILD_PYTHON=OFF > $LOG/cfg.log 2>&1 && ninja -C build-dev tessel > $LOG/build.log 2>&1
}

build_python() {
  cmake -S . -B build-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
    -DTESSEL_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(which python3) \
    -DCUDAToolkit_ROOT=/usr/local/cuda > $LOG/pycfg.log 2>&1 &&
    cmake --build build-py --target _tessel -j 16 > $LOG/pybuild.log 2>&1
}

# Builds the tree in $1 (a checkout beside this one, e.g. a base carried for an A/B) in the
# background, logs named after $2: the tool ($3 = tool), the Python extension with $4 jobs
# (default 8; $3 = python), or both ($3 = both, the default). `wait` for it.
build_side() {
  local what=${3:-both}
  [ $what != python ] && (cd $1 && cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_PYTHON=OFF > $LOG/cfg_$2.log 2>&1 &&
    ninja -C build-dev tessel > $LOG/build_$2.log 2>&1) &
  [ $what != tool ] && (cd $1 && cmake -S . -B build-py -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DTESSEL_BUILD_TESTS=OFF -DTESSEL_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(which python3) \
    -DCUDAToolkit_ROOT=/usr/local/cuda > $LOG/pycfg_$2.log 2>&1 &&
    cmake --build build-py --target _tessel -j ${4:-8} > $LOG/pybuild_$2.log 2>&1) &
  return 0
}

# The A/B scripts' builds: the tree before the change carried in .carry-base (`rm -rf .carry-base
# && mkdir .carry-base && git archive BASE | tar -x -C .carry-base`; carry [".carry-base"]) and
# the working tree, both built here at once.
build_base_and_new() {
  ROOT=$PWD
  build_side .carry-base base
  build_side . new
  wait
  local side tree
  for side in base new; do
    tree=$(side_tree $side)
    [ -x $tree/build-dev/bin/tessel ] ||
      { echo "$side: tool build failed"; tail -20 $LOG/build_$side.log; return 1; }
    ls $tree/build-py/python/tessel > /dev/null ||
      { echo "$side: python build failed"; tail -20 $LOG/pybuild_$side.log; return 1; }
  done
}

side_tree() { if [ $1 = base ]; then echo $ROOT/.carry-base; else echo $ROOT; fi; }

build_base_and_new_tools() {
  ROOT=$PWD
  build_side .carry-base base tool
  build_side . new tool
  wait
  local side
  for side in base new; do
    [ -x $(side_tree $side)/build-dev/bin/tessel ] ||
      { echo "$side: tool build failed"; tail -20 $LOG/build_$side.log; return 1; }
  done
}

registers_variant() {
  local f=$4/${1}_auto_chunked$2.tir
  mkdir -p $4
  sed -e "s/block_grid %rows :/block_grid %rows {threads = $2, hold_rows = registers, blocks_per_sm = $3} :/" \
    examples/kernels/${1}_auto.tir > $f
  echo $f
}

build_tool_and_python() {
  build_tool &
  build_python &
  wait
  ls build-dev/bin/tessel build-py/python/tessel > /dev/null ||
    { tail -20 $LOG/build.log $LOG/pybuild.log; return 1; }
}

write_w4a16_variants() {
  mkdir -p build-dev/variants
  PYTHONPATH=$PWD/bench/python:${PYTHONPATH:-} python3 - "$1" <<'PY'
import sys, w4a16
for name in sys.argv[1].split(","):
    open("build-dev/variants/%s.tir" % name, "w").write(w4a16.named_variant_text(name))
PY
}

# The sizes of a W4A16 variant's check against the interpreter: ragged M and N (N a whole number
# of tiles for the tiled weights `c...`, whose Q has NQ = N K / KT rows); CHECK_KG sets the group
# count (K = 1280; 40 is G = 32).
w4a16_check_sizes() {
  case $1 in
    c*) local kt=$(echo $1 | sed -n 's/.*_k\([0-9]*\).*/\1/p')
        local k=1280; [ $((k % ${kt:-64})) = 0 ] || k=1536  # whole K tiles (512: 1536)
        echo "M=70,N=384,K=$k,KG=$((k / 128)),NQ=$((384 * k / ${kt:-64}))" ;;
    *) echo "M=70,N=328,K=1280,KG=${CHECK_KG:-10}" ;;
  esac
}

# GPU test binaries built on the CPU machine and carried (scripts/carry_gpu_tests.sh there;
# carry [".carry-gpu"]): correctness only, nothing timed. A binary named in SHARDED (default
# gemm_gpu_test: ~5.5 minutes alone, mostly NVRTC compiles, 2026-11-28-pending-checks-h100.md)
# runs as SHARDS (default 3) gtest shards side by side (GTEST_TOTAL_SHARDS / GTEST_SHARD_INDEX),
# each with its own log; its summary line adds up the shards.
run_gpu_test_binaries() {
  local t n i shards
  for t in .carry-gpu/*_gpu_test; do
    n=$(basename $t)
    shards=1; [[ " ${SHARDED:-gemm_gpu_test} " == *" $n "* ]] && shards=${SHARDS:-3}
    for i in $(seq 0 $((shards - 1))); do
      (GTEST_TOTAL_SHARDS=$shards GTEST_SHARD_INDEX=$i timeout ${TEST_TIMEOUT:-420} $t \
         > $LOG/$n.$i.log 2>&1; echo "rc=$?" >> $LOG/$n.$i.log) &
    done
  done
  wait
  for t in .carry-gpu/*_gpu_test; do
    n=$(basename $t)
    cat $LOG/$n.*.log > $LOG/$n.log
    echo "$n $(grep -hE '^\[  PASSED  \] [0-9]+' $LOG/$n.*.log | awk '{s += $4} END {print "passed " s + 0}') \
$(grep -hE '^\[  SKIPPED \] [0-9]+ test' $LOG/$n.*.log | awk '{s += $4} END {if (s) print "skipped " s}') \
$(grep -hE '^\[  FAILED  \] [0-9]+ test' $LOG/$n.*.log | awk '{s += $4} END {if (s) print "FAILED " s}') \
$(grep -h '^rc=' $LOG/$n.*.log | sort | uniq -c | awk '{print $2 " x" $1}' | tr '\n' ' ')"
    grep -E "^\[  FAILED  \] [A-Za-z]" $LOG/$n.log | head -5
    # A failing binary's log comes back with the call's files (the failure lines, not just rc).
    grep -q "^\[  FAILED" $LOG/$n.log && grep -B3 -A12 "Failure" $LOG/$n.log | head -80 > $OUT/$n.failure.log
  done
}

sanitize() {
  local tool
  for tool in memcheck racecheck synccheck; do
    timeout ${SAN_TIMEOUT:-100} compute-sanitizer --tool $tool build-dev/bin/tessel run $2 --gpu \
      --size $3 > $LOG/san.log 2>&1
    echo "$1 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san.log)"
  done
}

# Probes only: the kernel cache entry of W4A16 variant $1 (compiled alone into an empty directory
# through the Python package, as the bench compiles it) replaced by cubin $2 under
# $TESSEL_CACHE_DIR, so that a bench run with that cache launches $2 for the variant (it must
# launch alike: the same kernel name, parameters, threads and shared memory).
# Probes only: CUDA source $1 (tessel's emitted form, maybe edited) built by nvcc into cubin $2.
nvcc_cubin() {
  nvcc -O3 -std=c++17 -arch=sm_90a -cubin -Iruntime/device $1 -o $2 2>&1 | grep -i error
}

cache_substitute() {
  local d=$LOG/cache_$1 key
  rm -rf $d
  TESSEL_CACHE_DIR=$d python3 -c "import tessel, w4a16; tessel.compile(w4a16.named_variant_text('$1'), file='gemm_w4a16_$1.tir')"
  key=$(ls $d | grep cubin | head -1)
  python3 - $2 $TESSEL_CACHE_DIR/$key <<'PY'
import hashlib, os, sys
payload = open(sys.argv[1], "rb").read()
os.makedirs(os.path.dirname(sys.argv[2]), exist_ok=True)
with open(sys.argv[2], "wb") as f:
    f.write(b"tessel-cubin v1 %s %d\n" % (hashlib.sha256(payload).hexdigest().encode(), len(payload)))
    f.write(payload)
PY
  echo "$1 -> $2 ($key)"
}

w4a16_check_and_bench() {
  local variants=$1 shapes=$2 T=build-dev/bin/tessel
  write_w4a16_variants "$variants"
  local v=${variants%%,*} c size tool
  for c in $([ "${CHECK_ALL:-0}" = 1 ] && echo ${variants//,/ } || echo $v); do
    size=$(w4a16_check_sizes $c)
    echo "$c against the interpreter ($size): $($T run build-dev/variants/$c.tir --gpu --check --size $size 2>&1 | grep -E 'relative error|error')"
  done
  size=$(w4a16_check_sizes $v)
  [ "${SAN:-1}" = 1 ] && sanitize $v build-dev/variants/$v.tir $size
  (export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
   cd bench/python &&
     timeout ${BENCH_TIMEOUT:-360} python3 w4a16.py --json $OUT/w4a16.jsonl --iterations ${ITER:-30} \
       --graph ${GRAPH:-8} --sets 4 --shapes $shapes --variants $variants ${PAD_M:+--pad-m $PAD_M} 2>&1 | tail -40)
}

GEMM_SWEEP=512x512x512,1024x1024x1024,2048x2048x2048,4096x4096x4096,8192x8192x8192,16384x16384x16384,16x4096x4096,64x4096x4096,256x4096x4096,16x11008x4096,64x11008x4096,256x11008x4096,16x4096x11008,64x4096x11008,256x4096x11008,16x14336x4096,256x14336x4096,16x4096x14336,256x4096x14336,4096x4096x11008,4096x4096x14336,4096x11008x4096,4096x14336x4096,1024x4096x4096,2048x4096x4096,8192x4096x4096,4096x1024x4096,128x16384x16384,16384x128x16384,8192x8192x256,8192x8192x16384,3000x5000x704
SWEEP_FILES=""

sweep_family() {
  local start=$(date +%s)
  timeout ${FAMILY_TIMEOUT:-290} build-dev/bin/tessel bench gemm --kernels $2 --iterations 20 \
    --json $OUT/sweep_$1.jsonl --shapes ${SWEEP:-$GEMM_SWEEP} > $LOG/$1.log 2>&1
  echo "$1 rc=$? $(( $(date +%s) - start )) s"; grep -i "error\|mismatch" $LOG/$1.log | head -3
  SWEEP_FILES="$SWEEP_FILES $OUT/sweep_$1.jsonl"
}

sweep_summary() {
  build-dev/bin/tessel bench summary $SWEEP_FILES --svg $OUT/sweep.svg > $OUT/summary.txt 2>&1
  # the family lines without the long family names
  grep "geometric mean" $OUT/summary.txt | sed 's/^[^ ]*+[^ ]* //'
}

check_at_sizes() {
  local label=$1 f=$2 s
  shift 2
  for s in "$@"; do
    echo "== $label $s: $(build-dev/bin/tessel run $f --gpu --check --size $s 2>&1 | grep -i -E 'rel|error|fail' | tr '\n' ' ')"
  done
}

summarize_checks() {
  echo "== rows check: $(grep -c 'relative error vs the interpreter' $1) checks; largest: $(grep -o 'interpreter: [0-9.e+-]*' $1 | awk '{print $2}' | sort -g | tail -1)"
  grep -i -E "fail|rror:" $1 | grep -v "no schedule of" | head -5
}

bench_rows() {
  (cd $1 && timeout 120 ./build-dev/bin/tessel bench memory-bound --shape $2 --kernels $3 --json $4 2>&1) |
    grep -E "_auto|_stream|FAIL|rror" | sed "s/^/$5 /" | cut -c1-110
}

ab_rows() {
  local call=$1 rounds=$2 shapes=$3 kernels=$4 round shape side
  for round in $(seq $rounds); do
    for shape in $shapes; do
      for side in base new; do
        bench_rows $(side_tree $side) $shape $kernels $OUT/rows-$call-$side.jsonl "$round $side"
      done
    done
  done
}

check_row_programs() {
  local k s v
  for k in rmsnorm layernorm softmax softmax_exp2 bias_gelu; do
    for s in M=37,N=1048 M=3,N=8184 M=2,N=32760 M=5,N=16384 M=9,N=8200 M=33,N=4096; do
      check_at_sizes $k examples/kernels/${k}_auto.tir $s
      v=${1:-}/${k}_auto_shared.tir
      [ -n "${1:-}" ] && [ -f $v ] && check_at_sizes "$k (row in shared memory)" $v $s
    done
  done
}

check_rows() {
  local call=$1
  shift
  { check_row_programs; "$@"; } > $OUT/check-$call.log 2>&1
  summarize_checks $OUT/check-$call.log
}

attention_variant() {
  local name=$1 attrs=$2 example=${3:-flash_attention}
  mkdir -p build-dev/variants
  sed -e "s/block_grid %BH, %tiles_q {\([^}]*\)} :/block_grid %BH, %tiles_q {\1, $attrs} :/" \
      -e "s/block_grid %BH, %tiles_q :/block_grid %BH, %tiles_q {$attrs} :/" \
      examples/kernels/$example.tir > build-dev/variants/$name.tir
}

check_fetched_whole_rows() {
  local k
  for k in softmax softmax_exp2; do
    check_at_sizes $k examples/kernels/${k}_auto.tir M=9,N=16376 M=130,N=32760 M=3,N=16384
  done
}

ncu_metrics() {
  local name=$1; shift
  timeout ${NCU_TIMEOUT:-200} ncu --metrics $NCU_METRICS --launch-count 1 --csv "$@" \
    > $OUT/ncu_$name.csv 2> $LOG/ncu_$name.err
  echo "== $name (rc=$?)"
  python3 - "$OUT/ncu_$name.csv" <<'PY'
import csv, sys
rows = [r for r in csv.reader(open(sys.argv[1])) if len(r) > 10]
if not rows: print("  no rows"); sys.exit()
head = rows[0]; ni = head.index("Metric Name"); vi = head.index("Metric Value")
for r in rows[1:]:
    print("  %-72s %s" % (r[ni], r[vi]))
PY
}

moe_test_and_sanitize() {
  timeout 200 .carry-gpu/moe_gpu_test 2>&1 |
    grep -E "^\[  (PASSED|FAILED)|^\[       OK|Failure|Expected|Which is|seed" | head -12
  [ "${SAN:-1}" = 1 ] || return 0
  for tool in memcheck racecheck synccheck; do
    timeout 300 compute-sanitizer --tool $tool .carry-gpu/moe_gpu_test --gtest_filter="$1" \
      > $LOG/san-$tool.log 2>&1
    echo "$1 $tool rc=$? $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY' $LOG/san-$tool.log)"
  done
}
