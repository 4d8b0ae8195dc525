#!/bin/bash
# Call J of the second 2026-11-29 session (H200), from the repository root: issue 14's row bar at
# the session's end (after LayerNorm's column vectors by halves and softmax's line-phase fetch):
# call X's script again (every unpinned row program at the eight bar shapes and the ragged
# 3000 x 16376, two rounds, after a check of each against the interpreter at ragged sizes).
CALL=j exec bash "$(dirname "$0")/session_2026_11_29_x.sh"
