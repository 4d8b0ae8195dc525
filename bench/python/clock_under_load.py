"""SM clock and power while one kernel runs back to back (issue 11: is the fused LSTM cell
slower than the plain GEMM of its M, N, K because it runs at a lower clock?). For each kernel:
LAUNCHES launches in a row, timed by events, while `nvidia-smi -lms 50` samples clocks.sm and
power.draw; prints per kernel the median time per launch and the mean clock and power over its
phase. Usage: clock_under_load.py [--launches N]"""
import argparse, os, subprocess, sys, tempfile, time
import torch
import tessel
from bench_common import repository_root


def main():
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--launches", type=int, default=150)
    args = p.parse_args()
    root = repository_root()
    f16 = dict(device="cuda", dtype=torch.float16)
    B, I, H = 4096, 8192, 8192
    T = H // 64
    gemm = tessel.compile_file(os.path.join(root, "examples/kernels/gemm.tir"))
    cell = tessel.compile_file(os.path.join(root, "examples/kernels/lstm_cell_interleaved.tir"))
    a = torch.randn(B, I + H, **f16) * 0.1
    w = torch.randn(4 * H, I + H, **f16) * 0.01
    c_gemm = torch.empty(B, 4 * H, **f16)
    x, h, c = a[:, :I].contiguous(), a[:, I:].contiguous(), torch.randn(B, H, **f16)
    wx = torch.randn(T, 256, I, **f16) * 0.01
    wh = torch.randn(T, 256, H, **f16) * 0.01
    b = torch.randn(T, 256, **f16)
    co, ho = torch.empty(B, H, **f16), torch.empty(B, H, **f16)
    kernels = {"gemm 4096x32768x16384": lambda: gemm(a, w, c_gemm),
               "lstm_cell_interleaved 4096x8192x8192": lambda: cell(x, h, c, wx, wh, b, co, ho)}
    log = tempfile.NamedTemporaryFile("w+", suffix=".csv", delete=False)
    smi = subprocess.Popen(["nvidia-smi", "--query-gpu=timestamp,clocks.sm,power.draw",
                            "--format=csv,noheader,nounits", "-lms", "50"], stdout=log)
    time.sleep(1.0)
    phases = []
    for round_ in range(2):
        for name, fn in kernels.items():
            fn(); torch.cuda.synchronize()
            start = time.time()
            events = [torch.cuda.Event(enable_timing=True) for _ in range(args.launches + 1)]
            events[0].record()
            for i in range(args.launches):
                fn()
                events[i + 1].record()
            torch.cuda.synchronize()
            ms = sorted(events[i].elapsed_time(events[i + 1]) for i in range(args.launches))
            phases.append((name, round_, start + 0.3, time.time(), ms[len(ms) // 2]))
            time.sleep(1.0)
    smi.terminate(); smi.wait()
    samples = []
    for line in open(log.name):
        parts = [s.strip() for s in line.split(",")]
        try:
            t = time.mktime(time.strptime(parts[0].split(".")[0], "%Y/%m/%d %H:%M:%S")) + \
                float("0." + parts[0].split(".")[1])
            samples.append((t, float(parts[1]), float(parts[2])))
        except (ValueError, IndexError):
            pass
    for name, round_, t0, t1, ms in phases:
        inside = [s for s in samples if t0 <= s[0] <= t1]
        clock = sum(s[1] for s in inside) / max(len(inside), 1)
        power = sum(s[2] for s in inside) / max(len(inside), 1)
        print("%-40s round %d: %.4f ms per launch (median)  SM clock %.0f MHz  power %.0f W  (%d samples)"
              % (name, round_, ms, clock, power, len(inside)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
