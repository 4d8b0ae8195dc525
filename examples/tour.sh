#!/usr/bin/env bash
# A tour of what tessel can do so far. Usage: examples/tour.sh PATH/TO/tessel
set -euo pipefail
tessel=${1:-build/bin/tessel}
"$tessel" version
