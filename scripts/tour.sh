#!/usr/bin/env bash
# The main job: the most complete thing tessel can do so far. Today: a tour of the layout calculator.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build >/dev/null
exec examples/tour.sh build/bin/tessel
