#!/bin/bash
# Roles that share their code (src/target/cuda/emit_shared_roles.cpp; seventeenth session,
# 2026-11-29): every example and variant kernel whose roles now share code checked against the
# interpreter on ragged sizes (tessel run --gpu --check), the W4A16 one and a GEMM one under
# compute-sanitizer, then timed in one process against the same kernels pinned
# share_role_code = false: W4A16 (`_ns`, graphs of 8 launches, M = 1 / 8 / 16 and K = 32768) and
# the split-roles GEMMs at their few-token shapes (tessel bench gemm, each kernel against
# cuBLAS). CHECK_ONLY=1 stops after the checks against the interpreter ($OUT/checks.txt).
set -u
source "$(dirname "$0")/common.sh"
build_tool_and_python > $LOG/build.log 2>&1 || { tail -20 $LOG/build.log; exit 1; }
T=build-dev/bin/tessel
SHARED=""
for f in examples/kernels/*.tir bench/kernel-variants/*.tir bench/kernel-variants/*/*.tir; do
  case $f in *sm80*) continue ;; esac
  $T compile $f --emit=cuda 2>/dev/null | grep -q "their common code once" && SHARED="$SHARED $f"
done
echo "kernels whose roles share code:$(echo $SHARED | wc -w)" | tee $OUT/checks.txt
for f in $SHARED; do
  case $f in
    *w4a16*k512*) s=M=70,N=384,K=1536,KG=12,NQ=1152 ;;
    *w4a16*) s=M=70,N=384,K=1280,KG=10,NQ=1920 ;;
    *) s=M=100,N=328,K=1000 ;;
  esac
  echo "$(basename $f .tir) ($s): $($T run $f --gpu --check --size $s 2>&1 | grep -E 'relative error|rror' | head -1)"
done | tee -a $OUT/checks.txt
[ "${CHECK_ONLY:-0}" = 1 ] && exit 0
sanitize gemm_m64_n32_s16_f4_w2_p2 bench/kernel-variants/gemm_m64_n32_s16_f4_w2_p2.tir M=100,N=328,K=1000
B=c64x8_k256_h2_gs_w3_p1_st8_ovpreload
write_w4a16_variants $B
sanitize $B build-dev/variants/$B.tir M=70,N=384,K=1280,KG=10,NQ=1920
# GEMMs: each split-roles variant beside its copy pinned apart.
mkdir -p build-dev/apart
K=""
for f in bench/kernel-variants/gemm_m64_n32_s16_f4_w2.tir bench/kernel-variants/gemm_m64_n32_s16_f4_w2_p2.tir \
         bench/kernel-variants/gemm_m64_n32_s16_f4_w4.tir bench/kernel-variants/gemm_nn_m64_n64_s12_f2_w2.tir; do
  a=build-dev/apart/$(basename $f .tir)_apart.tir
  sed -e 's/consumer_split_k = \([0-9]\)}/consumer_split_k = \1, share_role_code = false}/' \
      -e 's/consumer_split_k = \([0-9]\), producer/consumer_split_k = \1, share_role_code = false, producer/' \
      -e 's/^kernel @\([a-z0-9_]*\)\[/kernel @\1_apart[/' $f > $a
  grep -q "share_role_code = false" $a || echo "no pin in $a"
  K="$K,$f,$a"
done
timeout 300 $T bench gemm --kernels ${K#,} --iterations 30 --json $OUT/gemm.jsonl \
  --shapes 64x4096x4096,16x4096x11008,64x4096x11008,256x4096x11008,16x4096x14336 > $LOG/gemm.log 2>&1
echo "bench gemm rc=$?"; grep -E "^ *[0-9]+x|FAIL|rror|mismatch" $LOG/gemm.log | head -60
(export PYTHONPATH=$PWD/build-py/python:$PWD/bench/python
 cd bench/python && timeout 300 python3 w4a16.py --json $OUT/w4a16.jsonl --iterations 30 --graph 8 --sets 4 \
   --shapes 1x8192x8192g128,8x8192x8192g128,16x8192x8192g128,1x8192x32768g128 \
   --variants $B,${B}_ns,c64x16_k256_h2_gs_w3_p1_st8_ovpreload,c64x16_k256_h2_gs_w3_p1_st8_ovpreload_ns 2>&1 |
   grep -E "graph of|FAIL|rror")
