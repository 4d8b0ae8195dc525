#!/usr/bin/env bash
# Installs what tessel needs to build (only what is missing), then configures and builds it.
# Quick when everything is already there. Usage: scripts/setup.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}

need=()
command -v cmake >/dev/null || need+=(cmake)
command -v ninja >/dev/null || need+=(ninja-build)
command -v g++ >/dev/null || need+=(g++)
[ -f /usr/include/gtest/gtest.h ] || need+=(libgtest-dev)
if [ ${#need[@]} -gt 0 ]; then
  echo "setup: installing ${need[*]}"
  if [ "$(id -u)" = 0 ]; then sudo=""; else sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${need[@]}"
fi

# The CUDA toolkit (headers, NVRTC, cuBLAS) is part of this machine kind's image; tessel loads the
# GPU driver at run time, so no driver is needed to build or to run the CPU-side tests.
if [ -z "${CUDAToolkit_ROOT:-}" ] && [ -d /usr/local/cuda ]; then export CUDAToolkit_ROOT=/usr/local/cuda; fi
if ! command -v nvcc >/dev/null && [ -z "${CUDAToolkit_ROOT:-}" ]; then
  echo "setup: the CUDA toolkit was not found (looked for nvcc and /usr/local/cuda)" >&2
  exit 1
fi

# The Python package (python/) is a target of this same build: its tests run in CI from the build
# folder (PYTHONPATH=build/python). It needs nanobind and numpy, from PyPI; TESSEL_SETUP_PYTHON=0
# builds without it.
python_flags=()
if [ "${TESSEL_SETUP_PYTHON:-1}" != 0 ]; then
  command -v python3 >/dev/null || { echo "setup: python3 is missing (TESSEL_SETUP_PYTHON=0 builds without the Python package)" >&2; exit 1; }
  if ! python3 -c "import nanobind, numpy" 2>/dev/null; then
    echo "setup: installing nanobind and numpy (pip)"
    python3 -m pip install --quiet nanobind numpy ||
      python3 -m pip install --quiet --user --break-system-packages nanobind numpy
  fi
  python_flags=(-DTESSEL_BUILD_PYTHON=ON "-DPython_EXECUTABLE=$(python3 -c 'import sys; print(sys.executable)')")
fi

if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "${python_flags[@]}"
elif [ ${#python_flags[@]} -gt 0 ] && ! grep -q "^TESSEL_BUILD_PYTHON:BOOL=ON" "$build_dir/CMakeCache.txt"; then
  cmake "$build_dir" "${python_flags[@]}"  # a build folder from before the Python package
fi
cmake --build "$build_dir" -j "$(nproc)"
