#!/usr/bin/env bash
# A tour of what tessel can do so far: the layout calculator (CuTe's layout algebra, parametric
# extents, swizzles, thread-value layouts) with tables and SVG pictures; the tile IR in the CPU
# interpreter; layout synthesis and CUDA generation, the GEMMs in the interpreter and compiled; on a
# GPU, the compiled kernels against their baselines, ending with one table (examples/compile_tour.sh).
# Usage: examples/tour.sh PATH/TO/tessel   (pictures go to <build dir>/tour/, next to bin/)
set -euo pipefail
tessel=${1:-build/bin/tessel}
out="$(cd "$(dirname "$tessel")/.." && pwd)/tour"
mkdir -p "$out"
svgs=()

step() { printf '\n== %s\n' "$1"; }
run() {  # run: print the command line, then its output
  local line="$ tessel" a
  for a in "$@"; do
    if [[ $a =~ ^[A-Za-z0-9_./=-]+$ ]]; then line+=" $a"; else line+=" '$a'"; fi
  done
  echo "$line"
  "$tessel" "$@"
}
svg() {  # svg NAME ARGS...: draw the result into $out/NAME.svg
  local name=$1
  shift
  run "$@" --svg "$out/$name.svg"
  svgs+=("$out/$name.svg")
}

"$tessel" version

step "A layout is a function from coordinates to offsets: shape:stride, colexicographic"
run layout --table '(4,(2,3)):(2,(1,8))'
run layout 'eval((4,(2,3)):(2,(1,8)),5)'

step "Hexcute's packed int4 layout (Fig. 5): A(6) = 136, and it is a permutation of 0..255"
run layout '((2,2,2,4),(8,)):((1,8,128,2),(16,))'
run layout 'eval(((2,2,2,4),(8,)):((1,8,128,2),(16,)),6)'
run layout 'left_inverse(((2,2,2,4),(8,)):((1,8,128,2),(16,)))'

step "Composition, complement and divide (the CuTe documentation's worked examples)"
run layout 'composition((6,2):(8,2),(4,3):(3,1))'
run layout 'complement(4:2,24)'
run layout --table 'logical_divide((4,2,3):(2,1,8),4:2)'
run layout 'zipped_divide((9,(4,8)):(59,(13,1)),<3:3,(2,4):(1,8)>)'

step "Products: a 2x5 row-major block over a 3x4 grid, blocked and raked"
svg blocked_product layout 'blocked_product((2,5):(5,1),(3,4):(1,3))'
svg raked_product layout 'raked_product((2,5):(5,1),(3,4):(1,3))'

step "Parametric extents: tiling an MxN matrix needs M%128 and N%64, which tessel proves or asks for"
run layout --assume 'M%128==0' --assume 'N%64==0' 'zipped_divide((M,N):(1,M),<128:1,64:1>)'
run layout 'zipped_divide((M,N):(1,M),<128:1,64:1>)' || true

step "The 128-byte swizzle of an 8x64 f16 shared tile (Sw<3,3,3> in elements = Sw<3,4,3> in bytes)"
svg swizzle_128b layout 'Sw<3,3,3> o (8,64):(64,1)'

step "Thread-value layouts: mma.sync m16n8k16 accumulator, (T,V) -> 16x8"
svg mma_m16n8k16_c layout --tv 16x8 --table '((4,8),(2,2)):((32,1),(16,8))'
run layout 'inverse(tv(((4,8),(2,2)):((32,1),(16,8)),(16,8)))'

step "ldmatrix.x4 lands exactly in mma's A-operand layout, (T,V) -> 16x16"
svg ldmatrix_x4_dst layout --tv 16x16 '((4,8),(2,2,2)):((32,1),(16,8,128))'

step "Where each thread finds its A fragment in a row-major 16x16 shared tile: (T,V) -> offset"
run layout 'compose(tv(((4,8),(2,2,2)):((32,1),(16,8,128)),(16,16)),(16,16):(16,1))'
echo "(the value mode (2,2,2):(1,128,8) starts with 2:1 — each register holds two adjacent halves)"

step "wgmma m64nNk16 accumulator (HOPPER.md), shown for N=16; parametric in N"
svg wgmma_m64n16_acc layout --tv 64x16 '((4,8,4),(2,2,2)):((128,1,16),(64,8,512))'
run layout 'size(((4,8,4),(2,2,N/8)):((128,1,16),(64,8,512)))'

step "A TV layout built from a thread layout and a value layout (CuTe's make_layout_tv)"
svg make_tv_layout layout 'make_tv_layout((4,8):(8,1),(2,4))'

step "Pictures"
for f in "${svgs[@]}"; do echo "$f"; done

# The tile IR and its CPU interpreter: a GEMM and a softmax written in the tile language, run on
# random inputs with ragged sizes (examples/tile/tour.sh).
"$(dirname "$0")/tile/tour.sh" "$tessel"

# The compiler end to end: layout synthesis, generated CUDA, the GEMMs in the interpreter and through
# NVRTC, and on a GPU every example kernel checked and timed against its baseline, in one table last
# (examples/compile_tour.sh).
"$(dirname "$0")/compile_tour.sh" "$tessel"
