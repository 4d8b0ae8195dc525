#!/bin/bash
# Call H of the second 2026-11-29 session (H200), from the repository root: Nsight Compute on
# softmax_exp2 at 2048 x 32760 with its rows fetched whole as at .carry-base (base) and rotated to
# start at each tile's 128-byte line (new: call G's `from_line`, reverted after it): did the
# rotation remove the 1.5x L2 read sectors of call S (2026-11-29-rows-misaligned-h200.md)?
set -u
source "$(dirname "$0")/common.sh"
export OUT
build_base_and_new_tools || exit 1
NCU_METRICS="gpu__time_duration.sum,l1tex__t_sectors_pipe_lsu_mem_global_op_ld.sum,l1tex__m_xbar2l1tex_read_sectors.sum,lts__t_sectors_srcunit_tex_op_read.sum,lts__t_requests_srcunit_tex_op_read.sum,smsp__inst_executed.sum,dram__bytes_read.sum"
for side in base new; do
  for s in 2048x32760 2048x32768; do
    (cd $(side_tree $side) && ncu_metrics ${side}_$s -k regex:softmax_exp2 ./build-dev/bin/tessel \
      bench memory-bound --shape $s --kernels softmax_exp2_auto)
  done
done
