// TightenArefs: a consumer waits for an aref's slot just before it first reads the slot, and
// releases a slot it only copies into registers right after the last of those copies.
//
// Why. warp-specialize puts a consumer loop's aref_waits at the top of the body and its
// aref_releases at the bottom, and pipeline-arefs moves the release of a slot an asynchronous mma
// reads to after the wait that retires the mma. Both are correct, but where the body does register
// work on one aref's buffers before it reads another's, the top-of-body wait holds that work back
// until every slot has landed, and where it copies an aref's buffers into registers and is done
// with them, the bottom-of-body release holds the slot through the mma and its wait. W4A16 at
// small M (bench/kernel-variants/gemm_w4a16_c64x8_k256_h2_gs.tir) is the case: its K loop waits
// for the weights and scales, then for the token tiles, then dequantizes the weights in
// registers and only then issues the wgmmas that read the token tiles. At the start of a launch
// the token tiles come from the previous launch (programmatic dependent launch: loaded only after
// the grid dependency wait) while the weights were preloaded before it (overlap-launches'
// `preload`), so every consumer dequantizes its first K tile while the token tiles are still in
// flight only if it has not waited for them yet. And the weight slot is free once its fragments
// are in registers: released there, the producer refills it a K tile's work earlier.
//
// What the pass does (after alternate-tiles, before lower-arefs: on level-1 IR with the mmas
// async and their waits placed), in every block of every consumer role:
//   - each `aref_wait` moves down to just before the first op of its block that reads one of its
//     buffers (or holds such a read in a nested region) or synchronizes the role (role_sync,
//     block_sync, cluster_sync, a ping-pong turn) or uses the same aref (sequence numbers stay in
//     order);
//   - each `aref_release %ring, %n` whose `aref_wait %ring, %n` stands in the same block, and whose
//     buffers (and the shared views of them: transposes, slices) are read only by copies into
//     registers, moves up to just after the last op of the block that reads them or synchronizes
//     the role (a release after a role_sync stays one arrival per warpgroup). A slot an mma
//     reads keeps its release where pipeline-arefs put it (after the wait that retires the mma).
// `tighten_arefs = false` on the block_grid leaves the kernel as it is (for A/B timings).
// lower-arefs then makes the waits mbarrier waits and the releases arrivals at these places (with
// the proxy fence it puts before releasing a slot threads read); check-protocol verifies them.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Moves every consumer's aref waits down to their first reads and the releases of slots copied
// into registers up to their last reads (see above).
void tighten_arefs(ir::Module& module);

}  // namespace tessel::transforms
