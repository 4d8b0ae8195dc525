#!/bin/bash
# Probe (seventeenth session, 2026-11-29): the best small-M W4A16 kernel with its three consumer
# roles' copies of the K loop merged into one (scripts/gpu/merge_consumer_roles.py), timed in one
# process against the same kernel as emitted. Both built here by nvcc from the CUDA the tool
# emits (the rewritten one and, as the control, the unchanged one) and put into the kernel cache
# in place of two variants that launch alike (`_nt`: the control; `_sg`: the merged kernel), the
# NVRTC-built kernel beside them; every kernel's output checked by the bench (float64, cuBLAS),
# the merged one also against the interpreter on ragged sizes and under compute-sanitizer, and
# its warps' stall reasons by ncu. Since e7a12e6 the emitter itself shares the roles' code
# (src/target/cuda/emit_shared_roles.cpp): the kernel is emitted apart here (`_ns`) for the probe.
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python > $LOG/build.log 2>&1 || { tail -20 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
# B: the kernels (w4a16.py names, `_w3`), one after another; PROFILE=0 skips the sanitizer and ncu.
for B in ${B:-c64x8_k256_h2_gs_w3_p1_st8_ovpreload}; do
write_w4a16_variants $B,${B}_nt,${B}_sg,${B}_ns
$T compile build-dev/variants/${B}_ns.tir --emit=cuda > $LOG/emitted.cu
python3 scripts/gpu/merge_consumer_roles.py $LOG/emitted.cu $LOG/merged.cu
for f in emitted merged; do nvcc_cubin $LOG/$f.cu $LOG/$f.cubin; done
export TESSEL_CACHE_DIR=$LOG/cache; rm -rf $TESSEL_CACHE_DIR
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
# The cache entries of the two stand-in variants, each compiled alone into an empty directory.
cache_substitute ${B}_nt $LOG/emitted.cubin
cache_substitute ${B}_sg $LOG/merged.cubin
S=M=70,N=384,K=1280,KG=10,NQ=1920
echo "merged against the interpreter: $($T run build-dev/variants/${B}_sg.tir --gpu --check --size $S 2>&1 | grep -E 'relative error|error')"
echo "control against the interpreter: $($T run build-dev/variants/${B}_nt.tir --gpu --check --size $S 2>&1 | grep -E 'relative error|error')"
[ "${PROFILE:-1}" = 1 ] && sanitize merged build-dev/variants/${B}_sg.tir $S
(cd bench/python && timeout 300 python3 w4a16.py --json $OUT/w4a16.jsonl --iterations 30 --graph 8 --sets 4 \
   --shapes ${SHAPES:-1x8192x8192g128,8x8192x8192g128,1x8192x32768g128} --variants $B,${B}_nt,${B}_sg 2>&1 |
   grep -E "graph of|FAIL|rror")
[ "${PROFILE:-1}" = 1 ] || continue
REASONS="no_instruction wait long_scoreboard not_selected selected math_pipe_throttle barrier imc_miss dispatch_stall short_scoreboard"
NCU_METRICS=smsp__issue_active.avg.pct_of_peak_sustained_active,smsp__inst_executed.sum,sm__cycles_elapsed.avg
for r in $REASONS; do NCU_METRICS=$NCU_METRICS,smsp__warp_issue_stalled_${r}_per_warp_active.pct; done
for v in ${B}_nt ${B}_sg; do
  ncu_metrics $v --kernel-name regex:gemm_w4a16 $T run build-dev/variants/$v.tir --gpu \
    --size M=1,N=8192,K=8192,KG=64,NQ=262144
done
done
