#!/bin/bash
# Probe (seventeenth session, 2026-11-29): what the launch's overlap with the launch before it
# costs and gains in the best small-M W4A16 kernel. The emitted CUDA, built by nvcc, and two
# edits of it: `nowait` without its grid dependency waits (the producer's before the first token
# tile, the store's: correct here only because the bench's launches read the same X and write
# the same Y), `serial` without those and without its launch_dependents trigger (launches one
# after another as plain stream order). Each put in the kernel cache in place of a variant that
# launches alike (cache_substitute): `_nt` = the emitted kernel by nvcc, `_sg` = nowait, `_ul` =
# serial; timed in one process beside the NVRTC build as graphs of 8 launches (every output
# checked by the bench).
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python > $LOG/build.log 2>&1 || { tail -20 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
B=${B:-c64x8_k256_h2_gs_w3_p1_st8_ovpreload}
write_w4a16_variants $B
$T compile build-dev/variants/$B.tir --emit=cuda > $LOG/emitted.cu
grep -v "grid_dependency_wait();" $LOG/emitted.cu > $LOG/nowait.cu
grep -v "launch_dependents();" $LOG/nowait.cu > $LOG/serial.cu
echo "lines: $(wc -l < $LOG/emitted.cu) $(wc -l < $LOG/nowait.cu) $(wc -l < $LOG/serial.cu)"
for f in emitted nowait serial; do nvcc_cubin $LOG/$f.cu $LOG/$f.cubin; done
export TESSEL_CACHE_DIR=$LOG/cache; rm -rf $TESSEL_CACHE_DIR
export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
cache_substitute ${B}_nt $LOG/emitted.cubin
cache_substitute ${B}_sg $LOG/nowait.cubin
cache_substitute ${B}_ul $LOG/serial.cubin
(cd bench/python && timeout 300 python3 w4a16.py --json $OUT/w4a16.jsonl --iterations 30 --graph 8 --sets 4 \
   --shapes ${SHAPES:-1x8192x8192g128,1x8192x2048g128,1x8192x32768g128} --variants $B,${B}_nt,${B}_sg,${B}_ul 2>&1 |
   grep -E "graph of|FAIL|rror")
