#include "pipeline/pipeline.h"

#include <cstdlib>
#include <iostream>
#include <unordered_map>

#include "ir/pass.h"
#include "transforms/async/stage_budget.h"
#include "transforms/report.h"

namespace tessel::pipeline {

std::vector<std::string> lowering_passes() {
  std::vector<std::string> passes = {
      "verify",        // the input is well formed
      "canonicalize",  // fold index arithmetic, remove dead ops
  };
  // Layout synthesis (src/transforms): every register tensor gets a thread-value layout (pinned
  // ones are kept and checked), every mma / reduce / global copy an atom; then shared layouts.
  transforms::register_passes();
  // 1 + tanh(z) (GELU's tanh form) is computed as 2 sigmoid(2z): the same function in an ex2 and a
  // reciprocal instead of tanhf's sequence, and the powers of two around it folded away.
  passes.push_back("tanh-to-sigmoid");
  // exp as one ex2.approx where its error (2^-17, relative) cannot show in the 16-bit outputs it
  // reaches (softmax's per-element exps; the online rescale of a running sum stays expf).
  passes.push_back("exp-to-exp2");
  // A row sum a loop with an mma accumulates every step is summed elementwise in the loop and
  // reduced once after it: no shuffles between the consumer's wgmma issues (GEMM + row sums).
  passes.push_back("sink-reductions");
  // A row program without an mma and without pinned layouts (RMSNorm, softmax, bias + GELU
  // written with no thread in mind) gets its tile, block size and row residency first.
  passes.push_back("schedule-rows");
  passes.push_back("synthesize-layouts");
  passes.push_back("synthesize-shared-layouts");
  // The order of the blocks (L2 reuse between the blocks resident at once); warp specialization
  // and the persistent grid below keep it.
  passes.push_back("raster-blocks");
  // Masks from index arithmetic (a sequence's tail, causal) are tested once per tile; the tiles
  // they keep whole skip them.
  passes.push_back("specialize-masks");
  // Warp specialization (src/transforms/async, the ops of src/ir/async.h; Tawa §III): on sm_90a a
  // mainloop of TMA copies feeding wgmma becomes a producer role and a consumer role connected by
  // an aref; the consumer's stores of its accumulator tile go through shared memory and TMA; the
  // aref gets its ring depth and the consumer its wgmma groups in flight from the budget.
  passes.push_back("warp-specialize");
  // A grid pinned split_k divides K among parts per tile; the last part to finish sums the
  // partials (in a workspace, in a fixed order) and runs the epilogue.
  passes.push_back("split-k");
  passes.push_back("stage-stores");
  passes.push_back("pipeline-arefs");
  // Pipelining without warp specialization (the sm_80 path, and kernels pinned
  // warp_specialize = false): every loop that copies global tiles into shared memory gets
  // `stages` (and `mma_in_flight` for wgmma) within the budget; lower-mainloops below makes the
  // sm_90a ones level-2 IR.
  passes.push_back("pipeline-loops");
  // Blocks that share an operand tile are grouped into clusters of 2 (multicast-loads below
  // loads the shared tile once per cluster); a warp-specialized kernel's grid becomes one block
  // per SM looping over tiles, cluster by cluster.
  passes.push_back("cluster-blocks");
  // A grid pinned consumer_split_k = W: the consumer's K loop taken in turns by W consumer roles
  // of the block, their accumulators summed through shared memory (split-k inside the block).
  passes.push_back("split-roles");
  passes.push_back("persistent");
  // Branches on kernel-wide conditions (stage-stores' TMA row-alignment guard) hoisted out of
  // the tile loop: each copy of the loop gets its own register allocation.
  passes.push_back("unswitch-loops");
  // A persistent consumer's staged stores of tile t move into tile t+1's first K blocks, one part
  // per block beside its wgmma group (after unswitch-loops: each copy of the loop gets its own).
  passes.push_back("overlap-epilogue");
  // The rings of mainloops that run one after the other (an LSTM cell's input and recurrent
  // GEMMs) become one ring with the slots of both: one is busy at a time.
  passes.push_back("share-rings");
  // A consumer loop that works on a wgmma's result in registers before a second wgmma reads the
  // work (attention) is rotated: the next iteration's first GEMM is issued before this one's
  // second, and the register work runs beside the second (after persistent: it keeps the tile
  // loop's sequence numbers).
  passes.push_back("coarse-pipeline");
  // A persistent consumer whose tile starts with a synchronous wgmma (attention's S of the first
  // key tile, in coarse-pipeline's prologue) stores the previous tile's output beside it (opt-in:
  // `defer_stores = true` on the grid, until measured on the GPU).
  passes.push_back("defer-stores");
  // The same rotation across a persistent consumer's tile loop: tile t+1's first key tile beside
  // tile t's last P·V (opt-in: `rotate_tiles = true` on the grid, until measured on the GPU).
  passes.push_back("rotate-tiles");
  // Two consumer roles take a persistent block's tiles in turns, one's epilogue beside the
  // other's mainloop (opt-in: `alternate_tiles = true` on the grid, until measured on the GPU).
  passes.push_back("alternate-tiles");
  // A consumer waits for each aref just before it first reads the slot, and releases a slot it
  // only copies into registers right after the copies (W4A16: the weights dequantized while the
  // token tiles are in flight, their slot refilled a K tile earlier).
  passes.push_back("tighten-arefs");
  // Arefs become mbarriers with phases and parities, and setmaxnreg splits the registers; a TMA
  // mainloop left without warp specialization becomes the same level-2 ops (one thread loading
  // ahead into a ring the block reads). After this the IR names every wait and arrive, which the
  // protocol check verifies before emission; the emitter adds none.
  passes.push_back("lower-arefs");
  passes.push_back("multicast-loads");
  // A consumer of two warpgroups whose loop waits for each wgmma and then works on its result in
  // registers (attention) issues them in turns, one warpgroup's softmax beside the other's GEMMs.
  passes.push_back("pingpong-consumers");
  passes.push_back("lower-mainloops");
  // A branch inside an open window of wgmma groups (attention's mask test beside P·V) hoisted
  // over the whole iteration: ptxas drains the groups at a join (opt-in: `unswitch_iterations =
  // true` on the grid, until measured on the GPU).
  passes.push_back("unswitch-iterations");
  // The next launch may start while this one runs; each thread waits for the earlier launch
  // before its first access that may depend on it (after every pass that adds accesses).
  passes.push_back("overlap-launches");
  passes.push_back("check-protocol");
  return passes;
}

void check_lowered(const ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    ir::walk(kernel.get(), [&](ir::Operation* op) {
      for (const auto& r : op->results()) {
        const ir::Type& t = r->type();
        if (t.is_tensor() && t.space() == ir::MemorySpace::reg && !t.has_layout()) {
          user_error(op->loc(), "compile: %", r->name(), " (", t.str(), ", made by ", op->name(),
                     ") has no thread-value layout; layout synthesis did not assign one, so pin it "
                     "in the type, e.g. register<f32, (T,V):(...)>");
        }
      }
    });
  }
}

void lower(ir::Module& module, const PipelineOptions& options) {
  const char* env = std::getenv("TESSEL_DUMP_IR");
  bool dump = options.print_after_all || (env && std::string(env) == "1");
  std::ostream* out = options.dump ? options.dump : &std::cerr;
  transforms::register_passes();  // also for a pass list of the caller's (--passes=lower-mainloops)
  ir::run_passes_timed(module, options.passes.empty() ? lowering_passes() : options.passes, dump,
                       out, options.timing);
  check_lowered(module);
}

SharedUse tile_pipeline_shared_use(const ir::Module& module) {
  transforms::register_passes();
  // A deep copy keeps the program's locations for the passes' messages.
  auto copy = std::make_unique<ir::Module>();
  for (const auto& kernel : module.kernels) {
    std::unordered_map<const ir::Value*, ir::Value*> mapping;
    copy->kernels.push_back(ir::clone(*kernel, mapping));
  }
  std::vector<std::string> passes;
  for (const std::string& p : lowering_passes()) {
    passes.push_back(p);
    if (p == "stage-stores") break;  // the last pass before the ring budgets are drawn
  }
  ir::run_passes_timed(*copy, passes, false, nullptr, nullptr);
  TESSEL_ASSERT(copy->kernels.size() == 1, "tile_pipeline_shared_use: one kernel");
  ir::Operation* kernel = copy->kernels[0].get();
  // The program's own tiles: copies into shared memory, and the arefs' buffers warp-specialize
  // made of them. Everything else shared is the pipeline's.
  transforms::StageBudget budget(
      kernel,
      [](const ir::Value* v) {
        const ir::Operation* d = v->def();
        return d && (d->kind() == ir::OpKind::copy || d->kind() == ir::OpKind::aref_acquire ||
                     d->kind() == ir::OpKind::aref_wait || d->kind() == ir::OpKind::aref_slot);
      },
      transforms::ring_reserve_bytes(*kernel));
  SharedUse use;
  use.capacity = budget.target().shared_memory_per_block(budget.blocks_per_sm());
  use.held = use.capacity - budget.budget();
  use.str = budget.budget_str();
  return use;
}

}  // namespace tessel::pipeline
