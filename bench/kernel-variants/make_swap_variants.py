#!/usr/bin/env python3
"""Writes swapped-operand GEMM variants: C = A·Bᵀ (or A·B, Aᵀ·B, Aᵀ·Bᵀ) computed as Cᵀ = B·Aᵀ.

For few tokens (M = 16 .. 64 against N, K of thousands) the weights B fill wgmma's M (64 or 128
rows: one or two consumer warpgroups) and the M tokens of A its N (16 .. 64, a multiple of 8),
instead of a 64-row A tile of which M = 16 uses a quarter. With A stored [K,M] the token tile is
wgmma's B MN-major: 16 or 32 tokens are rows of 32 or 64 bytes, which synthesis swizzles by 32 or
64 bytes. The accumulator [rows, tokens] is
stored through a register transpose (a view) into C's [tokens, rows] tile; split-k
(`split_k = auto`) writes its partials through the same transpose. The kernels take the same
arguments as examples/kernels/gemm{,_nn,_tn,_tt}.tir, so they join those families in
`tessel bench gemm --kernels a.tir+b.tir` and `tessel tune`. Measured in
bench/results/2026-11-26-gemm-swap-h100.md.

usage: make_swap_variants.py OUT_DIR [--bf16]
"""
import sys

# name suffix: (rows, tokens, stages, split_k, cluster): a 2x1 cluster pairs blocks of adjacent
# weight rows, which share (multicast) the token tile
CONFIGS = {
    "r64_t16_s12": (64, 16, 12, False, False),
    "r64_t16_s12_split_k": (64, 16, 12, True, False),
    "r64_t32_s12_split_k": (64, 32, 12, True, False),
    "r64_t64_s8_split_k": (64, 64, 8, True, False),
    "r64_t64_s12_split_k": (64, 64, 12, True, False),
    "r128_t16_s8": (128, 16, 8, False, False),
    "r128_t16_s12_split_k": (128, 16, 12, True, False),
    "r128_t64_s8_split_k": (128, 64, 8, True, False),
    "r64_t64_s8_cluster2x1": (64, 64, 8, False, True),
    "r64_t64_s8_cluster2x1_split_k": (64, 64, 8, True, True),
    "r64_t32_s12_cluster2x1_split_k": (64, 32, 12, True, True),
    "r64_t16_s12_cluster2x1_split_k": (64, 16, 12, True, True),
}

# layout prefix: (A stored [K,M], B stored [K,N]) in BLAS letters on row-major data
LAYOUTS = {"": (False, False), "nn_": (False, True), "tn_": (True, True), "tt_": (True, False)}


def program(name, rows, tokens, stages, split, cluster, a_km, b_kn, dtype):
    R, T, E = str(rows), str(tokens), dtype
    if b_kn:
        b = ("    %B_tile = tile %B, %k, %bn {masked, pad = 0.0, shape = [64,R]} : global<E>[64,R]\n"
             "    %sB = copy %B_tile : shared<E>[64,R]\n"
             "    %sW = transpose %sB : shared<E>[R,64]\n")
    else:
        b = ("    %B_tile = tile %B, %bn, %k {masked, pad = 0.0, shape = [R,64]} : global<E>[R,64]\n"
             "    %sW = copy %B_tile : shared<E>[R,64]\n")
    if a_km:
        a = ("    %A_tile = tile %A, %k, %bm {masked, pad = 0.0, shape = [64,T]} : global<E>[64,T]\n"
             "    %sAt = copy %A_tile : shared<E>[64,T]\n")
    else:
        a = ("    %A_tile = tile %A, %bm, %k {masked, pad = 0.0, shape = [T,64]} : global<E>[T,64]\n"
             "    %sA = copy %A_tile : shared<E>[T,64]\n"
             "    %sAt = transpose %sA : shared<E>[64,T]\n")
    pins = ", ".join((["cluster = [2,1]"] if cluster else []) + (["split_k = auto"] if split else []))
    pins = " {" + pins + "}" if pins else ""
    facts = ["K % 8 == 0"] + (["M % 8 == 0"] if a_km else []) + (["N % 8 == 0"] if b_kn else [])
    text = (
        "kernel @NAME[M, N, K](%A: global<E>" + ("[K,M]" if a_km else "[M,K]") +
        ", %B: global<E>" + ("[K,N]" if b_kn else "[N,K]") + ", %C: global<E>[M,N]) facts(" +
        ", ".join(facts) + ") {\n"
        "  %M = size {name = M} : index\n  %N = size {name = N} : index\n  %K = size {name = K} : index\n"
        "  %rows = const {value = R} : index\n  %tokens = const {value = T} : index\n"
        "  %c64 = const {value = 64} : index\n  %c0 = const {value = 0} : index\n"
        "  %c1 = const {value = 1} : index\n"
        "  %tiles_n = cdiv %N, %rows : index\n  %tiles_m = cdiv %M, %tokens : index\n"
        "  %bn, %bm = block_grid %tiles_n, %tiles_m" + pins +
        " : index, index\n"
        "  %zero = fill {value = 0.0} : register<f32>[R,T]\n  %tiles_k = cdiv %K, %c64 : index\n"
        "  %acc = for %k = %c0 to %tiles_k step %c1 iter(%c = %zero) {stages = " + str(stages) +
        "} : register<f32>[R,T] {\n" + b + a +
        "    %c_next = mma %sW, %sAt, %c : register<f32>[R,T]\n    yield %c_next\n  }\n"
        "  %accT = transpose %acc : register<f32>[T,R]\n"
        "  %C_tile = tile %C, %bm, %bn {masked, pad = 0.0, shape = [T,R]} : global<E>[T,R]\n"
        "  %out = cast %accT : register<E>[T,R]\n  copy %out, %C_tile\n}\n")
    return text.replace("NAME", name).replace("R]", R + "]").replace("[R,", "[" + R + ",").replace(
        "value = R}", "value = " + R + "}").replace("T]", T + "]").replace("[T,", "[" + T + ",").replace(
        "value = T}", "value = " + T + "}").replace("<E>", "<" + E + ">")


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    bf16 = "--bf16" in sys.argv
    if len(args) != 1:
        sys.exit(__doc__)
    for prefix, (a_km, b_kn) in LAYOUTS.items():
        for suffix, (rows, tokens, stages, split, cluster) in CONFIGS.items():
            name = "gemm_%s%sswap_%s" % (prefix, "bf16_" if bf16 else "", suffix)
            with open("%s/%s.tir" % (args[0], name), "w") as f:
                f.write("// C = A·B%s as Cᵀ = B·Aᵀ, %dx%d accumulator tiles (weights x tokens), "
                        "%d stages%s%s%s (written by bench/kernel-variants/make_swap_variants.py)\n" % (
                            "" if b_kn else "ᵀ", rows, tokens, stages, ", 2x1 clusters" if cluster else "",
                            ", split_k = auto" if split else "", ", bf16" if bf16 else ""))
                f.write(program(name, rows, tokens, stages, split, cluster, a_km, b_kn,
                                "bf16" if bf16 else "f16"))
            print(name)


if __name__ == "__main__":
    main()
