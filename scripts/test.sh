#!/usr/bin/env bash
# Sets up, builds, and runs every test (unit, lit, error; GPU tests skip themselves without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)" "$@"
