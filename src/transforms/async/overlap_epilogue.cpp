#include "transforms/async/overlap_epilogue.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ir/async.h"
#include "ir/layout_text.h"
#include "transforms/async/store_parts.h"
#include "transforms/pins.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;

// Accumulator values plus the larger of the carried 16-bit words and the epilogue operands'
// registers, per thread (see the header).
constexpr int64_t kCarriedRegisterBudget = 192;

// The fewest K blocks per tile for which a tile loop is overlapped (unless pinned): the stores
// compete with the first K blocks' wgmmas (shared memory, the role's barriers), which only a long
// mainloop repays. The pass keeps the loop as it was for shorter mainloops, chosen once per kernel
// (`if (kt >= 16)` around the two copies of the tile loop; the K loop's trip count is the same for
// every tile). Measured on the H100 (bench/results/2026-11-25-overlap-epilogue-h100.md): gemm at
// K = 704 (11 blocks) ran at 0.965-0.972 of cuBLAS overlapped against 0.984-0.985 not, at
// K = 1024 (16) at 0.985-0.986 against 0.969-0.975; storing all parts before a short mainloop in
// the overlapped loop instead (one loop, no copy) still cost 3% at K = 704 (0.952 against 0.982).
constexpr int64_t kMinKBlocks = 16;

int64_t numel(const Type& t) {
  int64_t n = 1;
  for (int64_t e : t.static_shape()) n *= e;
  return n;
}

bool is_16bit(ScalarKind k) {
  return k == ScalarKind::f16 || k == ScalarKind::bf16;
}

// The values each thread of the role holds of register tensor `t`: its layout's value mode (a
// broadcast bias row holds 64 of its 256 values in every thread), or an even share without one.
int64_t values_per_thread(const Type& t, int64_t role_threads) {
  if (!t.has_layout()) return numel(t) / role_threads;
  return ir::register_tv_layout(t).num_values();
}

// What the rewrite of one tile loop needs.
struct Overlap {
  Operation* loop = nullptr;
  Operation* mainloop = nullptr;
  Operation* commit = nullptr;     // the first mma_commit of the mainloop's body
  std::vector<Operation*> moved;   // the parts' ops, in program order
  std::vector<size_t> part_start;  // index in `moved` where each part begins
  std::vector<Value*> carried;     // values of the tile body the parts use (the tiles first)
  int accumulators = 0;            // register tensors the mainloop carries
  int outputs = 0;                 // output tiles stored in parts (carried first)
};

// Why `loop` cannot be overlapped, or "" with `plan` filled in.
std::string analyze(Operation& loop, int64_t role_threads, Overlap& plan) {
  Block& body = *loop.region(0);
  const auto& ops = body.ops();
  if (ops.empty() || ops.back()->kind() != OpKind::yield) return "the tile loop carries nothing";
  // The output tile: a 16-bit cast whose slices are stored.
  const std::optional<OutputTile> output = find_output_tile(body);
  if (!output) return "no 16-bit output tile is stored in parts (stage-stores' slices)";
  const Operation* cast = output->cast;
  const size_t first_slice = output->first_slice;
  // The output tiles: the first, and any other 16-bit tile the stores slice (an LSTM cell's c'
  // and h'), each carried into the next tile and stored in its own parts.
  std::vector<const Value*> outs{cast->result()};
  for (size_t i = output->cast_at + 1; i < first_slice; ++i) {
    const Operation& c = *ops[i];
    if (c.kind() != OpKind::cast) continue;
    const Type& t = c.result()->type();
    if (!t.is_tensor() || t.space() != ir::MemorySpace::reg || !is_16bit(t.element())) continue;
    for (size_t j = first_slice; j + 1 < ops.size(); ++j) {
      if (ops[j]->kind() == OpKind::slice && ops[j]->operand(0) == c.result()) {
        outs.push_back(c.result());
        break;
      }
    }
  }
  auto is_output = [&](const Value* v) {
    return std::find(outs.begin(), outs.end(), v) != outs.end();
  };
  // The mainloop: the last loop before the cast that issues wgmma groups.
  for (size_t i = 0; i < ops.size() && ops[i].get() != cast; ++i) {
    if (ops[i]->kind() != OpKind::for_) continue;
    for (const auto& inner : ops[i]->region(0)->ops()) {
      if (inner->kind() == OpKind::mma_commit) {
        plan.mainloop = ops[i].get();
        plan.commit = inner.get();
        break;
      }
    }
  }
  if (!plan.mainloop) return "the tile has no mainloop that commits wgmma groups";
  if (ir::int_constant(plan.mainloop->operand(0)) != 0 ||
      ir::int_constant(plan.mainloop->operand(2)) != 1) {
    return "the mainloop does not run from 0 in steps of 1";
  }

  // Ops from the first slice to the yield: those the yield needs stay, the rest move.
  const size_t yield_at = ops.size() - 1;
  std::unordered_set<const Value*> needed(ops.back()->operands().begin(),
                                          ops.back()->operands().end());
  std::vector<bool> kept(ops.size(), false);
  for (size_t i = yield_at; i-- > first_slice;) {
    bool needs = false;
    for (const auto& r : ops[i]->results()) needs = needs || needed.count(r.get());
    if (!needs) continue;
    if (!pure_index_op(*ops[i])) {
      return "the tile loop's yield needs " + ir::op_where(*ops[i]) + " among the stores";
    }
    kept[i] = true;
    for (const Value* v : ops[i]->operands()) needed.insert(v);
  }
  // Parts begin at the slices of the tile. A value one part makes and another part uses stays in
  // the tile body (and is carried), so that each part can be placed on its own; so does anything
  // a kept op uses.
  std::vector<size_t> part(ops.size(), 0);
  for (size_t i = first_slice + 1; i < yield_at; ++i) {
    part[i] = part[i - 1] + (ops[i]->kind() == OpKind::slice && is_output(ops[i]->operand(0)));
  }
  std::unordered_map<const Value*, size_t> made_by;  // value -> index of the op (in range)
  for (size_t i = first_slice; i < yield_at; ++i) {
    ir::walk(ops[i].get(), [&](Operation* o) {
      for (const auto& r : o->results()) made_by[r.get()] = i;
    });
  }
  std::string why;
  for (bool changed = true; changed && why.empty();) {
    changed = false;
    for (size_t i = first_slice; i < yield_at && why.empty(); ++i) {
      ir::walk(ops[i].get(), [&](Operation* o) {
        for (const Value* v : o->operands()) {
          auto it = made_by.find(v);
          if (!why.empty() || it == made_by.end() || it->second == i || kept[it->second]) continue;
          const size_t def = it->second;
          if (!kept[i] && part[def] == part[i]) continue;
          if (!pure_index_op(*ops[def])) {
            why = ir::op_where(*ops[def]) + " makes " + ir::value_ref(v) + ", which " +
                  ir::op_where(*o) + " uses outside its part";
            return;
          }
          kept[def] = true;
          changed = true;
        }
      });
    }
  }
  if (!why.empty()) return why;
  for (size_t i = first_slice; i < yield_at; ++i) {
    if (kept[i]) continue;
    bool ok = true;
    ir::walk(ops[i].get(), [&](Operation* o) {
      ok = ok && (movable_store_op(*o) || (o != ops[i].get() && o->kind() == OpKind::yield));
    });
    if (!ok) return ir::op_where(*ops[i]) + " stands among the stores but cannot move";
    // A part the role's threads copy out of shared memory themselves (rows TMA cannot store,
    // stage-stores' fallback) needs registers for its copy loop that the carried tile holds:
    // overlapped, the fallback copy of gemm spilled 68 bytes and bias + ReLU's 212 (ptxas).
    bool by_threads = false;
    ir::walk(ops[i].get(), [&](Operation* o) {
      by_threads = by_threads || (o->kind() == OpKind::copy && o->num_operands() == 2 &&
                                  o->operand(0)->type().space() == ir::MemorySpace::shared &&
                                  o->operand(1)->type().space() == ir::MemorySpace::global);
    });
    if (by_threads) {
      return ir::op_where(*ops[i]) + " copies a part out by the role's threads, not by TMA";
    }
    const bool starts = ops[i]->kind() == OpKind::slice && is_output(ops[i]->operand(0));
    if (plan.part_start.empty() && !starts) {
      return "the stores do not begin with a slice of " + ir::value_ref(outs.front());
    }
    if (starts) plan.part_start.push_back(plan.moved.size());
    plan.moved.push_back(ops[i].get());
  }
  // The values of the tile body the moved ops use: the tile and index scalars are carried.
  why = collect_carried(loop, plan.moved, outs, plan.carried);
  if (!why.empty()) return why;

  // Registers per thread. In the mainloop the accumulators live beside the carried tile's 16-bit
  // pairs; when the tile is converted (the previous tile stored by then) they live beside the
  // epilogue's operands read into registers after the mainloop (a bias row), 16-bit ones as pairs
  // (the emitter keeps what it reads from shared memory in pairs). The larger of the two counts.
  int64_t accumulator_values = 0;
  for (int i = 3; i < plan.mainloop->num_operands(); ++i) {
    const Type& t = plan.mainloop->operand(i)->type();
    if (t.is_tensor() && t.space() == ir::MemorySpace::reg) {
      accumulator_values += values_per_thread(t, role_threads);
      ++plan.accumulators;
    }
  }
  int64_t operand_registers = 0;
  for (const auto& op : ops) {
    if (op.get() == cast) break;
    if (op->kind() == OpKind::copy && op->num_results() == 1 &&
        op->result()->type().space() == ir::MemorySpace::reg) {
      const Type& t = op->result()->type();
      const int64_t values = values_per_thread(t, role_threads);
      operand_registers += is_16bit(t.element()) ? (values + 1) / 2 : values;
    }
  }
  int64_t words = 0;
  for (const Value* out : outs) words += values_per_thread(out->type(), role_threads) / 2;
  if (accumulator_values + std::max(words, operand_registers) > kCarriedRegisterBudget) {
    return "the mainloop's accumulators (" + std::to_string(accumulator_values) +
           " values per thread) and the larger of the tile's " + std::to_string(words) +
           " carried registers and the epilogue operands' " + std::to_string(operand_registers) +
           " exceed " + std::to_string(kCarriedRegisterBudget);
  }
  plan.loop = &loop;
  plan.outputs = static_cast<int>(outs.size());
  return "";
}

// Copies part `part` of the moved ops to the end of `into`, the carried values replaced as
// `carried_as` says.
void place_part(const Overlap& plan, size_t part, Block* into,
                const std::vector<Value*>& carried_as) {
  std::unordered_map<const Value*, Value*> mapping;
  for (size_t i = 0; i < plan.carried.size(); ++i) mapping[plan.carried[i]] = carried_as[i];
  const size_t end =
      part + 1 < plan.part_start.size() ? plan.part_start[part + 1] : plan.moved.size();
  for (size_t i = plan.part_start[part]; i < end; ++i)
    into->append(ir::clone(*plan.moved[i], mapping));
}

void rewrite(const Overlap& plan) {
  Operation& loop = *plan.loop;
  Block& body = *loop.region(0);
  const SourceLocation loc = loop.loc();
  const size_t parts = plan.part_start.size();

  // The tile loop carries the tile and the scalars its stores use; the first tile has none.
  const auto [previous, last, has_prev] = carry_across_tiles(loop, plan.carried);

  // The parts a mainloop of fewer than `parts` K blocks will not reach, before it: its trip count
  // is the same for every tile, so the parts keep their cyclic order (k..P-1, then 0..k-1 in the
  // mainloop: each store still follows one into the other buffer), and the carried tile is stored
  // before the accumulators come alive (after the mainloop, both together made ptxas spill).
  Operation& mainloop = *plan.mainloop;
  OpBuilder ahead(&body);
  ahead.set_insertion_point_before(&mainloop);
  Value* kt = mainloop.operand(1);
  OpBuilder left(make_if(ahead, has_prev, loc));
  for (size_t i = 0; i < parts; ++i) {
    Value* missed = left.compare("le", kt, left.index_constant(static_cast<int64_t>(i), loc),
                                 "missed_part" + std::to_string(i), loc);
    place_part(plan, i, make_if(left, missed, loc), previous);
  }

  // The mainloop splits in two: K blocks [0, min(kt, P)) store the parts, the rest run as before
  // and carry the accumulators on. Branches on the part in every K block stalled the consumers'
  // instruction fetch (ncu at 3000x5000x704: no_instruction stalls 3% -> 9% (gemm), 4% -> 17%
  // (bias + ReLU)); after the split, the K blocks that store nothing run the plain loop.
  Value* parts_end = ahead.index_op(
      OpKind::min, kt, ahead.index_constant(static_cast<int64_t>(parts), loc), "parts_end", loc);
  std::unordered_map<const Value*, Value*> mapping;
  Operation* first = ahead.insert(ir::clone(mainloop, mapping));
  first->set_operand(1, parts_end);
  for (int i = 0; i < first->num_results(); ++i) {
    first->result(i)->set_name(mainloop.result(i)->name() + "_parts");
    mainloop.set_operand(3 + i, first->result(i));
  }
  mainloop.set_operand(0, parts_end);

  // Part i of the previous tile during K block i, while its wgmma group runs.
  Block& first_body = *first->region(0);
  Value* k = first_body.argument(0);
  const size_t after_commit = ir::position_in_block(*plan.commit) + 1;
  OpBuilder in_k(&first_body);
  in_k.set_insertion_point_before(first_body.ops()[after_commit].get());
  OpBuilder in_prev(make_if(in_k, has_prev, loc));
  for (size_t i = 0; i < parts; ++i) {
    Value* at = in_prev.compare("eq", k, in_prev.index_constant(static_cast<int64_t>(i), loc),
                                "at_part" + std::to_string(i), loc);
    place_part(plan, i, make_if(in_prev, at, loc), previous);
  }

  // The last tile's parts, after the loop.
  OpBuilder after(loop.parent_block());
  const size_t loop_at = ir::position_in_block(loop);
  if (loop_at + 1 < loop.parent_block()->ops().size()) {
    after.set_insertion_point_before(loop.parent_block()->ops()[loop_at + 1].get());
  }
  Value* ran = after.compare("lt", loop.operand(0), loop.operand(1), "any_tile", loc);
  Block* final_parts = make_if(after, ran, loc);
  for (size_t i = 0; i < parts; ++i) place_part(plan, i, final_parts, last);

  for (auto it = plan.moved.rbegin(); it != plan.moved.rend(); ++it) body.remove(*it);
}

// `loop` becomes `if (kt >= kMinKBlocks) { loop } else { a copy of loop }`: the rewrite then
// changes the loop in the then branch, and short mainloops run the copy as it was.
void keep_plain_for_short_mainloops(Operation& loop, Value* kt) {
  Block& block = *loop.parent_block();
  const SourceLocation loc = loop.loc();
  OpBuilder before(&block);
  before.set_insertion_point_before(&loop);
  Value* long_k =
      before.compare("ge", kt, before.index_constant(kMinKBlocks, loc), "long_mainloops", loc);
  auto branch = std::make_unique<Operation>(OpKind::if_, loc);
  branch->add_operand(long_k);
  Block* overlapped = branch->add_region();
  Block* plain = branch->add_region();
  std::unordered_map<const Value*, Value*> mapping;
  plain->append(ir::clone(loop, mapping));
  const size_t at = ir::position_in_block(loop);
  overlapped->append(block.remove(&loop));
  block.insert(at, std::move(branch));
}


// The tile loops of a role: `for` ops at its top level or in result-less `if`s there (unswitch-
// loops' copies) that contain a loop.
void tile_loops(Block& block, std::vector<Operation*>& found) {
  for (const auto& op : block.ops()) {
    if (op->kind() == OpKind::if_ && op->num_results() == 0) {
      for (const auto& r : op->regions()) tile_loops(*r, found);
    } else if (op->kind() == OpKind::for_) {
      bool nested = false;
      for (const auto& inner : op->region(0)->ops())
        nested = nested || inner->kind() == OpKind::for_;
      if (nested) found.push_back(op.get());
    }
  }
}

}  // namespace

void overlap_epilogue(ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    const Operation* grid = kernel_grid(*kernel) ? kernel_grid(*kernel) : kernel.get();
    const std::optional<bool> pin = grid_flag(*kernel, "overlap_epilogue");
    if (pin == false) continue;
    // Tiles taken in turns by two consumer roles (alternate-tiles, later in the pipeline) hide
    // one tile's stores behind the other role's mainloop; carried into the next tile, the stores
    // would also make the tile loop carry more than its sequence numbers, which that pass needs.
    if (grid_flag(*kernel, "alternate_tiles") == true) continue;
    int overlapped = 0;
    std::string reasons;  // why the tile loops that were left alone could not be overlapped
    for (const auto& role : kernel->region(0)->ops()) {
      if (role->kind() != OpKind::warp_group) continue;
      bool issues_mma = false;  // a consumer role (the producer's tile loop has no epilogue)
      ir::walk(role.get(),
               [&](Operation* op) { issues_mma = issues_mma || op->kind() == OpKind::mma_commit; });
      if (!issues_mma) continue;
      std::vector<Operation*> loops;
      tile_loops(*role->region(0), loops);
      for (Operation* loop : loops) {
        Overlap plan;
        std::string why = analyze(*loop, role->int_attr("threads"), plan);
        // Two accumulators (a dual GEMM's 128x128 tile): measured slower overlapped at every
        // shape, 0.77-0.97x against 0.84-0.97x of cuBLAS (the results file above); unless pinned.
        if (why.empty() && pin != true && plan.accumulators > 1) {
          why = "the mainloop carries " + std::to_string(plan.accumulators) +
                " accumulators (measured slower overlapped; pin overlap_epilogue = true to force)";
        }
        // Several output tiles (the LSTM cell's c' and h'): carried and stored alike, not yet
        // measured overlapped; unless pinned.
        if (why.empty() && pin != true && plan.outputs > 1) {
          why = "the tile stores " + std::to_string(plan.outputs) +
                " output tiles (not yet measured overlapped; pin overlap_epilogue = true to force)";
        }
        // The choice between the overlapped and the plain loop needs the K loop's trip count
        // before the tile loop.
        Value* kt = why.empty() ? plan.mainloop->operand(1) : nullptr;
        if (why.empty() && pin != true && ir::defined_inside(kt, *loop)) {
          why = "the mainloop's trip count " + ir::value_ref(kt) +
                " is computed in the tile loop (the plain loop is kept for short mainloops, chosen "
                "before the tile loop)";
        }
        if (why.empty()) {
          if (pin != true) keep_plain_for_short_mainloops(*loop, kt);
          rewrite(plan);
          ++overlapped;
        } else {
          reasons += "; the tile loop at " + ir::op_where(*loop) + ": " + why;
        }
      }
    }
    if (pin == true && overlapped == 0) {
      if (reasons.empty()) {
        user_error(grid->loc(),
                   "overlap-epilogue: overlap_epilogue = true but no consumer role "
                   "loops over tiles (the persistent pass makes that loop; is the "
                   "kernel warp-specialized and persistent?)");
      }
      user_error(grid->loc(),
                 "overlap-epilogue: overlap_epilogue = true but no tile loop's "
                 "epilogue can overlap the next tile's mainloop",
                 reasons);
    }
  }
}

}  // namespace tessel::transforms
