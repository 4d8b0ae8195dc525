# Sourced by the device scripts of scripts/gpu/ (run from any directory on the lent machine):
# goes to the repository root, sets the CUDA libraries' path, a fresh kernel cache and $OUT, and
# defines the two builds every script needs.
#   build_tool     the `tessel` tool into build-dev/ (tests and Python off; ~20 s on 16 cores)
#   build_python   the Python extension into build-py/ (PYTHONPATH=build-py/python)
# Both log under $OUT and return non-zero when the build fails.
cd "$(dirname "${BASH_SOURCE[1]}")/../.."
export LD_LIBRARY_PATH=/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}
export TESSEL_CACHE_DIR=$(mktemp -d)
OUT=${OUT:-/tmp/out}; mkdir -p $OUT

build_tool() {
  cmake -S . -B build-dev -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
    -DTESSEL_BUILD_PYTHON=OFF > $OUT/cfg.log 2>&1 && ninja -C build-dev tessel > $OUT/build.log 2>&1
}

build_python() {
  cmake -S . -B build-py -G Ninja -DCMAKE_BUILD_TYPE=Release -DTESSEL_BUILD_TESTS=OFF \
    -DTESSEL_BUILD_PYTHON=ON -DPython_EXECUTABLE=$(which python3) \
    -DCUDAToolkit_ROOT=/usr/local/cuda > $OUT/pycfg.log 2>&1 &&
    cmake --build build-py --target _tessel -j 16 > $OUT/pybuild.log 2>&1
}
