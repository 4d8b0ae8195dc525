#!/bin/bash
# Call G of the third 2026-11-29 session (H200), from the repository root: issue 14's row bar
# after this session's changes (chunked blocks filling 7/8 of an SM, the emitter's register count
# in ptxas's steps, rsqrt as rsqrtf): call X's script again (every unpinned row program at the
# eight bar shapes and the ragged 3000 x 16376, two rounds, after a check of each against the
# interpreter at ragged sizes).
CALL=g exec bash "$(dirname "$0")/session_2026_11_29_x.sh"
