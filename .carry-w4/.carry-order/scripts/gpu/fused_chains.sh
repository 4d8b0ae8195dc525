#!/bin/bash
# Graphene's fused chains on the lent H100, one device call from the repository root: builds the
# Python extension (Release, as python_check.sh), then runs bench/python/lstm_cell.py and
# bench/python/mlp.py (those named in $BENCHES) with JSON records under $OUT.
# Usage: scripts/gpu/fused_chains.sh
set -u
cd "$(dirname "$0")/../.."
OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=${TESSEL_CACHE_DIR:-/tmp/tessel-cache}
start=$(date +%s)
cmake -S . -B build-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
  -DTESSEL_BUILD_PYTHON=ON -DPython_EXECUTABLE="$(python3 -c 'import sys; print(sys.executable)')" \
  -DCUDAToolkit_ROOT=/usr/local/cuda > "$OUT/py_configure.log" 2>&1 || { tail -30 "$OUT/py_configure.log"; exit 1; }
cmake --build build-py --target _tessel -j "$(nproc)" > "$OUT/py_build.log" 2>&1 || { grep -E "error|FAILED" "$OUT/py_build.log" | head -30; exit 1; }
echo "built in $(( $(date +%s) - start )) s"
export PYTHONPATH=$PWD/build-py/python
nvidia-smi --query-gpu=name,clocks.max.sm --format=csv,noheader
status=0
for b in ${BENCHES:-lstm_cell mlp}; do
  [ -f bench/python/$b.py ] || continue
  echo "== bench/python/$b.py"
  timeout ${BENCH_TIMEOUT:-240} python3 bench/python/$b.py --json "$OUT/$b.jsonl" || status=1
done
exit $status
