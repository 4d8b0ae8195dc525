#!/bin/bash
# W4A16 at M = 1 (issue 14's 0.8-of-a-copy bar; 0.79 with c64x8_k256_h2_w3_p1_st8,
# bench/results/2026-11-28-w4a16-tokens8-h100.md): the launch-overlap modes, ring depths and a
# split-k of 2 around that variant, and N = 8448 beside 8192 (132 tiles of 64 rows, one per SM,
# against 128: is the stream rate short because 4 SMs idle?). Then the gather's `tessel run
# --gpu --check`, which printed no error line (tessel run now names NaN elements). One device
# call from the repository root (carry [".carry-gpu"]). Records in $OUT/w4a16.jsonl.
set -u
here=$(dirname "$0")
B=c64x8_k256_h2_w3_p1_st8
TESTS=0 SAN=0 BENCH_TIMEOUT=200 \
  VARIANTS=$B,${B}_ovearly,${B}_ovlate,${B}_ovprefetch,${B}_ovoff,c64x8_k256_h2_w3_p1_st12,c64x8_k256_h2_w3_p1_st6,c64x8_k256_h2_sk2_w3_p1_st8 \
  SHAPES=1x8192x8192g128,1x8448x8192g128 \
  timeout 300 bash $here/overlap_launches.sh 2>&1 | grep -E "graph of|relative error|FAIL|rror"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
for size in E=9,T=50,M=300,N=264,K=640,KG=5 E=4,T=64,M=128,N=128,K=256,KG=2; do
  timeout 90 build-dev/bin/tessel run examples/kernels/moe_w4a16_gather.tir --gpu --check \
    --output Y --size $size > /tmp/gather_run.log 2>&1
  echo "gather tessel run $size rc=$? $(grep -E 'relative|error' /tmp/gather_run.log | tr '\n' ' ')"
done
