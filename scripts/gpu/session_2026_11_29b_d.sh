#!/bin/bash
# Call D of the second 2026-11-29 session (H200): call C again with three variants (as emitted;
# weight and bias by two 8-byte loads a chunk; the weight only), three rounds each.
# Since the review after call J this runs scripts/gpu/rows_emitted.sh (the probe's one driver);
# the tree of the call, in the record, has the script as it ran.
VARIANTS=emitted,colhalf,ghalf ROUNDS=3 exec bash "$(dirname "$0")/rows_emitted.sh"
