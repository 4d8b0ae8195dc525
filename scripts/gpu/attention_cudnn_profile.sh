#!/bin/bash
# ncu of cuDNN's attention kernel (torch SDPA's cuDNN backend) next to tessel's example at one
# shape, on the lent H100, one device call from the repository root: cuDNN's kernel name, grid,
# block, cluster, registers, shared memory, duration and throughputs, and the same sections for
# examples/kernels/flash_attention.tir through `tessel run --gpu`. B, H, L (default 4, 32, 1024),
# D = 128, f16, not causal. Reports: $OUT/ncu_attention_*.txt.
set -u
source "$(dirname "$0")/common.sh"
build_tool || { tail -30 $LOG/build.log; exit 1; }
B=${B:-4}; H=${H:-32}; L=${L:-1024}
S="--section SpeedOfLight --section LaunchStats --section Occupancy --section WarpStateStats --section SchedulerStats --section ComputeWorkloadAnalysis"
keys="Duration|DRAM Throughput|Compute \(SM\) Throughput|Grid Size|Block Size|Cluster Size|Registers Per|Dynamic Shared|Static Shared|Waves Per SM|Achieved Occupancy|Theoretical Occupancy|Issued Warp Per Scheduler|No Eligible|Active Warps Per Scheduler|Eligible Warps|Warp Cycles Per Issued|Executed Ipc A|SM Busy|Issue Slots Busy"
cat > $OUT/cudnn_sdpa.py <<PY
import torch, torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q, k, v = (torch.randn($B, $H, $L, 128, device="cuda", dtype=torch.float16) for _ in range(3))
with sdpa_kernel(SDPBackend.CUDNN_ATTENTION):
    for _ in range(12):
        F.scaled_dot_product_attention(q, k, v)
torch.cuda.synchronize()
PY
timeout 200 ncu --kernel-name regex:'cudnn|fmha|sm90|flash|attn|xmma' --launch-skip 8 --launch-count 1 $S \
  python3 $OUT/cudnn_sdpa.py > $OUT/ncu_attention_cudnn.txt 2>&1
echo "== cuDNN at B=$B H=$H L=$L D=128"
grep -E "^  [a-zA-Z_].*\(|$keys" $OUT/ncu_attention_cudnn.txt | head -40
timeout 150 ncu --launch-count 1 --kernel-name regex:flash_attention $S \
  build-dev/bin/tessel run examples/kernels/flash_attention.tir --gpu --size BH=$((B * H)),S=$L > $OUT/ncu_attention_tessel.txt 2>&1
echo "== tessel flash_attention at B=$B H=$H L=$L D=128"
grep -E "$keys" $OUT/ncu_attention_tessel.txt | head -30
