#include "transforms/async/check_protocol.h"

#include <algorithm>
#include <deque>
#include <map>
#include <numeric>
#include <unordered_map>

#include "ir/async.h"
#include "ir/barrier_model.h"
#include "ir/int_arith.h"

namespace tessel::transforms {
namespace {

using ir::Block;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Value;

struct SlotState {
  int64_t issued = 0, landed = 0, reads_started = 0, reads_done = 0;
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

struct Schedule {
  bool producer_first;
  bool late_loads;
  const char* name;
};
constexpr Schedule kSchedules[] = {{true, false, "producer first, loads land at once"},
                                   {true, true, "producer first, loads land late"},
                                   {false, false, "consumer first, loads land at once"},
                                   {false, true, "consumer first, loads land late"}};

int64_t tensor_bytes(const ir::Type& t) {
  int64_t n = 1;
  for (int64_t e : t.static_shape()) n *= e;
  return n * ir::bit_width(t.element()) / 8;
}

// One run of one block under one schedule.
class Run {
 public:
  Run(const Operation& kernel, const std::map<std::string, int64_t>& sizes, int64_t sm_count,
      const Schedule& schedule, std::string instance)
      : kernel_(kernel),
        sizes_(sizes),
        sm_count_(sm_count),
        schedule_(schedule),
        instance_(std::move(instance)) {}

  // Evaluates the top level up to the roles; returns the grid's block count.
  int64_t grid_blocks() {
    int64_t blocks = 1;
    for (const auto& op : kernel_.region(0)->ops()) {
      if (op->kind() == OpKind::warp_group) break;
      if (op->kind() == OpKind::block_grid) {
        for (const Value* v : op->operands()) blocks *= std::max<int64_t>(0, value(top_, v));
        continue;
      }
      top_level(*op, top_);
    }
    return blocks;
  }

  void run_block(int64_t block) {
    top_.clear();
    for (const auto& op : kernel_.region(0)->ops()) {
      if (op->kind() == OpKind::warp_group) {
        Role r;
        r.op = op.get();
        r.env = top_;
        r.threads = op->int_attr("threads");
        r.stack.push_back(Frame{op->region(0), 0, nullptr});
        roles_.push_back(std::move(r));
        continue;
      }
      if (op->kind() == OpKind::block_grid) {
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
    if (roles_.empty()) return;
    std::vector<size_t> order(roles_.size());
    std::iota(order.begin(), order.end(), 0);
    if (!schedule_.producer_first) std::reverse(order.begin(), order.end());
    while (true) {
      bool all_done = true, progress = false;
      for (size_t i : order) {
        Role& r = roles_[i];
        if (r.done) continue;
        progress = step_until_blocked(r) || progress;
        all_done = all_done && r.done;
      }
      if (all_done) break;
      if (progress) continue;
      if (!loads_.empty()) {
        land(loads_.front());
        loads_.pop_front();
        continue;
      }
      deadlock();
    }
    while (!loads_.empty()) {
      land(loads_.front());
      loads_.pop_front();
    }
    for (const auto& [ring, slots] : rings_) {
      int64_t buffers = static_cast<int64_t>(ring->type().buffers().size());
      for (size_t s = 0; s < slots.size(); ++s) {
        if (slots[s].issued != slots[s].reads_started) {
          SlotRef ref{ring, static_cast<int64_t>(s) / buffers, static_cast<int64_t>(s) % buffers,
                      buffers};
          fail(*ring->def(), ref.str() + " was written " + std::to_string(slots[s].issued) +
                                 " time(s) but read " + std::to_string(slots[s].reads_started) +
                                 " time(s) by the end of the block");
        }
      }
    }
  }

 private:
  struct Frame {
    const Block* block;
    size_t pc;
    const Operation* loop;  // the `for` whose body this is, or null
    int64_t iv = 0, ub = 0, step = 1;
  };
  struct Role {
    const Operation* op;
    std::unordered_map<const Value*, int64_t> env;
    std::vector<Frame> stack;
    int64_t threads = 0;
    bool done = false;
    std::vector<std::vector<size_t>> groups;  // committed wgmma groups' reads (uses_ indices)
    std::vector<size_t> open;
    const Operation* blocked = nullptr;
  };

  [[noreturn]] void fail(const Operation& op, const std::string& what) {
    user_error(op.loc(), "check-protocol: ", what, " (", op.name(), "; ", instance_, ", ",
               schedule_.name, ")");
  }

  int64_t value(const std::unordered_map<const Value*, int64_t>& env, const Value* v) {
    auto it = env.find(v);
    if (it != env.end()) return it->second;
    const Operation* d = v->def();
    if (d && d->kind() == OpKind::constant &&
        d->attr("value")->kind == ir::Attribute::Kind::integer)
      return d->int_attr("value");
    if (d)
      fail(*d, "cannot follow " + ir::value_ref(v) +
                   ", which a branch, a loop bound or a "
                   "barrier index depends on");
    user_error(kernel_.loc(), "check-protocol: cannot follow ", ir::value_ref(v));
  }

  // Scalar ops, sizes, rings and barriers (top level or in a role).
  bool scalar(const Operation& op, std::unordered_map<const Value*, int64_t>& env) {
    if (op.num_results() != 1 || !op.result()->type().is_scalar()) return false;
    ScalarKind k = op.result()->type().element();
    if (!ir::is_integer(k)) return false;
    switch (op.kind()) {
      case OpKind::size:
        env[op.result()] = sizes_.at(op.str_attr("name"));
        return true;
      case OpKind::sm_count:
        env[op.result()] = sm_count_;
        return true;
      case OpKind::constant:
        if (op.attr("value")->kind != ir::Attribute::Kind::integer) return false;
        env[op.result()] = op.int_attr("value");
        return true;
      case OpKind::select:
        env[op.result()] =
            value(env, op.operand(0)) ? value(env, op.operand(1)) : value(env, op.operand(2));
        return true;
      default:
        break;
    }
    if (!ir::is_elementwise(op.kind()) || op.num_operands() > 2) return false;
    for (const Value* v : op.operands()) {
      if (!v->type().is_scalar() || !ir::is_integer(v->type().element())) return false;
    }
    int64_t a = value(env, op.operand(0));
    int64_t b = op.num_operands() > 1 ? value(env, op.operand(1)) : 0;
    auto r = ir::eval_integer(op.kind(), op.operand(0)->type().element(), a, b,
                              op.has_attr("pred") ? op.str_attr("pred") : "");
    if (!r) fail(op, "divides by zero on these sizes");
    env[op.result()] = *r;
    return true;
  }

  void top_level(const Operation& op, std::unordered_map<const Value*, int64_t>& env) {
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
  };

  void read(const Operation& op, size_t use_index, Role& r, bool async) {
    Use& use = uses_[use_index];
    const SlotRef& ref = use.ref;
    SlotState& s = rings_[ref.ring][ref.at()];
    if (use.started) {
      if (async) {
        ++use.outstanding;
        r.open.push_back(use_index);
      }
      return;
    }
    use.started = true;
    int64_t i = s.reads_started + 1;
    std::string slot = ref.str();
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

  void retire(size_t use_index) {
    Use& use = uses_[use_index];
    if (--use.outstanding == 0) ++rings_[use.ref.ring][use.ref.at()].reads_done;
  }

  // Runs `r` until it blocks or ends; whether it moved.
  bool step_until_blocked(Role& r) {
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
        moved = true;
        continue;
      }
      const Operation& op = *f.block->ops()[f.pc];
      if (!execute(op, r)) {
        r.blocked = &op;
        return moved;
      }
      moved = true;
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
        ir::BarrierModel& b = barrier(op, r, 0);
        int64_t parity = value(r.env, op.operand(2));
        if (parity != 0 && parity != 1) fail(op, "waits on parity " + std::to_string(parity));
        if (!b.phase_completed(parity)) return false;
        ++f.pc;
        return true;
      }
      case OpKind::mbarrier_arrive:
      case OpKind::mbarrier_expect_tx: {
        ir::BarrierModel& b = barrier(op, r, 0);
        int64_t count = 1, bytes = 0;
        if (op.kind() == OpKind::mbarrier_expect_tx) {
          bytes = op.int_attr("bytes");
        } else {
          const std::string& by = op.str_attr("by");
          bool one = r.op->has_attr("issue");
          count = by == "one" || one ? 1
                  : by == "thread"   ? r.threads
                  : by == "warp"     ? r.threads / 32
                                     : r.threads / 128;
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
          uses_.push_back(Use{SlotRef{op.operand(0), s, b, op.num_results()}});
          buffers_[op.result(b)] = uses_.size() - 1;
        }
        ++f.pc;
        return true;
      }
      case OpKind::transpose:
        if (buffers_.count(op.operand(0))) buffers_[op.result()] = buffers_[op.operand(0)];
        ++f.pc;
        return true;
      case OpKind::copy_async: {
        ++f.pc;
        if (op.num_operands() != 4) return true;  // a store from a staging buffer
        auto found = buffers_.find(op.operand(1));
        if (found == buffers_.end()) return true;
        const SlotRef* dst = &uses_[found->second].ref;
        SlotState& s = rings_[dst->ring][dst->at()];
        int64_t j = s.issued + 1;
        if (s.reads_done < j - 1) {
          fail(op, "loads into " + dst->str() + " (use " + std::to_string(j) + ") while use " +
                       std::to_string(s.reads_done + 1) +
                       " is still being read: the slot is written before it is released");
        }
        ++s.issued;
        barrier(op, r, 2);  // checks the index
        Load l{*dst, op.operand(2), value(r.env, op.operand(3)),
               tensor_bytes(op.operand(1)->type())};
        if (schedule_.late_loads) {
          loads_.push_back(l);
        } else {
          land(l);
        }
        return true;
      }
      case OpKind::mma: {
        bool async = op.has_attr("async");
        for (int i = 0; i < 2; ++i) {
          auto it = buffers_.find(op.operand(i));
          if (it != buffers_.end()) read(op, it->second, r, async);
        }
        ++f.pc;
        return true;
      }
      case OpKind::mma_commit:
        r.groups.push_back(std::move(r.open));
        r.open.clear();
        ++f.pc;
        return true;
      case OpKind::mma_wait: {
        size_t pending = static_cast<size_t>(op.int_attr("pending"));
        while (r.groups.size() > pending) {
          for (size_t u : r.groups.front()) retire(u);
          r.groups.erase(r.groups.begin());
        }
        ++f.pc;
        return true;
      }
      default:
        if (!scalar(op, r.env)) {
          // Any other reader of a ring buffer reads it now.
          for (const Value* v : op.operands()) {
            auto it = buffers_.find(v);
            if (it != buffers_.end() && op.kind() != OpKind::aref_slot)
              read(op, it->second, r, false);
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
      what += "; the " + r.op->str_attr("role") + " waits at " + ir::op_where(*r.blocked) + " on " +
              barrier_name(*r.blocked, r, 0) + " for parity " +
              std::to_string(value(r.env, r.blocked->operand(2))) + " (" + b.describe() + ")";
    }
    for (Role& r : roles_) {
      if (r.done) what += "; the " + r.op->str_attr("role") + " has ended";
    }
    fail(first ? *first : kernel_, what);
  }

  const Operation& kernel_;
  std::map<std::string, int64_t> sizes_;
  int64_t sm_count_;
  Schedule schedule_;
  std::string instance_;
  std::unordered_map<const Value*, int64_t> top_;
  std::map<const Value*, std::vector<SlotState>> rings_;
  std::map<const Value*, std::vector<ir::BarrierModel>> bars_;
  std::unordered_map<const Value*, size_t> buffers_;  // -> uses_
  std::vector<Use> uses_;
  std::vector<Role> roles_;
  std::deque<Load> loads_;
};

void check_kernel(const Operation& kernel) {
  bool has_roles = false, has_barriers = false;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    has_roles = has_roles || op->kind() == OpKind::warp_group;
    has_barriers = has_barriers || op->kind() == OpKind::mbarrier_init;
  });
  if (!has_roles || !has_barriers) return;
  const auto& sig = kernel.signature();
  // A few values per size symbol, multiples of its facts' divisor.
  std::vector<std::vector<int64_t>> choices;
  for (const std::string& s : sig.sizes) {
    int64_t d = 1;
    for (const ir::Fact& f : sig.facts) {
      if (f.symbol == s) d = std::lcm(d, f.divisor);
    }
    std::vector<int64_t> vs;
    for (int64_t base : {1, 136, 200, 320, 520}) {
      int64_t v = (base + d - 1) / d * d;
      if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
    choices.push_back(vs);
  }
  int64_t instances = 1;
  for (const auto& c : choices) instances *= static_cast<int64_t>(c.size());
  for (int64_t i = 0; i < instances; ++i) {
    std::map<std::string, int64_t> sizes;
    std::string text;
    int64_t rest = i;
    for (size_t s = 0; s < sig.sizes.size(); ++s) {
      int64_t n = static_cast<int64_t>(choices[s].size());
      sizes[sig.sizes[s]] = choices[s][rest % n];
      text += (s ? ", " : "") + sig.sizes[s] + " = " + std::to_string(choices[s][rest % n]);
      rest /= n;
    }
    for (int64_t sms : {1, 3}) {
      for (const Schedule& schedule : kSchedules) {
        std::string instance = text + ", " + std::to_string(sms) + " SM(s)";
        int64_t blocks = Run(kernel, sizes, sms, schedule, instance).grid_blocks();
        for (int64_t block : {int64_t{0}, blocks - 1}) {
          if (block < 0 || (block == blocks - 1 && blocks == 1 && block != 0)) continue;
          Run(kernel, sizes, sms, schedule, instance + ", block " + std::to_string(block))
              .run_block(block);
          if (blocks == 1) break;
        }
      }
    }
  }
}

}  // namespace

void check_protocol(ir::Module& module) {
  for (const auto& kernel : module.kernels) check_kernel(*kernel);
}

}  // namespace tessel::transforms
