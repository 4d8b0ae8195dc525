#include "transforms/async/protocol_run.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "ir/async.h"
#include "ir/barrier_model.h"
#include "transforms/async/protocol_scalars.h"
#include "transforms/async/protocol_slots.h"

namespace tessel::transforms::protocol {
namespace {

using ir::Block;
using ir::Operation;
using ir::OpKind;
using ir::Value;

// A TMA load in flight: the buffer it writes and the barrier whose bytes it completes.
struct Load {
  SlotRef ref;
  const Value* bars;
  int64_t index;
  int64_t bytes;
};

// One run of one block under one schedule.
class Run {
 public:
  Run(const Operation& kernel, const ValueIds& ids, const std::map<std::string, int64_t>& sizes,
      int64_t sm_count, const Schedule& schedule, std::string instance)
      : kernel_(kernel),
        scalars_(kernel, sizes, sm_count),
        schedule_(schedule),
        instance_(std::move(instance)),
        ids_(&ids),
        top_(ids),
        buffers_(ids) {}

  // What every counter_arrive returns in this run: the last arrival (n - 1) or the first (0). A
  // split-k block either sums the partials and runs the epilogue or skips both; each branch must
  // keep the protocol, so check_sizes runs both.
  Run& last_arrivals(bool last) {
    scalars_.set_last_arrival(last);
    if (!last) instance_ += ", not the last arrival";
    return *this;
  }

  // Evaluates the top level up to the roles; returns the grid's block count.
  int64_t grid_blocks() {
    int64_t blocks = 1;
    for (const auto& op : kernel_.region(0)->ops()) {
      if (op->kind() == OpKind::warp_group) break;
      if (op->kind() == OpKind::block_grid) {
        for (const Value* v : op->operands()) blocks *= std::max<int64_t>(0, value(top_, v));
        for (const auto& r : op->results()) top_[r.get()] = 0;  // as block 0 (start_block)
        continue;
      }
      if (op->kind() == OpKind::cluster_rank) {
        top_[op->result()] = 0;
        continue;
      }
      top_level(*op, top_);
    }
    return blocks;
  }

  // Runs block `block` under the schedule (a linear order, or the search over interleavings).
  void run_block(int64_t block) {
    start_block(block);
    if (roles_.empty()) return;
    if (schedule_.order == Order::search) return search();
    std::vector<size_t> order(roles_.size());
    std::iota(order.begin(), order.end(), 0);
    if (schedule_.order == Order::consumer_first) std::reverse(order.begin(), order.end());
    const bool single = schedule_.order == Order::round_robin;
    while (true) {
      bool all_done = true, progress = false;
      for (size_t i : order) {
        Role& r = roles_[i];
        if (r.done) continue;
        progress = step(r, single) || progress;
        all_done = all_done && r.done;
      }
      if (all_done) break;
      if (progress) continue;
      if (!loads_.empty()) {
        land_next();
        continue;
      }
      deadlock();
    }
    finish();
  }

 private:
  // The slots' bookkeeping (protocol_slots.h); what breaks its rules fails with this run's
  // context.
  template <class F>
  auto on_slots(F f) {
    try {
      return f(slots_);
    } catch (const Slots::Failure& e) {
      fail(*e.op, e.what);
    }
  }

  // The top level of block `block`: sizes, rings, barriers, block indices; the roles ready to run.
  // A kernel without roles (lower-mainloops' output) is one role of the block's threads that
  // runs the whole kernel body (check_protocol.h says why that is enough).
  void start_block(int64_t block) {
    int64_t block_threads = 0;
    for (const auto& op : kernel_.region(0)->ops()) {
      if (op->kind() == OpKind::block_grid && op->has_attr("threads"))
        block_threads = op->int_attr("threads");
      if (op->kind() == OpKind::warp_group) {
        Role r(op.get(), top_);
        r.threads = op->int_attr("threads");
        r.stack.push_back(frame(op->region(0)));
        roles_.push_back(std::move(r));
        continue;
      }
      if (op->kind() == OpKind::cluster_rank) {
        top_[op->result()] = block % cluster_blocks_;
        continue;
      }
      if (op->kind() == OpKind::block_grid) {
        if (op->has_attr("cluster")) {
          for (int64_t e : op->ints_attr("cluster")) cluster_blocks_ *= e;
        }
        int64_t linear = block;
        for (int i = 0; i < op->num_results(); ++i) {
          int64_t extent = std::max<int64_t>(1, value(top_, op->operand(i)));
          top_[op->result(i)] = linear % extent;
          linear /= extent;
        }
        continue;
      }
      top_level(*op, top_);
    }
    if (roles_.empty()) {
      if (block_threads == 0)
        fail(kernel_,
             "the kernel has mbarriers and no roles, but its block_grid has no `threads` "
             "to count arrivals by",
             false);
      Role r(&kernel_, top_);
      r.threads = block_threads;
      r.stack.push_back(frame(kernel_.region(0)));
      roles_.push_back(std::move(r));
    }
  }

  void land_next() {
    land(loads_.front());
    loads_.pop_front();
    ++landed_;
  }

  // Every role has ended: the loads still in flight land, and every load was read.
  void finish() {
    slots_.settle_all();
    while (!loads_.empty()) land_next();
    on_slots([](Slots& slots) { slots.check_all_read(); });
  }

  // Every interleaving of the roles' visible ops (those touching a barrier, a ring slot or a
  // wgmma group; the others commute with everything) and of the TMA loads' landings (in the
  // order issued), depth first. A role's control flow depends only on sizes, block indices and
  // its own loop variables, never on the other roles, so a state is identified by how many ops
  // each role has executed and how many loads have landed: states reached twice are explored
  // once. The first violation on any path is reported; at kSearchStates the search stops.
  void search() {
    std::unordered_set<std::string> seen;
    std::vector<Run> stack{*this};
    while (!stack.empty() && seen.size() < kSearchStates) {
      Run state = std::move(stack.back());
      stack.pop_back();
      if (!seen.insert(state.key()).second) continue;
      bool any = false, all_done = true;
      for (size_t i = 0; i < state.roles_.size(); ++i) {
        if (state.roles_[i].done) continue;
        all_done = false;
        Run next = state;
        if (next.step(next.roles_[i], true)) {
          stack.push_back(std::move(next));
          any = true;
        }
      }
      if (!state.loads_.empty()) {
        Run next = state;
        next.land_next();
        stack.push_back(std::move(next));
        any = true;
      }
      if (all_done) {
        state.finish();
      } else if (!any) {
        state.deadlock();
      }
    }
  }

  std::string key() const {
    std::string k;
    for (const Role& r : roles_) k += std::to_string(r.steps) + (r.done ? "." : ",");
    return k + std::to_string(landed_);
  }

 private:
  struct Frame {
    const Block* block;
    size_t pc;
    const Operation* loop;  // the `for` whose body this is, or null
    int64_t iv = 0, ub = 0, step = 1;
    const DecodedOp* code = nullptr;  // the block's ops decoded (ValueIds::code)
  };
  Frame frame(const Block* block, const Operation* loop = nullptr, int64_t iv = 0, int64_t ub = 0,
              int64_t step = 1) const {
    return Frame{block, 0, loop, iv, ub, step, ids_->code(block)};
  }
  struct Role {
    Role(const Operation* role, Env top) : op(role), env(std::move(top)) {}
    const Operation* op;
    Env env;
    std::vector<Frame> stack;
    int64_t threads = 0;
    bool done = false;
    std::vector<std::vector<size_t>> groups;  // committed wgmma groups' reads (Slots use indices)
    std::vector<size_t> open;
    const Operation* blocked = nullptr;
    int64_t steps = 0;  // ops executed (with the role's control flow, what identifies its state)
  };

  int64_t role_index(const Role& r) const { return &r - roles_.data(); }

  // "producer", "consumer", or "block" for the one role of a kernel without roles.
  static std::string role_name(const Role& r) {
    return r.op->kind() == OpKind::warp_group ? r.op->str_attr("role") : std::string("block");
  }

  [[noreturn]] void fail(const Operation& op, const std::string& what, bool positions = true) {
    user_error(op.loc(), "check-protocol: ", what, " (", op.name(), "; ", instance_, ", ",
               schedule_.name, positions ? where_roles_are() : "", ")");
  }

  // " in %k = 4": the role's loop variables now.
  static std::string loop_position(const Role& r) {
    std::string loops;
    for (const Frame& f : r.stack) {
      if (!f.loop) continue;
      loops += (loops.empty() ? " in " : ", ") + ir::value_ref(f.loop->region(0)->argument(0)) +
               " = " + std::to_string(f.iv);
    }
    return loops;
  }

  // "; the producer in k = 4, the consumer in k_1 = 1 waiting at mbarrier_wait at -:45:7":
  // how far each role had come when a violation showed (their loop variables).
  std::string where_roles_are() const {
    std::string text;
    for (const Role& r : roles_) {
      text += (text.empty() ? "; the " : ", the ") + role_name(r);
      if (r.done) {
        text += " has ended";
        continue;
      }
      std::string loops = loop_position(r);
      text += loops.empty() ? " outside its loops" : loops;
      if (r.blocked) text += " waiting at " + ir::op_where(*r.blocked);
    }
    return text;
  }

  // The scalars (protocol_scalars.h); what they cannot follow fails with this run's context.
  int64_t value(const Env& env, const Value* v) {
    try {
      return scalars_.value(env, v);
    } catch (const Scalars::Failure& f) {
      fail(*f.op, f.what);
    }
  }
  bool scalar(const Operation& op, Env& env) {
    try {
      return scalars_.eval(op, env);
    } catch (const Scalars::Failure& f) {
      fail(*f.op, f.what);
    }
  }
  void arith(const DecodedOp& d, Env& env) {
    try {
      scalars_.arith(*d.op, d, env);
    } catch (const Scalars::Failure& f) {
      fail(*f.op, f.what);
    }
  }

  void top_level(const Operation& op, Env& env) {
    if (scalar(op, env)) return;
    if (op.kind() == OpKind::aref) {
      slots_.add_ring(op.result(), op.int_attr("slots"),
                      static_cast<int64_t>(op.result()->type().buffers().size()));
    } else if (op.kind() == OpKind::mbarrier_init) {
      bars_[op.result()].assign(op.result()->type().count(),
                                ir::BarrierModel(op.int_attr("arrivals")));
    }
  }

  ir::BarrierModel& barrier(const Operation& op, Role& r, int i) {
    auto it = bars_.find(op.operand(i));
    if (it == bars_.end())
      fail(op, "uses " + ir::value_ref(op.operand(i)) + ", not an mbarrier_init");
    int64_t index = value(r.env, op.operand(i + 1));
    if (index < 0 || index >= static_cast<int64_t>(it->second.size())) {
      fail(op, "index " + std::to_string(index) + " is outside " + ir::value_ref(op.operand(i)) +
                   " (" + std::to_string(it->second.size()) + " barriers)");
    }
    return it->second[index];
  }

  std::string barrier_name(const Operation& op, Role& r, int i) {
    return ir::value_ref(op.operand(i)) + "[" + std::to_string(value(r.env, op.operand(i + 1))) +
           "]";
  }

  void land(const Load& l) {
    slots_.landed(l.ref);
    auto status = bars_[l.bars][l.index].complete_bytes(l.bytes);
    if (status != ir::BarrierModel::Status::ok) {
      fail(*l.ref.ring->def(), "a TMA load into " + l.ref.str() +
                                   " completes more bytes than its barrier " +
                                   ir::value_ref(l.bars) + "[" + std::to_string(l.index) +
                                   "] expects (" + bars_[l.bars][l.index].describe() + ")");
    }
  }

  // A register tensor stored into a slot buffer by the role's threads (split-roles'
  // hand-over): a write that has landed once the stores are done, before the threads' arrive on
  // the full barrier that publishes it. Like a load, it must come after the slot's earlier use
  // was read. False for any other op.
  bool store_into_slot(const Operation& op) {
    if (op.kind() != OpKind::copy || op.num_operands() != 2 ||
        op.operand(0)->type().space() != ir::MemorySpace::reg)
      return false;
    const size_t* found = buffers_.find(op.operand(1));
    if (!found) return false;
    visible_ = true;
    on_slots([&](Slots& slots) { slots.write(op, *found, false); });
    return true;
  }

  // Runs `r` until it blocks or ends (or, `single`, until it executed one visible op); whether
  // it moved.
  bool step(Role& r, bool single) {
    bool moved = false;
    while (!r.stack.empty()) {
      Frame& f = r.stack.back();
      if (f.pc >= f.block->ops().size()) {
        // The end of a region without yield: the next iteration of its loop, or out of its if.
        if (f.loop) {
          next_iteration(r, {});
        } else {
          r.stack.pop_back();
        }
        ++r.steps;
        moved = true;
        continue;
      }
      // Register work and index arithmetic straight from the decoded array (most of what runs).
      if (f.code) {
        const DecodedOp& d = f.code[f.pc];
        if (d.inert || d.kind == DecodedOp::arith) {
          if (!d.inert) arith(d, r.env);
          ++f.pc;
          r.blocked = nullptr;
          ++r.steps;
          moved = true;
          continue;
        }
      }
      const Operation& op = *f.block->ops()[f.pc];
      visible_ = false;
      if (!execute(op, r)) {
        r.blocked = &op;
        return moved;
      }
      r.blocked = nullptr;
      ++r.steps;
      moved = true;
      if (single && visible_) return true;
    }
    r.done = true;
    return true;
  }

  // The end of an iteration of the loop of the innermost frame: carried scalars (index of the
  // loop's carried value, value) take their new values; the next iteration, or the loop's results.
  void next_iteration(Role& r, const std::vector<std::pair<int, int64_t>>& carried) {
    Frame& f = r.stack.back();
    const Operation* loop = f.loop;
    const Block* body = loop->region(0);
    for (const auto& [i, x] : carried) r.env[body->argument(1 + i)] = x;
    f.iv += f.step;
    if (f.iv < f.ub) {
      r.env[body->argument(0)] = f.iv;
      f.pc = 0;
      return;
    }
    for (const auto& [i, x] : carried) r.env[loop->result(i)] = x;
    r.stack.pop_back();
  }

  // Executes one op (advancing the frame); false when the op must wait.
  bool execute(const Operation& op, Role& r) {
    Frame& f = r.stack.back();
    switch (op.kind()) {
      case OpKind::yield: {
        if (!f.loop) {  // the end of an if's region: its results
          const Operation* parent = op.parent_op();
          for (int i = 0; i < op.num_operands(); ++i) {
            if (op.operand(i)->type().is_scalar())
              r.env[parent->result(i)] = value(r.env, op.operand(i));
          }
          r.stack.pop_back();
          return true;
        }
        carried_.clear();  // a member: its capacity stays from iteration to iteration
        for (int i = 0; i < op.num_operands(); ++i) {
          if (op.operand(i)->type().is_scalar())
            carried_.emplace_back(i, value(r.env, op.operand(i)));
        }
        next_iteration(r, carried_);
        return true;
      }
      case OpKind::for_: {
        ++f.pc;
        int64_t lb = value(r.env, op.operand(0)), ub = value(r.env, op.operand(1)),
                step = value(r.env, op.operand(2));
        if (step <= 0) fail(op, "has a step of " + std::to_string(step));
        const Block* body = op.region(0);
        for (int i = 3; i < op.num_operands(); ++i) {
          if (op.operand(i)->type().is_scalar()) {
            int64_t x = value(r.env, op.operand(i));
            r.env[body->argument(i - 2)] = x;
            r.env[op.result(i - 3)] = x;
          }
        }
        if (lb < ub) {
          r.env[body->argument(0)] = lb;
          r.stack.push_back(frame(body, &op, lb, ub, step));
        }
        return true;
      }
      case OpKind::if_: {
        ++f.pc;
        const Block* taken = op.region(value(r.env, op.operand(0)) ? 0 : 1);
        if (!taken->ops().empty()) r.stack.push_back(frame(taken));
        return true;
      }
      case OpKind::mbarrier_wait: {
        visible_ = true;
        ir::BarrierModel& b = barrier(op, r, 0);
        int64_t parity = value(r.env, op.operand(2));
        if (parity != 0 && parity != 1) fail(op, "waits on parity " + std::to_string(parity));
        if (!b.phase_completed(parity)) return false;
        ++f.pc;
        return true;
      }
      case OpKind::mbarrier_arrive:
      case OpKind::mbarrier_expect_tx: {
        visible_ = true;
        ir::BarrierModel& b = barrier(op, r, 0);
        int64_t count = 1, bytes = 0;
        const DecodedOp& d = ids_->decoded(&op);
        if (op.kind() == OpKind::mbarrier_expect_tx) {
          bytes = d.number;
          if (d.flag_no_arrival) count = 0;
        } else {
          const bool one = ids_->decoded(r.op).flag_issue;
          count = d.by == DecodedOp::one || one ? 1
                  : d.by == DecodedOp::thread   ? r.threads
                  : d.by == DecodedOp::warp     ? r.threads / 32
                                                : r.threads / 128;
          // Its peers in the cluster mirror this block: each arrives here as this one does.
          if (d.flag_cluster) count *= cluster_blocks_;
        }
        if (b.arrive(count, bytes) != ir::BarrierModel::Status::ok) {
          fail(op, "arrives " + std::to_string(count) + " time(s) on " + barrier_name(op, r, 0) +
                       ", more than its "
                       "phase has pending (" +
                       b.describe() +
                       "): the arrive count does not match "
                       "the barrier's arrivals");
        }
        ++f.pc;
        return true;
      }
      case OpKind::aref_slot: {
        int64_t slot = value(r.env, op.operand(1));
        for (int b = 0; b < op.num_results(); ++b) {
          buffers_[op.result(b)] = on_slots([&](Slots& slots) {
            return slots.view(op, op.operand(0), slot, b, op.num_results(),
                              ids_->decoded(&op).flag_held);
          });
        }
        ++f.pc;
        return true;
      }
      case OpKind::transpose:
        if (const size_t* u = buffers_.find(op.operand(0))) buffers_[op.result()] = *u;
        ++f.pc;
        return true;
      case OpKind::copy_async: {
        visible_ = true;
        ++f.pc;
        if (op.num_operands() != 4) return true;  // a store from a staging buffer
        const size_t* found = buffers_.find(op.operand(1));
        if (!found) return true;
        on_slots([&](Slots& slots) { slots.write(op, *found, true); });
        barrier(op, r, 2);  // checks the index
        Load l{slots_.ref(*found), op.operand(2), value(r.env, op.operand(3)),
               op.operand(1)->type().static_bytes()};
        if (schedule_.late_loads) {
          loads_.push_back(l);
        } else {
          land(l);
        }
        return true;
      }
      case OpKind::mma: {
        visible_ = true;
        bool async = ids_->decoded(&op).flag_async;
        for (int i = 0; i < 2; ++i) {
          if (const size_t* u = buffers_.find(op.operand(i))) {
            on_slots([&](Slots& slots) { slots.read(op, *u, async, r.open); });
          }
        }
        ++f.pc;
        return true;
      }
      case OpKind::fence_proxy_async:
        // This role's ordinary reads so far are ordered before any later async-proxy write.
        slots_.fence(role_index(r));
        ++f.pc;
        return true;
      case OpKind::mma_commit:
        visible_ = true;
        r.groups.push_back(std::move(r.open));
        r.open.clear();
        ++f.pc;
        return true;
      case OpKind::mma_wait: {
        visible_ = true;
        size_t pending = static_cast<size_t>(ids_->decoded(&op).number);
        while (r.groups.size() > pending) {
          for (size_t u : r.groups.front()) slots_.retire(u);
          r.groups.erase(r.groups.begin());
        }
        ++f.pc;
        return true;
      }
      default:
        if (store_into_slot(op)) {
          ++f.pc;
          return true;
        }
        if (!scalar(op, r.env) && ids_->decoded(&op).reads_views) {
          // Any other reader of a ring buffer reads it now, through the generic proxy.
          for (const Value* v : op.operands()) {
            const size_t* u = buffers_.find(v);
            if (!u || op.kind() == OpKind::aref_slot) continue;
            visible_ = true;
            on_slots([&](Slots& slots) { slots.read(op, *u, false, r.open, role_index(r)); });
          }
        }
        ++f.pc;
        return true;
    }
  }

  [[noreturn]] void deadlock() {
    std::string what =
        "deadlock: every unfinished role waits for a phase nothing left can complete";
    const Operation* first = nullptr;
    for (Role& r : roles_) {
      if (r.done || !r.blocked) continue;
      if (!first) first = r.blocked;
      ir::BarrierModel& b = barrier(*r.blocked, r, 0);
      what += "; the " + role_name(r) + loop_position(r) + " waits at " + ir::op_where(*r.blocked) +
              " on " + barrier_name(*r.blocked, r, 0) + " for parity " +
              std::to_string(value(r.env, r.blocked->operand(2))) + " (" + b.describe() + ")";
    }
    for (Role& r : roles_) {
      if (r.done) what += "; the " + role_name(r) + " has ended";
    }
    fail(first ? *first : kernel_, what, false);
  }

  const Operation& kernel_;
  Scalars scalars_;
  Schedule schedule_;
  std::string instance_;
  const ValueIds* ids_;
  Env top_;
  Slots slots_;
  std::map<const Value*, std::vector<ir::BarrierModel>> bars_;
  ValueMap<size_t> buffers_;  // a slot buffer's view -> its use index in slots_
  std::vector<Role> roles_;
  std::deque<Load> loads_;      // issued, not landed yet (late loads), in the order issued
  int64_t landed_ = 0;          // loads landed from loads_
  bool visible_ = false;        // the op just executed touched a barrier, a slot or a wgmma group
  int64_t cluster_blocks_ = 1;  // blocks per cluster (the block_grid's `cluster`)
  std::vector<std::pair<int, int64_t>> carried_;  // a yield's scalars (execute)
};

}  // namespace

void ValueIds::decode(const std::vector<const Operation*>& ops) {
  size_t capacity = 16;
  while (capacity < 2 * ops.size()) capacity *= 2;
  op_keys_.assign(capacity, nullptr);
  decoded_.assign(capacity, DecodedOp{});
  op_mask_ = capacity - 1;
  // The values that may hold a ring slot's buffer in a run (its `buffers_`): aref_slot's results
  // and transposes of them, to a fixed point (an op's operands may come later in the walk).
  std::unordered_set<const Value*> views;
  for (bool grew = true; grew;) {
    grew = false;
    for (const Operation* op : ops) {
      if (op->kind() == OpKind::aref_slot) {
        for (const auto& r : op->results()) grew = views.insert(r.get()).second || grew;
      } else if (op->kind() == OpKind::transpose && views.count(op->operand(0))) {
        grew = views.insert(op->result()).second || grew;
      }
    }
  }
  for (const Operation* op : ops) {
    size_t i = op_slot(op);
    while (op_keys_[i] && op_keys_[i] != op) i = (i + 1) & op_mask_;
    if (op_keys_[i]) continue;
    op_keys_[i] = op;
    DecodedOp d = Scalars::decode(*op, *this);
    d.reads_views = std::any_of(op->operands().begin(), op->operands().end(),
                                [&](const Value* v) { return views.count(v) > 0; });
    d.op = op;
    // The attributes execute() reads of the ops it follows. An op of any other kind that is not
    // a scalar and reads no ring buffer changes nothing the run tracks: it is inert. (The kinds
    // listed are execute()'s cases: keep the two in step.)
    switch (op->kind()) {
      case OpKind::mbarrier_expect_tx:
        d.number = op->int_attr("bytes");
        d.flag_no_arrival = op->has_attr("no_arrival");
        break;
      case OpKind::mbarrier_arrive: {
        const std::string& by = op->str_attr("by");
        d.by = by == "one"      ? DecodedOp::one
               : by == "thread" ? DecodedOp::thread
               : by == "warp"   ? DecodedOp::warp
                                : DecodedOp::warpgroup;
        d.flag_cluster = op->has_attr("cluster");
        break;
      }
      case OpKind::mma:
        d.flag_async = op->has_attr("async");
        break;
      case OpKind::mma_wait:
        d.number = op->int_attr("pending");
        break;
      case OpKind::aref_slot:
        d.flag_held = op->has_attr("held");
        break;
      case OpKind::yield:
      case OpKind::for_:
      case OpKind::if_:
      case OpKind::mbarrier_wait:
      case OpKind::transpose:
      case OpKind::copy_async:
      case OpKind::fence_proxy_async:
      case OpKind::mma_commit:
        break;
      default:
        // A role's `issue` (execute() reads it of the role, never runs the op itself).
        if (op->kind() == OpKind::warp_group) d.flag_issue = op->has_attr("issue");
        d.inert = d.kind == DecodedOp::not_scalar && !d.reads_views;
        break;
    }
    decoded_[i] = d;
  }
  // Each block's ops in order, for the runs' frames.
  for (const Operation* op : ops) {
    for (const auto& region : op->regions()) {
      code_at_[region.get()] = code_.size();
      for (const auto& inner : region->ops()) code_.push_back(decoded(inner.get()));
    }
  }
}

int64_t grid_blocks(const Operation& kernel, const ValueIds& ids,
                    const std::map<std::string, int64_t>& sizes, int64_t sm_count) {
  return Run(kernel, ids, sizes, sm_count, kSchedules[0], "the grid on these sizes").grid_blocks();
}

void run_block(const Operation& kernel, const ValueIds& ids,
               const std::map<std::string, int64_t>& sizes, int64_t sm_count,
               const Schedule& schedule, const std::string& instance, int64_t block,
               bool last_arrival) {
  Run(kernel, ids, sizes, sm_count, schedule, instance).last_arrivals(last_arrival).run_block(block);
}

}  // namespace tessel::transforms::protocol
