#include "transforms/async/overlap_launches.h"

#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>
#include <vector>

#include "ir/async.h"
#include "support/diagnostics.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::MemorySpace;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::Value;

bool is_view(OpKind kind) {
  return kind == OpKind::tile || kind == OpKind::transpose || kind == OpKind::global_view ||
         kind == OpKind::tile_extent || kind == OpKind::workspace ||
         kind == OpKind::workspace_part;
}

bool is_global(const Value* v) {
  return v->type().is_tensor() && v->type().space() == MemorySpace::global;
}

class KernelOverlap {
 public:
  KernelOverlap(Operation& kernel, std::string mode) : kernel_(kernel), mode_(std::move(mode)) {
    body_ = kernel.region(0);
    for (int index : kernel.signature().ready) ready_.insert(body_->argument(index));
  }

  void run() {
    if (early_trigger()) {
      OpBuilder front(body_);
      front.set_insertion_point_before(body_->ops().front().get());
      front.create(OpKind::launch_dependents, {}, {}, kernel_.loc());
    }
    for (size_t i = 0; i < body_->ops().size(); ++i) {
      Operation* op = body_->ops()[i].get();
      if (op->kind() == OpKind::warp_group) {
        place_wait(*op->region(0));
        continue;
      }
      if (accesses_dependent(*op)) {
        wait_before(*body_, op);
        return;  // every thread has waited: the roles after this need no wait of their own
      }
    }
  }

 private:
  // Whether the next launch may start as soon as every block of this one has: with `early` and
  // `prefetch`; with `wait` (the default) only where a block owns its SM (roles, whose register
  // split setmaxnreg draws for one block per SM, and no blocks_per_sm > 1), so that no block of
  // the next launch can sit beside a working block of this one. Elsewhere blocks trigger as
  // they exit, and with `late` always.
  bool early_trigger() const {
    if (mode_ == "early" || mode_ == "prefetch" || mode_ == "preload") return true;
    if (mode_ != "wait") return false;
    bool roles = false;
    int64_t blocks_per_sm = 1;
    for (const auto& op : body_->ops()) {
      roles = roles || op->kind() == OpKind::warp_group;
      if (op->kind() == OpKind::block_grid && op->has_attr("blocks_per_sm"))
        blocks_per_sm = op->int_attr("blocks_per_sm");  // the verifier checked it
    }
    return roles && blocks_per_sm <= 1;
  }

  // A global access that may depend on an earlier launch: any op but a view with a global
  // operand whose tensor is not a ready parameter (a workspace never is), or that reads its rows
  // through the row map of an indirect tile (src/ir/grouped.h) that is not one.
  bool accesses_dependent(Operation& op) {
    bool found = false;
    ir::walk(&op, [&](Operation* o) {
      if (found || is_view(o->kind())) return;
      for (const Value* v : o->operands()) {
        if (is_global(v) && (!ready_.count(ir::storage_root(v)) || reads_unready_map(v)))
          found = true;
      }
    });
    return found;
  }

  bool reads_unready_map(const Value* v) const {
    for (; v->def() && is_view(v->def()->kind()) && v->def()->num_operands() > 0;
         v = v->def()->operand(0)) {
      const Operation& view = *v->def();
      const Value* map = view.kind() == OpKind::tile ? ir::tile_indirect_map(view) : nullptr;
      if (map && !ready_.count(ir::storage_root(map))) return true;
    }
    return false;
  }

  void place_wait(Block& block) {
    for (const auto& op : block.ops()) {
      if (accesses_dependent(*op)) {
        wait_before(block, op.get());
        return;
      }
    }
  }

  void wait_before(Block& block, Operation* op) {
    if (mode_ == "prefetch" && op->kind() == OpKind::for_) prefetch_first_iterations(block, *op);
    if (mode_ == "preload" && op->kind() == OpKind::for_) preload_first_iterations(block, *op);
    OpBuilder b(&block);
    b.set_insertion_point_before(op);
    b.create(OpKind::grid_wait, {}, {}, op->loc());
  }

  // The TMA loads of ready tensors in `loop`, grouped by how many of the loop's first
  // iterations to prefetch for (their ring's depth divided among the roles that fill it).
  void prefetch_first_iterations(Block& block, Operation& loop) {
    std::map<int64_t, std::vector<Operation*>> by_depth;
    ir::walk(&loop, [&](Operation* o) {
      if (o->kind() != OpKind::copy_async || o->num_operands() != 4 || !o->has_attr("atom"))
        return;
      if (o->str_attr("atom").rfind("tma.load.", 0) != 0) return;
      if (!ready_.count(ir::storage_root(o->operand(0)))) return;
      const Operation* slot = o->operand(1)->def();
      if (!slot || slot->kind() != OpKind::aref_slot) return;
      const Operation* ring = slot->operand(0)->def();
      if (!ring || !ring->has_attr("slots")) return;
      const int64_t fillers = std::max<int64_t>(1, roles_filling(slot->operand(0)));
      const int64_t depth = (ring->int_attr("slots") + fillers - 1) / fillers;
      by_depth[depth].push_back(o);
    });
    for (const auto& [depth, loads] : by_depth) prefetch_loop(block, loop, depth, loads);
  }

  // How many roles load into slots of `ring`.
  int64_t roles_filling(const Value* ring) {
    int64_t roles = 0;
    for (const auto& op : body_->ops()) {
      if (op->kind() != OpKind::warp_group) continue;
      bool fills = false;
      ir::walk(op.get(), [&](Operation* o) {
        if (o->kind() != OpKind::copy_async || o->num_operands() != 4) return;
        const Operation* slot = o->operand(1)->def();
        fills = fills || (slot && slot->kind() == OpKind::aref_slot && slot->operand(0) == ring);
      });
      roles += fills;
    }
    return roles;
  }

  // The ops of `loop`'s body (at its top level) that compute `v` from the induction variable and
  // values defined outside the loop, in program order; false when `v` needs anything else.
  bool address_slice(const Operation& loop, const Value* v, std::set<const Operation*>& slice) {
    const Block& body = *loop.region(0);
    if (v->owner_block() == &body && !v->def()) return v == body.argument(0);
    if (!ir::defined_inside(v, loop)) return true;
    const Operation* def = v->def();
    if (!def || def->parent_block() != &body) return false;  // nested deeper: not followed
    const OpKind k = def->kind();
    const bool index_math = ir::is_elementwise(k) && def->num_results() == 1 &&
                            def->result()->type().is_scalar();
    if (k != OpKind::tile && k != OpKind::transpose && k != OpKind::constant && !index_math)
      return false;
    if (!slice.insert(def).second) return true;
    for (const Value* operand : def->operands()) {
      if (!address_slice(loop, operand, slice)) return false;
    }
    return true;
  }

  // A loop before `loop` (in `block`) over its first `depth` iterations, [lb, min(lb + depth *
  // step, ub)), whose body is a copy of the ops of `loop`'s body in `keep`, in program order
  // (index values NAME_span, NAME_end, NAME_bound; the induction variable named after `loop`'s
  // with `iv_suffix`). `mapping` takes `loop`'s values to the copies; the new loop's upper bound
  // (defined before it) is returned through `bound`. Returns a builder at the end of its body.
  OpBuilder first_iterations(Block& block, Operation& loop, int64_t depth,
                             const std::set<const Operation*>& keep, const std::string& name,
                             const std::string& iv_suffix,
                             std::unordered_map<const Value*, Value*>& mapping, Value*& bound) {
    const SourceLocation loc = loop.loc();
    OpBuilder b(&block);
    b.set_insertion_point_before(&loop);
    Value* lb = loop.operand(0);
    Value* step = loop.operand(2);
    Value* span = b.index_op(OpKind::mul, b.index_constant(depth, loc), step, name + "_span", loc);
    Value* end = b.index_op(OpKind::add, lb, span, name + "_end", loc);
    bound = b.index_op(OpKind::min, end, loop.operand(1), name + "_bound", loc);
    Operation* first = b.create(OpKind::for_, {lb, bound, step}, {}, loc);
    Block* body = first->add_region();
    const Value* iv = loop.region(0)->argument(0);
    mapping[iv] = body->add_argument(iv->type(), iv->name() + iv_suffix);
    OpBuilder fb(body);
    for (const auto& op : loop.region(0)->ops()) {
      if (keep.count(op.get())) fb.insert(ir::clone(*op, mapping));
    }
    return fb;
  }

  void prefetch_loop(Block& block, Operation& loop, int64_t depth,
                     const std::vector<Operation*>& loads) {
    std::set<const Operation*> slice;
    std::vector<Operation*> prefetched;
    for (Operation* load : loads) {
      std::set<const Operation*> mine = slice;
      if (!address_slice(loop, load->operand(0), mine)) continue;
      slice = std::move(mine);
      prefetched.push_back(load);
    }
    if (prefetched.empty()) return;
    std::unordered_map<const Value*, Value*> mapping;
    Value* bound = nullptr;
    OpBuilder pb = first_iterations(block, loop, depth, slice, "prefetch", "_prefetch", mapping,
                                    bound);
    for (Operation* load : prefetched) {
      auto it = mapping.find(load->operand(0));
      Value* tile = it == mapping.end() ? load->operand(0) : it->second;
      pb.create(OpKind::prefetch, {tile}, {}, load->loc())
          ->set_attr("atom", Attribute::string(load->str_attr("atom")));
    }
  }

  // One arrival of `loop`'s body on a ring slot (at the body's top level): the expect_tx, and of
  // the TMA copies completing on the same barrier slot those of ready tensors whose source tile
  // and slot index `loop` computes from its induction variable (index arithmetic and tiles
  // only); the other copies stay where they are.
  struct SlotFill {
    Operation* expect = nullptr;
    std::vector<Operation*> ready;
    std::vector<const Operation*> slots;  // the aref_slot ops the ready copies write through
    int64_t ready_bytes = 0;
  };

  // `preload`: each fill of `loop`'s first iterations that loads ready tensors into its ring's
  // first, still empty slots issues those loads before the wait (see the header).
  void preload_first_iterations(Block& block, Operation& loop) {
    const Block& body = *loop.region(0);
    std::vector<SlotFill> fills;
    int64_t depth = 0;
    std::set<const Operation*> slice;
    for (const auto& op : body.ops()) {
      if (op->kind() != OpKind::mbarrier_expect_tx || op->has_attr("no_arrival")) continue;
      SlotFill fill;
      fill.expect = op.get();
      int64_t total = 0;
      const Value* ring = nullptr;
      bool lowered = true;
      std::set<const Operation*> mine = slice;
      // The slot index must come from the induction variable too (the preload names the slot).
      if (!address_slice(loop, op->operand(1), mine)) continue;
      const size_t expect_at = ir::position_in_block(*op);
      for (const auto& c : body.ops()) {
        if (c->kind() != OpKind::copy_async || c->num_operands() != 4 ||
            c->operand(2) != op->operand(0) || c->operand(3) != op->operand(1)) {
          continue;
        }
        const Operation* slot = c->operand(1)->def();
        // The copies follow their announcement (the loop keeps them there, in a branch).
        if (!slot || slot->kind() != OpKind::aref_slot || (ring && slot->operand(0) != ring) ||
            ir::position_in_block(*c) < expect_at) {
          lowered = false;
          break;
        }
        ring = slot->operand(0);
        const int64_t bytes = c->operand(1)->type().static_bytes();
        total += bytes;
        std::set<const Operation*> probe = mine;
        if (ready_.count(ir::storage_root(c->operand(0))) && !reads_unready_map(c->operand(0)) &&
            address_slice(loop, c->operand(0), probe) &&
            address_slice(loop, slot->operand(1), probe)) {
          mine = std::move(probe);
          fill.ready.push_back(c.get());
          fill.ready_bytes += bytes;
          if (std::find(fill.slots.begin(), fill.slots.end(), slot) == fill.slots.end())
            fill.slots.push_back(slot);
        }
      }
      if (!lowered || fill.ready.empty() || total != op->int_attr("bytes")) continue;
      // The slots this role fills first: the ring's depth divided among the roles that fill it,
      // rounded down, so that every preloaded slot is in its first round (still empty).
      const Operation* aref = ring->def();
      if (!aref || !aref->has_attr("slots")) continue;
      const int64_t fillers = std::max<int64_t>(1, roles_filling(ring));
      const int64_t first_round = aref->int_attr("slots") / fillers;
      if (first_round < 1) continue;
      depth = depth ? std::min(depth, first_round) : first_round;
      slice = std::move(mine);
      fills.push_back(std::move(fill));
    }
    if (fills.empty()) return;

    std::set<const Operation*> keep = slice;
    for (const SlotFill& fill : fills) keep.insert(fill.slots.begin(), fill.slots.end());
    std::unordered_map<const Value*, Value*> mapping;
    Value* bound = nullptr;
    OpBuilder pb = first_iterations(block, loop, depth, keep, "preload", "_pre", mapping, bound);
    for (const SlotFill& fill : fills) {
      auto mapped = [&](Value* v) {
        auto it = mapping.find(v);
        return it == mapping.end() ? v : it->second;
      };
      Operation* announce = pb.create(OpKind::mbarrier_expect_tx,
                                      {fill.expect->operand(0), mapped(fill.expect->operand(1))},
                                      {}, fill.expect->loc());
      announce->set_attr("bytes", Attribute::integer(fill.ready_bytes));
      announce->set_attr("no_arrival", Attribute::unit());
      for (Operation* copy : fill.ready) pb.insert(ir::clone(*copy, mapping));
    }

    // In the loop, an iteration the preload covered announces only the other copies' bytes;
    // the others announce all and issue the ready copies as before.
    Block& lbody = *loop.region(0);
    for (const SlotFill& fill : fills) {
      OpBuilder mb(&lbody);
      mb.set_insertion_point_before(fill.expect);
      Value* covered = mb.compare("lt", lbody.argument(0), bound, "preloaded", fill.expect->loc());
      Operation* branch = mb.create(OpKind::if_, {covered}, {}, fill.expect->loc());
      OpBuilder then_b(branch->add_region());
      OpBuilder else_b(branch->add_region());
      then_b.create(OpKind::mbarrier_expect_tx, {fill.expect->operand(0), fill.expect->operand(1)},
                    {}, fill.expect->loc())
          ->set_attr("bytes",
                     Attribute::integer(fill.expect->int_attr("bytes") - fill.ready_bytes));
      else_b.insert(lbody.remove(fill.expect));
      for (Operation* copy : fill.ready) else_b.insert(lbody.remove(copy));
    }
  }

  Operation& kernel_;
  std::string mode_;
  Block* body_ = nullptr;
  std::set<const Value*> ready_;
};

void overlap_kernel(Operation& kernel) {
  Block& body = *kernel.region(0);
  const Operation* grid = nullptr;
  bool placed = false;
  ir::walk(&kernel, [&](Operation* op) {
    if (op->kind() == OpKind::block_grid) grid = op;
    placed = placed || op->kind() == OpKind::grid_wait || op->kind() == OpKind::launch_dependents;
  });
  if (!grid || placed || body.ops().empty()) return;
  std::string mode = "wait";
  if (grid->has_attr("overlap_launches")) {
    const Attribute& pin = *grid->attr("overlap_launches");
    if (pin.kind != Attribute::Kind::ident ||
        (pin.s != "off" && pin.s != "wait" && pin.s != "early" && pin.s != "late" &&
         pin.s != "prefetch" && pin.s != "preload")) {
      user_error(grid->loc(), "overlap-launches: overlap_launches is off, wait, early, late, "
                              "prefetch or preload");
    }
    mode = pin.s;
  }
  if (mode == "off") return;
  // griddepcontrol is sm_90's; an sm_80 kernel (or one without a target) launches as before.
  if (!grid->has_attr("target") || grid->str_attr("target").rfind("sm_90", 0) != 0) return;
  KernelOverlap(kernel, mode).run();
}

}  // namespace

void overlap_launches(ir::Module& module) {
  for (const auto& kernel : module.kernels) overlap_kernel(*kernel);
}

}  // namespace tessel::transforms
