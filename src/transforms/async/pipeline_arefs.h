// PipelineArefs: the ring depth of every aref (`slots`) and the wgmma groups its consumer leaves
// in flight — Tawa's two pipelining knobs D and P (§III-D, fine-grained pipeline).
//
// warp-specialize leaves a correct but serial program: a one-slot aref (the producer cannot load
// tile k + 1 before the consumer released tile k) and synchronous mmas (the consumer cannot issue
// address work for k + 1 while k's wgmma runs). This pass deepens both.
//
// D, the slots. A deeper ring lets the producer run up to D loads ahead of the consumer, hiding
// global latency, at D times the bytes of a slot. D is a shared-memory budget question with the
// same answer as for the non-specialized mainloop, so it uses pipeline-loops' rules through the
// shared utility (stage_budget.h; stated in pipeline_loops.h): a slot costs its buffers' bytes,
// each rounded up to its alignment (swizzle repeat, 128 B for a TMA destination); the capacity is
// Target::shared_memory_per_block() minus a reserve (stage_budget.h: 2 KiB for barriers and the
// base's round-up, 8 KiB when a cross-thread op needs scratch) minus the kernel's other shared
// tensors (a staged epilogue's buffers among them); D = min(C, what fits, the static trip count),
// C = 8, or 4 for every ring of a consumer loop whose threads read one of its slots (W4A16's
// dequantized weights: stage_budget.h), with a common cap when a kernel has several arefs. The
// aref's ring replaces the loop's staged copies, so the slots' views (the results of
// aref_acquire / aref_wait) are not counted again. A once-per-tile aref (warp-specialize's
// prologue and epilogue operands: attention's Q) holds one slot outside the rings; its second
// slot (the next tile's operands loaded while this tile's are read) comes from what the rings
// leave at 4 stages, before any ring deepens past 4
// (test/lit/transforms/pipeline_arefs_tile_slot_first.tir).
//
// P, wgmma groups in flight. Every wgmma mma of the consumer's loop gets `async`; after the last
// one the loop commits the group (`mma_commit`) and waits until at most P groups are pending
// (`mma_wait {pending = P}`). A pending group still reads its slot, so the release of sequence
// number n moves to after the wait that retires n's group: in iteration k the consumer releases
// k - P (guarded by `cmp ge` for the first P iterations); after the loop it drains the groups
// (`mma_wait {pending = 0}`) and releases the last P numbers, each guarded unless the trip count
// is statically large enough. P = 0 keeps the release where warp-specialize put it (other ops may
// still read the slot after the wait). Default P = min(1, D - 1). For P = 1 this is exactly the
// form of test/lit/async/gemm_arefs.tir, which lower-arefs consumes.
//
// Once-per-tile arefs (warp-specialize's epilogue operands: acquire and wait stand in no loop of
// their roles) have no loop to pipeline. Their first slot is counted outside the rings' budget
// (the mainloop's ring depth comes first); they get kTileSlots = 2 slots when what the rings leave
// holds a second one (tile t + 1's operands can land while tile t's are read), else 1.
//
// An async mma's result may be used only by the next async mma (as its accumulator) or by the
// yield, and the carried accumulator only by the mmas. A loop that reads them otherwise in the
// same iteration (attention: S = Q·Kᵀ, exp(S), then P·V) needs Tawa's coarse-grained pipeline
// (Algorithm 1): where coarse-pipeline will rotate the loop (coarse_pipeline_applies) its mmas are
// left synchronous for that pass; otherwise each mma read in its iteration is waited for right
// after it and the last stays in flight across the back edge (wait-at-use, needs 2 slots); where
// every mma is read in its iteration (W4A16 with each scale group's product scaled after its
// wgmma), each becomes its own group and is waited for just before its first reader, the later
// mmas already issued (wait-before-reads: `mma_wait {pending = n}`, everything retired within
// the iteration, the releases where they were); else they stay synchronous — correct, not
// overlapped. The report says which, and a pinned
// mma_in_flight on such a loop is refused. A loop may wait on several arefs (warp-specialize
// gives attention's K and V one each): wait-at-use releases each right after the wait that
// retires the last mma reading it (K after S) or, when the trailing group reads it, in the next
// iteration (V after P·V).
//
// Pins. A person pins on the mainloop, before warp-specialize (which carries them to the
// consumer's loop): `stages = D` and `mma_in_flight = P`, checked as pipeline-loops checks them —
// integers, D >= 1, 0 <= P <= 7, P <= D - 1, pinned D x slot bytes within the budget — each refusal
// naming the loop, the value and the limit. The pass removes the pins from the loop once they are
// realized (D as the aref's `slots`, P as the mma_wait). An aref whose consumer loop already waits
// on wgmma groups was pipelined before and is left unchanged, so running the pass twice is safe.
//
// Runs after warp-specialize. Writes one line per aref to `tessel opt --report=pipeline`.
#pragma once

#include "ir/ir.h"

namespace tessel::transforms {

// Sets `slots` on every aref of `module` and pipelines its consumer's wgmma groups (rules above);
// UserError for pins that cannot be met or a consumer loop the pass cannot pipeline.
void pipeline_arefs(ir::Module& module);

}  // namespace tessel::transforms
