"""Timing and checking helpers, in the manner of triton.testing.

do_bench(fn) times a callable that launches GPU work: it warms up, then times each call between
its own pair of CUDA events (device time, launch gaps excluded), clearing the L2 cache before each
call so that a kernel is not timed on data the previous call left in L2, and returns the median
(or what return_mode asks) in milliseconds. It needs torch for the events and the L2 flush; without
a GPU it times fn's wall-clock time on the CPU (the interpreter), which is only good for comparing
interpreter runs.

For one tessel kernel, Kernel.benchmark(*args) times its launches from C++ instead (the same
method as the C++ benchmarks, src/runtime/timing.h).
"""

import statistics as _statistics
import time as _time


def _reduce(times, quantiles, return_mode):
    if quantiles is not None:
        ordered = sorted(times)
        picks = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in quantiles]
        return picks[0] if len(picks) == 1 else picks
    if return_mode == "median":
        return _statistics.median(times)
    if return_mode == "mean":
        return _statistics.fmean(times)
    if return_mode == "min":
        return min(times)
    if return_mode == "max":
        return max(times)
    if return_mode == "all":
        return list(times)
    raise ValueError(f"return_mode must be median, mean, min, max or all, not {return_mode!r}")


def _torch_cuda():
    try:
        import torch
    except ImportError:
        return None
    return torch if torch.cuda.is_available() else None


def do_bench(fn, warmup=25, rep=100, quantiles=None, return_mode="median", flush_l2=True):
    """Times fn() in milliseconds: about `warmup` ms of warm-up calls, then about `rep` ms of timed
    calls (at least 5 of each). Device-event times with torch on a GPU, else CPU wall-clock."""
    torch = _torch_cuda()
    if torch is None:
        fn()
        start = _time.perf_counter()
        fn()
        estimate_ms = max((_time.perf_counter() - start) * 1e3, 1e-3)
        times = []
        for _ in range(max(5, int(rep / estimate_ms))):
            start = _time.perf_counter()
            fn()
            times.append((_time.perf_counter() - start) * 1e3)
        return _reduce(times, quantiles, return_mode)

    # 256 MB written before each timed call evicts the H100's 50 MB L2.
    cache = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int32, device="cuda") if flush_l2 else None
    fn()
    torch.cuda.synchronize()
    begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    begin.record()
    for _ in range(5):
        if cache is not None:
            cache.zero_()
        fn()
    end.record()
    torch.cuda.synchronize()
    estimate_ms = max(begin.elapsed_time(end) / 5, 1e-3)
    n_warmup = max(5, int(warmup / estimate_ms))
    n_repeat = max(5, int(rep / estimate_ms))
    starts = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    ends = [torch.cuda.Event(enable_timing=True) for _ in range(n_repeat)]
    for _ in range(n_warmup):
        fn()
    for i in range(n_repeat):
        if cache is not None:
            cache.zero_()
        starts[i].record()
        fn()
        ends[i].record()
    torch.cuda.synchronize()
    times = [s.elapsed_time(e) for s, e in zip(starts, ends)]
    return _reduce(times, quantiles, return_mode)


def relative_error(got, want):
    """||got - want|| / ||want|| in float64 (numpy arrays or tensors; tensors go through numpy)."""
    import numpy as np

    def as_numpy(x):
        if hasattr(x, "detach"):  # a torch tensor, on any device
            x = x.detach().float().cpu().numpy()
        return np.asarray(x, dtype=np.float64)

    g, w = as_numpy(got), as_numpy(want)
    if g.shape != w.shape:
        raise ValueError(f"shapes differ: {g.shape} vs {w.shape}")
    return float(np.linalg.norm(g - w) / max(np.linalg.norm(w), 1e-300))
