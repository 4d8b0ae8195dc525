// AlternateTiles: two consumer roles take a persistent block's tiles in turns (the rules are in
// the header).
#include "transforms/async/alternate_tiles.h"

#include <algorithm>
#include <functional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ir/async.h"
#include "support/diagnostics.h"
#include "transforms/async/atom_queries.h"
#include "transforms/async/stage_budget.h"
#include "transforms/pins.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::MemorySpace;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;

constexpr int64_t kMaxThreads = 1024;

// Whether `op` or an op nested in it waits on an aref.
bool waits_on_aref(Operation* op) {
  bool waits = false;
  ir::walk(op, [&](Operation* o) { waits = waits || o->kind() == OpKind::aref_wait; });
  return waits;
}

// Whether `op` or an op nested in it uses an aref (a sequence number, or a slot by name).
bool uses_aref(Operation* op) {
  bool uses = false;
  ir::walk(op, [&](Operation* o) {
    uses = uses || ir::is_aref_use(o->kind()) || o->kind() == OpKind::aref_slot;
  });
  return uses;
}

class Alternator {
 public:
  Alternator(Operation& kernel, Operation& grid)
      : kernel_(kernel), top_(*kernel.region(0)), grid_(grid), loc_(grid.loc()) {}

  void run() {
    const std::pair<const char*, const char*> others[] = {
        {"cluster", "a cluster's rings count every block's consumers at once"},
        {"consumer_split_k", "the consumer roles would take turns two ways"}};
    for (const auto& [other, why] : others) {
      if (grid_.has_attr(other)) {
        user_error(loc_, "alternate-tiles: `alternate_tiles = true` and `", other, " = ",
                   grid_.attr(other)->str(), "` on one grid are not supported together (", why,
                   ")");
      }
    }
    if (pinned_flag(grid_, "pingpong") == true) {
      user_error(loc_,
                 "alternate-tiles: `alternate_tiles = true` and `pingpong = true` on one grid are "
                 "not supported together (pingpong turns one role's warpgroups around inside a "
                 "tile; here whole tiles alternate between roles)");
    }
    Operation* consumer = nullptr;
    int producers = 0, consumers = 0;
    int64_t end_thread = 0;
    for (const auto& op : top_.ops()) {
      if (op->kind() != OpKind::warp_group) continue;
      end_thread = std::max(end_thread, op->int_attr("first_thread") + op->int_attr("threads"));
      if (op->str_attr("role") == "consumer") {
        consumer = op.get();
        ++consumers;
      } else {
        ++producers;
      }
    }
    if (consumers != 1 || producers != 1) {
      user_error(loc_, "alternate-tiles: a kernel of one producer and one consumer role takes its "
                       "tiles in turns; this one has ", producers, " producer and ", consumers,
                 " consumer role(s)",
                 consumers == 0 ? " (it is not warp-specialized: sm_90a, a TMA + wgmma loop)"
                                : "");
    }
    const int64_t threads = consumer->int_attr("threads");
    if (threads != 128) {
      user_error(loc_, "alternate-tiles: the consumer role has ", threads,
                 " threads; each of two consumer roles taking tiles in turns is one warpgroup "
                 "(pin `threads = 128` on the block_grid, with a tile one warpgroup holds, e.g. "
                 "128 x 128): two of ", threads, " threads beside the producer leave each "
                 "consumer thread too few registers for its accumulators");
    }
    if (end_thread + threads > kMaxThreads) {
      user_error(loc_, "alternate-tiles: a second consumer role of ", threads,
                 " threads makes the block ", end_thread + threads, " threads, over ",
                 kMaxThreads);
    }
    // Every tile loop of the role (unswitch-loops may have made two, under a kernel-wide branch)
    // and what its carried values grow by, checked before anything changes.
    for (Operation* loop : tile_loops(*consumer)) sequence_counts(*loop, *consumer);

    // Role 1: a copy of the consumer on the next free threads, with its own copy of every shared
    // tensor the consumer allocated for itself.
    std::unordered_map<const Value*, Value*> mapping;
    for (size_t i = 0; i < top_.ops().size(); ++i) {
      Operation* op = top_.ops()[i].get();
      if (op->kind() != OpKind::alloc || op->result()->type().space() != MemorySpace::shared)
        continue;
      const auto uses = uses_in(op->result(), &top_);
      const auto by_consumer = [&](const auto& use) {
        return ir::enclosing_role(*use.first) == consumer;
      };
      if (std::none_of(uses.begin(), uses.end(), by_consumer)) continue;
      for (const auto& use : uses) {
        if (!by_consumer(use)) {
          user_error(op->loc(), "alternate-tiles: ", ir::value_ref(op->result()),
                     " is used by the consumer role and by ", ir::op_where(*use.first),
                     "; the consumer's copy for its second role would share it");
        }
      }
      Operation* copy = top_.insert(i + 1, ir::clone(*op, mapping));
      if (!op->result()->name().empty()) copy->result()->set_name(op->result()->name() + "_turn1");
      ++i;
    }
    fit_shared_memory(*consumer);
    Operation* second =
        top_.insert(ir::position_in_block(*consumer) + 1, ir::clone(*consumer, mapping));
    second->set_attr("first_thread", Attribute::integer(end_thread));
    grid_.set_attr("threads", Attribute::integer(grid_.int_attr("threads") + threads));

    // The token the tiles hand on, made before the roles.
    OpBuilder top(&top_);
    Operation* first_role = nullptr;
    for (const auto& op : top_.ops())
      if (!first_role && op->kind() == OpKind::warp_group) first_role = op.get();
    top.set_insertion_point_before(first_role);
    Operation* order = top.create(OpKind::mbarrier_init, {}, {Type::mbarrier(1)}, loc_);
    order->set_attr("arrivals", Attribute::integer(1));
    order->result()->set_name("tile_order");
    Value* zero = top.index_constant(0, loc_);
    Value* one = top.index_constant(1, loc_);
    Value* two = top.index_constant(2, loc_);

    consumer->set_attr("tile_turn", Attribute::integer(0));
    second->set_attr("tile_turn", Attribute::integer(1));
    int turn = 0;
    for (Operation* role : {consumer, second}) {
      // The counts are defined outside the loops: the copy's loops read the same values.
      for (Operation* loop : tile_loops(*role))
        rewrite(*loop, sequence_counts(*loop, *role), turn, order->result(), zero, one, two);
      ++turn;
    }
  }

 private:
  // The consumer's tile loops: the `for` ops from the block_grid's first tile (persistent's),
  // directly in the role or under a branch of it (unswitch-loops' copies); every aref op of the
  // role must stand in one.
  std::vector<Operation*> tile_loops(Operation& role) {
    const Value* first = grid_.num_results() == 1 ? grid_.result() : nullptr;
    std::vector<Operation*> loops;
    std::vector<Operation*> outside;
    std::function<void(Block&)> visit = [&](Block& block) {
      for (const auto& op : block.ops()) {
        if (op->kind() == OpKind::for_ && first && op->operand(0) == first) {
          loops.push_back(op.get());
        } else if (op->kind() == OpKind::if_) {
          for (const auto& region : op->regions()) visit(*region);
        } else if (uses_aref(op.get())) {
          outside.push_back(op.get());
        }
      }
    };
    visit(*role.region(0));
    if (!outside.empty() || loops.empty()) {
      const Operation* at = outside.empty() ? &role : outside.front();
      user_error(at->loc(), "alternate-tiles: ",
                 outside.empty() ? std::string("the consumer role has no tile loop")
                                 : ir::op_where(*at) + " uses an aref outside a tile loop",
                 "; the consumer roles take turns by tile, over persistent's tile loop from "
                 "the block_grid's first tile (a grid pinned `persistent = 0` has one tile a "
                 "block)");
    }
    return loops;
  }

  // The second role's copies of the consumer's shared tensors (stage-stores' staging buffers)
  // came after pipeline-arefs sized the rings for one: where the block's shared memory no longer
  // holds them all (stage_budget.h's rules, as split-roles counts them), the deepest ring gives
  // up slots, down to what the consumer keeps in flight plus one (the 64 x 256 GEMM tile: 5 slots
  // of 40 KiB and the two 8 KiB staging buffers, twice, are 6 KiB over; 4 slots fit).
  void fit_shared_memory(Operation& consumer) {
    int64_t in_flight = 0;
    ir::walk(&consumer, [&](Operation* o) {
      if (o->kind() == OpKind::mma_wait) in_flight = std::max(in_flight, o->int_attr("pending"));
    });
    const int64_t limit = block_shared_limit(kernel_);
    for (int64_t bytes; (bytes = block_shared_bytes(kernel_)) > limit;) {
      Operation* deepest = nullptr;
      for (const auto& op : top_.ops()) {
        if (op->kind() == OpKind::aref &&
            (!deepest || op->int_attr("slots") > deepest->int_attr("slots")))
          deepest = op.get();
      }
      if (!deepest || deepest->int_attr("slots") <= in_flight + 1) {
        user_error(loc_, "alternate-tiles: the block needs ", bytes,
                   " bytes of shared memory with a second consumer role's copies of the "
                   "consumer's shared tensors, over the ",
                   limit, " a block has, and its rings are as shallow as the consumer allows");
      }
      deepest->set_attr("slots", Attribute::integer(deepest->int_attr("slots") - 1));
    }
  }

  // What each value the tile loop carries grows by per tile: its yield must be
  // `add %carried, %count` with %count defined outside the loop (persistent's sequence bases),
  // and nothing in `role` may read what the loop returns.
  std::vector<Value*> sequence_counts(Operation& loop, Operation& role) {
    Block* body = loop.region(0);
    const Operation* yield = body->terminator();
    std::vector<Value*> counts;
    for (size_t i = 1; i < body->arguments().size(); ++i) {
      const Value* carried = body->arguments()[i].get();
      const Value* next = yield ? yield->operand(static_cast<int>(i - 1)) : nullptr;
      const Operation* add = next ? next->def() : nullptr;
      Value* count = nullptr;
      if (add && add->kind() == OpKind::add && add->num_operands() == 2) {
        if (add->operand(0) == carried) count = add->operand(1);
        if (add->operand(1) == carried) count = add->operand(0);
      }
      if (!count || ir::defined_inside(count, loop)) {
        user_error(loop.loc(), "alternate-tiles: the tile loop carries ",
                   ir::value_ref(carried),
                   ", which does not grow by a count fixed outside the loop (persistent's "
                   "sequence bases do); a role taking every other tile could not skip the "
                   "other's");
      }
      counts.push_back(count);
    }
    // Its results (the sequence numbers after the last tile) would count a role's tiles only.
    for (const auto& result : loop.results()) {
      if (!uses_in(result.get(), role.region(0)).empty()) {
        user_error(loop.loc(), "alternate-tiles: ", ir::value_ref(result.get()),
                   ", a result of the tile loop, is read after it; each role's loop counts only "
                   "its own tiles");
      }
    }
    return counts;
  }

  // Role `turn`'s loop takes tiles turn, turn + 2, ... of the block's and hands the token on.
  void rewrite(Operation& loop, const std::vector<Value*>& counts, int turn, Value* order,
               Value* zero, Value* one, Value* two) {
    Block* body = loop.region(0);
    const SourceLocation loc = loop.loc();
    Value* first = loop.operand(0);
    Value* blocks = loop.operand(2);
    OpBuilder b(loop.parent_block());
    b.set_insertion_point_before(&loop);
    if (turn == 1) loop.set_operand(0, b.index_op(OpKind::add, first, blocks, "turn1_first", loc));
    loop.set_operand(2, b.index_op(OpKind::mul, blocks, two, "turn_step", loc));
    Operation* yield = body->terminator();
    for (size_t i = 0; i < counts.size(); ++i) {
      const int init = 3 + static_cast<int>(i);
      if (turn == 1)
        loop.set_operand(init, b.index_op(OpKind::add, loop.operand(init), counts[i],
                                          "turn1_base", loc));
      Value* twice = b.index_op(OpKind::mul, counts[i], two, "turn_count", loc);
      OpBuilder y(body);
      y.set_insertion_point_before(yield);
      Operation* old = yield->operand(static_cast<int>(i))->def();
      yield->set_operand(static_cast<int>(i),
                         y.index_op(OpKind::add, body->arguments()[i + 1].get(), twice,
                                    "turn_next", loc));
      // The per-tile add it replaces, when nothing else reads it.
      if (old->parent_block() == body && uses_in(old->result(), body).empty()) body->remove(old);
    }
    // The token: waited for before the tile's first aref wait, handed on after its last.
    Operation* first_wait = nullptr;
    Operation* last_wait = nullptr;
    for (const auto& op : body->ops()) {
      if (!waits_on_aref(op.get())) continue;
      if (!first_wait) first_wait = op.get();
      last_wait = op.get();
    }
    if (!first_wait) {
      user_error(loc, "alternate-tiles: the consumer's tile loop waits on no aref");
    }
    OpBuilder w(body);
    w.set_insertion_point_before(first_wait);
    Value* tile = body->arguments()[0].get();
    Value* since = w.index_op(OpKind::sub, tile, first, "tile_since_first", loc);
    Value* place = w.index_op(OpKind::div, since, blocks, "tile_turn", loc);
    Value* after = w.index_op(OpKind::add, place, one, "tile_turn_next", loc);
    Value* parity = w.index_op(OpKind::rem, after, two, "order_parity", loc);
    w.create(OpKind::mbarrier_wait, {order, zero, parity}, {}, loc);
    OpBuilder a(body);
    const size_t at = ir::position_in_block(*last_wait) + 1;
    if (at < body->ops().size()) {
      a.set_insertion_point_before(body->ops()[at].get());
    }
    a.create(OpKind::mbarrier_arrive, {order, zero}, {}, loc)
        ->set_attr("by", Attribute::ident("one"));
  }

  Operation& kernel_;
  Block& top_;
  Operation& grid_;
  SourceLocation loc_;
};

}  // namespace

void alternate_tiles(ir::Module& module) {
  for (auto& kernel : module.kernels) {
    Operation* grid = nullptr;
    for (const auto& op : kernel->region(0)->ops())
      if (op->kind() == OpKind::block_grid) grid = op.get();
    if (!grid || pinned_flag(*grid, "alternate_tiles") != true) continue;
    Alternator(*kernel, *grid).run();
  }
}

}  // namespace tessel::transforms
