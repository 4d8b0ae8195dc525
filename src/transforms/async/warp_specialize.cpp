// WarpSpecialize: a TMA producer role and a consumer role connected by an aref per mainloop (the
// rules are in the header).
#include "transforms/async/warp_specialize.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/async.h"
#include "support/diagnostics.h"
#include "target/cuda/target.h"
#include "transforms/async/atom_queries.h"
#include "transforms/async/stage_budget.h"
#include "transforms/async/warp_specialize_groups.h"
#include "transforms/async/warp_specialize_operands.h"
#include "transforms/report.h"
#include "transforms/pins.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;
using Mapping = std::unordered_map<const Value*, Value*>;

constexpr int64_t kProducerThreads = 128;
constexpr int64_t kWarpgroup = 128;

// `%s = copy %t : shared<...>` with %t in global memory (ir::is_mainloop's copies).
bool is_global_to_shared(const Operation& op) {
  return op.kind() == OpKind::copy && op.num_results() == 1 && op.result()->type().is_tensor() &&
         op.result()->type().space() == MemorySpace::shared && op.num_operands() >= 1 &&
         op.operand(0)->type().is_tensor() && op.operand(0)->type().space() == MemorySpace::global;
}

// An op whose only effect is its results (dead when nobody uses them).
bool is_pure(const Operation& op) {
  if (!op.regions().empty() || op.num_results() == 0 || ir::is_async_op(op.kind())) return false;
  return op.kind() != OpKind::call_external;
}

// Every value `op` and the ops nested in it read.
std::vector<Value*> reads(Operation* op) {
  std::vector<Value*> out;
  ir::walk(op, [&](Operation* inner) {
    for (Value* v : inner->operands()) out.push_back(v);
  });
  return out;
}

// One mainloop and how it splits.
struct Mainloop {
  Operation* loop;
  std::vector<Operation*> loads;        // TMA copies into shared memory, in body order
  std::set<const Operation*> address;   // the loads' address closure inside the body
  std::set<const Operation*> consumer;  // body ops the consumer keeps (not the loads)
  std::vector<size_t> group;            // per load: the aref it goes through (an index of rings)
  std::vector<Value*> rings;            // one aref per group of loads (see group_loads)
};

class Specializer {
 public:
  explicit Specializer(Operation* kernel) : kernel_(kernel), top_(kernel->region(0)) {}

  void run() {
    for (const auto& op : top_->ops()) {
      if (op->kind() == OpKind::block_grid) grid_ = op.get();
    }
    if (!grid_) return;
    bool has_roles = false;
    ir::walk(kernel_, [&](Operation* op) { has_roles |= op->kind() == OpKind::warp_group; });
    if (has_roles) return;
    std::optional<bool> pinned = pinned_flag(*grid_, "warp_specialize");
    if (pinned == false) return;
    target::cuda::Target target = grid_->has_attr("target")
                                      ? target::cuda::Target::named(grid_->str_attr("target"))
                                      : target::cuda::Target::sm90a();
    std::vector<Operation*> candidates;
    ir::walk(kernel_, [&](Operation* op) {
      if (ir::is_mainloop(*op) && has_wgmma(*op)) candidates.push_back(op);
    });
    if (target.name() != "sm_90a" || candidates.empty()) {
      if (pinned == true) {
        user_error(grid_->loc(), "block_grid: warp_specialize = true is pinned but ",
                   target.name() != "sm_90a"
                       ? "the target is " + target.name() + " (warp specialization needs sm_90a)"
                       : std::string("the kernel has no mainloop that feeds wgmma from shared "
                                     "memory"));
      }
      return;
    }
    for (Operation* loop : candidates) {
      const Operation* parent = loop->parent_op();
      if (parent != kernel_) {
        user_error(loop->loc(), loop_str(*loop), ": the mainloop is nested inside ",
                   ir::op_where(*parent),
                   "; warp specialization splits only a mainloop at the top level of the kernel "
                   "(roles stand there); pin warp_specialize = false on the block_grid to keep "
                   "the non-specialized pipeline");
      }
    }
    consumer_threads_ = consumer_threads();
    for (Operation* loop : candidates) loops_.push_back(analyze(loop));
    plan_top_level();
    plan_prologue_loads();
    plan_epilogue_loads();
    rebuild();
  }

 private:
  // T: the block's threads as synthesis chose them, checked against a pinned consumer_warpgroups.
  int64_t consumer_threads() const {
    const Attribute* t = grid_->attr("threads");
    if (!t || t->kind != Attribute::Kind::integer) {
      user_error(grid_->loc(),
                 "block_grid: warp-specialize needs the block's threads (run synthesize-layouts "
                 "first)");
    }
    int64_t threads = t->i;
    if (threads % kWarpgroup != 0 || threads / kWarpgroup < 1 || threads / kWarpgroup > 2) {
      user_error(grid_->loc(), "block_grid: the block's ", threads,
                 " threads are not one or two whole warpgroups (128 or 256), so they cannot be "
                 "the consumer role of a warp-specialized kernel");
    }
    if (const Attribute* pin = grid_->attr("consumer_warpgroups")) {
      if (pin->kind != Attribute::Kind::integer || pin->i < 1 || pin->i > 2) {
        user_error(grid_->loc(), "block_grid: the pinned consumer_warpgroups must be 1 or 2, not ",
                   pin->kind == Attribute::Kind::unit ? std::string("a bare flag") : pin->str());
      }
      if (pin->i * kWarpgroup != threads) {
        user_error(grid_->loc(), "block_grid: consumer_warpgroups = ", pin->i,
                   " is pinned but layout synthesis laid the kernel's register tensors out over ",
                   threads, " threads (", threads / kWarpgroup,
                   " warpgroup(s)); the consumer role runs those layouts unchanged, so pin "
                   "threads = ",
                   pin->i * kWarpgroup,
                   " on the block_grid instead (synthesis then lays them out for that many)");
      }
    }
    return threads;
  }

  Mainloop analyze(Operation* loop) {
    Mainloop m{loop, {}, {}, {}, {}, {}};
    std::string where = loop_str(*loop) + " at " + loop->loc().str();
    if (static_value(loop->operand(0)) != 0 || static_value(loop->operand(2)) != 1) {
      user_error(loop->loc(), loop_str(*loop),
                 ": warp specialization numbers the aref's slots by the loop index, so the "
                 "mainloop must run from 0 with step 1, not from ",
                 ir::value_ref(loop->operand(0)), " with step ", ir::value_ref(loop->operand(2)));
    }
    Block* body = loop->region(0);
    for (const auto& op : body->ops()) {
      if (!is_global_to_shared(*op)) continue;
      std::string atom = atom_of(*op);
      if (atom.rfind("tma.", 0) != 0) {
        user_error(op->loc(), "copy ", ir::value_ref(op->result()), ": the mainloop ", where,
                   " copies a global tile into shared memory ",
                   atom.empty() ? std::string("without an atom") : "with atom " + atom,
                   " (not a TMA load); warp specialization gives the loads to one producer thread "
                   "and needs TMA (pin warp_specialize = false on the block_grid to keep the "
                   "non-specialized pipeline)");
      }
      m.loads.push_back(op.get());
    }
    // The loads' address closure inside the body.
    std::vector<std::pair<Value*, const Operation*>> work;
    for (Operation* load : m.loads)
      for (Value* v : load->operands()) work.push_back({v, load});
    while (!work.empty()) {
      auto [v, load] = work.back();
      work.pop_back();
      if (v->owner_block() != body) continue;  // outside the loop: plan_top_level's business
      if (v == body->argument(0)) continue;
      if (!v->def() || !is_address_op(*v->def())) {
        const Value* acc = accumulator_source(v, body);
        std::string what = v->def() ? ", " + made_by(v) : std::string(", a value the loop carries");
        if (acc && acc != v) what += ", computed from the accumulator " + ir::value_ref(acc);
        user_error(load->loc(), "copy ", ir::value_ref(load->result()),
                   ": the TMA load's tile depends on ", ir::value_ref(v), what, " in the mainloop ",
                   where,
                   "; the producer role computes only addresses (tile ops and index arithmetic), "
                   "so a TMA tile cannot depend on accumulators or other computed data");
      }
      if (m.address.insert(v->def()).second)
        for (Value* u : v->def()->operands()) work.push_back({u, load});
    }
    check_carried(*loop);
    // What the consumer keeps: effects, the yield, and what they read (the loads stay behind;
    // their results become the aref's buffers).
    std::set<const Value*> used;
    for (auto it = body->ops().rbegin(); it != body->ops().rend(); ++it) {
      Operation* op = it->get();
      if (std::find(m.loads.begin(), m.loads.end(), op) != m.loads.end()) continue;
      bool keep = !is_pure(*op) || std::any_of(op->results().begin(), op->results().end(),
                                               [&](const auto& r) { return used.count(r.get()); });
      if (!keep) continue;
      m.consumer.insert(op);
      for (Value* v : reads(op)) used.insert(v);
    }
    m.group = group_loads(*loop, m.loads);
    return m;
  }

  // The loads of group `g` of `m`, in body order.
  static std::vector<size_t> loads_of(const Mainloop& m, size_t g) {
    std::vector<size_t> out;
    for (size_t i = 0; i < m.loads.size(); ++i)
      if (m.group[i] == g) out.push_back(i);
    return out;
  }

  // The loop-carried value or mma result in `body` that `v` is computed from, if any.
  static const Value* accumulator_source(const Value* v, const Block* body) {
    std::vector<const Value*> work{v};
    std::set<const Value*> seen;
    while (!work.empty()) {
      const Value* u = work.back();
      work.pop_back();
      if (u->owner_block() != body || !seen.insert(u).second) continue;
      if (!u->def()) {
        if (u != body->argument(0)) return u;
        continue;
      }
      if (u->def()->kind() == OpKind::mma) return u;
      for (const Value* w : u->def()->operands()) work.push_back(w);
    }
    return nullptr;
  }

  // Loop-carried values stay with the consumer: an accumulator, or a register tensor the
  // consumer's SIMT work carries (attention's running row max and row sum). The producer never
  // reads them (analyze refuses a load whose tile depends on one), and pipeline-arefs keeps the
  // mmas synchronous when anything but the next mma reads an mma's result in the same iteration.
  // A carried shared or global tensor would be written by one role and invisible to the other.
  static void check_carried(const Operation& loop) {
    Block* body = loop.region(0);
    for (int i = 1; i < static_cast<int>(body->arguments().size()); ++i) {
      Value* carried = body->argument(i);
      const Type& t = carried->type();
      if (t.is_scalar() || (t.is_tensor() && t.space() == MemorySpace::reg)) continue;
      user_error(loop.loc(), loop_str(loop), ": the mainloop carries ", ir::value_ref(carried),
                 " of type ", t.str(),
                 "; warp specialization keeps loop-carried values in the consumer's registers, so "
                 "they must be register tensors or scalars (pin warp_specialize = false on the "
                 "block_grid to keep the non-specialized pipeline)");
    }
  }

  // Which top-level ops stay where all threads run them, and which the producer clones.
  void plan_top_level() {
    const Operation* first = loops_.front().loop;
    bool before = true;
    for (const auto& op : top_->ops()) {
      if (op.get() == first) before = false;
      // Index math over the block indices moves into the roles too (each clones what it needs):
      // later passes (persistent) give each role its own block indices.
      bool stays =
          before && (op->kind() == OpKind::block_grid ||
                     (is_address_op(*op) &&
                      std::all_of(op->operands().begin(), op->operands().end(),
                                  [&](Value* v) { return available(v) && !is_block_index(v); })));
      if (stays) {
        stay_.insert(op.get());
      } else {
        moved_.push_back(op.get());
      }
    }
    // The producer's needs from outside its loops: the bounds and the loads' closure's operands.
    for (const Mainloop& m : loops_) {
      std::vector<std::pair<Value*, const Operation*>> work;
      for (int i = 0; i < 3; ++i) work.push_back({m.loop->operand(i), m.loop});
      for (const Operation* op : m.address)
        for (Value* v : op->operands()) work.push_back({v, op});
      for (const Operation* load : m.loads)
        for (Value* v : load->operands()) work.push_back({v, load});
      while (!work.empty()) {
        auto [v, user] = work.back();
        work.pop_back();
        if (v->owner_block() != top_ || available(v)) continue;
        Operation* def = v->def();
        if (!is_address_op(*def)) {
          user_error(user->loc(), user->name(), ": the producer role of ", loop_str(*m.loop),
                     " needs ", ir::value_ref(v), ", ", made_by(v),
                     ", which is not address arithmetic (the producer computes only tile ops and "
                     "index arithmetic, never from accumulators or register data)");
        }
        if (producer_prelude_.insert(def).second)
          for (Value* u : def->operands()) work.push_back({u, def});
      }
    }
  }

  // ---- prologue operands (header, "Prologue operands") ----

  // The top-level TMA loads into shared memory before the first mainloop (attention's Q tile):
  // the producer issues them through the `%prologue` aref once per output tile. A load whose
  // tile's address is not address arithmetic stays in the consumer (and the emitter refuses a
  // TMA load there inside a persistent tile loop, naming it).
  void plan_prologue_loads() {
    const Operation* first = loops_.front().loop;
    for (Operation* op : moved_) {
      if (op == first) break;
      if (!is_global_to_shared(*op) || atom_of(*op).rfind("tma.", 0) != 0) continue;
      std::set<const Operation*> closure;
      std::vector<const Value*> work(op->operands().begin(), op->operands().end());
      bool address = true;
      while (address && !work.empty()) {
        const Value* v = work.back();
        work.pop_back();
        if (available(v)) continue;
        Operation* def = v->def();
        address = def && v->owner_block() == top_ && is_address_op(*def);
        if (address && closure.insert(def).second)
          for (const Value* u : def->operands()) work.push_back(u);
      }
      if (!address) continue;
      prologue_.push_back(op);
      prologue_prelude_.insert(closure.begin(), closure.end());
    }
  }

  bool is_prologue_copy(const Operation* op) const {
    return std::find(prologue_.begin(), prologue_.end(), op) != prologue_.end();
  }

  // After the producer's prelude, before its loops: %bufs = aref_acquire %prologue, %c0;
  // copy %tile_i, %buf_i {tma}; aref_commit %prologue, %c0.
  void producer_prologue(ir::OpBuilder& b, Mapping& map) {
    const SourceLocation loc = prologue_.front()->loc();
    for (Operation* op : moved_) {
      if (prologue_prelude_.count(op) && !map.count(op->result())) b.insert(ir::clone(*op, map));
    }
    std::vector<Type> types;
    for (const Operation* copy : prologue_) types.push_back(copy->result()->type());
    Operation* acquire = b.create(OpKind::aref_acquire, {prologue_ring_, seq0_}, types, loc);
    for (size_t i = 0; i < prologue_.size(); ++i) {
      const Operation* load = prologue_[i];
      Value* buf = acquire->result(static_cast<int>(i));
      buf->set_name(load->result()->name());
      std::vector<Value*> operands;
      for (Value* v : load->operands()) {
        auto it = map.find(v);
        operands.push_back(it == map.end() ? v : it->second);
      }
      operands.push_back(buf);
      Operation* copy = b.create(OpKind::copy, operands, {}, load->loc());
      for (const auto& [key, value] : load->attributes()) copy->set_attr(key, value);
    }
    b.create(OpKind::aref_commit, {prologue_ring_, seq0_}, {}, loc);
  }

  // The last top-level op of the consumer that reads a prologue buffer, or a view of one
  // (a transpose), in itself or in its regions: the release goes after it.
  const Operation* last_prologue_reader() const {
    std::set<const Value*> derived;
    for (const Operation* copy : prologue_) derived.insert(copy->result());
    const Operation* last = nullptr;
    for (Operation* op : moved_) {
      if (is_prologue_copy(op)) continue;
      bool reads = false;
      ir::walk(op, [&](Operation* inner) {
        for (const Value* v : inner->operands()) {
          if (!derived.count(v)) continue;
          reads = true;
          for (const auto& r : inner->results())
            if (r->type().is_tensor() && r->type().space() == MemorySpace::shared)
              derived.insert(r.get());
        }
      });
      if (reads) last = op;
    }
    return last;
  }

  // ---- epilogue operands (header, "Epilogue operands") ----

  // The top-level global -> register copies after the last mainloop that the producer takes over;
  // the others stay in the consumer, each with its reason in `--report=epilogue`.
  void plan_epilogue_loads() {
    const Operation* last = loops_.back().loop;
    bool after = false;
    for (Operation* op : moved_) {
      if (op == last) {
        after = true;
        continue;
      }
      if (!after || op->kind() != OpKind::copy || op->num_operands() != 1 || op->num_results() != 1)
        continue;
      const Type& src = op->operand(0)->type();
      const Type& dst = op->result()->type();
      if (!src.is_tensor() || src.space() != MemorySpace::global || !dst.is_tensor() ||
          dst.space() != MemorySpace::reg)
        continue;
      std::string why;
      std::set<const Operation*> closure;
      std::optional<EpilogueLoad> load = epilogue_load(
          *kernel_, op, [&](const Value* v) { return available(v); }, closure, why);
      std::string what = "copy " + ir::value_ref(op->result()) + " at " + op->loc().str();
      if (!load) {
        report("epilogue", what + ": stays in the consumer (" + why + ")");
        continue;
      }
      report("epilogue", what + ": loaded by the producer (" + load->tma_atom + " into " +
                             load->buffer.str() + "), read by the consumer with " +
                             load->read_atom);
      epilogue_.push_back(*load);
      epilogue_prelude_.insert(closure.begin(), closure.end());
    }
  }

  bool is_epilogue_copy(const Operation* op) const {
    return std::any_of(epilogue_.begin(), epilogue_.end(),
                       [&](const EpilogueLoad& e) { return e.copy == op; });
  }

  // A tile op that only epilogue or prologue copies read: the consumer no longer needs it.
  bool only_feeds_producer_copies(const Operation* op) const {
    if (op->kind() != OpKind::tile) return false;
    bool feeds = false, other = false;
    ir::walk(kernel_, [&](Operation* user) {
      for (const Value* v : user->operands()) {
        if (v != op->result()) continue;
        (is_epilogue_copy(user) || is_prologue_copy(user) ? feeds : other) = true;
      }
    });
    return feeds && !other;
  }

  // An index constant 0 at the top level (the kernel's own, else a new one before the roles):
  // the epilogue aref's sequence number, one per output tile (persistent counts the tiles).
  Value* top_zero(ir::OpBuilder& b) {
    for (const auto& op : top_->ops()) {
      if (!stay_.count(op.get()) || op->kind() != OpKind::constant) continue;
      const Attribute* a = op->attr("value");
      if (a && a->kind == Attribute::Kind::integer && a->i == 0 &&
          op->result()->type() == Type::scalar(ir::ScalarKind::index))
        return op->result();
    }
    return b.index_constant(0, kernel_->loc());
  }

  // After the producer's loops: %bufs = aref_acquire %epilogue, 0; copy %tile_i, %buf_i {tma};
  // aref_commit %epilogue, 0 — with the tiles' address ops ahead of them.
  void producer_epilogue(ir::OpBuilder& b, Mapping& map) {
    const SourceLocation loc = epilogue_.front().copy->loc();
    for (Operation* op : moved_) {
      if (epilogue_prelude_.count(op) && !map.count(op->result())) b.insert(ir::clone(*op, map));
    }
    std::vector<Type> types;
    for (const EpilogueLoad& e : epilogue_) types.push_back(e.buffer);
    Operation* acquire = b.create(OpKind::aref_acquire, {epilogue_ring_, seq0_}, types, loc);
    for (size_t i = 0; i < epilogue_.size(); ++i) {
      const EpilogueLoad& e = epilogue_[i];
      Value* buf = acquire->result(static_cast<int>(i));
      buf->set_name(e.copy->result()->name() + "_buf");
      auto it = map.find(e.tile->result());  // the tile may stay at the top level
      Value* tile = it == map.end() ? e.tile->result() : it->second;
      Operation* copy = b.create(OpKind::copy, {tile, buf}, {}, e.copy->loc());
      copy->set_attr("atom", Attribute::string(e.tma_atom));
    }
    b.create(OpKind::aref_commit, {epilogue_ring_, seq0_}, {}, loc);
  }

  // In the consumer, in place of epilogue copy `op`: the wait (before the first), a read of the
  // slot buffer into the register tensor the copy made, and after the last the release. The
  // release is one arrival per warpgroup (lower-arefs) but every thread reads the buffer, so a
  // role_sync puts every thread's read before it.
  void consumer_epilogue_read(ir::OpBuilder& b, const Operation* op, Mapping& map) {
    size_t i = 0;
    while (epilogue_[i].copy != op) ++i;
    if (!epilogue_wait_) {
      std::vector<Type> types;
      for (const EpilogueLoad& e : epilogue_) types.push_back(e.buffer);
      epilogue_wait_ = b.create(OpKind::aref_wait, {epilogue_ring_, seq0_}, types, op->loc());
      for (size_t j = 0; j < epilogue_.size(); ++j)
        epilogue_wait_->result(static_cast<int>(j))
            ->set_name(epilogue_[j].copy->result()->name() + "_buf");
    }
    Operation* read = b.create(OpKind::copy, {epilogue_wait_->result(static_cast<int>(i))},
                               {op->result()->type()}, op->loc());
    read->set_attr("atom", Attribute::string(epilogue_[i].read_atom));
    read->result()->set_name(op->result()->name());
    map[op->result()] = read->result();
    if (i + 1 == epilogue_.size()) {
      b.create(OpKind::role_sync, {}, {}, op->loc());
      b.create(OpKind::aref_release, {epilogue_ring_, seq0_}, {}, op->loc());
    }
  }

  // In the consumer, in place of the first prologue copy: %bufs = aref_wait %prologue, %c0; the
  // copies' results become the buffers.
  void consumer_prologue_wait(ir::OpBuilder& b, const Operation* op, Mapping& map) {
    if (op != prologue_.front()) return;
    std::vector<Type> types;
    for (const Operation* copy : prologue_) types.push_back(copy->result()->type());
    Operation* wait = b.create(OpKind::aref_wait, {prologue_ring_, seq0_}, types, op->loc());
    for (size_t i = 0; i < prologue_.size(); ++i) {
      Value* buf = wait->result(static_cast<int>(i));
      buf->set_name(prologue_[i]->result()->name());
      map[prologue_[i]->result()] = buf;
    }
  }

  bool is_block_index(const Value* v) const { return v->def() == grid_; }

  // A value every role can read: a kernel parameter or a result of a top-level op that stays.
  bool available(const Value* v) const {
    if (!v->def()) return v->owner_block() == top_;
    return stay_.count(v->def()) > 0;
  }

  void rebuild() {
    const Operation* first = loops_.front().loop;
    ir::OpBuilder b(top_);
    b.set_insertion_point_before(const_cast<Operation*>(first));
    for (Mainloop& m : loops_) {
      const size_t groups = *std::max_element(m.group.begin(), m.group.end()) + 1;
      for (size_t g = 0; g < groups; ++g) {
        std::vector<Type> buffers;
        for (size_t i : loads_of(m, g)) buffers.push_back(m.loads[i]->result()->type());
        Operation* aref = b.create(OpKind::aref, {}, {Type::aref(buffers)}, m.loop->loc());
        aref->set_attr("slots", Attribute::integer(1));
        // One ring keeps its name; several are named after their first tile (%ring_k, %ring_v).
        aref->result()->set_name(groups == 1
                                     ? std::string("ring")
                                     : "ring_" + m.loads[loads_of(m, g)[0]]->result()->name());
        m.rings.push_back(aref->result());
      }
    }
    if (!epilogue_.empty()) {
      std::vector<Type> buffers;
      for (const EpilogueLoad& e : epilogue_) buffers.push_back(e.buffer);
      Operation* aref =
          b.create(OpKind::aref, {}, {Type::aref(buffers)}, epilogue_.front().copy->loc());
      aref->set_attr("slots", Attribute::integer(1));
      aref->result()->set_name("epilogue");
      epilogue_ring_ = aref->result();
      seq0_ = top_zero(b);
    }
    if (!prologue_.empty()) {
      std::vector<Type> buffers;
      for (const Operation* copy : prologue_) buffers.push_back(copy->result()->type());
      Operation* aref = b.create(OpKind::aref, {}, {Type::aref(buffers)}, prologue_.front()->loc());
      aref->set_attr("slots", Attribute::integer(1));
      aref->result()->set_name("prologue");
      prologue_ring_ = aref->result();
      if (!seq0_) seq0_ = top_zero(b);
    }
    Operation* producer = role(b, "producer", 0, kProducerThreads);
    producer->set_attr("issue", Attribute::ident("one"));
    Operation* consumer = role(b, "consumer", kProducerThreads, consumer_threads_);

    Mapping pmap;
    ir::OpBuilder pb(producer->region(0));
    for (Operation* op : moved_)
      if (producer_prelude_.count(op)) pb.insert(ir::clone(*op, pmap));
    if (!prologue_.empty()) producer_prologue(pb, pmap);
    for (const Mainloop& m : loops_) producer_loop(pb, m, pmap);
    if (!epilogue_.empty()) producer_epilogue(pb, pmap);

    Mapping cmap;
    ir::OpBuilder cb(consumer->region(0));
    const Operation* prologue_end = prologue_.empty() ? nullptr : last_prologue_reader();
    for (Operation* op : moved_) {
      auto it = std::find_if(loops_.begin(), loops_.end(),
                             [&](const Mainloop& m) { return m.loop == op; });
      if (is_prologue_copy(op)) {
        consumer_prologue_wait(cb, op, cmap);
        continue;
      }
      if (it != loops_.end()) {
        consumer_loop(cb, *it, cmap);
      } else if (is_epilogue_copy(op)) {
        consumer_epilogue_read(cb, op, cmap);
      } else if (only_feeds_producer_copies(op)) {
        continue;  // the producer's copy reads the tile now
      } else {
        cb.insert(ir::clone(*op, cmap));
      }
      if (op == prologue_end)
        cb.create(OpKind::aref_release, {prologue_ring_, seq0_}, {}, prologue_.front()->loc());
    }
    for (auto it = moved_.rbegin(); it != moved_.rend(); ++it) top_->remove(*it);
    grid_->set_attr("threads", Attribute::integer(kProducerThreads + consumer_threads_));
  }

  Operation* role(ir::OpBuilder& b, const char* name, int64_t first, int64_t threads) {
    Operation* op = b.create(OpKind::warp_group, {}, {}, kernel_->loc());
    op->set_attr("role", Attribute::ident(name));
    op->set_attr("first_thread", Attribute::integer(first));
    op->set_attr("threads", Attribute::integer(threads));
    op->add_region();
    return op;
  }

  // for %k { address ops; %bufs = aref_acquire %ring, %k; copy %tile_i, %buf_i; aref_commit }
  static void producer_loop(ir::OpBuilder& b, const Mainloop& m, Mapping& map) {
    const Operation& old = *m.loop;
    auto mapped = [&](Value* v) {
      auto it = map.find(v);
      return it == map.end() ? v : it->second;
    };
    Operation* loop = b.create(
        OpKind::for_, {mapped(old.operand(0)), mapped(old.operand(1)), mapped(old.operand(2))}, {},
        old.loc());
    Block* body = loop->add_region();
    Value* old_iv = old.region(0)->argument(0);
    Value* iv = body->add_argument(old_iv->type(), old_iv->name());
    map[old_iv] = iv;
    ir::OpBuilder lb(body);
    for (const auto& op : old.region(0)->ops())
      if (m.address.count(op.get())) lb.insert(ir::clone(*op, map));
    for (size_t g = 0; g < m.rings.size(); ++g) {
      const std::vector<size_t> group = loads_of(m, g);
      std::vector<Type> types;
      for (size_t i : group) types.push_back(m.loads[i]->result()->type());
      Operation* acquire = lb.create(OpKind::aref_acquire, {m.rings[g], iv}, types, old.loc());
      for (size_t k = 0; k < group.size(); ++k) {
        const Operation* load = m.loads[group[k]];
        acquire->result(static_cast<int>(k))->set_name(load->result()->name());
        std::vector<Value*> operands;
        for (Value* v : load->operands()) operands.push_back(mapped(v));
        operands.push_back(acquire->result(static_cast<int>(k)));
        Operation* copy = lb.create(OpKind::copy, operands, {}, load->loc());
        for (const auto& [key, value] : load->attributes()) copy->set_attr(key, value);
      }
      lb.create(OpKind::aref_commit, {m.rings[g], iv}, {}, old.loc());
    }
  }

  // %acc = for %k iter(...) { %bufs = aref_wait %ring, %k; the consumer's body ops;
  //                           aref_release %ring, %k; yield }
  static void consumer_loop(ir::OpBuilder& b, const Mainloop& m, Mapping& map) {
    const Operation& old = *m.loop;
    std::vector<Value*> operands;
    for (Value* v : old.operands()) {
      auto it = map.find(v);
      operands.push_back(it == map.end() ? v : it->second);
    }
    std::vector<Type> result_types;
    for (const auto& r : old.results()) result_types.push_back(r->type());
    Operation* loop = b.create(OpKind::for_, operands, result_types, old.loc());
    for (const auto& [key, value] : old.attributes()) loop->set_attr(key, value);
    Block* body = loop->add_region();
    for (const auto& arg : old.region(0)->arguments())
      map[arg.get()] = body->add_argument(arg->type(), arg->name());
    Value* iv = body->argument(0);
    ir::OpBuilder lb(body);
    for (size_t g = 0; g < m.rings.size(); ++g) {
      const std::vector<size_t> group = loads_of(m, g);
      std::vector<Type> types;
      for (size_t i : group) types.push_back(m.loads[i]->result()->type());
      Operation* wait = lb.create(OpKind::aref_wait, {m.rings[g], iv}, types, old.loc());
      for (size_t k = 0; k < group.size(); ++k) {
        Value* buf = wait->result(static_cast<int>(k));
        buf->set_name(m.loads[group[k]]->result()->name());
        map[m.loads[group[k]]->result()] = buf;
      }
    }
    const Operation* yield = old.region(0)->terminator();
    for (const auto& op : old.region(0)->ops()) {
      if (op.get() == yield || !m.consumer.count(op.get())) continue;
      lb.insert(ir::clone(*op, map));
    }
    for (Value* ring : m.rings) lb.create(OpKind::aref_release, {ring, iv}, {}, old.loc());
    if (yield) lb.insert(ir::clone(*yield, map));
    for (int i = 0; i < old.num_results(); ++i) {
      loop->result(i)->set_name(old.result(i)->name());
      map[old.result(i)] = loop->result(i);
    }
  }

  Operation* kernel_;
  Block* top_;
  Operation* grid_ = nullptr;
  int64_t consumer_threads_ = 0;
  std::vector<Mainloop> loops_;
  std::set<const Operation*> stay_;              // top-level ops all threads keep running
  std::vector<Operation*> moved_;                // top-level ops that move into the roles, in order
  std::set<const Operation*> producer_prelude_;  // of those, what the producer clones ahead
  std::vector<EpilogueLoad> epilogue_;           // epilogue operands the producer loads
  std::set<const Operation*> epilogue_prelude_;  // the top-level ops their tiles' addresses need
  Value* epilogue_ring_ = nullptr;               // their aref
  Value* seq0_ = nullptr;                        // its sequence number (0: once per tile)
  Operation* epilogue_wait_ = nullptr;           // the consumer's aref_wait on it
  std::vector<Operation*> prologue_;  // TMA loads before the mainloops the producer takes
  std::set<const Operation*> prologue_prelude_;  // the top-level ops their tiles' addresses need
  Value* prologue_ring_ = nullptr;               // their aref
};

}  // namespace

void warp_specialize(ir::Module& module) {
  for (const auto& kernel : module.kernels) Specializer(kernel.get()).run();
}

}  // namespace tessel::transforms
