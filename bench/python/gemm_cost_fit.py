"""The GEMM cost model (src/compile/gemm_cost.cpp) against recorded sweeps: its regret and a refit.

    python3 bench/python/gemm_cost_fit.py RECORDS.jsonl [...] [--fit] [--worst 10]

Reads `tessel bench gemm` records that carry every variant's tuned median (`tuned_ms`) and the
model's choice (`model_choice`), reads each variant's traits from its .tir file (the output tile,
the wgmma's rows, the K tile, a split_k pin: what gemm_traits in gemm_cost.cpp reads), and prints
per family the regret of choosing by the model: the measured time of its choice over the fastest
variant's (geometric mean and worst). The model here mirrors the C++ one; the line "agrees with
the recorded choice at n of m points" checks that mirror against the records (records made with
other constants than the C++ file's today disagree by design). --fit searches the constants (a
coordinate search, multiplicative steps, minimizing the geometric mean of the regret plus a
fiftieth of the worst) and prints them with the regret they give. A device-free tool: the
records are the measurements.
"""
import argparse
import glob
import json
import math
import os
import re

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# gemm_cost.cpp's kGemmCost (fitted on the H100, 2026-11-26-gemm-sweep-tuned2-h100.md).
CONSTANTS = dict(flops_per_sm=2.65e12, one_warpgroup=0.85, bandwidth=5.68e12, bandwidth_per_sm=6.0e10,
                 per_unit=2.08e-5, split_fixed=1.13e-5, split_per_byte=2.0e-13)


def cdiv(a, b):
    return (a + b - 1) // b


def traits(path):
    """What gemm_traits reads from a tile program: tile_m, tile_n (the output tile), tile_k (the
    mma's A operand's columns), mma_rows, split (a split_k pin: auto or a count > 1), parts."""
    lines = [l for l in open(os.path.join(ROOT, path)).read().split("\n") if not l.strip().startswith("//")]
    defs = {}
    for l in lines:
        m = re.match(r"\s*(%[\w.]+)(?:, %[\w.]+)* = .*: (\w+)<\w+>\[([\d,]+)\]", l)
        if m:
            defs[m.group(1)] = (m.group(2), [int(x) for x in m.group(3).split(",")], l)
    mmas = [l for l in lines if re.search(r"= mma ", l)]
    if len(mmas) != 1:
        raise SystemExit("gemm_cost_fit.py: %s: not one mma" % path)
    m = re.search(r"= mma (%[\w.]+), (%[\w.]+), .*: register<f32>\[(\d+),(\d+)\]", mmas[0])
    rows, cols = int(m.group(3)), int(m.group(4))
    t = dict(rows=rows, tk=defs[m.group(1)][1][1])
    for l in lines:  # the output: a global tile of the accumulator's shape or its transpose's
        c = re.match(r"\s*copy (%[\w.]+), (%[\w.]+)\s*$", l)
        src, dst = (defs.get(c.group(1)), defs.get(c.group(2))) if c else (None, None)
        shape = re.search(r"shape = \[(\d+),(\d+)\]", dst[2]) if dst else None
        if src and src[0] == "register" and shape:
            tm, tn = int(shape.group(1)), int(shape.group(2))
            if (tm, tn) in ((rows, cols), (cols, rows)):
                t.update(tm=tm, tn=tn)
                break
    if "tm" not in t:
        raise SystemExit("gemm_cost_fit.py: %s: no output tile of the accumulator's shape" % path)
    grid = next(l for l in lines if "block_grid" in l)
    split = re.search(r"split_k = (\w+)", grid)
    t["split"] = bool(split) and (split.group(1) == "auto" or int(split.group(1)) > 1)
    t["parts"] = int(split.group(1)) if split and split.group(1) != "auto" else 0
    return t


def cost(t, m, n, k, c, sms=132):
    """gemm_cost in gemm_cost.cpp, term by term."""
    tiles = cdiv(m, t["tm"]) * cdiv(n, t["tn"])
    blocks_k = cdiv(k, t["tk"])
    parts = 1
    if t["split"]:
        parts = t["parts"] if t["parts"] > 0 else max(1, min(sms // tiles, blocks_k // 4, 16))
    units = tiles * parts
    blocks = max(1, min(units, sms))
    rate = c["flops_per_sm"] * (1.0 if t["rows"] >= 128 else c["one_warpgroup"])
    compute = 2.0 * t["tm"] * t["tn"] * t["tk"] / rate
    load = 2.0 * (t["tm"] + t["tn"]) * t["tk"] / min(c["bandwidth"] / blocks, c["bandwidth_per_sm"])
    unit = cdiv(blocks_k, parts) * max(compute, load) + c["per_unit"]
    reduction = 0.0
    if t["split"]:
        reduction = c["split_fixed"] + c["split_per_byte"] * parts * min(m, t["tm"]) * t["tn"] * 4.0
    return cdiv(units, blocks) * unit + reduction


_files = None


def variant_file(stem):
    """The .tir file a variant name (a file's stem) comes from: bench/kernel-variants or examples."""
    global _files
    if _files is None:
        _files = {}
        for p in sorted(glob.glob(ROOT + "/bench/kernel-variants/**/*.tir", recursive=True)) + \
                sorted(glob.glob(ROOT + "/examples/kernels/*.tir")):
            _files.setdefault(os.path.basename(p)[:-4], os.path.relpath(p, ROOT))
    if stem not in _files:
        raise SystemExit("gemm_cost_fit.py: no .tir file named %s.tir" % stem)
    return _files[stem]


def points(paths):
    """One point per record with tuned_ms: its family, sizes, each variant's traits and time."""
    out, cache = [], {}
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            if "tuned_ms" not in r:
                continue
            times = dict((kv.split()[0], float(kv.split()[1])) for kv in r["tuned_ms"].split(", "))
            kernels = re.search(r"--kernels (\S+)", r.get("command", ""))
            files = kernels.group(1).split("+") if kernels else [variant_file(v) for v in times]
            t = {}
            for f in files:
                if f not in cache:
                    cache[f] = traits(f)
                t[os.path.basename(f)[:-4]] = cache[f]
            m, n, k = map(int, r["shape"].split("x"))
            family = "%s %s %s" % (os.path.basename(path), r.get("layout", ""), r.get("dtype", ""))
            out.append(dict(family=family, m=m, n=n, k=k, traits=t, ms=times, recorded=r.get("model_choice")))
    return out


def choices(pts, c):
    """(regret, point, the model's choice) per point."""
    out = []
    for p in pts:
        names = [v for v in p["ms"] if v in p["traits"]]
        choice = min(names, key=lambda v: cost(p["traits"][v], p["m"], p["n"], p["k"], c))
        out.append((p["ms"][choice] / min(p["ms"][v] for v in names), p, choice))
    return out


def summary(rs):
    return math.exp(sum(math.log(x[0]) for x in rs) / len(rs)), max(x[0] for x in rs)


def fit(pts, c, rounds=12):
    def objective(d):
        g, worst = summary(choices(pts, d))
        return g + worst / 50

    best = objective(c)
    for _ in range(rounds):
        improved = False
        for key in list(c):
            for f in (0.1, 0.3, 0.5, 0.7, 0.85, 0.93, 1.08, 1.18, 1.4, 2.0, 3.0, 10.0):
                d = dict(c, **{key: c[key] * f})
                if key == "one_warpgroup" and d[key] > 1.0:
                    continue
                v = objective(d)
                if v < best - 1e-6:
                    best, c, improved = v, d, True
        if not improved:
            break
    return c


def report(pts, c, worst):
    rs = choices(pts, c)
    agree = sum(1 for _, p, choice in rs if choice == p["recorded"])
    print("agrees with the recorded choice at %d of %d points" % (agree, len(rs)))
    for family in sorted(set(p["family"] for p in pts)):
        g, w = summary([x for x in rs if x[1]["family"] == family])
        print("%-60s regret %.3f (geometric mean), worst %.3f" % (family, g, w))
    g, w = summary(rs)
    print("%-60s regret %.3f (geometric mean), worst %.3f" % ("all", g, w))
    for x, p, choice in sorted(rs, key=lambda x: -x[0])[:worst]:
        fastest = min(p["ms"], key=p["ms"].get)
        print("  %.3f %dx%dx%d %s: %s, fastest %s" % (x, p["m"], p["n"], p["k"], p["family"], choice, fastest))


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", nargs="+")
    ap.add_argument("--fit", action="store_true", help="search the constants and report with them")
    ap.add_argument("--worst", type=int, default=10, help="list this many points of largest regret")
    args = ap.parse_args()
    pts = points(args.records)
    report(pts, CONSTANTS, args.worst)
    if args.fit:
        c = fit(pts, dict(CONSTANTS))
        print("fitted: " + ", ".join("%s = %.3g" % kv for kv in c.items()))
        report(pts, c, args.worst)


if __name__ == "__main__":
    main()
