// LowerMainloops: a TMA + wgmma mainloop without warp specialization to level-2 ops (the rules,
// the correctness argument and the design decision are in the header).
#include "transforms/async/lower_mainloops.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/async.h"
#include "ir/canonicalize.h"
#include "support/diagnostics.h"
#include "transforms/async/atom_queries.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::MemorySpace;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;
using Mapping = std::unordered_map<const Value*, Value*>;

const Type kIndex = Type::scalar(ScalarKind::index);
constexpr int64_t kWarp = 32;


bool starts_with(const std::string& s, const char* prefix) {
  return s.rfind(prefix, 0) == 0;
}

// `%s = copy %t : shared<...>`: a load of the mainloop (ir::is_mainloop's copies).
bool is_shared_copy(const Operation& op) {
  return op.kind() == OpKind::copy && op.num_results() == 1 &&
         op.result()->type().is_tensor() && op.result()->type().space() == MemorySpace::shared;
}


// A TMA + wgmma mainloop (what the emitter's TMA path took): a copy into shared memory with a
// TMA atom, or a wgmma mma, directly in the body.
bool is_tma_mainloop(const Operation& loop) {
  if (!ir::is_mainloop(loop)) return false;
  for (const auto& op : loop.region(0)->ops()) {
    if ((is_shared_copy(*op) && starts_with(atom_of(*op), "tma.")) || is_wgmma(*op)) return true;
  }
  return false;
}

// Index arithmetic without regions or effects: sizes, constants, scalar elementwise ops.
bool is_index_op(const Operation& op) {
  if (!op.regions().empty() || op.num_results() != 1 || !op.result()->type().is_scalar())
    return false;
  return op.kind() == OpKind::size || op.kind() == OpKind::constant ||
         ir::is_elementwise(op.kind());
}

std::string loop_str(const Operation& loop) {
  return "for " + ir::value_ref(loop.region(0)->argument(0));
}

// Work in registers: an op whose results are scalars or register tensors and that writes no
// memory (a copy reads shared or global memory into registers at most), or an `if` / `yield` of
// such ops. Attention's softmax between its two wgmmas, a W4A16 dequantization.
bool is_register_work(const Operation& op) {
  if (op.kind() == OpKind::yield) return true;
  if (op.kind() == OpKind::if_) {
    for (const auto& region : op.regions())
      for (const auto& inner : region->ops())
        if (!is_register_work(*inner)) return false;
  } else if (!op.regions().empty()) {
    return false;
  }
  if (op.kind() == OpKind::copy && op.num_results() != 1) return false;  // a store
  for (const auto& r : op.results()) {
    const Type& t = r->type();
    if (!t.is_scalar() && !(t.is_tensor() && t.space() == MemorySpace::reg)) return false;
  }
  return op.num_results() > 0 || op.kind() == OpKind::if_;
}

// One mainloop and what its body holds.
struct Mainloop {
  Operation* loop = nullptr;
  std::vector<Operation*> loads;     // the TMA copies into shared memory, in body order
  std::vector<Operation*> mmas;      // the wgmma mmas
  std::set<const Operation*> address;  // the loads' tiles and the index arithmetic they need
  int64_t stages = 1, in_flight = 0;
  // Register work in the body (the FlashAttention-2 schedule: no warp specialization, the
  // softmax between the wgmmas): the mmas stay synchronous, each retiring before the next op.
  bool synchronous = false;
};

class Lowering {
 public:
  explicit Lowering(Operation& kernel) : kernel_(kernel), top_(kernel.region(0)) {}

  void run() {
    std::vector<Operation*> loops;
    const Operation* grid = nullptr;
    for (const auto& op : top_->ops()) {
      if (op->kind() == OpKind::warp_group) return;  // warp-specialized: lower-arefs lowers it
      if (op->kind() == OpKind::block_grid) grid = op.get();
    }
    ir::walk(&kernel_, [&](Operation* op) {
      if (op->kind() == OpKind::for_ && is_tma_mainloop(*op)) loops.push_back(op);
    });
    std::vector<Operation*> once;
    for (const auto& op : top_->ops())
      if (is_shared_copy(*op) && starts_with(atom_of(*op), "tma.load")) once.push_back(op.get());
    for (Operation* load : once) lower_once(load);
    if (loops.empty()) return;
    if (!grid || !grid->has_attr("threads")) {
      user_error(loops.front()->loc(), "lower-mainloops: ", loop_str(*loops.front()),
                 " is a TMA mainloop but the block_grid has no `threads` (layout synthesis "
                 "writes it); the ring's empty barriers count the block's warps");
    }
    warps_ = grid->int_attr("threads") / kWarp;
    for (Operation* loop : loops) lower(inspect(loop));
  }

 private:
  // The checks of the header's refusals; what the body holds.
  Mainloop inspect(Operation* loop) {
    Mainloop m;
    m.loop = loop;
    const std::string where = loop_str(*loop) + " at " + loop->loc().str();
    if (loop->parent_block() != top_) {
      user_error(loop->loc(), "lower-mainloops: ", loop_str(*loop),
                 " is a TMA mainloop nested inside ", ir::op_where(*loop->parent_op()),
                 "; its ring's barriers are made at the top level of the kernel, where every "
                 "thread runs, so the loop must stand there too");
    }
    if (ir::int_constant(loop->operand(0)) != 0 || ir::int_constant(loop->operand(2)) != 1) {
      user_error(loop->loc(), "lower-mainloops: ", loop_str(*loop),
                 " must count from 0 in steps of 1: its index is the sequence number of the "
                 "ring's slots and parities");
    }
    m.stages = loop->has_attr("stages") ? loop->int_attr("stages") : 1;
    m.in_flight = loop->has_attr("mma_in_flight") ? loop->int_attr("mma_in_flight")
                                                  : std::min<int64_t>(1, m.stages - 1);
    if (m.stages < 1 || m.stages > 64 || m.in_flight < 0 || m.in_flight > 7 ||
        m.in_flight >= m.stages) {
      user_error(loop->loc(), "lower-mainloops: ", loop_str(*loop), " has stages = ", m.stages,
                 " and mma_in_flight = ", m.in_flight,
                 "; a ring needs 1 <= stages <= 64 and 0 <= mma_in_flight <= min(7, stages - 1) "
                 "(the pending groups still read their slots)");
    }
    Block* body = loop->region(0);
    for (const auto& op : body->ops()) {
      if (is_shared_copy(*op)) {
        const Operation* tile = op->num_operands() == 1 ? op->operand(0)->def() : nullptr;
        if (!starts_with(atom_of(*op), "tma.load") || !tile || tile->kind() != OpKind::tile ||
            tile->parent_block() != body) {
          std::string atom = atom_of(*op);
          user_error(op->loc(), "lower-mainloops: copy ", ir::value_ref(op->result()),
                     " in the TMA mainloop ", where, " is not a TMA load of a global tile made "
                     "in the loop body (",
                     atom.empty() ? std::string("no atom") : "atom \"" + atom + "\"",
                     "); the ring's loads are TMA copies completing on its full barriers");
        }
        m.loads.push_back(op.get());
      } else if (is_wgmma(*op)) {
        m.mmas.push_back(op.get());
      } else if (op->kind() != OpKind::tile && op->kind() != OpKind::transpose &&
                 op->kind() != OpKind::yield && !is_index_op(*op)) {
        if (!is_register_work(*op)) {
          user_error(op->loc(), "lower-mainloops: ", op->name(), " in the TMA mainloop ", where,
                     " is not lowered: the body may hold TMA loads and their address arithmetic, "
                     "transposes of shared tiles, wgmma mmas, work in registers and the yield");
        }
        m.synchronous = true;
      }
    }
    if (m.synchronous && m.in_flight != 0) {
      user_error(loop->loc(), "lower-mainloops: ", loop_str(*loop), " works on registers between "
                 "its wgmmas but has mma_in_flight = ", m.in_flight, "; its mmas must retire "
                 "before that work reads them (pipeline-loops sets 0 for such loops)");
    }
    if (m.mmas.empty()) {
      user_error(loop->loc(), "lower-mainloops: ", loop_str(*loop),
                 " loads global tiles into shared memory by TMA but no wgmma mma reads them");
    }
    // Each carried value is one wgmma's accumulator, used by that mma only, and the yield returns
    // that mma's result in its place: the mmas become asynchronous, and an async mma's operand and
    // result may be read by nothing else before the mma_wait that retires it. (Synchronous mmas
    // have retired when anything reads them.)
    const Operation* yield = body->terminator();
    for (int i = 1; !m.synchronous && i < static_cast<int>(body->arguments().size()); ++i) {
      Value* arg = body->argument(i);
      std::vector<Operation*> users;
      ir::walk(loop, [&](Operation* op) {
        for (Value* v : op->operands())
          if (v == arg) users.push_back(op);
      });
      const Operation* mma = users.size() == 1 ? users.front() : nullptr;
      bool ok = mma && is_wgmma(*mma) && mma->operand(2) == arg && mma->parent_block() == body &&
                yield && yield->operand(i - 1) == mma->result();
      if (ok) {
        int uses = 0;
        ir::walk(&kernel_, [&](Operation* op) {
          for (Value* v : op->operands()) uses += v == mma->result();
        });
        ok = uses == 1;
      }
      if (!ok) {
        user_error(loop->loc(), "lower-mainloops: ", loop_str(*loop), " carries ",
                   ir::value_ref(arg), ", which is not the accumulator of one wgmma mma whose "
                   "result only the yield returns in its place; the loop's mmas become "
                   "asynchronous, so nothing else may read their accumulators in the loop");
      }
    }
    // The loads' address closure in the body: their tiles and the index arithmetic those need.
    std::vector<const Operation*> work;
    for (const Operation* load : m.loads) work.push_back(load->operand(0)->def());
    while (!work.empty()) {
      const Operation* op = work.back();
      work.pop_back();
      if (!m.address.insert(op).second) continue;
      // Operands are top-level values, the loop index or body ops: the carried values are
      // accumulators (checked above), never a tile's coordinates.
      for (const Value* v : op->operands()) {
        const Operation* d = v->def();
        if (d && d->parent_block() == body) work.push_back(d);
      }
    }
    return m;
  }

  // An index constant at the top level before `loop` (the kernel's own where it has one).
  Value* constant(int64_t value, Operation* loop) {
    for (const auto& op : top_->ops()) {
      if (op.get() == loop) break;
      if (op->kind() == OpKind::constant && op->result()->type() == kIndex &&
          ir::int_constant(op->result()) == value)
        return op->result();
    }
    OpBuilder b(top_);
    b.set_insertion_point_before(loop);
    return b.index_constant(value, kernel_.loc());
  }

  void lower(const Mainloop& m) {
    Operation* loop = m.loop;
    Block* body = loop->region(0);
    Value* iv = body->argument(0);
    Value* trip = loop->operand(1);
    const SourceLocation loc = loop->loc();
    c_slots_ = constant(m.stages, loop);
    c2_ = constant(2, loop);
    c1_ = constant(1, loop);
    Value* c0 = constant(0, loop);
    Value* c_ahead = constant(m.stages - m.in_flight, loop);
    Value* c_g = m.in_flight > 0 ? constant(m.in_flight, loop) : nullptr;

    // The ring and its barriers, before the loop.
    OpBuilder top(top_);
    top.set_insertion_point_before(loop);
    std::vector<Type> types;
    for (const Operation* load : m.loads) types.push_back(load->result()->type());
    Operation* aref = top.create(OpKind::aref, {}, {Type::aref(types)}, loc);
    aref->set_attr("slots", Attribute::integer(m.stages));
    aref->result()->set_name("ring");
    ring_ = aref->result();
    Operation* full = top.create(OpKind::mbarrier_init, {}, {Type::mbarrier(m.stages)}, loc);
    full->set_attr("arrivals", Attribute::integer(1));
    full->result()->set_name("ring_full");
    full_ = full->result();
    Operation* empty = top.create(OpKind::mbarrier_init, {}, {Type::mbarrier(m.stages)}, loc);
    empty->set_attr("arrivals", Attribute::integer(warps_));
    empty->result()->set_name("ring_empty");
    empty_ = empty->result();
    top.create(OpKind::block_sync, {}, {}, loc);

    // The prologue: the loads of sequence numbers 0 .. A - 1 that the trip count reaches.
    Operation* prologue = top.create(OpKind::for_, {c0, c_ahead, c1_}, {}, loc);
    Block* pbody = prologue->add_region();
    Value* n0 = pbody->add_argument(kIndex, "n");
    OpBuilder pb(pbody);
    guarded_load(pb, m, n0, trip, loc);

    // The body: wait for the slot, read it in place of the loads, commit, retire, release, refill.
    OpBuilder head(body);
    head.set_insertion_point_before(body->ops().front().get());
    Value* slot = head.index_op(OpKind::rem, iv, c_slots_, "slot", loc);
    Value* round = head.index_op(OpKind::div, iv, c_slots_, "round", loc);
    Value* parity = head.index_op(OpKind::rem, round, c2_, "full_parity", loc);
    head.create(OpKind::mbarrier_wait, {full_, slot, parity}, {}, loc);
    Operation* bufs = head.create(OpKind::aref_slot, {ring_, slot}, types, loc);
    OpBuilder tail(body);
    tail.set_insertion_point_before(body->terminator());
    if (!m.synchronous) {
      for (Operation* mma : m.mmas) mma->set_attr("async", Attribute::unit());
      tail.create(OpKind::mma_commit, {}, {}, loc);
      tail.create(OpKind::mma_wait, {}, {}, loc)
          ->set_attr("pending", Attribute::integer(m.in_flight));
    }
    // A slot whose buffers the threads also read themselves (a W4A16 dequant's ld.shared) gets a
    // proxy fence before its release: the TMA that refills it writes through the async proxy,
    // the threads read through the generic one, and the barriers order only the threads
    // (lower_arefs.h says more).
    proxy_fence_ = threads_read_loads(m);
    if (m.in_flight == 0) {
      release(tail, slot, loc);
    } else {
      Value* has_prev = tail.compare("ge", iv, c_g, "has_prev", loc);
      Operation* guard = tail.create(OpKind::if_, {has_prev}, {}, loc);
      OpBuilder then(guard->add_region());
      guard->add_region();
      Value* prev = then.index_op(OpKind::sub, iv, c_g, "prev", loc);
      release(then, then.index_op(OpKind::rem, prev, c_slots_, "prev_slot", loc), loc);
    }
    Value* next = tail.index_op(OpKind::add, iv, c_ahead, "next", loc);
    guarded_load(tail, m, next, trip, loc);

    // The loads' results are the slot's buffers now; the loads and their address ops leave the
    // body (the prologue and the refill have their own copies).
    for (size_t i = 0; i < m.loads.size(); ++i) {
      Value* r = bufs->result(static_cast<int>(i));
      r->set_name(m.loads[i]->result()->name());
      ir::replace_all_uses(kernel_, m.loads[i]->result(), r);
    }
    for (Operation* load : m.loads) body->remove(load);
    remove_dead_address_ops(body, m);

    // After the loop: the last groups retire before anything reads the accumulators.
    OpBuilder after(top_);
    size_t at = ir::position_in_block(*loop) + 1;
    if (at < top_->ops().size()) after.set_insertion_point_before(top_->ops()[at].get());
    after.create(OpKind::mma_wait, {}, {}, loc)->set_attr("pending", Attribute::integer(0));
    loop->remove_attr("stages");
    loop->remove_attr("mma_in_flight");
  }

  // A TMA load at the top level, outside any loop (attention's Q tile): a ring of one slot used
  // once, so its full barrier's first phase (parity 0) is the load's landing.
  //   %once = aref {slots = 1} ; %once_full = mbarrier_init {arrivals = 1} ; block_sync
  //   %x = aref_slot %once, 0   (in place of the load's result)
  //   mbarrier_expect_tx %once_full, 0 {bytes} ; copy_async %tile, %x, %once_full, 0
  //   mbarrier_wait %once_full, 0, 0
  // The expect_tx and the load are one thread's (the emitter's contract outside a role); every
  // thread waits. Nothing releases the slot: nothing loads into it again.
  void lower_once(Operation* load) {
    const SourceLocation loc = load->loc();
    OpBuilder b(top_);
    b.set_insertion_point_before(load);
    const Type type = load->result()->type();
    Operation* aref = b.create(OpKind::aref, {}, {Type::aref({type})}, loc);
    aref->set_attr("slots", Attribute::integer(1));
    aref->result()->set_name(load->result()->name() + "_once");
    Operation* full = b.create(OpKind::mbarrier_init, {}, {Type::mbarrier(1)}, loc);
    full->set_attr("arrivals", Attribute::integer(1));
    full->result()->set_name(load->result()->name() + "_full");
    b.create(OpKind::block_sync, {}, {}, loc);
    Value* c0 = b.index_constant(0, loc);
    Operation* buf = b.create(OpKind::aref_slot, {aref->result(), c0}, {type}, loc);
    buf->result()->set_name(load->result()->name());
    b.create(OpKind::mbarrier_expect_tx, {full->result(), c0}, {}, loc)
        ->set_attr("bytes", Attribute::integer(type.static_bytes()));
    Operation* tma = b.create(OpKind::copy_async,
                              {load->operand(0), buf->result(), full->result(), c0}, {}, loc);
    for (const auto& [key, value] : load->attributes()) tma->set_attr(key, value);
    b.create(OpKind::mbarrier_wait, {full->result(), c0, c0}, {}, loc);
    ir::replace_all_uses(kernel_, load->result(), buf->result());
    top_->remove(load);
  }

  void release(OpBuilder& b, Value* slot, const SourceLocation& loc) {
    if (proxy_fence_) b.create(OpKind::fence_proxy_async, {}, {}, loc);
    b.create(OpKind::mbarrier_arrive, {empty_, slot}, {}, loc)
        ->set_attr("by", Attribute::ident("warp"));
  }

  // Whether an op other than a wgmma reads a load's shared tile (ir::thread_readers).
  static bool threads_read_loads(const Mainloop& m) {
    std::vector<const Value*> tiles;
    for (const Operation* load : m.loads) tiles.push_back(load->result());
    return !ir::thread_readers(tiles, *m.loop->region(0)).empty();
  }

  // if %n < %trip { LOAD(%n) } (the header's LOAD).
  void guarded_load(OpBuilder& b, const Mainloop& m, Value* n, Value* trip,
                    const SourceLocation& loc) {
    Value* more = b.compare("lt", n, trip, "in_range", loc);
    Operation* guard = b.create(OpKind::if_, {more}, {}, loc);
    OpBuilder in(guard->add_region());
    guard->add_region();
    Block* body = m.loop->region(0);
    Mapping map;
    map[body->argument(0)] = n;
    // The address ops, cloned in body order (defs before uses) from the body as it still is.
    for (const auto& op : body->ops())
      if (m.address.count(op.get())) in.insert(ir::clone(*op, map));
    Value* slot = in.index_op(OpKind::rem, n, c_slots_, "slot", loc);
    Value* round = in.index_op(OpKind::div, n, c_slots_, "round", loc);
    Value* phase = in.index_op(OpKind::rem, round, c2_, "phase", loc);
    Value* parity = in.index_op(OpKind::sub, c1_, phase, "empty_parity", loc);
    in.create(OpKind::mbarrier_wait, {empty_, slot, parity}, {}, loc)
        ->set_attr("by", Attribute::ident("one"));
    std::vector<Type> types;
    int64_t bytes = 0;
    for (const Operation* load : m.loads) {
      types.push_back(load->result()->type());
      bytes += load->result()->type().static_bytes();
    }
    Operation* bufs = in.create(OpKind::aref_slot, {ring_, slot}, types, loc);
    in.create(OpKind::mbarrier_expect_tx, {full_, slot}, {}, loc)
        ->set_attr("bytes", Attribute::integer(bytes));
    for (size_t i = 0; i < m.loads.size(); ++i) {
      const Operation* load = m.loads[i];
      bufs->result(static_cast<int>(i))->set_name(load->result()->name());
      Operation* tma = in.create(
          OpKind::copy_async,
          {map.at(load->operand(0)), bufs->result(static_cast<int>(i)), full_, slot}, {},
          load->loc());
      for (const auto& [key, value] : load->attributes()) tma->set_attr(key, value);
    }
  }

  // The loads' tiles and index ops left in the body with no use (the loads moved to the refill).
  void remove_dead_address_ops(Block* body, const Mainloop& m) {
    for (bool changed = true; changed;) {
      changed = false;
      for (size_t i = body->ops().size(); i-- > 0;) {
        Operation* op = body->ops()[i].get();
        if (!m.address.count(op)) continue;
        bool used = false;
        ir::walk(&kernel_, [&](Operation* user) {
          for (Value* v : user->operands()) used = used || v->def() == op;
        });
        if (!used) {
          body->remove(op);
          changed = true;
        }
      }
    }
  }

  Operation& kernel_;
  Block* top_;
  int64_t warps_ = 0;
  Value* ring_ = nullptr;
  Value* full_ = nullptr;
  Value* empty_ = nullptr;
  bool proxy_fence_ = false;  // the current mainloop's slots are read by threads too
  Value* c_slots_ = nullptr;
  Value* c2_ = nullptr;
  Value* c1_ = nullptr;
};

}  // namespace

void lower_mainloops(ir::Module& module) {
  for (const auto& kernel : module.kernels) Lowering(*kernel).run();
}

}  // namespace tessel::transforms
