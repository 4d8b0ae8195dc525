// Pass reports and the registration of this layer's passes.
#include "transforms/report.h"

#include <map>
#include <set>

#include "ir/pass.h"
#include "support/diagnostics.h"
#include "transforms/algebra/exp_to_exp2.h"
#include "transforms/algebra/tanh_to_sigmoid.h"
#include "transforms/async/check_protocol.h"
#include "transforms/async/coarse_pipeline.h"
#include "transforms/async/defer_stores.h"
#include "transforms/async/lower_arefs.h"
#include "transforms/async/lower_mainloops.h"
#include "transforms/async/multicast_loads.h"
#include "transforms/async/overlap_epilogue.h"
#include "transforms/async/overlap_launches.h"
#include "transforms/async/pingpong_consumers.h"
#include "transforms/async/pipeline_arefs.h"
#include "transforms/async/pipeline_loops.h"
#include "transforms/async/rotate_tiles.h"
#include "transforms/async/share_rings.h"
#include "transforms/async/alternate_tiles.h"
#include "transforms/async/split_roles.h"
#include "transforms/async/stage_stores.h"
#include "transforms/async/tighten_arefs.h"
#include "transforms/async/unswitch_iterations.h"
#include "transforms/async/warp_specialize.h"
#include "transforms/layout/schedule_rows.h"
#include "transforms/layout/shared_layouts_pass.h"
#include "transforms/layout/synthesize_layouts.h"
#include "transforms/schedule/cluster_blocks.h"
#include "transforms/schedule/persistent.h"
#include "transforms/schedule/raster_blocks.h"
#include "transforms/schedule/sink_reductions.h"
#include "transforms/schedule/specialize_masks.h"
#include "transforms/schedule/split_k.h"
#include "transforms/schedule/unswitch_loops.h"

namespace tessel::transforms {
namespace {

std::set<std::string>& enabled() {
  static std::set<std::string> kinds;
  return kinds;
}
std::map<std::string, std::vector<std::string>>& lines() {
  static std::map<std::string, std::vector<std::string>> table;
  return table;
}

}  // namespace

const std::vector<std::string>& report_kinds() {
  static const std::vector<std::string> kinds = {"search", "banks", "pipeline", "epilogue",
                                                 "pingpong"};
  return kinds;
}

void enable_report(const std::string& kind) {
  bool known = false;
  for (const std::string& k : report_kinds()) known |= k == kind;
  if (!known) {
    std::string all;
    for (const std::string& k : report_kinds()) all += (all.empty() ? "" : ", ") + k;
    user_error(SourceLocation::unknown(), "unknown report '", kind, "' (known reports: ", all, ")");
  }
  enabled().insert(kind);
}

bool report_enabled(const std::string& kind) {
  return enabled().count(kind) > 0;
}

void report(const std::string& kind, std::string line) {
  if (report_enabled(kind)) lines()[kind].push_back(std::move(line));
}

std::vector<std::string> take_report(const std::string& kind) {
  std::vector<std::string> out = std::move(lines()[kind]);
  lines()[kind].clear();
  return out;
}

void register_passes() {
  static bool done = false;
  if (done) return;
  done = true;
  ir::register_pass({"tanh-to-sigmoid",
                     "1 + tanh(z) as 2 sigmoid(2z) (exact, no cancellation, fewer instructions) "
                     "and powers of two in products gathered into the constants",
                     [](ir::Module& m) { tanh_to_sigmoid(m); }});
  ir::register_pass({"exp-to-exp2",
                     "exp as one ex2.approx of x log2(e) where its results reach the outputs "
                     "only as 16-bit floats through arithmetic that cannot magnify its error",
                     [](ir::Module& m) { exp_to_exp2(m); }});
  ir::register_pass({"sink-reductions",
                     "a row sum a loop with an mma adds every step is summed elementwise in the "
                     "loop and reduced once after it (no shuffles between the wgmma issues)",
                     [](ir::Module& m) { sink_reductions(m); }});
  ir::register_pass({"schedule-rows",
                     "tile shape, block size and row residency (registers or two passes) of an "
                     "unpinned row program without an mma, by a cost model",
                     [](ir::Module& m) { schedule_rows(m); }});
  ir::register_pass({"synthesize-layouts",
                     "thread-value layouts for register tensors, mma/reduce atoms by search "
                     "(Hexcute Algorithm 1)",
                     [](ir::Module& m) { synthesize_layouts(m); }});
  ir::register_pass({"synthesize-shared-layouts",
                     "shared-memory layouts and swizzles from alignment constraints and the bank "
                     "model; copy atoms for shared memory (Hexcute §5.2)",
                     [](ir::Module& m) { synthesize_shared_layouts(m); }});
  ir::register_pass({"pipeline-loops",
                     "stages (shared-tile slots kept in flight) and wgmma groups in flight for "
                     "every loop that copies global tiles into shared memory, from the shared-"
                     "memory budget",
                     [](ir::Module& m) { pipeline_loops(m); }});
  ir::register_pass({"raster-blocks",
                     "the order of a 2-D grid's blocks for L2 reuse: groups of 8 along dimension 0 "
                     "in kernels with a mainloop",
                     [](ir::Module& m) { raster_blocks(m); }});
  ir::register_pass({"warp-specialize",
                     "a TMA producer role and consumer roles connected by an aref, from an "
                     "unannotated mainloop (Tawa §III-C)",
                     [](ir::Module& m) { warp_specialize(m); }});
  ir::register_pass({"stage-stores",
                     "a role's store of a wgmma accumulator tile staged through shared memory: "
                     "stmatrix into two swizzled buffers, TMA stores waited for only before reuse",
                     [](ir::Module& m) { stage_stores(m); }});
  ir::register_pass({"share-rings",
                     "the rings of two mainloops that run one after the other in the same roles "
                     "become one ring with the slots of both",
                     [](ir::Module& m) { share_rings(m); }});
  ir::register_pass({"coarse-pipeline",
                     "a consumer loop that works on one wgmma's result before a second wgmma "
                     "reads the work (attention) rotated: the next iteration's first GEMM runs "
                     "beside this one's register work (Tawa §III-D2, FA3's intra-warpgroup "
                     "overlap)",
                     [](ir::Module& m) { coarse_pipeline(m); }});
  ir::register_pass({"pipeline-arefs",
                     "aref ring depth (slots) from the shared-memory budget and wgmma groups in "
                     "flight (Tawa §III-D)",
                     [](ir::Module& m) { pipeline_arefs(m); }});
  ir::register_pass({"split-k",
                     "a block_grid pinned split_k: the K loop divided among parts per tile, the "
                     "last part to arrive sums the partials in order and runs the epilogue",
                     [](ir::Module& m) { split_k(m); }});
  ir::register_pass({"cluster-blocks",
                     "blocks that share an operand tile (adjacent along a grid dimension) grouped "
                     "into thread-block clusters of 2, for multicast-loads",
                     [](ir::Module& m) { cluster_blocks(m); }});
  ir::register_pass({"overlap-launches",
                     "a launch starts while the one before it runs (programmatic dependent "
                     "launch): launch_dependents first, grid_wait before each thread's first "
                     "access that may depend on the earlier launch, L2 prefetches of ready "
                     "tensors' first tiles before it",
                     [](ir::Module& m) { overlap_launches(m); }});
  ir::register_pass({"split-roles",
                     "a block_grid pinned consumer_split_k = W: the consumer's K loop taken in "
                     "turns by W consumer roles, their accumulators summed through shared memory",
                     [](ir::Module& m) { split_roles(m); }});
  ir::register_pass(
      {"persistent",
       "a warp-specialized kernel's grid as one block per resident slot looping over tiles in the "
       "raster order; aref sequence numbers continue across tiles",
       [](ir::Module& m) { make_persistent(m); }});
  ir::register_pass({"specialize-masks",
                     "a select on an index-arithmetic mask becomes a branch: tiles where the mask "
                     "keeps every element skip it",
                     [](ir::Module& m) { specialize_masks(m); }});
  ir::register_pass({"unswitch-loops",
                     "a role's loop that branches on a condition it does not change becomes a "
                     "branch between two copies of the loop",
                     [](ir::Module& m) { unswitch_loops(m); }});
  ir::register_pass({"tighten-arefs",
                     "a consumer waits for an aref's slot just before its first read and releases "
                     "a slot it only copies into registers just after its last read",
                     [](ir::Module& m) { tighten_arefs(m); }});
  ir::register_pass({"unswitch-iterations",
                     "a loop body's branch where wgmma groups are in flight becomes one branch "
                     "over the whole body (opt-in: unswitch_iterations = true on the grid)",
                     [](ir::Module& m) { unswitch_iterations(m); }});
  ir::register_pass({"overlap-epilogue",
                     "in a persistent consumer, the stores of tile t's output parts run during "
                     "tile t+1's first K blocks, beside their wgmma groups",
                     [](ir::Module& m) { overlap_epilogue(m); }});
  ir::register_pass({"rotate-tiles",
                     "a persistent consumer's first key tile of tile t+1 computed beside tile "
                     "t's last P·V (opt-in: rotate_tiles = true on the grid)",
                     [](ir::Module& m) { rotate_tiles(m); }});
  ir::register_pass({"defer-stores",
                     "in a persistent consumer whose tile starts with a synchronous wgmma "
                     "(attention's S of the first key tile), tile t's staged stores run in tile "
                     "t+1 beside that wgmma (opt-in: defer_stores = true on the grid)",
                     [](ir::Module& m) { defer_stores(m); }});
  ir::register_pass({"alternate-tiles",
                     "two consumer roles take a persistent block's tiles in turns, a token "
                     "ordering their mainloops (opt-in: alternate_tiles = true on the grid)",
                     [](ir::Module& m) { alternate_tiles(m); }});
  ir::register_pass({"lower-arefs",
                     "arefs to mbarriers with phase parity, arrive counts and transaction bytes; "
                     "setmaxnreg for the register split",
                     [](ir::Module& m) { lower_arefs(m); }});
  ir::register_pass({"multicast-loads",
                     "in clusters, TMA loads of tiles every block reads become multicasts of each "
                     "block's share; ring barriers count the cluster's consumers",
                     [](ir::Module& m) { multicast_loads(m); }});
  ir::register_pass({"pingpong-consumers",
                     "the warpgroups of a consumer take turns issuing the synchronous wgmmas of "
                     "loops with register work between them (FA3's ping-pong)",
                     [](ir::Module& m) { pingpong_consumers(m); }});
  ir::register_pass({"lower-mainloops",
                     "a TMA + wgmma mainloop without warp specialization to its ring's mbarriers, "
                     "waits, arrivals and TMA loads (one thread loads stages - mma_in_flight "
                     "iterations ahead)",
                     [](ir::Module& m) { lower_mainloops(m); }});
  ir::register_pass({"check-protocol",
                     "the barrier protocol after lower-arefs and lower-mainloops: every wait "
                     "matched, parities, arrive "
                     "counts, no slot written before it is released",
                     [](ir::Module& m) { check_protocol(m); }});
}

}  // namespace tessel::transforms
