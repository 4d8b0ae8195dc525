// CoarsePipeline: a consumer loop whose first wgmma's result is worked on in registers before a
// second wgmma consumes that work (attention: S = Q·Kᵀ, the softmax, O += P·V) is rotated so that
// the register work of one iteration runs while the tensor cores compute the second GEMM of the
// iteration before — Tawa's coarse-grained pipeline (paper 001 §III-D2, Algorithm 1), which is
// FlashAttention-3's intra-warpgroup overlap (paper 000 §6).
//
// Why. In the synchronous loop (or pipeline-arefs' wait-at-use form) a warpgroup issues
// S_j = Q·K_jᵀ, waits for it, runs the softmax, issues O += P_j·V_j; since wgmma groups retire in
// order, the wait for S_{j+1} also waits for P_j·V_j, and the softmax never overlaps a GEMM of its
// own warpgroup: measured on the H100 the softmax of a 128x128 tile costs about as long as its two
// GEMMs (bench/results/2026-11-26-attention-h100.md).
//
// The form. The body's ops split into the *head* H (everything but the tail: the first mma T, the
// register work C between) and the *tail* U (the last mma, its aref waits and releases — tiles
// only U reads — and the index arithmetic they need). With n = the trip count:
//   if n > 0 {
//     H(0)                                     prologue: T synchronous, then C(0)
//     for %j = 0 to n - 1 iter(carried..., U's inputs from H) {
//       H-before-T(j + 1); T(j + 1) {async}; mma_commit
//       U(j) {async}, reading the carried inputs;  mma_commit
//       mma_wait {pending = 1}                     T(j + 1) retired, U(j) still running
//       release the arefs only T read
//       C(j + 1) up to its first read of U's result (the rescale of O)
//       mma_wait {pending = 0}; U(j)'s releases
//       the rest of C(j + 1); yield
//     }
//     U(n - 1); mma_commit; mma_wait {pending = 0}; its releases   epilogue
//   } else { the loop's initial values }
// The values are those of the loop: the carried value that U's result was yielded into is, in
// the rotated body, U(j)'s result (the same sequence of values, each computed one iteration
// earlier relative to the head), and U's operands computed by H (P and the rescaled O) become
// loop-carried. Aref sequence numbers keep their order: T's arefs are waited for 0, 1, ..., U's
// 0, 1, ... as before, so the producer and persistent's numbering are unchanged.
//
// Which loops. A `for` with step 1 in a role (the consumer), whose body holds exactly two wgmma
// mmas T and U directly (none nested), T's result read in the iteration by an op other than an
// mma's accumulator, U's result used only by the yield, U's accumulator computed in the body from
// the value carried in U's yield position, which neither T nor an op before T reads; every aref
// wait in the body either read only by U (U's) or not read by U; ops of the head without regions
// or with pure scalar results besides. Other loops are left as they are (pipeline-arefs pipelines
// them). A kernel whose block_grid pins `coarse_pipeline = false` is left unchanged (kept to
// measure the rotation against pipeline-arefs' wait-at-use loop); any other value than true or
// false is an error. With `pingpong = true` too, pingpong-consumers (after this pass) gives one
// turn to S of j + 1 and P·V of j together, FA3's pairing.
//
// The operand form (no T). A consumer loop whose one wgmma U takes its A operand from registers
// the body computes (a W4A16 GEMM: weights dequantized from the tiles of one aref, the wgmma's B
// from another; warp-specialize splits them so) is rotated so that A of iteration j + 1 is
// computed while U(j) runs:
//   if n > 0 {
//     H(0)                                     prologue: the aref waits, A(0), the early releases
//     for %pair = 0 to (n - 1) / 2 iter(acc, A) {    two steps a trip, then (n - 1) % 2 steps
//       step(j):  U(j) {async, fence_a} on the carried A; mma_commit
//                 H(j + 1): its aref's wait, A(j + 1), that aref's release
//                 mma_wait {pending = 0}; U(j)'s releases
//     }
//     U(n - 1); mma_commit; mma_wait {pending = 0}; its releases   epilogue
//   } else { the loop's initial values }
// Unrolled by two because the A a step computes must not be the register array its in-flight
// wgmma reads (PTX: A's registers may not be written before the wgmma retires; ptxas serializes
// the wgmma, C7513, when a loop-carried A is redefined in its own group's window); `fence_a`
// keeps A's registers live until the drain (emit_async.cpp). The odd step is a loop of 0 or 1
// trips rather than an `if` (the accumulator may have one reader: wgmma updates it in place).
// Which loops: a `for` with step 1 in a role whose body holds exactly one mma, a wgmma whose A
// is a register tensor the body defines, whose result only the yield reads, into the position
// of the carried value that is its accumulator and read by nothing else; every aref wait either
// read only by U or not read by U at all.
//
// Registers. U's inputs from H live across the back edge (attention: P as packed 16-bit pairs,
// 32 registers per thread at 64x128 per warpgroup, beside S and O): the cost of the overlap.
// What ptxas makes of it (SASS of flash_attention): it retires P·V before the softmax of j + 1
// starts, so within a warpgroup the softmax does not overlap P·V (the other warpgroup's GEMMs
// fill the gap). The cause, found later: specialize-masks' per-tile `if`, whose join inside the
// open window makes ptxas drain every wgmma group (docs/HOPPER.md §1); `specialize_masks = false`
// or the opt-in pass unswitch-iterations moves the join out, and both copies overlap in the SASS
// (not measured yet). `cast_at_issue = true`, tried first on the guess that P's conversion
// writing the in-flight registers was the cause, carries P wide and converts it just before
// P·V; it spills and measured 3-17% slower, so opt-in
// (bench/results/2026-11-27-attention-cast-at-issue-h100.md).
//
// Across tiles (built as the opt-in pass rotate-tiles, rotate_tiles.h, not measured yet). The rotation stops at the
// persistent tile loop: each tile still starts with H(0) (S of its first key tile waited for at
// once, then its softmax with the tensor cores idle) and ends with U(n - 1) and the output store.
// At L = 1K (8 key tiles per query tile) that is ~2 us of ~16 per tile, and what keeps
// flash_attention at 0.96-0.98 of cuDNN there (bench/results/2026-11-27-stores-by-warpgroup-h100.md).
// The same rotation one level up, on the consumer's tile loop (block b's tiles t_0, t_1, ...
// = first, first + blocks, ...; n_b of them, a kernel-wide `if n > 0` versioned outside):
//   prologue: the index arithmetic of t_0, its Q wait, H(0) of t_0 -> (m, l, P, O scaled)
//   for k = 0 to n_b - 1 iter(tile sequence, key sequence base, m, l, P, O scaled) {
//     the steady key loop of t_k (as now)
//     index arithmetic of t_{k+1}; its Q wait; its K_0 wait; S_0 of t_{k+1} {async}; commit
//     P·V of t_k's last key tile {async}; commit     (issued after S_0: groups retire in order)
//     mma_wait {pending = 1}; K_0's release; the softmax of t_{k+1}'s first key tile
//     mma_wait {pending = 0}; the last V's release; t_k's Q release; t_k's epilogue and store
//   }
//   the last tile: its steady loop, U(n - 1), its releases and store.
// Carried: the first softmax's m, l, P (f16 pairs) and rescaled O, as the key loop carries them;
// Q's buffer for t_k comes from a second wait on its sequence number (its phase is complete and
// not yet released, so the wait returns at once). Registers: the epilogue of t_k then holds t_k's
// output beside t_{k+1}'s P and rescaled O (the steady loop's peak is S, P and O). Expected: the
// first softmax beside the last P·V; the store still runs with the tensor cores idle unless the
// other warpgroup's turn fills them (pingpong), or unless t_{k+1}'s second S is issued first.
//
// Runs after persistent (so the tile loop's sequence bases are in place) and before lower-arefs;
// pipeline-arefs leaves these loops synchronous (coarse_pipeline_applies) and sizes their rings.
// `--report=pipeline` gets a line per rotated loop.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Whether coarse-pipeline will rotate `loop` (the rules above), so that pipeline-arefs leaves it.
bool coarse_pipeline_applies(const ir::Operation& loop);

// Rotates every qualifying loop of `module`.
void coarse_pipeline(ir::Module& module);

}  // namespace tessel::transforms
