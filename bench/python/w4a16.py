#!/usr/bin/env python3
"""W4A16 GEMM: tessel's examples/kernels/gemm_w4a16.tir (and tile-size variants of it) against
cuBLAS f16 on the dequantized weights and against the bytes the product must move, in one process.

Y = X · Wᵀ, X [M,K] f16, W [N,K] = (Q - 8) · S with Q [N,K] uint4 packed two a byte (value 2k in
the low nibble of byte k; passed as a uint8 tensor [N, K/2]) and group scales S [K/G, N] f16.
Inputs: Q uniform in 0..15, S uniform in [0.005, 0.02), X torch.randn * 0.5 (seeded per shape).
Check: Y poisoned (NaN) before the launch; rows 0..min(M,64), the last 64 and every 61st against
float64 products of X and the dequantized W (rel_err <= 4e-3), and all of Y against cuBLAS's
f16 product on the dequantized weights (rel_err <= 1e-2).
Baselines, timed interleaved with the kernel (bench_common.time_interleaved, medians):
`torch.matmul(X, W16.t())` on W16 = the dequantized f16 weights (cuBLAS), and a copy of the
weights' bytes (`torch.Tensor.copy_` of an int8 tensor of N·K/2 bytes) for the bandwidth the
read of the packed weights can reach. Reported: ms, TFLOP/s, GB/s of the bytes the kernel must
move (Q + S + X + Y), its fraction of the copy's read+write GB/s and of the H100's nominal
3.35 TB/s, the ratio cuBLAS ms / tessel ms.

Variants (--variants): `tRxT` = R weight rows x T tokens per block (the example is t128x64),
`_kKT` a K tile of KT (64 in the example; shapes whose group size is not a multiple of it are
skipped), `_sk` = split_k = auto on the block grid, `_skS` = S parts, `_bB` = blocks_per_sm = B
(B blocks share an SM: launch bound and register budget 64K / (B x 256 threads); the persistent
grid is sized by the occupancy the launch finds; `_sk` and `_bB`, B > 1, were refused from
2026-11-27 to 2026-11-28: intermittently wrong until lower-arefs fenced the weight slots' reads,
bench/results/2026-11-28-w4a16-proxy-fence-h100.md), `_wW` = consumer_split_k = W (the K loop taken in
turns by W consumer warpgroups of the block, summed in shared memory: split-roles), `_pP` =
producer_split_k = P (the loads issued in turns by P producer warpgroups), `_stN` = N pipeline
stages pinned on the K loop, `_ovoff` / `_ovprefetch` / `_ovpreload` = overlap_launches = off /
prefetch / preload (`preload`: the first ring-depth weight loads issued before the wait; by
default each launch overlaps the one before it and waits for it before its first access that
may depend on it; `prefetch` also asks for the first weight tiles in L2 before waiting; `off`
launches as before), `_nt` = tighten_arefs = false (the consumers wait for every slot at the top
of the K loop and release it at the bottom, as before the pass tighten-arefs), `_sg` (with `_gs`)
= the `_hH` parts need not be scale groups: each part takes the scale row of its first column, so
parts of 64 columns can share groups of 128, `_ul` = unpack_at = load (each part's weights
unpacked where the tile is read from shared memory instead of where its slice stands, as before
the seventeenth session), `_ns` = share_role_code = false (each consumer role of `_wW` emitted
with its own copy of the K loop, as before the seventeenth session; by default roles that begin
alike share one copy, src/target/cuda/emit_shared_roles.cpp).
Each is the example's text with its tile extents replaced; one that does not compile is reported
and skipped. `pRxT` is the same over
examples/kernels/gemm_w4a16_packed.tir: the weights passed in the packed order that
`pack_interleaved` makes (each thread's fragment bytes contiguous, nibbles interleaved for the
one-lop3 unpack; the layout is in that file's comment), the same Q, S and X otherwise. `sRxT`
is bench/kernel-variants/gemm_w4a16_packed_group_scale.tir (packed order, the group scale
applied to each K tile's product instead of to every weight). `cRxT` is
bench/kernel-variants/gemm_w4a16_tiled.tir: the weights stored tile by tile (`pack_tiled`: each
R x KT tile one contiguous run, a block's K range one stream). `zRxT` is
examples/kernels/gemm_w4a16_zp.tir: the natural order with a zero point per group and weight row
(Z [K/G, N] f16, whole numbers 0..15 as AWQ stores them: W = (Q - Z) · S), passed after S.

usage: w4a16.py [--shapes MxNxKgG,...] [--variants t128x64,p64x16_k128_sk4,...] [--json FILE]
                [--iterations N] [--graph LAUNCHES [--sets S]] [--pad-m P]

--graph: each kernel and baseline also timed as a CUDA graph of LAUNCHES launches rotating over
S copies of its weights (graph_* fields of the record): back-to-back launches without host gaps,
as a model's decode step runs them (bench/results/2026-11-27-w4a16-fixed-costs-h100.md).
"""
import argparse
import json
import os
import re
import sys

import torch

from bench_common import provenance, repository_root, time_interleaved

NOMINAL_GBPS = 3350.0

# Per value name of the example: which extents its shape list holds (R rows, T tokens, KT the K
# tile, 64 in the example).
SHAPES = {
    "%Q_tile": "R,KT", "%sQ": "R,KT", "%q": "R,KT", "%qf": "R,KT", "%sb": "R,KT", "%qc": "R,KT",
    "%w": "R,KT", "%X_tile": "T,KT", "%sX": "T,KT", "%sXt": "KT,T", "%zero": "R,T", "%acc": "R,T",
    "%c_next": "R,T", "%accT": "T,R", "%Y_tile": "T,R", "%out": "T,R", "%S_tile": "R", "%sS": "R", "%s": "R",
    # bench/kernel-variants/gemm_w4a16_packed_group_scale.tir's own values
    "%s32": "R", "%sbt": "R,T", "%fresh": "R,T", "%part": "R,T",
    # examples/kernels/gemm_w4a16_zp.tir's zero points
    "%Z_tile": "R", "%sZ": "R", "%z": "R", "%zb": "R,KT",
}


def packed_position(c):
    """Nibble of column c (0..63) in its 64-column block: the layout (2,4,2,2,2):(4,16,1,2,8) that
    gemm_w4a16_packed.tir declares for Q, c = e + 2q + 8h + 16s0 + 32s1 -> 4e + 16q + h + 2s0 + 8s1."""
    e, q, h, s0, s1 = c & 1, (c >> 1) & 3, (c >> 3) & 1, (c >> 4) & 1, (c >> 5) & 1
    return 4 * e + 16 * q + h + 2 * s0 + 8 * s1


def packed_position_32(c):
    """Nibble of column c (0..31) in a 32-column block, the packed order for a K tile of 32 (group
    size 32): (2,4,2,2):(4,8,1,2), c = e + 2q + 8h + 16s -> 4e + 8q + h + 2s — a thread's two k16
    steps of a row one 32-bit word, each pair (e = 0, 1) at nibbles p and p + 4."""
    e, q, h, s = c & 1, (c >> 1) & 3, (c >> 3) & 1, (c >> 4) & 1
    return 4 * e + 8 * q + h + 2 * s


def pack_natural(q):
    """uint8 [N, K] values 0..15 -> uint8 [N, K/2]: value 2k in the low nibble of byte k."""
    return (q[:, 0::2] | (q[:, 1::2] << 4)).contiguous()


def pack_interleaved(q, block=64):
    """uint8 [N, K] values 0..15 (K % 64 == 0) -> uint8 [N, K/2] in gemm_w4a16_packed.tir's order:
    within each block of 64 columns, column c at nibble packed_position(c) (block=32: the K-tile-32
    variants' packed_position_32)."""
    n, k = q.shape
    position = packed_position if block == 64 else packed_position_32
    perm = torch.tensor([position(c) for c in range(block)], device=q.device)
    nibbles = torch.empty_like(q).view(n, k // block, block)
    nibbles[:, :, perm] = q.view(n, k // block, block)
    return pack_natural(nibbles.view(n, k))


def pack_tiled(q, rows, k_tile):
    """uint8 [N, K] values 0..15 -> uint8 [N K / k_tile, k_tile / 2] in gemm_w4a16_tiled.tir's order:
    the rows x k_tile tile (bn, k) of W at rows (bn * K / k_tile + k) * rows ..., each row of it
    in the packed nibble order (pack_interleaved), so every tile is one contiguous run."""
    n, k = q.shape
    tiles = q.view(n // rows, rows, k // k_tile, k_tile).permute(0, 2, 1, 3)
    return pack_interleaved(tiles.reshape(n * k // k_tile, k_tile))


def variant_text(text, rows, tokens, split_k, k_tile=64, blocks_per_sm=1, stages=None,
                 consumers=1, producers=1, overlap=None, tighten=True, unpack_at_load=False,
                 apart=False):
    """The example with R = rows, T = tokens, a K tile of k_tile (one scale per K tile: valid for
    group sizes that are multiples of it), split_k (False, True for auto, or a part count),
    blocks_per_sm (the launch bound and register budget: blocks sharing an SM) and stages (the K
    loop's pinned ring depth; None leaves it to the stage budget) and consumers (consumer
    warpgroups taking the K tiles in turn, consumer_split_k; 1: one) and producers (the same for
    the warpgroups issuing the loads, producer_split_k) and overlap (the block grid's
    overlap_launches: off, wait, early, late, prefetch or preload; None leaves the default,
    wait) and tighten (False: the block grid pins tighten_arefs = false, the consumers' aref waits
    and releases where warp-specialize and pipeline-arefs put them) and unpack_at_load (True: the
    block grid pins unpack_at = load, the weights of every part unpacked where they are read from
    shared memory, as before the seventeenth session (2026-11-29), instead of where each part's
    slice stands) and apart (True: the block grid pins share_role_code = false, each consumer
    role with its own copy of the K loop, as before the seventeenth session)."""
    out = []
    for line in text.splitlines():
        m = re.match(r"\s*(%\w+)(?:, %\w+)*\s*=", line)
        name = m.group(1) if m else None
        if name in SHAPES:
            ext = SHAPES[name].replace("KT", str(k_tile)).replace("R", str(rows)).replace("T", str(tokens))
            line = re.sub(r"\[[0-9,]+\](?=\s*(\{|$))", "[%s]" % ext, line)
            if name in ("%Q_tile", "%X_tile", "%Y_tile", "%S_tile", "%Z_tile"):
                box = "1," + ext if name in ("%S_tile", "%Z_tile") else ext
                line = re.sub(r"shape = \[[0-9,]+\]", "shape = [%s]" % box, line)
        line = line.replace("%rows = const {value = 128}", "%%rows = const {value = %d}" % rows)
        line = line.replace("%tokens = const {value = 64}", "%%tokens = const {value = %d}" % tokens)
        line = line.replace("%c64 = const {value = 64}", "%%c64 = const {value = %d}" % k_tile)
        # gemm_w4a16_tiled.tir: Q holds one K tile per row, R-row tiles whole
        line = line.replace("(NQ,((2,4,2,2,2),1)):(64,((4,16,1,2,8),64))>[NQ,64]",
                            "(NQ,((2,4,2,2,2),%d)):(%d,((4,16,1,2,8),64))>[NQ,%d]" % (k_tile // 64, k_tile, k_tile))
        line = line.replace("N % 128 == 0)", "N %% %d == 0)" % rows)
        # The tiled weights hold whole K tiles: K must be a multiple of the tile (a K of 1280
        # with tiles of 512 had been checked, and its GPU and interpreter runs disagreed).
        if "[NQ," in line and k_tile > 64:
            line = line.replace("facts(K % 64 == 0", "facts(K %% %d == 0" % k_tile)
        # gemm_w4a16_packed.tir with a K tile of 32: 32-column blocks (packed_position_32)
        if k_tile == 32:
            line = line.replace("(N,((2,4,2,2,2),K/64)):(K,((4,16,1,2,8),64))",
                                "(N,((2,4,2,2),K/32)):(K,((4,8,1,2),32))")
        if stages and "iter(%c = %zero) :" in line:
            line = line.replace("iter(%c = %zero) :", "iter(%%c = %%zero) {stages = %d} :" % stages)
        if "block_grid" in line:
            pins = []
            if split_k:
                pins.append("split_k = %s" % ("auto" if split_k is True else split_k))
            if blocks_per_sm > 1:
                pins.append("blocks_per_sm = %d" % blocks_per_sm)
            if consumers > 1:
                pins.append("consumer_split_k = %d" % consumers)
            if producers > 1:
                pins.append("producer_split_k = %d" % producers)
            if overlap:
                pins.append("overlap_launches = %s" % overlap)
            if not tighten:
                pins.append("tighten_arefs = false")
            if unpack_at_load:
                pins.append("unpack_at = load")
            if apart:
                pins.append("share_role_code = false")
            if pins:
                line = line.replace(" : index, index", " {%s} : index, index" % ", ".join(pins))
        out.append(line)
    return "\n".join(out) + "\n"


# The kernel each variant prefix names (w4a16.py's docstring), relative to the repository root.
BASES = {"t": "examples/kernels/gemm_w4a16.tir", "p": "examples/kernels/gemm_w4a16_packed.tir",
         "s": "bench/kernel-variants/gemm_w4a16_packed_group_scale.tir",
         "c": "bench/kernel-variants/gemm_w4a16_tiled.tir", "z": "examples/kernels/gemm_w4a16_zp.tir"}
VARIANT = re.compile(r"([tpscz])(\d+)x(\d+)(?:_k(\d+))?(?:_h(\d+))?(_gs)?(?:_sk(\d*))?(?:_b(\d+))?(?:_w(\d+))?"
                     r"(?:_p(\d+))?(?:_st(\d+))?(?:_ov(off|wait|early|late|prefetch|preload))?(_nt)?(_sg)?(_ul)?(_ns)?")


def parse_variant(name):
    """`[tpscz]RxT[_kKT][_hH][_gs][_sk[S]][_bB][_wW][_pP][_stN][_ovMODE][_nt][_sg][_ul][_ns]` -> dict(prefix,
    rows, tokens, k_tile, groups, scale_after, split_k, blocks_per_sm, consumers, producers, stages,
    overlap, tighten, shared_groups, unpack_at_load, apart)."""
    m = VARIANT.fullmatch(name)
    if not m:
        raise ValueError("variant %r is not [tpscz]RxT[_kKT][_hH][_gs][_sk[S]][_bB][_wW][_pP][_stN][_ovMODE][_nt][_sg][_ul][_ns]"
                         % name)
    split = False if m.group(7) is None else (int(m.group(7)) if m.group(7) else True)
    v = {"prefix": m.group(1), "rows": int(m.group(2)), "tokens": int(m.group(3)),
         "k_tile": int(m.group(4) or 64), "groups": int(m.group(5) or 1),
         "scale_after": m.group(6) is not None, "split_k": split,
         "blocks_per_sm": int(m.group(8) or 1), "consumers": int(m.group(9) or 1),
         "producers": int(m.group(10) or 1), "stages": int(m.group(11)) if m.group(11) else None,
         "overlap": m.group(12), "tighten": m.group(13) is None,
         "shared_groups": m.group(14) is not None, "unpack_at_load": m.group(15) is not None,
         "apart": m.group(16) is not None}
    if v["groups"] > 1 and (v["prefix"] != "c" or v["rows"] != 64 or v["k_tile"] % (16 * v["groups"])):
        raise ValueError("variant %r: _hH splits a K tile among H scale groups only in the tiled "
                         "64-row kernel (c64x...), into parts of a multiple of 16 columns" % name)
    if v["shared_groups"] and not v["scale_after"]:
        raise ValueError("variant %r: _sg (parts that share a scale group) goes with _gs" % name)
    if v["scale_after"] and v["groups"] < 2:
        raise ValueError("variant %r: _gs (each group's scale applied after its mma) goes with _hH, "
                         "H >= 2, in the tiled 64-row kernel (c64x..._hH_gs)" % name)
    return v


def split_groups(text, k_tile, groups, tokens=16, scale_after=False, shared_groups=False):
    """The tiled kernel's K loop with H = groups scale groups per K tile of k_tile (groups of
    k_tile / H columns): the dequantized tile split by `slice` into H parts, each scaled by its
    group's row of S and multiplied by its own X tile (a part of k_tile / H columns, `tokens`
    rows: 8 makes the X box stop 8 rows past a single token instead of 15). The
    unpacked weights are pinned to the wgmma A layout of the whole tile (64 rows, one consumer
    warpgroup), of which each part is a window.
    scale_after (`_gs`): each part's wgmma takes the unscaled weights Q - 8 (exact in f16) into a
    fresh accumulator, and the group's scale, in f32, multiplies that product as it is added to
    the running sum (an fma of R x T / 128 values a thread instead of a packed multiply of every
    weight pair: the dequant is the consumer's issue bound once the stream is fast, as on the
    H200, bench/results/2026-11-28-h200-first-h200.md). The fmas follow all the groups' mmas.
    Rows of S are one scale per weight row, constant along K within a group, which is what makes
    the move exact in real arithmetic; the rounding differs (no f16 rounding of the scaled
    weights).
    shared_groups (`_sg`, with `_gs`): the H parts need not be scale groups: each part's row of S
    is the group of its first column, (k KT + i KT / H) KG / K, so parts of 64 columns can take
    groups of 128 (more wgmma chains a K tile, each with its own accumulator)."""
    part = k_tile // groups
    start = text.index("    %q = copy %sQ :")
    end = text.index("    yield %c_next")
    lines = ["    %%q = copy %%sQ : register<u4, ((4,8,4),((2,2,2),%d)):((128,1,16),((64,8,512),1024))>"
             "[64,%d]" % (k_tile // 16, k_tile),
             "    %%qf = cast %%q : register<f16>[64,%d]" % k_tile,
             "    %%qc = sub %%qf, %%zero_point : register<f16>[64,%d]" % k_tile,
             "    // %d scale groups of %d columns per K tile: groups k H ... k H + H - 1." % (groups, part),
             "    %%cH = const {value = %d} : index" % groups,
             "    %g_first = mul %k, %cH : index"]
    acc = "%c"
    scaled = []  # _gs: each group's fma into the sum, after every group's mma (see below)
    if shared_groups:
        lines += ["    %k_col = mul %k, %c64 : index"]
    for i in range(groups):
        lines += [
            "    %%ci%d = const {value = %d} : index" % (i, i),
            "    %%g%d = add %%g_first, %%ci%d : index" % (i, i)]
        scale_row = "%%g%d" % i
        if shared_groups:
            lines += [
                "    %%cp%d = const {value = %d} : index" % (i, i * part),
                "    %%col%d = add %%k_col, %%cp%d : index" % (i, i),
                "    %%colg%d = mul %%col%d, %%KG : index" % (i, i),
                "    %%gs%d = div %%colg%d, %%K : index" % (i, i)]
            scale_row = "%%gs%d" % i
        lines += [
            "    %%qp%d = slice %%qc {offsets = [0,%d], shape = [64,%d]} : register<f16>[64,%d]"
            % (i, i * part, part, part),
            "    %%S_tile%d = tile %%S, %s, %%bn {masked, pad = 0.0, shape = [1,64], squeeze = [0]} "
            ": global<f16>[64]" % (i, scale_row),
            "    %%sS%d = copy %%S_tile%d : shared<f16>[64]" % (i, i),
            "    %%s%d = copy %%sS%d : register<f16>[64]" % (i, i),
            "    %%X_tile%d = tile %%X, %%bm, %%g%d {masked, pad = 0.0, shape = [%d,%d]} : global<f16>[%d,%d]"
            % (i, i, tokens, part, tokens, part),
            "    %%sX%d = copy %%X_tile%d : shared<f16>[%d,%d]" % (i, i, tokens, part),
            "    %%sXt%d = transpose %%sX%d : shared<f16>[%d,%d]" % (i, i, part, tokens)]
        result = "%c_next" if i == groups - 1 else "%%c_part%d" % i
        if scale_after:
            lines += [
                "    %%s32_%d = cast %%s%d : register<f32>[64]" % (i, i),
                "    %%sbt%d = broadcast %%s32_%d {dims = [1]} : register<f32>[64,%d]" % (i, i, tokens),
                "    %%fresh%d = fill {value = 0.0} : register<f32>[64,%d]" % (i, tokens),
                "    %%prod%d = mma %%qp%d, %%sXt%d, %%fresh%d : register<f32>[64,%d]" % (i, i, i, i, tokens)]
            scaled.append("    %s = fma %%prod%d, %%sbt%d, %s : register<f32>[64,%d]" % (result, i, i, acc, tokens))
        else:
            lines += [
                "    %%sb%d = broadcast %%s%d {dims = [1]} : register<f16>[64,%d]" % (i, i, part),
                "    %%w%d = mul %%qp%d, %%sb%d : register<f16>[64,%d]" % (i, i, i, part),
                "    %s = mma %%w%d, %%sXt%d, %s : register<f32>[64,%d]" % (result, i, i, acc, tokens)]
        acc = "%%c_part%d" % i
    # The fmas after every mma: pipeline-arefs then issues all the groups' wgmmas before waiting
    # for the first (wait-before-reads), so the tensor work of group 0 overlaps what follows it
    # instead of holding up the next group (bench/results/2026-11-28-h200-first-h200.md).
    lines += scaled
    return text[:start] + "\n".join(lines) + "\n" + text[end:]


def named_variant_text(name, root=None):
    """The tile program of variant `name`: its base kernel's text with the name's choices."""
    v = parse_variant(name)
    with open(os.path.join(root or repository_root(), BASES[v["prefix"]])) as f:
        base = f.read()
    text = variant_text(base, v["rows"], v["tokens"], v["split_k"], v["k_tile"], v["blocks_per_sm"],
                        v["stages"], v["consumers"], v["producers"], v["overlap"], v["tighten"],
                        v["unpack_at_load"], v["apart"])
    return (split_groups(text, v["k_tile"], v["groups"], v["tokens"], v["scale_after"],
                         v["shared_groups"])
            if v["groups"] > 1 else text)


def graph_of(calls):
    """One CUDA graph running `calls` (callables) in turn, captured after one warm-up pass on a
    side stream (split-k's workspaces are allocated then): its replay is len(calls) launches with
    no host gaps between them."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for c in calls:
            c()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for c in calls:
            c()
    return g.replay


def graph_times(args, kernel, x, qp, s, out, w16, src, dst, bytes_moved, x_lib=None):
    """`s`: the arguments between Q and Y (the scales, and the zero points of `z` variants);
    `x_lib`: the library's X where the kernel's is padded (--pad-m)."""
    """Per-launch milliseconds of the kernel, cuBLAS and the copy, each as a graph of
    args.graph launches rotating over args.sets copies of its weights (N K / 2 bytes packed, 2 N K
    as f16: four sets of the packed 8192 x 8192 weights are 134 MB against the 50 MB L2), the
    three graphs replayed in turns (time_interleaved's medians)."""
    sets = max(1, args.sets)
    qs = [qp] + [qp.clone() for _ in range(sets - 1)]
    ss = [s] + [tuple(t.clone() for t in s) for _ in range(sets - 1)]
    ws = [w16] + [w16.clone() for _ in range(sets - 1)]
    srcs = [src] + [src.clone() for _ in range(sets - 1)]
    n = args.graph
    mine = graph_of([(lambda i=i: kernel(x, qs[i % sets], *ss[i % sets], out)) for i in range(n)])
    x_blas = x if x_lib is None else x_lib
    blas = graph_of([(lambda i=i: torch.matmul(x_blas, ws[i % sets].t())) for i in range(n)])
    copy = graph_of([(lambda i=i: dst.copy_(srcs[i % sets])) for i in range(n)])
    t_mine, t_blas, t_copy = (t / n for t in time_interleaved([mine, blas, copy], 3, args.iterations))
    gbps = bytes_moved / t_mine / 1e6
    copy_gbps = 2 * src.numel() / t_copy / 1e6
    del qs, ss, ws, srcs
    return {"graph_launches": n, "graph_sets": sets, "graph_ms": t_mine, "graph_gbps": gbps,
            "graph_baseline_ms": t_blas, "graph_ratio": t_blas / t_mine, "graph_copy_ms": t_copy,
            "graph_copy_gbps": copy_gbps, "graph_fraction_of_copy": gbps / copy_gbps}


def main():
    import tessel  # the extension, needed only to compile and launch (not for the variant texts)

    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--shapes", default="1x8192x8192g128,16x8192x8192g128,4096x8192x8192g128")
    p.add_argument("--variants", default="t128x64")
    p.add_argument("--json")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--graph", type=int, default=0, metavar="LAUNCHES",
                   help="also time each kernel as a CUDA graph of LAUNCHES launches (and the "
                        "baselines likewise), rotating over --sets copies of the weights")
    p.add_argument("--pad-m", type=int, default=0, metavar="P",
                   help="give the kernel X and Y padded with zero rows to P rows where M < P (the "
                        "library and the byte count keep M): is a token box past the end slower?")
    p.add_argument("--sets", type=int, default=4,
                   help="weight copies a graph rotates over, so that they do not stay in L2")
    args = p.parse_args()
    kernels, k_tiles, rows_of, groups_of, shared_of = {}, {}, {}, {}, {}
    for v in args.variants.split(","):
        # NAME@FILE: the kernel in FILE (lowered IR if it ends in .lowered.tir, compiled with the
        # verify pass only: an A/B of a hand-edited kernel), its weights and sizes those of NAME.
        base, _, path = v.partition("@")
        try:
            choices = parse_variant(base)
        except ValueError as e:
            sys.exit("w4a16.py: %s" % e)
        k_tiles[v], rows_of[v], groups_of[v] = choices["k_tile"], choices["rows"], choices["groups"]
        shared_of[v] = choices["shared_groups"]
        try:
            if path:
                kernels[v] = tessel.compile_file(
                    path, passes=["verify"] if path.endswith(".lowered.tir") else ())
            else:
                kernels[v] = tessel.compile(named_variant_text(v), file="gemm_w4a16_%s.tir" % v)
        except Exception as e:  # a variant the compiler refuses: say why, keep the others
            print("%-12s does not compile: %s" % (v, str(e).splitlines()[0]))
    record = provenance("w4a16.py")
    failures = 0
    for shape in args.shapes.split(","):
        m, n, k, g = (int(x) for x in re.fullmatch(r"(\d+)x(\d+)x(\d+)g(\d+)", shape).groups())
        torch.manual_seed(m * 7 + n * 13 + k + g)
        q = torch.randint(0, 16, (n, k), device="cuda", dtype=torch.uint8)
        packed = {"t": pack_natural(q), "p": pack_interleaved(q)}
        packed["s"] = packed["p"]
        s = (torch.rand(k // g, n, device="cuda") * 0.015 + 0.005).to(torch.float16)
        x = (torch.randn(m, k, device="cuda") * 0.5).to(torch.float16)
        mk = max(m, args.pad_m)
        x_k = x if mk == m else torch.cat([x, torch.zeros(mk - m, k, device="cuda", dtype=x.dtype)])
        # The dequantized weights, each rounded to f16 once (as the kernel packs them for wgmma).
        w16 = ((q.float() - 8.0) * s.float().repeat_interleave(g, dim=0).t()).to(torch.float16)
        ref_rows = sorted(set(range(min(m, 64))) | set(range(max(0, m - 64), m)) | set(range(0, m, 61)))
        rows_t = torch.tensor(ref_rows, device="cuda")
        want = x[rows_t].double() @ w16.double().t()
        lib = torch.matmul(x, w16.t())
        src = torch.empty(n * k // 2, device="cuda", dtype=torch.int8)
        dst = torch.empty_like(src)
        bytes_moved = n * k // 2 + s.numel() * 2 + m * k * 2 + m * n * 2
        # `z` variants: zero points per group and row, their own dequantized weights and checks.
        if any(v[0] == "z" for v in kernels):
            zp = torch.randint(0, 16, (k // g, n), device="cuda").to(torch.float16)
            w16z = ((q.float() - zp.float().repeat_interleave(g, dim=0).t())
                    * s.float().repeat_interleave(g, dim=0).t()).to(torch.float16)
            want_z = x[rows_t].double() @ w16z.double().t()
            lib_z = torch.matmul(x, w16z.t())
        for name, kernel in kernels.items():
            if shared_of[name] and g % (k_tiles[name] // groups_of[name]):
                print("%-20s %-10s skipped: parts of %d columns need groups of a multiple of it"
                      % (shape, name, k_tiles[name] // groups_of[name]))
                continue
            if groups_of[name] > 1 and not shared_of[name] and g * groups_of[name] != k_tiles[name]:
                print("%-20s %-10s skipped: %d scale groups per K tile of %d need groups of %d"
                      % (shape, name, groups_of[name], k_tiles[name], k_tiles[name] // groups_of[name]))
                continue
            if groups_of[name] == 1 and g % k_tiles[name]:
                print("%-20s %-10s skipped: one scale per K tile of %d needs groups of a multiple of it"
                      % (shape, name, k_tiles[name]))
                continue
            y = torch.full((mk, n), float("nan"), device="cuda", dtype=torch.float16)
            if name[0] == "c":
                if n % rows_of[name]:
                    print("%-20s %-10s skipped: N is not a multiple of its %d-row tiles" % (shape, name, rows_of[name]))
                    continue
                key = ("c", rows_of[name], k_tiles[name])
                if key not in packed:
                    packed[key] = pack_tiled(q, rows_of[name], k_tiles[name])
                qp = packed[key]
            elif name[0] in "ps" and k_tiles[name] == 32:
                if "p32" not in packed:
                    packed["p32"] = pack_interleaved(q, 32)
                qp = packed["p32"]
            elif name[0] == "z":
                qp = packed["t"]
            else:
                qp = packed[name[0]]
            zeros = name[0] == "z"
            extra = (s, zp) if zeros else (s,)
            w_ref, want_ref, lib_ref = (w16z, want_z, lib_z) if zeros else (w16, want, lib)
            kernel(x_k, qp, *extra, y)
            torch.cuda.synchronize()
            got = y[rows_t].double()
            rel_err = (torch.linalg.norm(got - want_ref) / torch.linalg.norm(want_ref)).item()
            lib_err = (torch.linalg.norm(y[:m].double() - lib_ref.double()) / torch.linalg.norm(lib_ref.double())).item()
            passed = rel_err <= 4e-3 and lib_err <= 1e-2
            failures += not passed
            out = torch.empty_like(y)
            moved = bytes_moved + (zp.numel() * 2 if zeros else 0)
            mine, blas, copy = time_interleaved(
                [lambda: kernel(x_k, qp, *extra, out), lambda: torch.matmul(x, w_ref.t()),
                 lambda: dst.copy_(src)], 10, args.iterations)
            gbps = moved / mine / 1e6
            copy_gbps = 2 * src.numel() / copy / 1e6
            r = {"name": "gemm_w4a16_" + name, "shape": shape, "M": m, "N": n, "K": k, "group": g,
                 "ms": mine, "tflops": 2.0 * m * n * k / mine / 1e9, "gbps": gbps,
                 "fraction_of_copy": gbps / copy_gbps, "fraction_of_nominal": gbps / NOMINAL_GBPS,
                 "baseline": "cublas f16 on dequantized weights (torch.matmul)", "baseline_ms": blas,
                 "ratio": blas / mine, "copy_ms": copy, "copy_gbps": copy_gbps,
                 "rel_err": rel_err, "rel_err_vs_baseline": lib_err, "passed": passed,
                 "kernel_rows": mk, **record}
            if args.graph:
                r.update(graph_times(args, kernel, x_k, qp, extra, out, w_ref, src, dst, moved, x_lib=x))
                # The graph's launches wrote `out` from copies of the same inputs: the checked Y,
                # bit for bit (split-k sums its parts in a fixed order).
                r["graph_output_equal"] = bool(torch.equal(out, y))
                r["passed"] = passed = passed and r["graph_output_equal"]
                failures += not r["graph_output_equal"]
            if args.json:
                with open(args.json, "a") as f:
                    f.write(json.dumps(r) + "\n")
            if args.graph:
                print("%-20s %-10s graph of %d launches: %.4f ms per launch %7.0f GB/s (%.2f of copy "
                      "%.0f GB/s)  cuBLAS f16 %.4f ms  ratio %.2f" %
                      (shape, name, args.graph, r["graph_ms"], r["graph_gbps"],
                       r["graph_fraction_of_copy"], r["graph_copy_gbps"], r["graph_baseline_ms"],
                       r["graph_ratio"]))
            print("%-20s %-10s %.4f ms %7.1f TFLOP/s %7.0f GB/s (%.2f of copy %.0f GB/s, %.2f nominal)"
                  "  cuBLAS f16 %.4f ms  ratio %.2f  rel_err %.1e / %.1e%s" %
                  (shape, name, mine, r["tflops"], gbps, r["fraction_of_copy"], copy_gbps,
                   r["fraction_of_nominal"], blas, r["ratio"], rel_err, lib_err,
                   "" if passed else "  FAILED"))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
