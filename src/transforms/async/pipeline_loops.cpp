// PipelineLoops: stages and wgmma groups in flight for every mainloop, from the shared-memory
// budget (the rules are in the header).
#include "transforms/async/pipeline_loops.h"

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "support/diagnostics.h"
#include "transforms/async/atom_queries.h"
#include "transforms/async/stage_budget.h"
#include "transforms/report.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Value;

bool is_shared_copy(const Operation& op) {
  return op.kind() == OpKind::copy && op.num_results() == 1 && op.result()->type().is_tensor() &&
         op.result()->type().space() == MemorySpace::shared;
}


// Why the wgmmas of `loop`'s body cannot stay in flight: a result read by register work in the
// iteration, or an A operand computed in it (RS form); nullopt when they can.
std::optional<std::string> reads_before_retire(const Operation& loop) {
  std::vector<Operation*> mmas;
  for (const auto& op : loop.region(0)->ops())
    if (is_wgmma(*op)) mmas.push_back(op.get());
  if (auto bad = read_before_retire(loop, mmas)) {
    return ir::value_ref(bad->first) + " is read by " + ir::op_where(*bad->second) +
           " in the same iteration";
  }
  for (const Operation* mma : mmas) {
    if (takes_a_computed_in(*mma, loop.region(0))) {
      return ir::op_where(*mma) + " takes A from registers " + ir::value_ref(mma->operand(0)) +
             " computed in the iteration";
    }
  }
  return std::nullopt;
}

// One ring per mainloop: every copy into shared memory directly in its body.
Ring collect(Operation* op) {
  Ring l;
  l.loop = op;
  l.trip = trip_count(*op);
  for (const auto& inner : op->region(0)->ops()) {
    if (!is_shared_copy(*inner)) continue;
    const Value* v = inner->result();
    l.add_tile(v, tensor_bytes(*inner, v), slot_alignment(v->type(), atom_of(*inner)));
  }
  l.wgmma = has_wgmma(*op);
  l.note_readers(*op->region(0));
  return l;
}

void finish(Ring& l, const StageBudget& budget) {
  Operation& op = *l.loop;
  op.set_attr("stages", Attribute::integer(l.stages));
  std::string in_flight = "not set (no wgmma)";
  if (l.wgmma) {
    StageBudget::choose_in_flight(l);
    in_flight = std::to_string(l.in_flight) + (l.pinned_in_flight ? " (pinned)" : "");
    if (std::optional<std::string> why = reads_before_retire(op)) {
      // Register work on a wgmma's result in the same iteration (attention's softmax without
      // warp specialization): each mma retires before anything reads it, so no group stays
      // in flight.
      if (l.pinned_in_flight && *l.pinned_in_flight > 0) {
        user_error(op.loc(), loop_str(op), ": mma_in_flight = ", *l.pinned_in_flight,
                   " is pinned but ", *why, ", so its wgmma cannot stay in flight");
      }
      l.in_flight = 0;
      in_flight = "0 (" + *why + ": the mmas stay synchronous)";
    }
    op.set_attr("mma_in_flight", Attribute::integer(l.in_flight));
  }
  if (report_enabled("pipeline")) {
    report("pipeline", loop_str(op) + " at " + op.loc().str() + ": " +
                           std::to_string(l.stage_bytes) + " bytes per stage (" +
                           StageBudget::tiles_str(l) + "); budget " + budget.budget_str() +
                           "; trip count " +
                           (l.trip ? std::to_string(*l.trip) : std::string("dynamic")) +
                           "; stages " + std::to_string(l.stages) +
                           (l.pinned_stages ? " (pinned)" : "") + ", mma_in_flight " + in_flight +
                           (l.read_by_threads && !l.pinned_stages ? "; " + cap_str() : ""));
  }
}

void plan(Operation* kernel) {
  std::vector<Ring> loops;
  std::vector<const Value*> staged;
  ir::walk(kernel, [&](Operation* op) {
    if (!ir::is_mainloop(*op)) return;
    loops.push_back(collect(op));
    for (const StagedTile& t : loops.back().tiles) staged.push_back(t.value);
  });
  if (loops.empty()) return;
  StageBudget budget(
      kernel,
      [&](const Value* v) { return std::find(staged.begin(), staged.end(), v) != staged.end(); },
      ring_reserve_bytes(*kernel));
  for (Ring& l : loops) l.read_pins();
  budget.choose_stages(loops);
  for (Ring& l : loops) finish(l, budget);
}

}  // namespace

void pipeline_loops(ir::Module& module) {
  for (const auto& kernel : module.kernels) plan(kernel.get());
}

}  // namespace tessel::transforms
