#include "transforms/async/split_roles.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <unordered_map>

#include "ir/async.h"
#include "ir/canonicalize.h"
#include "layout/layout.h"
#include "layout/parse.h"
#include "layout/table.h"
#include "transforms/async/stage_budget.h"
#include "transforms/layout/layout_utils.h"

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

constexpr int64_t kMaxThreads = 1024;

// The widest st.shared / ld.shared (in f32 elements: 4, 2 or 1) that moves each thread's values
// of a register tensor of `threads` threads between registers and a row-major R x C buffer:
// each thread's values come in aligned runs of w consecutive columns.
int64_t vector_width(const Type& reg, int64_t threads) {
  const std::vector<int64_t> table = layout::layout_table(layout::parse_layout(reg.layout()));
  const int64_t values = static_cast<int64_t>(table.size()) / threads;
  for (int64_t w : {4, 2}) {
    if (values % w == 0 &&
        vector_along(table, threads, values, reg.static_shape()[0], w, reg.rank() == 2 ? 1 : 0))
      return w;
  }
  return 1;
}

class Splitter {
 public:
  Splitter(Operation& kernel, Operation& grid)
      : kernel_(kernel), top_(*kernel.region(0)), grid_(grid), loc_(grid.loc()) {}

  void run() {
    const int64_t consumers = pin("consumer_split_k");
    const int64_t producers = pin("producer_split_k");
    if (const Attribute* p = grid_.attr("persistent");
        p && !(p->kind == Attribute::Kind::integer && p->i == 0)) {
      user_error(loc_,
                 "split-roles: a K loop split among roles needs a grid of one block per "
                 "tile; `persistent = ",
                 p->str(),
                 "` is pinned on the same grid (the K "
                 "tiles of consecutive tiles would reach the roles in another order)");
    }
    if (grid_.has_attr("cluster")) {
      user_error(loc_, "split-roles: a K loop split among roles and a cluster (`cluster = ",
                 grid_.attr("cluster")->str(), "`) on one grid are not supported together");
    }
    Operation* consumer = the_role("consumer");
    Operation* producer = producers > 1 ? the_role("producer") : nullptr;
    int64_t end_thread = 0;
    for (const auto& op : top_.ops()) {
      if (op->kind() == OpKind::warp_group)
        end_thread = std::max(end_thread, op->int_attr("first_thread") + op->int_attr("threads"));
    }
    int64_t total = grid_.int_attr("threads") + (consumers - 1) * consumer->int_attr("threads");
    if (producer) total += (producers - 1) * producer->int_attr("threads");
    if (total > kMaxThreads) {
      user_error(loc_, "split-roles: `consumer_split_k = ", consumers,
                 "` and `producer_split_k = ", producers, "` make a block of ", total,
                 " threads, over the limit of ", kMaxThreads);
    }
    const size_t consumer_loop_at = find_k_loop(*consumer, OpKind::aref_wait);
    Operation* loop = consumer->region(0)->ops()[consumer_loop_at].get();
    if (consumers > 1) check_carried(*loop);
    deepen_rings(*loop, std::lcm(consumers, producers), consumers);

    if (consumers > 1) {
      // Roles 1..W-1: copies of the consumer, each ending with its hand-over.
      std::vector<Value*> handovers;
      Operation* previous = consumer;
      for (int64_t w = 1; w < consumers; ++w) {
        Operation* copy = copy_role(*consumer, previous, consumer_loop_at, end_thread);
        previous = copy;
        Operation* copy_loop = copy->region(0)->ops()[consumer_loop_at].get();
        stride_role(*copy, *copy_loop, w, consumers);
        handovers.push_back(hand_over(*copy, *copy_loop, w));
      }
      stride_role(*consumer, *loop, 0, consumers);
      sum_partials(*consumer, *loop, handovers);
    }
    if (producer) {
      // Producers 1..P-1 issue the loads of their turns only: nothing else the producer does
      // (a per-tile epilogue operand) may stand outside its K loop.
      const size_t producer_loop_at = find_k_loop(*producer, OpKind::aref_acquire);
      Operation* producer_loop = producer->region(0)->ops()[producer_loop_at].get();
      for (size_t i = producer_loop_at + 1; i < producer->region(0)->ops().size(); ++i) {
        ir::walk(producer->region(0)->ops()[i].get(), [&](Operation* o) {
          if (ir::is_aref_use(o->kind())) {
            user_error(o->loc(), "split-roles: ", o->name(), " of ", ir::value_ref(o->operand(0)),
                       " stands after the producer's K loop; a producer split among roles "
                       "(`producer_split_k`) loads in its K loop only");
          }
        });
      }
      Operation* previous = producer;
      for (int64_t p = 1; p < producers; ++p) {
        Operation* copy = copy_role(*producer, previous, producer_loop_at, end_thread);
        previous = copy;
        stride_role(*copy, *copy->region(0)->ops()[producer_loop_at], p, producers);
      }
      stride_role(*producer, *producer_loop, 0, producers);
    }

    check_shared_memory();
    grid_.set_attr("threads", Attribute::integer(total));
    grid_.set_attr("persistent", Attribute::integer(0));
    grid_.remove_attr("consumer_split_k");
    grid_.remove_attr("producer_split_k");
  }

 private:
  // The rings (at their new depths), the hand-over buffers and the kernel's other shared tensors
  // must fit the block's shared memory (stage_budget.h's rules), which the split-k GEMM tile
  // of 128 x 256 f32 partials does not: an error here, not a failed launch.
  void check_shared_memory() {
    const int64_t bytes = block_shared_bytes(kernel_), limit = block_shared_limit(kernel_);
    int64_t partials = 0;
    for (const Operation* handover : handovers_) partials += aref_slot_bytes(*handover);
    if (bytes > limit) {
      user_error(loc_, "split-roles: the block needs ", bytes, " bytes of shared memory (",
                 partials,
                 " of them for the partial accumulators handed to the first consumer role), over "
                 "the ",
                 limit, " a block has; split a smaller tile, or pin fewer stages");
    }
  }

  // The grid's pin `key`: 1 when absent.
  int64_t pin(const char* key) {
    const Attribute* a = grid_.attr(key);
    if (!a) return 1;
    if (a->kind != Attribute::Kind::integer || a->i < 1) {
      user_error(loc_, "split-roles: `", key, " = ", a->str(), "` is a number of roles, 1 or more");
    }
    return a->i;
  }

  // The kernel's one role of `kind` (producer or consumer).
  Operation* the_role(const std::string& kind) {
    std::vector<Operation*> roles;
    for (const auto& op : top_.ops()) {
      if (op->kind() == OpKind::warp_group && op->str_attr("role") == kind)
        roles.push_back(op.get());
    }
    if (roles.size() != 1) {
      user_error(loc_, "split-roles: the K loop of one ", kind,
                 " role is split among copies of it; the kernel has ", roles.size(), " ", kind,
                 " roles",
                 roles.empty() ? " (it is not warp-specialized: sm_90a, a TMA + wgmma loop)" : "");
    }
    return roles.front();
  }

  // A copy of `role` after `previous`, on the next free threads, with what follows its K loop
  // reduced to the loop's drain: the mma_waits and the split rings' releases after the loop (the
  // last numbers a pipelined consumer releases once their wgmma groups retire) and what they
  // use. The rest (the epilogue) is the original's alone.
  Operation* copy_role(const Operation& role, Operation* previous, size_t loop_at,
                       int64_t& end_thread) {
    std::unordered_map<const Value*, Value*> mapping;
    Operation* copy = top_.insert(ir::position_in_block(*previous) + 1, ir::clone(role, mapping));
    copy->set_attr("first_thread", Attribute::integer(end_thread));
    end_thread += role.int_attr("threads");
    Block& body = *copy->region(0);
    std::set<const Operation*> kept;
    for (size_t i = body.ops().size(); i-- > loop_at + 1;) {
      Operation* op = body.ops()[i].get();
      bool keep = false;
      ir::walk(op, [&](Operation* o) {
        keep = keep || o->kind() == OpKind::mma_wait ||
               (ir::is_aref_use(o->kind()) && rings_.count(o->operand(0)));
      });
      for (const Operation* user : kept) {
        ir::walk(const_cast<Operation*>(user), [&](Operation* o) {
          for (const Value* v : o->operands()) keep = keep || v->def() == op;
        });
      }
      if (keep) {
        kept.insert(op);
      } else {
        body.remove(op);
      }
    }
    return copy;
  }

  // The position in the role's region of its K loop: `for %k = 0 to %n step 1` standing directly
  // in the role, with an aref_wait directly in its body. Aref ops before it are refused (roles
  // 1..W-1 keep what precedes the loop, and would wait on a ring as a second consumer).
  size_t find_k_loop(const Operation& role, OpKind sequenced) {
    const Block& body = *role.region(0);
    for (size_t i = 0; i < body.ops().size(); ++i) {
      Operation* op = body.ops()[i].get();
      bool waits = false;
      if (op->kind() == OpKind::for_) {
        for (const auto& inner : op->region(0)->ops()) waits = waits || inner->kind() == sequenced;
      }
      if (!waits) {
        ir::walk(op, [&](Operation* o) {
          if (ir::is_aref_use(o->kind())) {
            user_error(o->loc(), "split-roles: ", o->name(), " of ", ir::value_ref(o->operand(0)),
                       " stands before the ", role.str_attr("role"),
                       "'s K loop; only its K loop and what follows it may use arefs when the "
                       "loop is split among roles");
          }
        });
        continue;
      }
      if (ir::int_constant(op->operand(0)) != 0 || ir::int_constant(op->operand(2)) != 1) {
        user_error(op->loc(), "split-roles: the ", role.str_attr("role"),
                   "'s K loop must run `for %k = 0 to %n step 1`, not from ",
                   ir::value_ref(op->operand(0)), " in steps of ", ir::value_ref(op->operand(2)));
      }
      return i;
    }
    user_error(role.loc(), "split-roles: the ", role.str_attr("role"),
               " role has no K loop (a `for` whose body ",
               sequenced == OpKind::aref_wait ? "waits on" : "acquires", " an aref) to split");
  }

  // Whether `v` is `carried` plus what the iteration adds: a chain of at least one step back to
  // it through mma accumulators, fma addends and add operands (`mma %a, %b, %c`, `fma %x, %y,
  // %c`, `add %c, %x`: the K tile's products, scaled or not, added to the running sum), whose
  // other operands (the factors, the other addend) do not depend on `carried` — `fma %c, %s, %c`
  // or `c + c` is no sum of parts. (A yield of `carried` itself would count its start once per
  // role.)
  static bool adds_to(const Value* v, const Value* carried, const Operation& loop) {
    bool stepped = false;
    while (v != carried) {
      const Operation* def = v->def();
      if (!def || def->parent_block() != loop.region(0)) return false;
      int sum = -1;  // the operand that carries the sum
      if (def->kind() == OpKind::mma || def->kind() == OpKind::fma) {
        sum = 2;
      } else if (def->kind() == OpKind::add) {
        sum = ir::depends_on(def->operand(0), carried) ? 0 : 1;
      } else {
        return false;
      }
      for (int i = 0; i < def->num_operands(); ++i)
        if (i != sum && ir::depends_on(def->operand(i), carried)) return false;
      v = def->operand(sum);
      stepped = true;
    }
    return stepped;
  }

  // Every value the loop carries is an f32 register tensor that each iteration adds to
  // (adds_to), so the sum over K tiles is the sum of every role's part. Anything else (a running
  // max, a counter, a product) would not be.
  static void check_carried(const Operation& loop) {
    const Operation* yield = loop.region(0)->terminator();
    for (int i = 0; i < loop.num_results(); ++i) {
      const Type& t = loop.result(i)->type();
      if (!t.is_tensor() || t.space() != MemorySpace::reg || t.element() != ScalarKind::f32 ||
          !yield || !t.has_layout() || t.rank() > 2 ||
          !adds_to(yield->operand(i), loop.region(0)->argument(1 + i), loop)) {
        user_error(loop.loc(), "split-roles: the K loop carries ", ir::value_ref(loop.result(i)),
                   " (", t.str(),
                   "), which is not an f32 sum that each iteration adds to (an mma's accumulator, "
                   "an fma's addend or an add's operand, back to the carried value); only such "
                   "sums are summed across consumer roles");
      }
    }
  }

  // Each ring the loop waits on gets a depth that is a multiple of the roles (see the header),
  // and must hold what W consumers keep at once: each keeps the slots of its F wgmma groups in
  // flight (mma_wait {pending = F}) and waits for one more.
  void deepen_rings(const Operation& loop, int64_t parts, int64_t consumers) {
    int64_t in_flight = 0;
    for (const auto& op : loop.region(0)->ops()) {
      if (op->kind() == OpKind::mma_wait) in_flight = std::max(in_flight, op->int_attr("pending"));
    }
    for (const auto& op : loop.region(0)->ops()) {
      if (op->kind() != OpKind::aref_wait) continue;
      Operation* aref = const_cast<Operation*>(ir::aref_def(op->operand(0)));
      if (!aref) continue;
      rings_.insert(op->operand(0));
      const int64_t slots = std::max(parts, aref->int_attr("slots") / parts * parts);
      if (slots < consumers * (in_flight + 1)) {
        user_error(aref->loc(), "split-roles: ", ir::value_ref(op->operand(0)), " has ", slots,
                   " slot(s) (a multiple of the roles), but its ", consumers,
                   " consumer roles keep ", in_flight,
                   " wgmma group(s) in flight each and wait for one more slot: it needs ",
                   consumers * (in_flight + 1),
                   " (pin more `stages` or fewer `mma_in_flight` on the K loop)");
      }
      aref->set_attr("slots", Attribute::integer(slots));
    }
  }

  // Role w of W takes the K loop's iterations w, w + W, ...: its loop counts its own iterations,
  //   for %j = 0 to %trips step 1      %trips = (%n + W - 1 - w) / W
  // and what the iterations mean is mapped back:
  //   - every sequence number x of a split ring in the role (iteration arithmetic: %j, %j - F for
  //     a release F groups later, %n - i for the drain after the loop) becomes x W + w;
  //   - the loop's other uses of its index (tile coordinates) read %k = %j W + w;
  //   - uses of %n that only count iterations (the drain's `%n - i` and its guards) read %trips;
  //     its other uses (a tile-by-tile weight layout's row, bn * n + k) keep %n.
  void stride_role(Operation& role, Operation& loop, int64_t w, int64_t parts) {
    OpBuilder before(loop.parent_block());
    before.set_insertion_point_before(&loop);
    const SourceLocation loc = loop.loc();
    Value* c_parts = before.index_constant(parts, loc);
    Value* c_first = before.index_constant(w, loc);
    Value* c_round = before.index_constant(parts - 1 - w, loc);
    Value* n = loop.operand(1);
    Value* padded = before.index_op(OpKind::add, n, c_round, "k_padded", loc);
    Value* trips = before.index_op(OpKind::div, padded, c_parts, "k_trips", loc);
    loop.set_operand(1, trips);
    std::set<const Operation*> scaling;
    // Sequence numbers of the split rings, scaled to the role's turn.
    std::vector<Operation*> sequenced;
    ir::walk(&role, [&](Operation* op) {
      if (ir::is_aref_use(op->kind()) && rings_.count(op->operand(0))) sequenced.push_back(op);
    });
    // One scaled number per number and block: an acquire and its commit keep sharing theirs.
    std::map<std::pair<const Value*, const Block*>, Value*> made;
    for (Operation* op : sequenced) {
      Value*& turn = made[{op->operand(1), op->parent_block()}];
      if (!turn) {
        OpBuilder at(op->parent_block());
        at.set_insertion_point_before(op);
        Value* scaled = at.index_op(OpKind::mul, op->operand(1), c_parts, "turn_seq", loc);
        scaling.insert(scaled->def());
        turn = at.index_op(OpKind::add, scaled, c_first, "seq_turn", loc);
      }
      op->set_operand(1, turn);
    }
    Block& body = *loop.region(0);
    Value* j = body.argument(0);
    const std::string k_name = j->name();
    j->set_name("k_turn");
    OpBuilder in(&body);
    in.set_insertion_point_before(body.ops().front().get());
    Value* k_scaled = in.index_op(OpKind::mul, j, c_parts, "k_scaled", loc);
    Value* k = in.index_op(OpKind::add, k_scaled, c_first, k_name, loc);
    scaling.insert(k_scaled->def());
    ir::walk(&role, [&](Operation* op) {
      if (op == &loop || scaling.count(op)) return;
      const bool counts = counts_iterations(role, op, scaling);
      for (int i = 0; i < op->num_operands(); ++i) {
        if (op->operand(i) == j && !counts) op->set_operand(i, k);
        if (op->operand(i) == n && counts) op->set_operand(i, trips);
      }
    });
  }

  // Whether `op` is index arithmetic whose results only count iterations: they flow, through
  // more index arithmetic and comparisons, into the split rings' sequence numbers (the scaling
  // ops) and into the conditions of `if`s (the guards of a release), and nowhere else.
  static bool counts_iterations(const Operation& role, const Operation* op,
                                const std::set<const Operation*>& scaling) {
    if (!ir::is_index_arithmetic(op->kind())) return false;
    bool only = true, used = false;
    ir::walk(const_cast<Operation*>(&role), [&](Operation* user) {
      for (int i = 0; i < user->num_operands(); ++i) {
        if (user->operand(i)->def() != op) continue;
        used = true;
        if (scaling.count(user)) continue;
        if (user->kind() == OpKind::if_ && i == 0) continue;
        only = only && counts_iterations(role, user, scaling);
      }
    });
    return used && only;
  }

  // Role w's accumulators into an aref of its own, filled by the role's threads.
  Value* hand_over(Operation& role, Operation& loop, int64_t w) {
    std::vector<Type> buffers;
    for (const auto& r : loop.results()) {
      const Type& t = r->type();
      const int64_t rows = t.static_shape()[0];
      const int64_t cols = t.rank() == 2 ? t.static_shape()[1] : 1;
      const std::string layout = t.rank() == 2
                                     ? "(" + std::to_string(rows) + "," + std::to_string(cols) +
                                           "):(" + std::to_string(cols) + ",1)"
                                     : std::to_string(rows) + ":1";
      buffers.push_back(Type::tensor(ScalarKind::f32, t.shape(), MemorySpace::shared, layout));
    }
    OpBuilder top(&top_);
    top.set_insertion_point_before(first_role());
    Operation* aref = top.create(OpKind::aref, {}, {Type::aref(buffers)}, loop.loc());
    aref->set_attr("slots", Attribute::integer(1));
    aref->result()->set_name("partial" + std::to_string(w));
    handovers_.insert(aref);
    Value* ring = aref->result();

    OpBuilder at(role.region(0));
    Value* c0 = at.index_constant(0, loop.loc());
    Operation* acquire = at.create(OpKind::aref_acquire, {ring, c0}, buffers, loop.loc());
    for (int i = 0; i < loop.num_results(); ++i) {
      acquire->result(i)->set_name("partial_out" + std::to_string(w));
      const int64_t width = vector_width(loop.result(i)->type(), role.int_attr("threads"));
      at.create(OpKind::copy, {loop.result(i), acquire->result(i)}, {}, loop.loc())
          ->set_attr("atom", Attribute::string("st.shared.b" + std::to_string(32 * width)));
    }
    at.create(OpKind::aref_commit, {ring, c0}, {}, loop.loc());
    return ring;
  }

  // Role 0 adds the partials of roles 1..W-1, in order, right after its loop.
  void sum_partials(Operation& role, Operation& loop, const std::vector<Value*>& partials) {
    Block& body = *role.region(0);
    // The users of the loop's results (its epilogue) read the sums instead.
    std::vector<Operation*> users;
    for (const auto& op : body.ops()) {
      ir::walk(op.get(), [&](Operation* o) {
        for (int i = 0; i < loop.num_results(); ++i) {
          if (std::find(o->operands().begin(), o->operands().end(), loop.result(i)) !=
              o->operands().end()) {
            users.push_back(o);
            break;
          }
        }
      });
    }
    // Right before the first op that reads a result (after the loop's drain, whose mma_wait
    // completes the accumulators).
    OpBuilder at(&body);
    for (size_t i = ir::position_in_block(loop) + 1; i < body.ops().size(); ++i) {
      bool reads = false;
      ir::walk(body.ops()[i].get(), [&](Operation* o) {
        for (const Value* v : o->operands()) reads = reads || v->def() == &loop;
      });
      if (reads) {
        at.set_insertion_point_before(body.ops()[i].get());
        break;
      }
    }
    const SourceLocation loc = loop.loc();
    Value* c0 = at.index_constant(0, loc);
    std::vector<Value*> sums;
    for (const auto& r : loop.results()) sums.push_back(r.get());
    for (size_t p = 0; p < partials.size(); ++p) {
      const Type& aref_type = partials[p]->type();
      Operation* wait = at.create(OpKind::aref_wait, {partials[p], c0}, aref_type.buffers(), loc);
      for (int i = 0; i < loop.num_results(); ++i) {
        const Type& t = loop.result(i)->type();
        wait->result(i)->set_name("partial_in" + std::to_string(p + 1));
        const int64_t width = vector_width(t, role.int_attr("threads"));
        Operation* load = at.create(OpKind::copy, {wait->result(i)}, {t}, loc);
        load->set_attr("atom", Attribute::string("ld.shared.b" + std::to_string(32 * width)));
        load->result()->set_name("partial" + std::to_string(p + 1));
        Operation* add = at.create(OpKind::add, {sums[i], load->result()}, {t}, loc);
        add->result()->set_name("acc_sum");
        sums[i] = add->result();
      }
      at.create(OpKind::aref_release, {partials[p], c0}, {}, loc);
    }
    for (Operation* user : users) {
      for (int o = 0; o < user->num_operands(); ++o) {
        for (int i = 0; i < loop.num_results(); ++i) {
          if (user->operand(o) == loop.result(i)) user->set_operand(o, sums[i]);
        }
      }
    }
  }

  Operation* first_role() const {
    for (const auto& op : top_.ops()) {
      if (op->kind() == OpKind::warp_group) return op.get();
    }
    TESSEL_ASSERT(false, "split-roles: no role");
  }

  Operation& kernel_;
  Block& top_;
  std::set<const Value*> rings_;          // the arefs the K loop waits on: their uses are split
  std::set<const Operation*> handovers_;  // the arefs made for the partial accumulators
  Operation& grid_;
  SourceLocation loc_;
};

}  // namespace

void split_roles(ir::Module& module) {
  for (auto& kernel : module.kernels) {
    Operation* grid = nullptr;
    for (const auto& op : kernel->region(0)->ops()) {
      if (op->kind() == OpKind::block_grid) grid = op.get();
    }
    if (grid && (grid->has_attr("consumer_split_k") || grid->has_attr("producer_split_k")))
      Splitter(*kernel, *grid).run();
  }
}

}  // namespace tessel::transforms
