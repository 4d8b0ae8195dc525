#!/usr/bin/env python3
"""Writes tile-size / split / ring-depth variants of an example GEMM (examples/kernels/gemm*.tir).

The example programs use 128 for every M extent of a tile, 256 for every N extent and 64 for K
(in shape lists `[..]` and the two tile-size constants), so a variant is the same program with
those numbers replaced, plus pins on its block grid (raster_group, split_k) and its K loop
(stages). The element type can be changed from f16 to bf16. Each variant is written with a first
line saying how it was made; compile them before use (`tessel compile FILE --emit=cubin`).

usage: make_variants.py BASE.tir OUT_DIR [--bf16]
"""
import re
import sys

# name suffix: (tile M, tile N, split_k, stages) — the families of bench/results/2026-11-26-gemm-sweep-*.md
CONFIGS = {
    "t128_s4_r8": (128, 128, None, None),
    "t128_split_k": (128, 128, "auto", None),
    "m64": (64, 256, None, None),
    "m64_t128": (64, 128, None, None),
    "m64_t128_split_k": (64, 128, "auto", None),
    "n192": (128, 192, None, None),
    "n192_split_k": (128, 192, "auto", None),
    "m64_n64": (64, 64, None, None),
    "m64_n64_s8": (64, 64, None, 8),
    "m64_n64_s8_split_k": (64, 64, "auto", 8),
    "m64_t128_s8_split_k": (64, 128, "auto", 8),
}


def variant(text, base, name, tm, tn, split, stages, bf16):
    out = text.replace("kernel @%s[" % base, "kernel @%s[" % name)
    out = out.replace("%c128 = const {value = 128}", "%%c128 = const {value = %d}" % tm)
    out = out.replace("%c256 = const {value = 256}", "%%c256 = const {value = %d}" % tn)

    def shape(m):
        dims = {"128": str(tm), "256": str(tn)}
        return "[" + ",".join(dims.get(d, d) for d in m.group(1).split(",")) + "]"

    out = re.sub(r"\[([0-9,]+)\]", shape, out)
    pins = ["raster_group = 8"] + (["split_k = %s" % split] if split else [])
    out, n = re.subn(r"(block_grid %tiles_m, %tiles_n(?:, %\w+)?) :", r"\1 {%s} :" % ", ".join(pins), out)
    assert n == 1, "no unpinned block_grid in " + base
    if stages:
        out, n = re.subn(r"(iter\(%c = %zero\)) :", r"\1 {stages = %d} :" % stages, out)
        assert n == 1, "no K loop in " + base
    if bf16:
        out = re.sub(r"(global|shared|register)<f16>", r"\1<bf16>", out)
    how = "%s.tir with a %dx%d tile%s%s%s (written by bench/kernel-variants/make_variants.py)" % (
        base, tm, tn, ", split_k = " + split if split else "", ", stages = %d" % stages if stages else "",
        ", bf16" if bf16 else "")
    return "// " + how + "\n" + out


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--")]
    bf16 = "--bf16" in sys.argv
    if len(args) != 2:
        sys.exit(__doc__)
    text = open(args[0]).read()
    base = re.search(r"kernel @(\w+)\[", text).group(1)
    prefix = base + ("_bf16" if bf16 else "")
    if bf16:
        with open("%s/%s.tir" % (args[1], prefix), "w") as f:
            f.write("// %s.tir in bf16 (written by bench/kernel-variants/make_variants.py)\n" % base +
                    re.sub(r"(global|shared|register)<f16>", r"\1<bf16>", text).replace(
                        "kernel @%s[" % base, "kernel @%s[" % prefix))
    for suffix, (tm, tn, split, stages) in CONFIGS.items():
        name = "%s_%s" % (prefix, suffix)
        with open("%s/%s.tir" % (args[1], name), "w") as f:
            f.write(variant(text, base, name, tm, tn, split, stages, bf16))
        print(name)


if __name__ == "__main__":
    main()
