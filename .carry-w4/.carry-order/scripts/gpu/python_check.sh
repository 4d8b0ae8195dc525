#!/bin/bash
# The Python entry on the lent H100, in one device call from the repository root (nothing to carry:
# it builds the extension there). Builds only the extension target with cmake (Release, tests off,
# python on; nanobind from `python3 -m nanobind --cmake_dir`), then runs on torch CUDA tensors:
#   1. examples/python/gemm_rmsnorm.py (GEMM vs torch.matmul, RMSNorm vs F.rms_norm, the drop-in
#      model eagerly and under torch.compile) and builder_gemm_rmsnorm.py (the same two kernels
#      built with the Python tile builder, on torch CUDA tensors),
#   2. python/tests/test_gpu.py (with tessel.Variants tuned, then launched), test_torch.py,
#      test_builder.py and test_variants.py (unittest),
#   3. launch overhead: per-call time of 10k back-to-back calls of a one-block RMSNorm from Python,
#      the same launches from C++ (Kernel._launch_repeatedly, no Python between them), a torch op
#      of the same size for scale, and the kernel's device time (events); prints a table.
# Usage: scripts/gpu/python_check.sh [BUILD_DIR]   (default build-py; logs under $OUT when set)
set -u
cd "$(dirname "$0")/../.."
build=${1:-build-py}
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=$(mktemp -d)
nproc_=$(nproc)
echo "== build ($build: Release, TESSEL_BUILD_PYTHON=ON, target _tessel)"
start=$(date +%s)
cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
  -DTESSEL_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(python3 -c 'import sys; print(sys.executable)')" \
  -DCUDAToolkit_ROOT=/usr/local/cuda > "$OUT/py_configure.log" 2>&1 || { tail -30 "$OUT/py_configure.log"; exit 1; }
cmake --build "$build" --target _tessel -j "$nproc_" > "$OUT/py_build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/py_build.log" | head -30; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
export PYTHONPATH=$PWD/$build/python:$PWD/python/tests
python3 -c "import torch, tessel; print('torch', torch.__version__, 'cuda', torch.cuda.is_available(), 'tessel gpu', tessel.has_gpu(), tessel._tessel.native_arch())"

status=0
echo "== examples/python/gemm_rmsnorm.py (GPU)"
timeout 300 python3 examples/python/gemm_rmsnorm.py || status=1
echo "== examples/python/builder_gemm_rmsnorm.py (GPU)"
timeout 300 python3 examples/python/builder_gemm_rmsnorm.py || status=1
for t in gpu torch builder variants; do
  echo "== python/tests/test_$t.py"
  timeout 300 python3 python/tests/test_$t.py > "$OUT/py_test_$t.log" 2>&1; rc=$?
  tail -4 "$OUT/py_test_$t.log"; grep -E "^(FAIL|ERROR):|per call|^tuned:" "$OUT/py_test_$t.log"
  [ $rc = 0 ] || status=1
done

echo "== launch overhead (one-block rmsnorm 8x512 f16; per call, us)"
timeout 300 python3 - <<'PY' || status=1
import statistics, time, torch, tessel
k = tessel.compile_file("examples/kernels/rmsnorm.tir")
x = torch.randn(8, 512, device="cuda", dtype=torch.float16)
w = torch.ones(512, device="cuda", dtype=torch.float16)
y = torch.empty_like(x)
N, R = 10000, 5

def per_call(f):
    samples = []
    for _ in range(R):
        torch.cuda.synchronize()
        t = time.perf_counter(); f(); samples.append((time.perf_counter() - t) / N * 1e6)
        torch.cuda.synchronize()
    return statistics.median(samples)

def python_calls():
    for _ in range(N): k(x, w, y, 1e-6)
def python_calls_new_outputs():  # a new output tensor each call (as in a model): descriptors rebuilt
    for _ in range(N): k(x, w, torch.empty_like(x), 1e-6)
def cxx_calls():
    k._launch_repeatedly(x, w, y, 1e-6, count=N)
def torch_op():
    for _ in range(N): torch.mul(x, w, out=y)

python_calls(); cxx_calls()
rows = [("tessel call from Python (same tensors)", per_call(python_calls)),
        ("tessel call from Python (new output each call, incl. torch.empty_like)", per_call(python_calls_new_outputs)),
        ("same launches from C++ (no Python)", per_call(cxx_calls)),
        ("torch.mul(out=) of the same size, for scale", per_call(torch_op))]
device = k.benchmark(x, w, y, 1e-6, warmup=100, iterations=1000)["median_ms"] * 1e3
rows.append(("device time of the kernel (events, median)", device))
print(f"| {'what':<72} | us/call |\n| {'-'*72} | ------- |")
for name, us in rows:
    print(f"| {name:<72} | {us:7.2f} |")
overhead = rows[0][1] - rows[2][1]
print(f"Python-side cost per call (row 1 - row 3): {overhead:.2f} us; budget 10 us: "
      f"{'ok' if rows[0][1] <= 10 else 'OVER'} (row 1 is wall time per call, an upper bound of the host cost)")
PY
echo "== python_check: $([ $status = 0 ] && echo ok || echo FAILED)"
exit $status
