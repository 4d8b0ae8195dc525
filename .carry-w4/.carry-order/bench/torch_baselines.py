#!/usr/bin/env python3
"""PyTorch baselines for tessel's kernels, measured the way `tessel bench` measures ours.

The operators PyTorch users would call for each kernel family that tessel compiles:
  bias_gelu   F.gelu(x + bias, approximate="tanh")          (two kernels in eager mode)
  softmax     torch.softmax(x, dim=-1)
  rmsnorm     F.rms_norm(x, (N,), weight, eps)
  layernorm   F.layer_norm(x, (N,), weight, bias, eps)
  gemv        A @ x                                          (A [M,N], x [N])
  gemm        A @ B.T                                        (A [M,K], B [N,K], cuBLAS/cuBLASLt)
  gemm_bias_relu  torch.relu(torch.addmm(bias, A, B.T))      (f16, as examples/kernels/)
  dual_gemm   F.silu(A @ B0.T) * (A @ B1.T)                  (f16; FLOPs of both GEMMs)
Each is timed with CUDA events around every launch after a warm-up (the median is reported, as
runtime/timing.h does), on fresh random inputs (uniform in [-1, 1), as tessel's benches draw
them). Memory-bound rows report GB/s of the bytes the operation must move (every input read once,
the output written once: the same count as bench/harness/memory_kernels.h) and the fraction of a
device-to-device copy of as many bytes (`torch_copy`, the analogue of tessel's copy16 baseline),
timed interleaved launch by launch. GEMM rows report TFLOP/s. rel_err is each result against the
same operation computed by PyTorch in float32 (float64 accumulation for GEMMs on sampled rows):
a sanity check of the run, not a verdict on PyTorch.

Output: a table, and with --json FILE one JSON object per line with the fields of tessel's bench
records where they apply (name, dtype, shape, ms, gbps or tflops, baseline, baseline_ms,
baseline_gbps, fraction, rel_err, passed, date, device, commit, command), so that
`tessel bench summary FILE` lists them beside tessel's rows.

It never fails for want of PyTorch or a GPU: it says why and exits 0. --dry-run lists what would
be measured without importing torch.
"""

import argparse
import datetime
import json
import os
import subprocess
import sys

MEMORY_KERNELS = ["bias_gelu", "softmax", "rmsnorm", "layernorm", "gemv"]
GEMM_KERNELS = ["gemm", "gemm_bias_relu", "dual_gemm"]
DEFAULT_GEMM_SHAPES = "8192x8192x8192,8192x8192x4096,8191x4097x520"
EPS = 1e-5  # the eps of tessel's rmsnorm/layernorm kernels (bench/harness/memory_kernels.h)


def parse_args(argv):
    p = argparse.ArgumentParser(
        description="PyTorch baselines (CUDA events, medians) for tessel's kernel families.",
        epilog="Exit status 0 also when torch or a GPU is missing (the reason is printed).")
    p.add_argument("--shape", default="8192x8192",
                   help="RxC of the memory-bound kernels (GEMV: M x N matrix); default 8192x8192")
    p.add_argument("--gemm-shapes", default=DEFAULT_GEMM_SHAPES,
                   help="MxNxK list for A[M,K] @ B[N,K]^T; default " + DEFAULT_GEMM_SHAPES)
    p.add_argument("--kernels", default=",".join(MEMORY_KERNELS + GEMM_KERNELS),
                   help="comma-separated subset of " + ",".join(MEMORY_KERNELS + GEMM_KERNELS))
    p.add_argument("--dtype", default="all", choices=["f16", "bf16", "all"],
                   help="GEMM input type (memory-bound kernels run in f16, as tessel's do)")
    p.add_argument("--iterations", type=int, default=50)
    p.add_argument("--warmup", type=int, default=10)
    p.add_argument("--compile", action="store_true",
                   help="also time torch.compile'd versions of the memory-bound operators")
    p.add_argument("--json", help="append one JSON record per row to this file")
    p.add_argument("--dry-run", action="store_true",
                   help="print what would be measured and exit (needs neither torch nor a GPU)")
    args = p.parse_args(argv)
    args.kernels = [k for k in args.kernels.split(",") if k]
    unknown = [k for k in args.kernels if k not in MEMORY_KERNELS + GEMM_KERNELS]
    if unknown:
        p.error("unknown kernel(s): " + ",".join(unknown))
    try:
        args.rows, args.cols = (int(v) for v in args.shape.split("x"))
        args.gemm = [tuple(int(v) for v in s.split("x")) for s in args.gemm_shapes.split(",") if s]
        if args.rows <= 0 or args.cols <= 0 or any(len(s) != 3 or min(s) <= 0 for s in args.gemm):
            raise ValueError
    except ValueError:
        p.error("shapes are RxC and MxNxK lists of positive integers")
    if args.iterations <= 0 or args.warmup < 0:
        p.error("--iterations must be positive and --warmup not negative")
    return args


def plan(args):
    rows = []
    for k in args.kernels:
        if k in GEMM_KERNELS:
            for dt in gemm_dtypes(args, k):
                for m, n, kk in args.gemm:
                    rows.append(("torch." + k, dt, "%dx%dx%d" % (m, n, kk)))
        else:
            rows.append(("torch." + k, "f16", "%dx%d" % (args.rows, args.cols)))
            if args.compile:
                rows.append(("compiled." + k, "f16", "%dx%d" % (args.rows, args.cols)))
    return rows


def gemm_dtypes(args, kernel):
    """The GEMM's f16 and bf16 runs; the fused variants in f16, as tessel's examples are."""
    dtypes = ["f16", "bf16"] if args.dtype == "all" else [args.dtype]
    return dtypes if kernel == "gemm" else [d for d in dtypes if d == "f16"]


def commit():
    c = os.environ.get("TESSEL_COMMIT")
    if c:
        return c
    try:
        return subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                              cwd=os.path.dirname(os.path.abspath(__file__)),
                              timeout=10).stdout.strip() or "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


def median(values):
    v = sorted(values)
    n = len(v)
    if n == 0:
        return 0.0
    return v[n // 2] if n % 2 else 0.5 * (v[n // 2 - 1] + v[n // 2])


class Bench:
    def __init__(self, torch, args):
        self.torch = torch
        self.args = args
        self.records = []
        self.device = torch.cuda.get_device_name(0)
        self.provenance = {
            "date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "device": self.device,
            "commit": commit(),
            "command": "python3 bench/torch_baselines.py " + " ".join(sys.argv[1:]),
            "library": "torch " + torch.__version__,
        }

    def time(self, *launches):
        """Median event time (ms) of each launch function, interleaved launch by launch."""
        torch = self.torch
        for _ in range(self.args.warmup):
            for f in launches:
                f()
        samples = [[] for _ in launches]
        events = []
        for _ in range(self.args.iterations):
            for i, f in enumerate(launches):
                start = torch.cuda.Event(enable_timing=True)
                end = torch.cuda.Event(enable_timing=True)
                start.record()
                f()
                end.record()
                events.append((i, start, end))
        torch.cuda.synchronize()
        for i, start, end in events:
            samples[i].append(start.elapsed_time(end))
        return [median(s) for s in samples]

    @staticmethod
    def rel_err(out, ref):
        d = (out.double() - ref.double()).norm().item()
        r = ref.double().norm().item()
        return d / r if r > 0 else (0.0 if d == 0 else float("inf"))

    def add(self, record):
        record.update(self.provenance)
        self.records.append(record)

    def memory(self, kernel, compiled):
        torch = self.torch
        F = torch.nn.functional
        m, n = self.args.rows, self.args.cols
        dev, f16 = "cuda", torch.float16

        def rand(*shape):
            return torch.rand(*shape, device=dev, dtype=torch.float32).mul_(2).sub_(1).to(f16)

        if kernel == "gemv":
            a, x = rand(m, n), rand(n)
            inputs = [a, x]
            fn = lambda a, x: a @ x  # noqa: E731
            ref = (a.float() @ x.float())
            out_elems = m
        else:
            x = rand(m, n)
            if kernel == "bias_gelu":
                b = rand(n)
                inputs = [x, b]
                fn = lambda x, b: F.gelu(x + b, approximate="tanh")  # noqa: E731
                ref = F.gelu(x.float() + b.float(), approximate="tanh")
            elif kernel == "softmax":
                inputs = [x]
                fn = lambda x: torch.softmax(x, dim=-1)  # noqa: E731
                ref = torch.softmax(x.float(), dim=-1)
            elif kernel == "rmsnorm":
                w = rand(n)
                inputs = [x, w]
                fn = lambda x, w: F.rms_norm(x, (n,), w, EPS)  # noqa: E731
                ref = F.rms_norm(x.float(), (n,), w.float(), EPS)
            else:  # layernorm
                w, b = rand(n), rand(n)
                inputs = [x, w, b]
                fn = lambda x, w, b: F.layer_norm(x, (n,), w, b, EPS)  # noqa: E731
                ref = F.layer_norm(x.float(), (n,), w.float(), b.float(), EPS)
            out_elems = m * n
        if compiled:
            fn = torch.compile(fn)
        out = fn(*inputs)
        torch.cuda.synchronize()
        err = self.rel_err(out, ref)
        del ref
        ideal = sum(t.numel() * t.element_size() for t in inputs) + out_elems * 2
        # The copy moves the same bytes: half read, half written.
        words = ideal // 2 // 2
        src = torch.empty(words, device=dev, dtype=f16).fill_(1)
        dst = torch.empty_like(src)
        ms, copy_ms = self.time(lambda: fn(*inputs), lambda: dst.copy_(src))
        gbps, copy_gbps = ideal / ms / 1e6, ideal / copy_ms / 1e6
        self.add({
            "name": ("compiled." if compiled else "torch.") + kernel, "dtype": "f16",
            "shape": "%dx%d" % (m, n), "ms": ms, "gbps": gbps, "baseline": "torch_copy",
            "baseline_ms": copy_ms, "baseline_gbps": copy_gbps, "fraction": gbps / copy_gbps,
            "rel_err": err, "passed": err < 5e-3, "reference": "torch f32",
        })

    def gemm(self, kernel, dtype, m, n, k):
        torch = self.torch
        F = torch.nn.functional
        t = torch.float16 if dtype == "f16" else torch.bfloat16

        def rand(*shape):
            return torch.rand(*shape, device="cuda").mul_(2).sub_(1).to(t)

        a, b = rand(m, k), rand(n, k)
        rows = torch.randint(0, m, (min(m, 256),), device="cuda")
        if kernel == "gemm":
            c = a @ b.T
            fn = lambda: torch.matmul(a, b.T, out=c)  # noqa: E731
            ref = a[rows].double() @ b.double().T
            products = 1
        elif kernel == "gemm_bias_relu":
            bias = rand(n)
            fn = lambda: torch.relu(torch.addmm(bias, a, b.T))  # noqa: E731
            c = fn()
            ref = torch.relu(a[rows].double() @ b.double().T + bias.double())
            products = 1
        else:  # dual_gemm
            b1 = rand(n, k)
            fn = lambda: F.silu(a @ b.T) * (a @ b1.T)  # noqa: E731
            c = fn()
            g = a[rows].double() @ b.double().T
            ref = g * torch.sigmoid(g) * (a[rows].double() @ b1.double().T)
            products = 2
        torch.cuda.synchronize()
        err = self.rel_err(c[rows], ref)
        del ref
        (ms,) = self.time(fn)
        tflops = 2.0 * products * m * n * k / (ms * 1e-3) / 1e12
        self.add({
            "name": "torch." + kernel, "dtype": dtype, "shape": "%dx%dx%d" % (m, n, k), "ms": ms,
            "tflops": tflops, "baseline": "none", "rel_err": err,
            "passed": err < (2e-3 if dtype == "f16" else 6e-3),
            "reference": "float64 on 256 sampled rows",
        })


def print_table(records):
    print("%-20s %-5s %-15s %10s %14s %-10s %10s %9s %9s" % (
        "operator", "dtype", "shape", "ms", "achieved", "baseline", "base ms", "fraction",
        "rel_err"))
    for r in records:
        if "gbps" in r:
            achieved = "%.1f GB/s" % r["gbps"]
            extra = (r["baseline"], "%.4f" % r["baseline_ms"], "%.3f" % r["fraction"])
        else:
            achieved = "%.1f TFLOP/s" % r["tflops"]
            extra = ("-", "-", "-")
        print("%-20s %-5s %-15s %10.4f %14s %-10s %10s %9s %9.2e%s" % (
            (r["name"], r["dtype"], r["shape"], r["ms"], achieved) + extra +
            (r["rel_err"], "" if r["passed"] else "  FAIL")))
    sys.stdout.flush()


def main(argv):
    args = parse_args(argv)
    if args.dry_run:
        print("would measure (torch not imported):")
        for name, dtype, shape in plan(args):
            print("  %-20s %-5s %s" % (name, dtype, shape))
        return 0
    try:
        import torch  # noqa: PLC0415 (optional dependency, imported only to run)
    except ImportError as e:
        print("torch baselines skipped: PyTorch is not installed (%s)" % e)
        return 0
    if not torch.cuda.is_available():
        print("torch baselines skipped: torch %s sees no CUDA GPU" % torch.__version__)
        return 0
    bench = Bench(torch, args)
    print("device: %s   torch %s   commit: %s" % (bench.device, torch.__version__,
                                                  bench.provenance["commit"]))
    failed = []
    for kernel in args.kernels:
        variants = [(kernel, False)] + ([(kernel, True)] if args.compile and
                                        kernel not in GEMM_KERNELS else [])
        for name, compiled in variants:
            try:
                if name in GEMM_KERNELS:
                    for dt in gemm_dtypes(args, name):
                        for m, n, k in args.gemm:
                            bench.gemm(name, dt, m, n, k)
                else:
                    bench.memory(name, compiled)
            except Exception as e:  # noqa: BLE001 (report and go on with the other operators)
                print("%s%s: FAILED: %s: %s" % ("compiled." if compiled else "torch.", name,
                                                type(e).__name__, e))
                failed.append(name)
            torch.cuda.empty_cache()
    print_table(bench.records)
    if args.json:
        with open(args.json, "a") as f:
            for r in bench.records:
                clean = {k: (None if isinstance(v, float) and (v != v or abs(v) == float("inf"))
                             else v) for k, v in r.items()}
                f.write(json.dumps(clean) + "\n")
    return 1 if failed or not all(r["passed"] for r in bench.records) else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
