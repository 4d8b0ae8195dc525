#!/bin/bash
# Call I of the second 2026-11-29 session (H200), from the repository root: call G's rotated
# fetch (copy_async {from_line}) with the row's buffer placed at the row's 128-byte line phase
# (`alloc %X_tile_line`): call H's ncu showed the rotation alone left the 1.5x L2 sectors (the
# global side aligned, the shared side then not); the probe of call T had both aligned. Checked
# against the interpreter at ragged sizes, then an A/B against .carry-base, two rounds; ncu of
# softmax_exp2 at 2048 x 32760 on both sides last.
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
check_rows i check_fetched_whole_rows
ab_rows i 2 "2047x32760 3000x16376 2048x32768 4096x16384" softmax_auto,softmax_exp2_auto
NCU_METRICS="gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum"
for side in base new; do
  (cd $(side_tree $side) && ncu_metrics ${side}_2048x32760 -k regex:softmax_exp2 ./build-dev/bin/tessel \
    bench memory-bound --shape 2048x32760 --kernels softmax_exp2_auto)
done
