"""The GEMM cost model (src/compile/gemm_cost.cpp) against recorded sweeps: its regret and a refit.

    python3 bench/python/gemm_cost_fit.py RECORDS.jsonl [...] [--fit [--restarts N]]
        [--set name=value,...] [--worst 10] [--cxx]

Reads `tessel bench gemm` records that carry every variant's tuned median (`tuned_ms`) and the
model's choice (`model_choice`), reads each variant's traits from its .tir file (the output tile,
the wgmma's rows, the K tile, a split_k pin, a pinned ring depth, the operands' row extents and
element size, a cluster: what gemm_traits in gemm_cost.cpp reads), and prints per family the
regret of choosing by the model: the measured time of its choice over the fastest variant's
(geometric mean and worst). The model here mirrors the C++ one. The line "agrees with the
recorded choice at n of m points" compares it with what the C++ model of the record's tree
chose: a record made with other constants or traits than today's disagrees by design. --cxx
compares it with today's C++ model itself (tessel.gemm_model_choice; the tessel module of a
build on PYTHONPATH): that line must read m of m. An unpinned ring's depth is the compiler's cap
of the record's tree: 4 before commit 389f557, 8 after (ring_cap). --fit searches the constants
(a coordinate search, multiplicative steps, minimizing the geometric mean of the regret plus a
fiftieth of the worst; --restarts: again from seeded perturbations of its result) from kGemmCost's
values, or those --set gives, and prints them with the regret they give. A device-free tool: the
records are the measurements.
"""
import argparse
import glob
import json
import math
import os
import random
import re
import subprocess

ROOT = os.path.normpath(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))

# gemm_cost.cpp's kGemmCost (fitted on H100 and H200 records, 2026-11-28-gemm-cost-refit-h200.md).
CONSTANTS = dict(flops_per_sm=2.65e12, one_warpgroup=0.874, bandwidth=6.82e12, bandwidth_per_sm=1.45e11,
                 latency=2.37e-6, misaligned_rows=2.0, per_unit=3.65e-5, split_fixed=3.08e-6,
                 split_per_byte=1.87e-10)
# What pipeline-loops / pipeline-arefs may give an unpinned ring: Target::shared_memory_per_block()
# less kTightReserveBytes (stage_budget.h), and the cap of the record's tree (ring_cap).
SHARED_BUDGET = 232448 - 2048
DEEPER_RINGS = "389f557"  # the commit that raised kMaxStages from 4 to 8
TODAYS_CAP = 8  # kMaxStages


def cdiv(a, b):
    return (a + b - 1) // b


def traits(path):
    """What gemm_traits reads from a tile program: tile_m, tile_n (the output tile), tile_k (the
    mma's A operand's columns), mma_rows, split (a split_k pin: auto or a count > 1), parts, stages
    (the K loop's pin, 0 if none), ebytes, a_row / b_row (the symbol of each operand's last
    extent), cluster_m / cluster_n (the grid's cluster along the output tile's M and N)."""
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
    coords = None
    for l in lines:  # the output: a global tile of the accumulator's shape or its transpose's
        c = re.match(r"\s*copy (%[\w.]+), (%[\w.]+)\s*$", l)
        src, dst = (defs.get(c.group(1)), defs.get(c.group(2))) if c else (None, None)
        shape = re.search(r"shape = \[(\d+),(\d+)\]", dst[2]) if dst else None
        if src and src[0] == "register" and shape:
            tm, tn = int(shape.group(1)), int(shape.group(2))
            if (tm, tn) in ((rows, cols), (cols, rows)):
                t.update(tm=tm, tn=tn)
                coords = re.search(r"= tile %\w+, (%\w+), (%\w+)", dst[2]).groups()
                break
    if "tm" not in t:
        raise SystemExit("gemm_cost_fit.py: %s: no output tile of the accumulator's shape" % path)
    grid = next(l for l in lines if "block_grid" in l)
    split = re.search(r"[{ ]split_k = (\w+)", grid)  # not consumer_split_k / producer_split_k
    t["split"] = bool(split) and (split.group(1) == "auto" or int(split.group(1)) > 1)
    t["parts"] = int(split.group(1)) if split and split.group(1) != "auto" else 0
    loop = next(l for l in lines if re.search(r"= for .* iter\(", l))
    stages = re.search(r"\{[^}]*\bstages = (\d+)", loop)
    t["stages"] = int(stages.group(1)) if stages else 0
    sig = next(l for l in lines if l.startswith("kernel @"))
    sym = dict(zip("mnk", re.search(r"\[(\w+), (\w+), (\w+)\]\(", sig).groups()))
    for arg in re.findall(r"%\w+: global<(\w+)>\[(\w+),(\w+)\]", sig):
        if {arg[1], arg[2]} == {sym["m"], sym["k"]}:
            # the element's bytes: the first number in its type's name is its bits (f16, f8e4m3)
            t["a_row"], t["ebytes"] = arg[2], max(1, int(re.search(r"\d+", arg[0]).group()) // 8)
        if {arg[1], arg[2]} == {sym["n"], sym["k"]}:
            t["b_row"] = arg[2]
    t["sym"] = sym
    t["cluster_m"] = t["cluster_n"] = 1
    cluster = re.search(r"cluster = \[([\d,]+)\]", grid)
    if cluster:
        results = re.match(r"\s*(%[\w.]+(?:, %[\w.]+)*) = block_grid", grid).group(1).split(", ")
        for r, e in zip(results, [int(x) for x in cluster.group(1).split(",")]):
            t["cluster_m"] = e if r == coords[0] else t["cluster_m"]
            t["cluster_n"] = e if r == coords[1] else t["cluster_n"]
    return t


def ring_depth(t, cap):
    """gemm_ring_depth in gemm_cost.cpp, with the unpinned cap of the record's tree."""
    if t["stages"] > 0:
        return t["stages"]
    return max(1, min(cap, SHARED_BUDGET // ((t["tm"] + t["tn"]) * t["tk"] * t["ebytes"])))


def cost(t, m, n, k, c, sms=132, cap=8):
    """gemm_cost in gemm_cost.cpp, term by term (cap: the tree's kMaxStages)."""
    tiles = cdiv(cdiv(m, t["tm"]), t["cluster_m"]) * t["cluster_m"] * \
        cdiv(cdiv(n, t["tn"]), t["cluster_n"]) * t["cluster_n"]
    blocks_k = cdiv(k, t["tk"])
    parts = 1
    if t["split"]:
        parts = t["parts"] if t["parts"] > 0 else max(1, min(sms // tiles, blocks_k // 4, 16))
    units = tiles * parts
    blocks = max(1, min(units, sms))
    rate = c["flops_per_sm"] * (1.0 if t["rows"] >= 128 else c["one_warpgroup"])
    compute = 2.0 * t["tm"] * t["tn"] * t["tk"] / rate
    size = {t["sym"]["m"]: m, t["sym"]["n"]: n, t["sym"]["k"]: k}

    def weight(row):
        return 1.0 if size[row] * t["ebytes"] % 128 == 0 else c["misaligned_rows"]

    nbytes = t["tk"] * t["ebytes"] * (t["tm"] * weight(t["a_row"]) / t["cluster_n"] +
                                      t["tn"] * weight(t["b_row"]) / t["cluster_m"])
    load = max(nbytes / min(c["bandwidth"] / blocks, c["bandwidth_per_sm"]), c["latency"] / ring_depth(t, cap))
    unit = cdiv(blocks_k, parts) * max(compute, load) + c["per_unit"]
    reduction = 0.0
    if t["split"]:
        reduction = c["split_fixed"] + c["split_per_byte"] * parts * min(m, t["tm"]) * t["tn"] * 4.0
    return cdiv(units, blocks) * unit + reduction


_deeper = {}


def ring_cap(record):
    """kMaxStages of the tree a record was made with: 8 from DEEPER_RINGS on (or a `tree` that
    says so), 4 before (and for a commit git does not know)."""
    if "kMaxStages 8" in record.get("tree", ""):
        return 8
    commit = record.get("commit", "")
    if not re.match(r"^[0-9a-f]{7,40}$", commit):
        return 4
    if commit not in _deeper:
        _deeper[commit] = subprocess.run(["git", "-C", ROOT, "merge-base", "--is-ancestor", DEEPER_RINGS, commit],
                                         capture_output=True).returncode == 0
    return 8 if _deeper[commit] else 4


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


def kernel_files(command, times):
    """The .tir files of a record's variants: its command's --kernels list (families separated by
    commas, variants by '+'; an entry without .tir is a variant's name), the family whose variants
    the record timed; by name when the command does not say."""
    kernels = re.search(r"--kernels (\S+)", command)
    for family in kernels.group(1).split(",") if kernels else []:
        files = [f if f.endswith(".tir") else variant_file(f) for f in family.split("+")]
        if set(os.path.basename(f)[:-4] for f in files) >= set(times):
            return files
    return [variant_file(v) for v in times]


def points(paths):
    """One point per record with tuned_ms: its family, sizes, each variant's traits and time."""
    out, cache = [], {}
    for path in paths:
        for line in open(path):
            r = json.loads(line)
            if "tuned_ms" not in r:
                continue
            times = dict((kv.split()[0], float(kv.split()[1])) for kv in r["tuned_ms"].split(", "))
            files = kernel_files(r.get("command", ""), times)
            t = {}
            for f in files:
                if f not in cache:
                    cache[f] = traits(f)
                t[os.path.basename(f)[:-4]] = cache[f]
            m, n, k = map(int, r["shape"].split("x"))
            layout = r.get("layout") or os.path.basename(files[0])[:-4]  # older records: the base variant
            family = "%s %s %s" % (os.path.basename(path), layout, r.get("dtype", ""))
            out.append(dict(family=family, m=m, n=n, k=k, traits=t, ms=times, recorded=r.get("model_choice"),
                            cap=ring_cap(r), files=files))
    return out


def choices(pts, c, cap=None):
    """(regret, point, the model's choice) per point; `cap`: rings as deep as today's compiler
    makes them (kMaxStages) instead of the record's tree."""
    out = []
    for p in pts:
        names = [v for v in p["ms"] if v in p["traits"]]
        choice = min(names, key=lambda v: cost(p["traits"][v], p["m"], p["n"], p["k"], c, cap=cap or p["cap"]))
        out.append((p["ms"][choice] / min(p["ms"][v] for v in names), p, choice))
    return out


def summary(rs):
    return math.exp(sum(math.log(x[0]) for x in rs) / len(rs)), max(x[0] for x in rs)


# Where the search may go: a share is at most 1; a misaligned row weighs at least as much as an
# aligned one and at most 4: one shape of the sweeps identifies the weight, which tells large
# values apart hardly at all, and the search would otherwise wander there.
BOUNDS = dict(one_warpgroup=(0.0, 1.0), misaligned_rows=(1.0, 4.0))
# Not searched: scaling every rate by 1/s and every time by s scales every cost alike and changes
# no choice; the tensor rate stays put so that the others keep their units.
FIXED = ("flops_per_sm",)


def objective(pts, c):
    g, worst = summary(choices(pts, c))
    return g + worst / 50


def fit(pts, c, rounds=12, restarts=0):
    """The coordinate search from c, then from `restarts` perturbations of its result (every
    constant times a factor in [1/3, 3], seeded: the same records give the same constants); the
    best found. The regret is a step function of the constants: the search stops at local minima."""
    best = search(pts, c, rounds)
    rng = random.Random(0)
    for _ in range(restarts):
        start = dict((key, value if key in FIXED else value * math.exp(rng.uniform(-1.1, 1.1)))
                     for key, value in best.items())
        for key, (low, high) in BOUNDS.items():
            start[key] = min(max(start[key], low), high)
        found = search(pts, start, rounds)
        if objective(pts, found) < objective(pts, best) - 1e-6:
            best = found
    return best


def search(pts, c, rounds):
    best = objective(pts, c)
    for _ in range(rounds):
        improved = False
        for key in [key for key in c if key not in FIXED]:
            for f in (0.01, 0.1, 0.3, 0.5, 0.7, 0.85, 0.93, 1.08, 1.18, 1.4, 2.0, 3.0, 10.0, 100.0):
                d = dict(c, **{key: c[key] * f})
                if key in BOUNDS and not BOUNDS[key][0] <= d[key] <= BOUNDS[key][1]:
                    continue
                v = objective(pts, d)
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


def cxx_choices(pts):
    """Today's C++ model's choice per point: tessel.gemm_model_choice over the family's files (what
    tessel.Variants(...).model_choice returns, without compiling the variants)."""
    import tessel  # the module of a build (PYTHONPATH=build/python)
    families, out = {}, []
    for p in pts:
        key = tuple(p["files"])
        if key not in families:
            families[key] = [tessel.load_file(os.path.join(ROOT, f)) for f in key]
        names = [os.path.basename(f)[:-4] for f in key]
        out.append(tessel.gemm_model_choice(families[key], {"M": p["m"], "N": p["n"], "K": p["k"]}, 132,
                                            names=names))
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("records", nargs="+")
    ap.add_argument("--fit", action="store_true", help="search the constants and report with them")
    ap.add_argument("--restarts", type=int, default=0, help="--fit: searches from this many perturbed starts too")
    ap.add_argument("--set", default="", help="start from these constants: name=value,... (the others kGemmCost's)")
    ap.add_argument("--worst", type=int, default=10, help="list this many points of largest regret")
    ap.add_argument("--cxx", action="store_true", help="compare with the C++ model (the tessel module)")
    args = ap.parse_args()
    pts = points(args.records)
    start = dict(CONSTANTS)
    for item in filter(None, args.set.split(",")):
        key, value = item.split("=")
        if key not in start:
            raise SystemExit("gemm_cost_fit.py: --set: no constant %s (%s)" % (key, ", ".join(start)))
        start[key] = float(value)
    if args.cxx:
        mirror = [choice for _, _, choice in choices(pts, CONSTANTS, cap=TODAYS_CAP)]
        same = sum(1 for a, b in zip(mirror, cxx_choices(pts)) if a == b)
        print("agrees with the C++ model at %d of %d points" % (same, len(pts)))
    report(pts, start, args.worst)
    if args.fit:
        c = fit(pts, dict(start), restarts=args.restarts)
        print("fitted: " + ", ".join("%s = %.3g" % kv for kv in c.items()))
        report(pts, c, args.worst)


if __name__ == "__main__":
    main()
