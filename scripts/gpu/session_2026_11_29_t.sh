#!/bin/bash
# Call T of the 2026-11-29 sessions (H200, twelfth session), from the repository root: the probe
# scripts/gpu/rows_alignment_probe.cu (RMSNorm with the row fetched into shared memory lane by
# lane, lane by lane from the row's 128-byte line, or by one bulk copy; and in registers) at
# aligned and misaligned row lengths, two rounds; then ncu's L2 read sectors of each variant at
# 2048 x 32760 and 2048 x 32768.
set -u
source "$(dirname "$0")/common.sh"
export OUT
nvcc -std=c++17 -O3 -arch=sm_90a -Iscripts/gpu scripts/gpu/rows_alignment_probe.cu \
  -o /tmp/rows_alignment_probe > $LOG/probe_build.log 2>&1 || { cat $LOG/probe_build.log; exit 1; }
for round in 1 2; do
  /tmp/rows_alignment_probe 2048x32768 2048x32760 3000x16384 3000x16376 8192x8192 8192x8200 |
    sed "s/^/$round /"
done
NCU_METRICS="gpu__time_duration.sum,lts__t_sectors_srcunit_tex_op_read.sum,l1tex__m_xbar2l1tex_read_sectors.sum,dram__bytes_read.sum"
for shape in 2048x32768 2048x32760; do
  for v in "smem lanes 512" "smem aligned 512" "smem bulk 512" "regs 1024x4"; do
    VARIANT="$v" ncu_metrics "${v// /_}_$shape" -k regex:rms /tmp/rows_alignment_probe $shape
  done
done
