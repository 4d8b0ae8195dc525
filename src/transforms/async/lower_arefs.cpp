#include "transforms/async/lower_arefs.h"

#include <algorithm>
#include <map>

#include "ir/async.h"
#include "ir/canonicalize.h"
#include "support/launch_bound.h"

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

const Type kIndex = Type::scalar(ScalarKind::index);
constexpr int64_t kProducerRegisters = 40;
constexpr int64_t kSplitProducerRegisters = 48;
constexpr int64_t kMaxRegisters = 256;  // setmaxnreg's range is 24..256, in multiples of 8

class Lowering {
 public:
  explicit Lowering(Operation& kernel) : kernel_(kernel), top_(kernel.region(0)) {}

  void run() {
    std::vector<Operation*> arefs, roles;
    for (const auto& op : top_->ops()) {
      if (op->kind() == OpKind::aref) arefs.push_back(op.get());
      if (op->kind() == OpKind::warp_group) roles.push_back(op.get());
    }
    if (arefs.empty()) return;
    first_role_ = roles.empty() ? nullptr : roles.front();
    bool lowered = false;
    for (Operation* aref : arefs) lowered = lower(aref) || lowered;
    if (!lowered) return;
    OpBuilder b(top_);
    if (first_role_) b.set_insertion_point_before(first_role_);
    b.create(OpKind::block_sync, {}, {}, arefs.front()->loc());
    split_registers(roles);
  }

 private:
  // An index constant at the top level, before the roles (so every role sees it): the kernel's
  // own if it has one (`%c1`, not a second `%c1_1`), else a new one.
  Value* constant(int64_t value) {
    auto it = constants_.find(value);
    if (it != constants_.end()) return it->second;
    for (const auto& op : top_->ops()) {
      if (op.get() == first_role_) break;
      if (op->kind() == OpKind::constant && op->result()->type() == kIndex &&
          op->attr("value")->kind == Attribute::Kind::integer && op->int_attr("value") == value)
        return constants_[value] = op->result();
    }
    OpBuilder b(top_);
    b.set_insertion_point_before(first_role_);
    return constants_[value] = b.index_constant(value, kernel_.loc());
  }

  // Lowers one aref; false when it has no level-1 ops to lower.
  bool lower(Operation* aref) {
    Value* ring = aref->result();
    const int64_t slots = aref->int_attr("slots");
    const std::string name = ring->name().empty() ? "ring" : ring->name();
    // The ops of this aref, by role. A slot is filled by TMA (a producer role of one issuing
    // thread) or by the threads of the role that acquires it (register copies: split-roles'
    // hand-over of partial accumulators, from one consumer role to another).
    std::vector<Operation*> uses;
    const Operation* producer = nullptr;
    std::vector<const Operation*> producers, consumers;
    const bool by_threads = filled_by_threads(ring);
    ir::walk(&kernel_, [&](Operation* op) {
      if (op->num_operands() == 0 || op->operand(0) != ring) return;
      if (op->kind() == OpKind::aref_slot) return;
      if (op->kind() != OpKind::aref_acquire && op->kind() != OpKind::aref_commit &&
          op->kind() != OpKind::aref_wait && op->kind() != OpKind::aref_release) {
        user_error(op->loc(), "lower-arefs: ", op->name(), " uses ", ir::value_ref(ring),
                   ", which only aref_acquire/commit/wait/release may use before lowering");
      }
      const Operation* role = ir::enclosing_role(*op);
      if (!role)
        user_error(op->loc(), "lower-arefs: ", op->name(), " of ", ir::value_ref(ring),
                   " stands outside every role");
      bool produces = op->kind() == OpKind::aref_acquire || op->kind() == OpKind::aref_commit;
      const char* want = produces ? "producer" : "consumer";
      if (role->str_attr("role") != want && !(produces && by_threads)) {
        user_error(op->loc(), "lower-arefs: ", op->name(), " of ", ir::value_ref(ring),
                   " stands in the ", role->str_attr("role"), " role at ", ir::op_where(*role),
                   "; only a ", want,
                   " role may use it (the register split and the barriers' arrival counts "
                   "follow the roles)");
      }
      if (produces && by_threads && role->has_attr("issue")) {
        user_error(op->loc(), "lower-arefs: ", op->name(), " of ", ir::value_ref(ring),
                   " stands in an `issue = one` role (", ir::op_where(*role),
                   ") but its slots are filled by register copies: every thread of the role "
                   "stores and arrives, and only one thread runs such a role");
      }
      if (produces && !by_threads && !role->has_attr("issue")) {
        user_error(op->loc(), "lower-arefs: ", op->name(), " of ", ir::value_ref(ring),
                   " stands in a producer role that is not `issue = one` (", ir::op_where(*role),
                   "): the TMA producer's expect_tx must be the full barrier's one arrival, made "
                   "by one elected thread");
      }
      if (produces) {
        // TMA producer roles may take turns (split-roles: role p acquires p, p + P, ...): each
        // sequence number's expect_tx is still the full barrier's one arrival. A slot filled by
        // threads counts the threads of its one producer role.
        if (producer && producer != role && by_threads) {
          user_error(op->loc(), "lower-arefs: ", ir::value_ref(ring),
                     " has more than one producer role (", ir::op_where(*producer), " and ",
                     ir::op_where(*role), ") filling its slots by register copies; one is "
                     "lowered");
        }
        if (std::find(producers.begin(), producers.end(), role) == producers.end())
          producers.push_back(role);
        producer = role;
      } else if (std::find(consumers.begin(), consumers.end(), role) == consumers.end()) {
        // Several consumer roles take turns (split-roles: role w waits for and releases
        // w, w + W, ...); each sequence number is released by one of them, so they must be
        // alike for one arrival count to fit every slot.
        if (!consumers.empty() && role->int_attr("threads") != consumers[0]->int_attr("threads")) {
          user_error(op->loc(), "lower-arefs: ", ir::value_ref(ring),
                     " has consumer roles of different sizes (", ir::op_where(*consumers[0]),
                     " and ", ir::op_where(*role),
                     "); roles that take turns on an aref must have as many threads");
        }
        consumers.push_back(role);
      }
      uses.push_back(op);
    });
    if (uses.empty()) return false;  // already lowered (only aref_slot uses it), or unused
    if (!producer || consumers.empty()) {
      user_error(aref->loc(), "lower-arefs: ", ir::value_ref(ring),
                 " needs a producer role (aref_acquire/commit) and a consumer role "
                 "(aref_wait/release)");
    }
    // Consumer roles that take whole tiles in turns (alternate-tiles) wait in the order of a
    // token they hand on, which gives the same guarantee whatever the slots.
    bool tile_turns = consumers.size() > 1;
    for (const Operation* role : consumers) tile_turns = tile_turns && role->has_attr("tile_turn");
    for (const auto* side : {&producers, &consumers}) {
      if (side == &consumers && tile_turns) continue;
      if (side->size() > 1 && slots % static_cast<int64_t>(side->size()) != 0) {
        // A parity wait cannot tell phase n from phase n - 2D: whoever waits for use n of a slot
        // must know use n - D completed, which it does when it waited for n - D itself — when
        // the uses of each slot belong to one role, i.e. the roles divide D (split_roles.h).
        user_error(aref->loc(), "lower-arefs: ", ir::value_ref(ring), " has ", slots,
                   " slot(s) and ", side->size(), side == &producers ? " producer" : " consumer",
                   " roles taking turns; its slots must be a multiple of the roles (each slot's "
                   "uses then belong to one role, which waited for the slot's previous use)");
      }
    }
    const Operation* consumer = consumers.front();
    const int64_t warpgroups = consumer->int_attr("threads") / 128;
    // Who releases a slot: one arrival per warpgroup when only wgmma reads the buffers (the
    // warpgroup's wait retires the whole group's reads), one per thread when the consumer's
    // threads read them themselves with nothing synchronizing the role in between.
    const auto readers = slot_readers(uses);
    const bool read_by_threads = unsynced_reader(readers);
    // A slot that TMA fills (the async proxy writes it) and the consumer's threads read with
    // ordinary loads (the generic proxy) needs a proxy fence between those reads and the release:
    // the mbarrier handshake orders the two threads but not the two proxies, so the producer's
    // next TMA load into the slot could land before the reads are done (PTX ISA, "Memory
    // consistency model: proxies"; fence.proxy.async). Without it W4A16's weight tiles, read
    // into registers for the dequant, were intermittently overwritten early: wrong values in
    // most launches with split-k and two blocks an SM (bench/results/2026-11-27-split-k-repeat-
    // h100.md); with this fence, in none of 1204 (2026-11-28-w4a16-proxy-fence-h100.md). wgmma
    // reads through the async proxy itself and needs none.
    // Each reading thread fences its own reads, so each then arrives itself (one arrival per
    // warpgroup after a role_sync would not order the other threads' fences before it).
    const bool proxy_fence = !by_threads && !readers.empty();
    const bool by_thread = read_by_threads || proxy_fence;
    OpBuilder b(top_);
    b.set_insertion_point_before(first_role_);
    Operation* full = b.create(OpKind::mbarrier_init, {}, {Type::mbarrier(slots)}, aref->loc());
    // A slot its producer's threads fill completes when each of them arrived after its stores
    // (an arrive releases the thread's earlier writes to the waiting threads).
    full->set_attr("arrivals",
                   Attribute::integer(by_threads ? producer->int_attr("threads") : 1));
    full->result()->set_name(name + "_full");
    Operation* empty = b.create(OpKind::mbarrier_init, {}, {Type::mbarrier(slots)}, aref->loc());
    empty->set_attr("arrivals",
                    Attribute::integer(by_thread ? consumer->int_attr("threads") : warpgroups));
    empty->result()->set_name(name + "_empty");
    Value* c_slots = constant(slots);
    Value* c2 = constant(2);
    Value* c1 = constant(1);
    for (Operation* op : uses) {
      OpBuilder at(op->parent_block());
      at.set_insertion_point_before(op);
      const SourceLocation loc = op->loc();
      Value* n = op->operand(1);
      if (op->kind() == OpKind::aref_commit && by_threads) {
        // Every producer thread arrives after its own stores into the slot.
        at.create(OpKind::mbarrier_arrive, {full->result(), at.index_op(OpKind::rem, n, c_slots,
                                                                        "slot", loc)},
                  {}, loc)
            ->set_attr("by", Attribute::ident("thread"));
        op->parent_block()->remove(op);
        continue;
      }
      if (op->kind() == OpKind::aref_commit) {
        // Nothing to emit: the commit's meaning — "the slot holds its data" — is the full
        // barrier's phase completing, which needs the producer's expect_tx arrival (made at the
        // acquire) and every byte of the TMA loads (counted down by the hardware as they land).
        // An explicit arrive here would be a second arrival on a barrier that expects one, and
        // would signal before the data landed. (fill_by_tma checked that the commit follows an
        // acquire whose buffers are all filled by TMA.)
        op->parent_block()->remove(op);
        continue;
      }
      Value* slot = at.index_op(OpKind::rem, n, c_slots, "slot", loc);
      switch (op->kind()) {
        case OpKind::aref_acquire: {
          Value* round = at.index_op(OpKind::div, n, c_slots, "round", loc);
          Value* phase = at.index_op(OpKind::rem, round, c2, "phase", loc);
          Value* parity = at.index_op(OpKind::sub, c1, phase, "empty_parity", loc);
          at.create(OpKind::mbarrier_wait, {empty->result(), slot, parity}, {}, loc);
          Operation* bufs = slot_of(at, op, ring, slot);
          if (!by_threads) fill_by_tma(op, bufs, at, full->result(), slot);
          break;
        }
        case OpKind::aref_wait: {
          Value* round = at.index_op(OpKind::div, n, c_slots, "round", loc);
          Value* parity = at.index_op(OpKind::rem, round, c2, "full_parity", loc);
          at.create(OpKind::mbarrier_wait, {full->result(), slot, parity}, {}, loc);
          slot_of(at, op, ring, slot);
          break;
        }
        case OpKind::aref_release:
          if (proxy_fence) at.create(OpKind::fence_proxy_async, {}, {}, loc);
          at.create(OpKind::mbarrier_arrive, {empty->result(), slot}, {}, loc)
              ->set_attr("by", Attribute::ident(by_thread ? "thread" : "warpgroup"));
          break;
        default:
          TESSEL_ASSERT(false, "lower-arefs: unexpected use of an aref");
      }
      op->parent_block()->remove(op);
    }
    return true;
  }

  // Whether the slots of `ring` are filled by the threads of the role that acquires them: some
  // buffer an aref_acquire returns is the destination of a copy from a register tensor. Such a
  // slot holds nothing a TMA load wrote: every buffer must be filled that way (checked here).
  bool filled_by_threads(Value* ring) {
    bool threads = false, tma = false;
    ir::walk(&kernel_, [&](Operation* op) {
      if (op->kind() != OpKind::aref_acquire || op->operand(0) != ring) return;
      for (const auto& buf : op->results()) {
        ir::walk(&kernel_, [&](Operation* use) {
          if (use->kind() != OpKind::copy || use->num_operands() != 2 ||
              use->operand(1) != buf.get())
            return;
          (use->operand(0)->type().space() == MemorySpace::reg ? threads : tma) = true;
        });
      }
    });
    if (threads && tma) {
      user_error(ir::aref_def(ring)->loc(), "lower-arefs: ", ir::value_ref(ring),
                 " has slots filled both by TMA and by register copies; a slot is filled one "
                 "way (its full barrier counts either the TMA bytes or the threads' arrivals)");
    }
    return threads;
  }

  // The consumer's own reads of slot buffers (ir::thread_readers: anything but an mma, directly
  // or through transposes), each with the aref_wait whose slot it reads.
  static std::vector<std::pair<const Operation*, const Operation*>> slot_readers(
      const std::vector<Operation*>& uses) {
    std::vector<std::pair<const Operation*, const Operation*>> readers;
    for (const Operation* wait : uses) {
      if (wait->kind() != OpKind::aref_wait) continue;
      std::vector<const Value*> buffers;
      for (const auto& r : wait->results()) buffers.push_back(r.get());
      for (const Operation* reader : ir::thread_readers(buffers, *wait->parent_block()))
        readers.emplace_back(reader, wait);
    }
    return readers;
  }

  // Whether one of the consumer's own reads of a slot buffer (slot_readers: a copy into
  // registers, a reduction over it — anything but an mma, whose reads the warpgroup's wgmma wait
  // retires) has no role_sync between it and the release in its block (warp-specialize's
  // epilogue operands synchronize the role before their release). A warpgroup's one arrival
  // would then free the slot while other warps of it may still read it (a row reduction over the
  // A tile a wgmma also reads): every thread arrives after its own reads instead.
  static bool unsynced_reader(
      const std::vector<std::pair<const Operation*, const Operation*>>& readers) {
    for (const auto& [reader, wait] : readers)
      if (!synced_after(*reader, wait->operand(0))) return true;
    return false;
  }

  // A role_sync after `op` in its block and before the block's next release of `ring` (the
  // role's threads have all read when the one arrival frees the slot). A role_sync that only
  // follows the release (split-roles' sum of the partials, read and released before the
  // epilogue's staging syncs) does not count.
  static bool synced_after(const Operation& op, const Value* ring) {
    bool after = false;
    for (const auto& o : op.parent_block()->ops()) {
      if (o.get() == &op) {
        after = true;
        continue;
      }
      if (!after) continue;
      if (o->kind() == OpKind::role_sync) return true;
      if (o->kind() == OpKind::aref_release && o->operand(0) == ring) return false;
    }
    return false;
  }

  // aref_slot %ring, %slot in place of an acquire or wait; their results take its results' place.
  Operation* slot_of(OpBuilder& at, Operation* op, Value* ring, Value* slot) {
    std::vector<Type> types;
    for (const auto& r : op->results()) types.push_back(r->type());
    Operation* bufs = at.create(OpKind::aref_slot, {ring, slot}, types, op->loc());
    for (int i = 0; i < op->num_results(); ++i) {
      bufs->result(i)->set_name(op->result(i)->name());
      ir::replace_all_uses(kernel_, op->result(i), bufs->result(i));
    }
    return bufs;
  }

  // The copies that fill an acquired slot — those between the aref_acquire and the aref_commit
  // of the same sequence number, in the same block — become TMA loads completing on full[slot],
  // after one expect_tx of all their bytes. Anything else is refused: a slot buffer with no copy
  // or with a copy that is not TMA (a producer of generic stores would need a fence and an arrive
  // per thread instead of the transaction bytes, not lowered yet), a second copy into one buffer
  // (its bytes would be expected twice), an acquire without its commit.
  void fill_by_tma(Operation* acquire, Operation* bufs, OpBuilder& at, Value* full, Value* slot) {
    Block* block = acquire->parent_block();
    Value* ring = acquire->operand(0);
    const int n_bufs = bufs->num_results();
    std::vector<Operation*> copies(n_bufs, nullptr);
    Operation* commit = nullptr;
    bool after = false;
    for (const auto& op : block->ops()) {
      if (op.get() == acquire) {
        after = true;
        continue;
      }
      if (!after) continue;
      if (op->kind() == OpKind::aref_commit && op->operand(0) == ring) {
        if (op->operand(1) != acquire->operand(1)) {
          user_error(op->loc(), "lower-arefs: aref_commit of ", ir::value_ref(ring), " commits ",
                     ir::value_ref(op->operand(1)), " but the slot acquired before it (",
                     ir::op_where(*acquire), ") is ", ir::value_ref(acquire->operand(1)));
        }
        commit = op.get();
        break;
      }
      if (op->kind() != OpKind::copy || op->num_operands() != 2) continue;
      for (int i = 0; i < n_bufs; ++i) {
        if (op->operand(1) != bufs->result(i)) continue;
        std::string atom = op->has_attr("atom") ? op->str_attr("atom") : "";
        if (atom.rfind("tma.load", 0) != 0) {
          user_error(op->loc(), "lower-arefs: copy into ", ir::value_ref(bufs->result(i)),
                     " (buffer ", i, " of the slot of ", ir::value_ref(ring), " acquired at ",
                     ir::op_where(*acquire), ") is not a TMA load (",
                     atom.empty() ? std::string("no atom") : "atom \"" + atom + "\"",
                     "): a producer that is not TMA is not lowered yet");
        }
        if (copies[i]) {
          user_error(op->loc(), "lower-arefs: ", ir::value_ref(bufs->result(i)), " (buffer ", i,
                     " of the slot of ", ir::value_ref(ring),
                     ") is filled twice before its commit (first at ", ir::op_where(*copies[i]),
                     "); one TMA copy per buffer is lowered");
        }
        copies[i] = op.get();
      }
    }
    if (!commit) {
      user_error(acquire->loc(), "lower-arefs: aref_acquire of ", ir::value_ref(ring),
                 " has no aref_commit of ", ir::value_ref(acquire->operand(1)),
                 " after it in the same block");
    }
    int64_t bytes = 0;
    for (int i = 0; i < n_bufs; ++i) {
      if (!copies[i]) {
        user_error(commit->loc(), "lower-arefs: aref_commit of ", ir::value_ref(ring),
                   " commits a slot whose buffer ", i, " (", ir::value_ref(bufs->result(i)),
                   ") was not filled by a TMA copy since ", ir::op_where(*acquire),
                   " (a producer that is not TMA is not lowered yet)");
      }
      bytes += bufs->result(i)->type().static_bytes();
    }
    at.create(OpKind::mbarrier_expect_tx, {full, slot}, {}, acquire->loc())
        ->set_attr("bytes", Attribute::integer(bytes));
    for (Operation* copy : copies) {
      OpBuilder here(block);
      here.set_insertion_point_before(copy);
      Operation* tma = here.create(
          OpKind::copy_async, {copy->operand(0), copy->operand(1), full, slot}, {}, copy->loc());
      for (const auto& [key, value] : copy->attributes()) tma->set_attr(key, value);
      block->remove(copy);
    }
  }

  void split_registers(const std::vector<Operation*>& roles) {
    int64_t threads = 0, producer_threads = 0, consumer_threads = 0;
    for (Operation* role : roles) {
      threads += role->int_attr("threads");
      (role->str_attr("role") == "producer" ? producer_threads : consumer_threads) +=
          role->int_attr("threads");
    }
    if (producer_threads == 0 || consumer_threads == 0) return;
    for (Operation* role : roles) {
      const auto& ops = role->region(0)->ops();
      if (!ops.empty() && ops.front()->kind() == OpKind::setmaxnreg) return;  // split already
    }
    // At launch every thread holds the registers ptxas gives it under __launch_bounds__(threads,
    // B), B = the grid's `blocks_per_sm` (1 unless pinned): at most 65536 / (B * threads), at
    // most 255, allocated in steps of 8. setmaxnreg only moves registers within the block's pool
    // (an inc that the pool cannot serve waits forever), so the roles must fit in entry *
    // threads, which can be less than 65536 / B (640 threads: 96 * 640).
    int64_t blocks_per_sm = 1;
    for (const auto& op : top_->ops()) {
      if (op->kind() == OpKind::block_grid && op->has_attr("blocks_per_sm"))
        blocks_per_sm = op->int_attr("blocks_per_sm");
    }
    const int64_t entry = launch_bound_registers(threads, blocks_per_sm);
    const int64_t pool = entry * threads;
    // Producer roles that take turns (split-roles) carry their stride arithmetic beside the
    // loads' coordinates: the W4A16 tile's two producers spilled 28 bytes at 40 (ptxas -v), none
    // at 48. So do producers that load an indirect tile by TMA (a row box per row, their rows
    // read from the map eight at a time): the MoE gather's _b2 / _b4 variants spilled 20-28.
    bool loads_rows = false;
    for (Operation* role : roles) {
      if (role->str_attr("role") != "producer") continue;
      ir::walk(role, [&](Operation* o) {
        const Operation* tile = o->kind() == OpKind::copy_async && o->num_operands() > 0
                                    ? o->operand(0)->def()
                                    : nullptr;
        if (tile && tile->kind() == OpKind::tile && ir::tile_indirect_dim(*tile) >= 0)
          loads_rows = true;
      });
    }
    const int64_t producer_registers =
        producer_threads > 128 || loads_rows ? kSplitProducerRegisters : kProducerRegisters;
    int64_t consumer = (pool - producer_registers * producer_threads) / consumer_threads / 8 * 8;
    consumer = std::min<int64_t>(consumer, kMaxRegisters);
    if (consumer < entry + 8) return;  // nothing to gain over the compiler's own budget
    for (Operation* role : roles) {
      bool producer = role->str_attr("role") == "producer";
      OpBuilder b(role->region(0));
      if (!role->region(0)->ops().empty())
        b.set_insertion_point_before(role->region(0)->ops().front().get());
      Operation* op = b.create(OpKind::setmaxnreg, {}, {}, role->loc());
      op->set_attr("count", Attribute::integer(producer ? producer_registers : consumer));
      op->set_attr("mode", Attribute::ident(producer ? "dec" : "inc"));
    }
  }

  Operation& kernel_;
  Block* top_;
  Operation* first_role_ = nullptr;
  std::map<int64_t, Value*> constants_;
};

}  // namespace

void lower_arefs(ir::Module& module) {
  for (const auto& kernel : module.kernels) Lowering(*kernel).run();
}

}  // namespace tessel::transforms
