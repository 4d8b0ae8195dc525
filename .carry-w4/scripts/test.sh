#!/usr/bin/env bash
# Sets up, builds, and runs every test (unit, lit, error; GPU tests skip themselves without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
# A fresh kernel cache: no test result may depend on what earlier runs left in ~/.cache/tessel.
TESSEL_CACHE_DIR=$(mktemp -d)
export TESSEL_CACHE_DIR
trap 'rm -rf "$TESSEL_CACHE_DIR"' EXIT
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
