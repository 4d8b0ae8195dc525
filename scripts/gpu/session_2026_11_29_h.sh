#!/bin/bash
# Call H of the 2026-11-29 session (H200), from the repository root, carrying .carry-base
# (172b02d): call G's measurement (session_2026_11_29_g.sh) of a tree whose chunked kernels use
# masked fetches as a load under a select (tsl_fetch16_sel) and stores without the full-tile
# second version inside chunks only (the held row keeps the asm fetch, all of its vectors in
# flight; call G changed both everywhere). Records rows-h-{base,new}.jsonl.
CALL=h exec bash "$(dirname "$0")/session_2026_11_29_g.sh"
