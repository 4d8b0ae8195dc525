#!/usr/bin/env python3
"""Prints a CUDA or IR file with its names renamed in order of first appearance (v0, v1, ...),
and comments dropped, so that two generated kernels that differ only in names diff empty:
  diff <(canonical_names.py a.cu) <(canonical_names.py b.cu)
With --calls, prints only the sequence of tessel::device:: calls (barriers, TMA, wgmma,
setmaxnreg, ...): two kernels whose independent ops are ordered differently still compare.
Used to compare a task program's lowered kernel with its tile program's (docs/TASKS.md)."""
import re
import sys

KEEP = set("""if else for while return const int float bool unsigned long char void auto
true false sizeof static_cast reinterpret_cast template typename struct pragma unroll
__global__ __device__ __forceinline__ __launch_bounds__ extern __shared__ __syncthreads
__int_as_float __float_as_int fmaxf fminf exp2f tessel device""".split())


def canonical(text):
    text = re.sub(r"//[^\n]*", "", text)
    names = {}

    def rename(m):
        w = m.group(0)
        if w in KEEP:
            return w
        if w not in names:
            names[w] = "v%d" % len(names)
        return names[w]

    return re.sub(r"(?<![0-9.])[A-Za-z_%@][A-Za-z_0-9]*", rename, text)


if __name__ == "__main__":
    calls = "--calls" in sys.argv[1:]
    for path in [a for a in sys.argv[1:] if a != "--calls"]:
        text = open(path).read()
        if calls:
            for m in re.finditer(r"tessel::device::[a-z_0-9]+(<[^>]*>)?", text):
                print(m.group(0))
        else:
            sys.stdout.write(canonical(text))
