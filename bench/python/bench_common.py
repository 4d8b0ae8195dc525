"""What tessel's Python benchmarks share: interleaved event timing and the record's provenance.

Timing as tessel's C++ bench: a warm-up, then the functions launched alternately, each launch
between its own CUDA events; the median per function. Records carry the date, the device, the
commit and the command that made them (bench/results/ conventions).
"""
import datetime
import os
import subprocess
import sys

import torch


def median(xs):
    xs = sorted(xs)
    return xs[len(xs) // 2] if len(xs) % 2 else 0.5 * (xs[len(xs) // 2 - 1] + xs[len(xs) // 2])


def time_interleaved(fns, warmup, iterations):
    """Median milliseconds of each of `fns`, launched alternately after `warmup` rounds. Round i
    starts at function i mod n, so that each takes every place in the round equally often: on a
    card at its power limit a launch's time depends on what ran before it (the same 26 ms attention
    kernel measured 10% faster first in each round, after a slower library kernel, than third,
    bench/results/2026-11-29-attention-pingpong-h200.md)."""
    for _ in range(warmup):
        for f in fns:
            f()
    n = len(fns)
    events = [[(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True))
               for _ in range(iterations)] for _ in fns]
    for i in range(iterations):
        for k in range(n):
            j = (i + k) % n
            events[j][i][0].record()
            fns[j]()
            events[j][i][1].record()
    torch.cuda.synchronize()
    return [median([a.elapsed_time(b) for a, b in ev]) for ev in events]


def graphed(fn, *args):
    """fn(*args) captured into a CUDA graph (after three warm-up calls on a side stream); returns
    the graph's replay, a launch of the whole sequence without host gaps (GPU time)."""
    s = torch.cuda.Stream()
    s.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(s):
        for _ in range(3):
            fn(*args)
    torch.cuda.current_stream().wait_stream(s)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        fn(*args)
    return g.replay


def repository_root():
    return os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")


def provenance(script):
    """The fields every record carries: date (UTC), device, commit (TESSEL_COMMIT when set, as the
    C++ harness reads it: a tree carried to the device without its .git would otherwise report the
    commit of whatever checkout encloses it; else git's HEAD, empty outside a git checkout) and the
    command, `python3 bench/python/<script>` with this run's arguments."""
    commit = os.environ.get("TESSEL_COMMIT", "")
    try:
        if not commit:
            commit = subprocess.run(["git", "-C", repository_root(), "rev-parse", "HEAD"],
                                    capture_output=True, text=True).stdout.strip()
    except OSError:
        commit = ""
    return {"date": datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            "device": torch.cuda.get_device_name(), "commit": commit,
            "command": "python3 bench/python/%s %s" % (script, " ".join(sys.argv[1:]))}
