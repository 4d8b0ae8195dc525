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

namespace tessel::transforms::protocol {
namespace {

using ir::Block;
using ir::Operation;
using ir::OpKind;
using ir::Value;

struct SlotState {
  int64_t issued = 0, landed = 0, reads_started = 0, reads_done = 0;
  // Views of this buffer (uses_ indices, made by aref_slot) that nothing has read or loaded into
  // yet. A consumer may take a view of a landed load and release the slot without reading it (a
  // varlen attention tile past the last sequence: Q loaded, no key tile to multiply it with);
  // such a view is settled as a finished read when the next load into the buffer is issued, or
  // at the block's end (Run::settle_views).
  std::vector<size_t> views;
  // Uses of the load being read that joined it through a `held` view while an earlier use still
  // had reads in flight: the load's reads are done when the last of them retires.
  int64_t joined = 0;
  // Whether the load being read was a TMA load (the async proxy wrote it), not a register copy,
  // and an ordinary (generic-proxy) read of it that its role has not yet followed by a
  // fence_proxy_async (`unfenced_role` made it): the next TMA load into the slot may not be
  // issued before that fence, or it could land before the read is done (HOPPER.md).
  bool by_tma = false;
  const Operation* unfenced_read = nullptr;
  int64_t unfenced_role = -1;  // an index into Run::roles_ (runs are copied: no pointers)
};
// One buffer of one slot of a ring: its state is rings_[ring][slot * buffers + buffer].
struct SlotRef {
  const Value* ring = nullptr;
  int64_t slot = 0;
  int64_t buffer = 0;
  int64_t buffers = 1;
  int64_t at() const { return slot * buffers + buffer; }
  std::string str() const {
    return "buffer " + std::to_string(buffer) + " of slot " + std::to_string(slot) + " of " +
           ir::value_ref(ring);
  }
};
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
        r.stack.push_back(Frame{op->region(0), 0, nullptr});
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
      r.stack.push_back(Frame{kernel_.region(0), 0, nullptr});
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
    for (auto& [ring, slots] : rings_)
      for (SlotState& s : slots) settle_views(s);
    while (!loads_.empty()) land_next();
    for (const auto& [ring, slots] : rings_) {
      int64_t buffers = static_cast<int64_t>(ring->type().buffers().size());
      for (size_t s = 0; s < slots.size(); ++s) {
        if (slots[s].issued != slots[s].reads_started) {
          SlotRef ref{ring, static_cast<int64_t>(s) / buffers, static_cast<int64_t>(s) % buffers,
                      buffers};
          fail(*ring->def(), ref.str() + " was written " + std::to_string(slots[s].issued) +
                                 " time(s) but read " + std::to_string(slots[s].reads_started) +
                                 " time(s) by the end of the block: a load no role waits for "
                                 "(a producer running more iterations than its consumer?), "
                                 "which may still be in flight when the block exits");
        }
      }
    }
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
  };
  struct Role {
    Role(const Operation* role, Env top) : op(role), env(std::move(top)) {}
    const Operation* op;
    Env env;
    std::vector<Frame> stack;
    int64_t threads = 0;
    bool done = false;
    std::vector<std::vector<size_t>> groups;  // committed wgmma groups' reads (uses_ indices)
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

  void top_level(const Operation& op, Env& env) {
    if (scalar(op, env)) return;
    if (op.kind() == OpKind::aref) {
      rings_[op.result()].assign(
          op.int_attr("slots") * static_cast<int64_t>(op.result()->type().buffers().size()),
          SlotState{});
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
    SlotState& s = rings_[l.ref.ring][l.ref.at()];
    ++s.landed;
    auto status = bars_[l.bars][l.index].complete_bytes(l.bytes);
    if (status != ir::BarrierModel::Status::ok) {
      fail(*l.ref.ring->def(), "a TMA load into " + l.ref.str() +
                                   " completes more bytes than its barrier " +
                                   ir::value_ref(l.bars) + "[" + std::to_string(l.index) +
                                   "] expects (" + bars_[l.bars][l.index].describe() + ")");
    }
  }

  // One buffer of one aref_slot executed: the reads of it are one use of the slot buffer, done
  // when no read of it is in flight any more.
  struct Use {
    SlotRef ref;
    bool started = false;
    int outstanding = 0;
    int64_t landed_at_view = 0;  // loads of the buffer landed when the view was taken
    bool settled = false;        // left unread, settled by settle_views: no read may follow
    // `aref_slot {held}`: a second view of the load its role already waited for and read, not
    // released since (rotate-tiles: Q of tile t+1, read by its first S in one iteration of the
    // tile loop and by the rest of its key loop in the next). Its reads continue that use.
    bool held = false;
  };

  // The views of `s` nobody read (the new load's own destination view excepted: the caller drops
  // it first). A view taken after the load it shows landed (its consumer waited for it) and left
  // unread counts as a finished read of that load: the consumer released it unread, which is no
  // hazard; no read may follow through it. A view taken before the unread load landed settles
  // nothing and stays, so a load nobody waited for still fails (at the end of the block: written
  // but not read).
  void settle_views(SlotState& s) {
    std::vector<size_t> kept;
    for (size_t u : s.views) {
      Use& use = uses_[u];
      if (s.reads_started < s.issued && use.landed_at_view > s.reads_started) {
        use.settled = true;
        ++s.reads_started;
        ++s.reads_done;
      } else {
        kept.push_back(u);
      }
    }
    s.views = std::move(kept);
  }

  static void drop_view(SlotState& s, size_t use_index) {
    s.views.erase(std::remove(s.views.begin(), s.views.end(), use_index), s.views.end());
  }

  void read(const Operation& op, size_t use_index, Role& r, bool async) {
    visible_ = true;
    Use& use = uses_[use_index];
    const SlotRef& ref = use.ref;
    SlotState& s = rings_[ref.ring][ref.at()];
    if (use.settled) {
      fail(op, "reads " + ref.str() + " through a view its role took and left unread until a " +
                   "newer TMA load into it was issued: the slot was released before this read");
    }
    drop_view(s, use_index);
    if (use.started) {
      if (async) {
        ++use.outstanding;
        r.open.push_back(use_index);
      }
      return;
    }
    use.started = true;
    std::string slot = ref.str();
    if (use.held) {
      // The load the role read last: reading resumes (its reads were done) or joins the reads
      // still in flight; either way the load's reads are done when these retire too.
      const int64_t i = s.reads_started;
      if (i < 1 || s.landed < i) {
        fail(op, "reads " + slot + " through a held view, but its role read no load of it before");
      }
      if (s.issued > i) {
        fail(op, "reads " + slot + " through a held view (use " + std::to_string(i) +
                     ") after a newer TMA load into it was issued: the slot was released");
      }
      if (s.reads_done == i) {
        --s.reads_done;
      } else if (async) {
        ++s.joined;
      } else {
        return;  // a synchronous read while earlier reads are in flight: they finish the use
      }
      if (async) {
        ++use.outstanding;
        r.open.push_back(use_index);
      } else {
        ++s.reads_done;
      }
      return;
    }
    int64_t i = s.reads_started + 1;
    if (s.landed < i) {
      fail(op, "reads " + slot + " (use " + std::to_string(i) + ") before the TMA load for it " +
                   "landed: the wait before it passed too early (a wrong parity or barrier?)");
    }
    if (s.issued > i) {
      fail(op, "reads " + slot + " (use " + std::to_string(i) +
                   ") after a newer TMA load into it was issued");
    }
    ++s.reads_started;
    if (async) {
      ++use.outstanding;
      r.open.push_back(use_index);
    } else {
      ++s.reads_done;
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
    const SlotRef dst = uses_[*found].ref;
    SlotState& s = rings_[dst.ring][dst.at()];
    drop_view(s, *found);
    settle_views(s);
    const int64_t j = s.issued + 1;
    if (s.reads_done < j - 1) {
      fail(op, "stores into " + dst.str() + " (use " + std::to_string(j) + ") while use " +
                   std::to_string(s.reads_done + 1) +
                   " is still being read: the store did not wait for the release");
    }
    ++s.issued;
    ++s.landed;
    s.by_tma = false;
    return true;
  }

  void retire(size_t use_index) {
    Use& use = uses_[use_index];
    if (--use.outstanding != 0) return;
    SlotState& s = rings_[use.ref.ring][use.ref.at()];
    if (s.joined > 0) {
      --s.joined;
    } else {
      ++s.reads_done;
    }
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
        std::vector<std::pair<int, int64_t>> carried;
        for (int i = 0; i < op.num_operands(); ++i) {
          if (op.operand(i)->type().is_scalar())
            carried.emplace_back(i, value(r.env, op.operand(i)));
        }
        next_iteration(r, carried);
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
          r.stack.push_back(Frame{body, 0, &op, lb, ub, step});
        }
        return true;
      }
      case OpKind::if_: {
        ++f.pc;
        const Block* taken = op.region(value(r.env, op.operand(0)) ? 0 : 1);
        if (!taken->ops().empty()) r.stack.push_back(Frame{taken, 0, nullptr});
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
        if (op.kind() == OpKind::mbarrier_expect_tx) {
          bytes = op.int_attr("bytes");
          if (op.has_attr("no_arrival")) count = 0;
        } else {
          const std::string& by = op.str_attr("by");
          bool one = r.op->has_attr("issue");
          count = by == "one" || one ? 1
                  : by == "thread"   ? r.threads
                  : by == "warp"     ? r.threads / 32
                                     : r.threads / 128;
          // Its peers in the cluster mirror this block: each arrives here as this one does.
          if (op.has_attr("cluster")) count *= cluster_blocks_;
        }
        std::string name = barrier_name(op, r, 0);
        if (b.arrive(count, bytes) != ir::BarrierModel::Status::ok) {
          fail(op, "arrives " + std::to_string(count) + " time(s) on " + name +
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
        int64_t s = value(r.env, op.operand(1));
        auto ring = rings_.find(op.operand(0));
        if (ring == rings_.end() || s < 0 || s >= static_cast<int64_t>(ring->second.size()))
          fail(op, "names slot " + std::to_string(s) + " of " + ir::value_ref(op.operand(0)));
        for (int b = 0; b < op.num_results(); ++b) {
          const SlotRef ref{op.operand(0), s, b, op.num_results()};
          SlotState& state = ring->second[ref.at()];
          uses_.push_back(Use{ref});
          uses_.back().landed_at_view = state.landed;
          uses_.back().held = op.has_attr("held");
          if (!uses_.back().held) state.views.push_back(uses_.size() - 1);
          buffers_[op.result(b)] = uses_.size() - 1;
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
        const SlotRef* dst = &uses_[*found].ref;
        SlotState& s = rings_[dst->ring][dst->at()];
        drop_view(s, *found);
        settle_views(s);
        int64_t j = s.issued + 1;
        if (s.reads_done < j - 1) {
          fail(op, "loads into " + dst->str() + " (use " + std::to_string(j) + ") while use " +
                       std::to_string(s.reads_done + 1) +
                       " is still being read (by a reader not done, or an async mma whose "
                       "wgmma group no mma_wait has retired): the slot was released before its "
                       "readers finished, or the load did not wait for the release");
        }
        if (s.unfenced_read) {
          fail(op, "loads into " + dst->str() + " (use " + std::to_string(j) + ") by TMA while " +
                       "an ordinary read of its previous load (" +
                       ir::op_where(*s.unfenced_read) + ") has no fence_proxy_async after it " +
                       "in its role: the mbarrier orders the threads, not the proxies, so this " +
                       "load could land before that read is done; fence after the read, before " +
                       "the release");
        }
        ++s.issued;
        s.by_tma = true;
        barrier(op, r, 2);  // checks the index
        Load l{*dst, op.operand(2), value(r.env, op.operand(3)),
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
        bool async = op.has_attr("async");
        for (int i = 0; i < 2; ++i) {
          if (const size_t* u = buffers_.find(op.operand(i))) read(op, *u, r, async);
        }
        ++f.pc;
        return true;
      }
      case OpKind::fence_proxy_async:
        // This role's ordinary reads so far are ordered before any later async-proxy write.
        for (auto& [ring, slots] : rings_) {
          for (SlotState& slot : slots) {
            if (slot.unfenced_role != role_index(r)) continue;
            slot.unfenced_read = nullptr;
            slot.unfenced_role = -1;
          }
        }
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
        size_t pending = static_cast<size_t>(op.int_attr("pending"));
        while (r.groups.size() > pending) {
          for (size_t u : r.groups.front()) retire(u);
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
        if (!scalar(op, r.env)) {
          // Any other reader of a ring buffer reads it now, through the generic proxy.
          for (const Value* v : op.operands()) {
            const size_t* u = buffers_.find(v);
            if (!u || op.kind() == OpKind::aref_slot) continue;
            read(op, *u, r, false);
            const SlotRef& ref = uses_[*u].ref;
            SlotState& slot = rings_[ref.ring][ref.at()];
            if (slot.by_tma) {
              slot.unfenced_read = &op;
              slot.unfenced_role = role_index(r);
            }
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
  Env top_;
  std::map<const Value*, std::vector<SlotState>> rings_;
  std::map<const Value*, std::vector<ir::BarrierModel>> bars_;
  ValueMap<size_t> buffers_;  // -> uses_
  std::vector<Use> uses_;
  std::vector<Role> roles_;
  std::deque<Load> loads_;      // issued, not landed yet (late loads), in the order issued
  int64_t landed_ = 0;          // loads landed from loads_
  bool visible_ = false;        // the op just executed touched a barrier, a slot or a wgmma group
  int64_t cluster_blocks_ = 1;  // blocks per cluster (the block_grid's `cluster`)
};

}  // namespace

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
