#!/usr/bin/env bash
# The compiler end to end: layout synthesis on a tile program, the CUDA C++ it becomes, the GEMMs
# (TMA + wgmma) run in the interpreter and compiled by NVRTC, and, where this machine has a GPU, the
# compiled kernels checked and timed against their baselines (cuBLAS for the GEMMs, a copy kernel of
# the same bytes for the memory-bound ones), ending with one table of all of them.
# Usage: examples/compile_tour.sh PATH/TO/tessel
set -euo pipefail
tessel=${1:-build/bin/tessel}
here="$(cd "$(dirname "$0")" && pwd)"

step() { printf '\n== %s\n' "$1"; }
run() {
  echo "$ tessel $*"
  "$tessel" "$@"
}

step "Layout synthesis: RMSNorm with no layout or instruction written; tessel chooses both"
echo "$ tessel opt examples/tile/rmsnorm.tir --passes=synthesize-layouts,synthesize-shared-layouts"
synthesized=$("$tessel" opt "$here/tile/rmsnorm.tir" --passes=synthesize-layouts,synthesize-shared-layouts)
# (sed, not head: head would close the pipe early, a SIGPIPE that pipefail turns into a failure)
grep -E "block_grid|copy|reduce" <<<"$synthesized" | sed -n 1,6p

step "The CUDA C++ it becomes (the kernel's first lines), compiled by NVRTC for sm_90a"
echo "$ tessel compile examples/tile/rmsnorm.tir --emit=cuda"
cuda=$("$tessel" compile "$here/tile/rmsnorm.tir" --emit=cuda)
sed -n '/^extern "C"/,$p' <<<"$cuda" | sed -n 1,16p
run compile "$here/tile/rmsnorm.tir" --emit=cubin -o "${TMPDIR:-/tmp}/tessel_rmsnorm.cubin" --time

# The GEMM example kernels (examples/kernels/): tile programs with nothing pinned; the bench reads
# their roles and epilogue from the kernel itself.
# gemm_sm80 is the mma.sync + cp.async path (sm_80's instructions; on a GPU its cubin is built
# for the device), for comparison.
gemms=""
for k in gemm gemm_bf16 gemm_bias_relu dual_gemm gemm_sm80; do
  [ -f "$here/kernels/$k.tir" ] && gemms+="$k "
done
gemms=${gemms% }
gemm_paths=$(for k in $gemms; do printf '%s,' "$here/kernels/$k.tir"; done)
gemm_paths=${gemm_paths%,}

step "The memory-bound example kernels (examples/kernels/, layouts pinned) in the CPU interpreter"
for k in bias_gelu softmax rmsnorm layernorm gemv; do
  echo "$ tessel run examples/kernels/$k.tir --interpret --size M=37,N=1048 --show 4"
  "$tessel" run "$here/kernels/$k.tir" --interpret --size M=37,N=1048 --show 4 | grep -E "^kernel|first"
done

step "GEMMs in the tile language: C = A B^T on 128x256x64 tiles, in the CPU interpreter (ragged sizes)"
run run "$here/kernels/gemm.tir" --interpret --size M=130,N=260,K=72 --show 4
run run "$here/kernels/gemm_bias_relu.tir" --interpret --size M=130,N=260,K=72 --show 4
run run "$here/kernels/dual_gemm.tir" --interpret --size M=130,N=260,K=72 --show 4

step "The GEMMs compiled (sm_90a: TMA + wgmma; sm_80: cp.async + mma.sync): roles, epilogue, compile times"
echo "$ tessel bench gemm --compile-only --kernels $gemms (examples/kernels/*.tir)"
"$tessel" bench gemm --compile-only --kernels "$gemm_paths"

gpu=$("$tessel" version | sed -n 's/^gpu: //p')
step "GPU: $gpu"
if [[ $gpu == none* ]]; then
  echo "No GPU on this machine: the kernels above ran in the CPU interpreter, and their CUDA"
  echo "compiled (NVRTC, sm_90a and sm_80). On a GPU this step checks and times them."
  exit 0
fi
run run "$here/tile/rmsnorm.tir" --gpu --check --size M=1000,N=777
run run "$here/tile/softmax.tir" --gpu --check --size M=513,N=1000
# Every suite appends its rows to one JSON-lines file; a failing row is reported, the tour goes on
# to the table and exits 1 at the end.
records="${TMPDIR:-/tmp}/tessel_tour_$$.jsonl"
rm -f "$records"
status=0
run bench memory-bound --iterations 20 --json "$records" || status=1
run bench gemm --kernels "$gemm_paths" --shapes 8192x8192x8192,8192x8192x4096,8191x4097x520 \
  --iterations 30 --json "$records" || status=1
run bench gemm-reference --shapes 8192x8192x8192 --iterations 30 --json "$records" || status=1
# PyTorch's operators for the same families, where the machine has PyTorch (rows named torch.*).
if command -v python3 >/dev/null; then
  echo "$ python3 bench/torch_baselines.py --iterations 30 --json ..."
  python3 "$here/../bench/torch_baselines.py" --iterations 30 --json "$records" \
    --gemm-shapes 8192x8192x8192,8192x8192x4096,8191x4097x520 || true
fi

step "The example kernels on $gpu: correctness and speed against their baselines"
echo "correct: relative error against the reference (float64 on sampled entries; the GEMMs are also"
echo "checked element by element against cuBLAS + the kernel's epilogue); achieved: GB/s of the"
echo "bytes a kernel must move, or TFLOP/s; baseline: a copy kernel moving as many bytes, or cuBLAS"
echo "(plain GEMMs; cuBLASLt's fused bias + ReLU for that GEMM) on the same inputs, interleaved;"
echo "fraction: achieved / baseline (GEMMs: cuBLAS time / tessel time)."
echo "torch.* rows: PyTorch's operators, same shapes (rel_err against PyTorch in f32 / float64)."
run bench summary "$records" || status=1
rm -f "$records"
exit $status
