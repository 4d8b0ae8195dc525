// RotateTiles: tile t+1's first key tile beside tile t's last P·V (the rules are in the header).
#include "transforms/async/rotate_tiles.h"

#include <algorithm>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/async.h"
#include "ir/canonicalize.h"
#include "support/diagnostics.h"
#include "transforms/async/atom_queries.h"
#include "transforms/pins.h"
#include "transforms/report.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;
using Mapping = std::unordered_map<const Value*, Value*>;

Value* mapped(const Mapping& map, Value* v) {
  auto it = map.find(v);
  return it == map.end() ? v : it->second;
}

// The pieces of one tile loop (the header's prefix, head, steady loop, tail, suffix).
struct Plan {
  Operation* loop = nullptr;
  Operation* branch = nullptr;
  Operation* cond_def = nullptr;     // defines the branch's condition from values outside
  std::vector<Operation*> prefix;    // tile body ops before the branch
  std::vector<Operation*> head;      // then-block ops before the steady loop
  Operation* first_mma = nullptr;    // in head: S of the first key tile (synchronous)
  Operation* steady = nullptr;       // the then-block's key loop
  std::vector<Operation*> tail;      // then-block ops after the steady loop, before the yield
  Operation* tail_mma = nullptr;     // in tail: the last P·V ({async})
  Operation* tail_commit = nullptr;  // its mma_commit
  Operation* tail_wait = nullptr;    // its mma_wait {pending = 0}
  std::vector<Operation*> suffix;    // tile body ops after the branch, before the yield
};

// Why `loop` does not have the form, or the plan.
std::optional<Plan> match(Operation* loop, std::string& why) {
  Plan p;
  p.loop = loop;
  Block* body = loop->region(0);
  if (loop->num_operands() != 5 || body->arguments().size() != 3) {
    why = "its tile loop does not carry exactly the tile and key sequence numbers";
    return std::nullopt;
  }
  const Operation* yield = body->terminator();
  for (const auto& op : body->ops()) {
    if (op.get() == yield) continue;
    if (op->kind() == OpKind::if_ && op->num_results() > 0 && !p.branch) {
      p.branch = op.get();
      continue;
    }
    (p.branch ? p.suffix : p.prefix).push_back(op.get());
  }
  if (!p.branch || p.branch->regions().size() != 2) {
    why = "its tile loop has no branch on key tiles with results";
    return std::nullopt;
  }
  const Value* cond = p.branch->operand(0);
  p.cond_def = const_cast<Operation*>(cond->def());
  if (!p.cond_def || p.cond_def->parent_block() != body || !p.cond_def->regions().empty()) {
    why = "the branch's condition is not computed in the tile loop's body";
    return std::nullopt;
  }
  for (const Value* v : p.cond_def->operands()) {
    if (ir::defined_inside(v, *loop)) {
      why = "the branch's condition depends on the tile";
      return std::nullopt;
    }
  }
  Block* then_block = p.branch->region(0);
  const Operation* then_yield = then_block->terminator();
  for (const auto& op : then_block->ops()) {
    if (op.get() == then_yield) continue;
    if (op->kind() == OpKind::for_ && !p.steady) {
      p.steady = op.get();
      continue;
    }
    (p.steady ? p.tail : p.head).push_back(op.get());
  }
  if (!p.steady) {
    why = "the branch has no key loop";
    return std::nullopt;
  }
  for (Operation* op : p.head) {
    if (op->kind() == OpKind::mma && !p.first_mma) p.first_mma = op;
  }
  for (Operation* op : p.tail) {
    if (op->kind() == OpKind::mma) p.tail_mma = op;
    if (p.tail_mma && !p.tail_commit && op->kind() == OpKind::mma_commit) p.tail_commit = op;
    if (p.tail_commit && !p.tail_wait && op->kind() == OpKind::mma_wait) p.tail_wait = op;
  }
  if (!p.first_mma || !is_wgmma(*p.first_mma) || p.first_mma->has_attr("async")) {
    why = "the key tiles do not start with a synchronous wgmma (coarse-pipeline's prologue)";
    return std::nullopt;
  }
  if (!p.tail_mma || !p.tail_mma->has_attr("async") || !p.tail_commit || !p.tail_wait ||
      p.tail_wait->int_attr("pending") != 0) {
    why =
        "the key tiles do not end with an asynchronous wgmma drained at once "
        "(coarse-pipeline's epilogue)";
    return std::nullopt;
  }
  // Tile t+1's prefix waits for its slots (Q) while tile t still holds its own: a ring of one
  // slot would wait for itself (check-protocol finds the deadlock; here it is said why).
  for (const Operation* op : p.prefix) {
    if (op->kind() != OpKind::aref_wait) continue;
    const Operation* aref = op->operand(0)->def();
    if (aref && aref->kind() == OpKind::aref && aref->int_attr("slots") < 2) {
      why = "the tile's " + ir::value_ref(op->operand(0)) +
            " has one slot, so tile t+1's cannot be waited for while tile t holds it";
      return std::nullopt;
    }
  }
  // The steady loop's initial values come from the head (the first key tile's softmax): they
  // are what the rotated tile loop carries.
  for (int i = 3; i < p.steady->num_operands(); ++i) {
    const Operation* d = p.steady->operand(i)->def();
    if (!d || d->parent_block() != then_block) {
      why = "the key loop's initial values are not computed by the first key tile";
      return std::nullopt;
    }
  }
  return p;
}

class Rotator {
 public:
  explicit Rotator(const Plan& p) : p_(p), body_(p.loop->region(0)) {}

  void run() {
    Operation* loop = p_.loop;
    const SourceLocation loc = loop->loc();
    Value* first = loop->operand(0);
    Value* tiles = loop->operand(1);
    Value* blocks = loop->operand(2);
    ir::OpBuilder outer(loop->parent_block());
    outer.set_insertion_point_before(loop);
    Mapping none;
    Operation* cond = outer.insert(ir::clone(*p_.cond_def, none));
    std::vector<Type> result_types;
    for (int i = 0; i < loop->num_results(); ++i) result_types.push_back(loop->result(i)->type());
    Operation* versions = outer.create(OpKind::if_, {cond->result()}, result_types, loc);
    Block* rotated = versions->add_region();
    Block* plain = versions->add_region();

    // The else branch: the loop as it was.
    ir::OpBuilder eb(plain);
    Mapping same;
    Operation* old = eb.insert(ir::clone(*loop, same));
    std::vector<Value*> old_results;
    for (int i = 0; i < old->num_results(); ++i) old_results.push_back(old->result(i));
    eb.create(OpKind::yield, old_results, {}, loc);

    ir::OpBuilder b(rotated);
    Value* c0 = b.index_constant(0, loc);
    Value* c1 = b.index_constant(1, loc);
    Value* span = b.index_op(OpKind::sub, tiles, first, "tiles_after_first", loc);
    Value* mine = b.index_op(OpKind::cdiv, span, blocks, "my_tiles", loc);

    // The first tile's prefix and head.
    Mapping pro = tile_mapping(first, loop->operand(3), loop->operand(4));
    clone_all(b, p_.prefix, pro);
    clone_all(b, p_.head, pro);

    // The rotated loop over the block's tiles: tile k's key loop, then (when there is a tile
    // k+1) its tail beside tile k+1's head, or (the last tile) its tail alone. One loop for every
    // tile, so that the carried first-key-tile values always enter a key loop through the loop's
    // block arguments: fed from a loop's results into a key loop after it, ptxas spilled 320
    // bytes per thread.
    std::vector<Value*> operands{c0, mine, c1, loop->operand(3), loop->operand(4)};
    std::vector<Type> carried{loop->operand(3)->type(), loop->operand(4)->type()};
    std::vector<Type> state_types;
    for (int i = 3; i < p_.steady->num_operands(); ++i) {
      operands.push_back(mapped(pro, p_.steady->operand(i)));
      carried.push_back(p_.steady->operand(i)->type());
      state_types.push_back(p_.steady->operand(i)->type());
    }
    Operation* rot = b.create(OpKind::for_, operands, carried, loc);
    Block* rb = rot->add_region();
    Value* k = rb->add_argument(Type::scalar(ir::ScalarKind::index), "k");
    Value* tile_seq = rb->add_argument(carried[0], "tile_seq_rot");
    Value* seq_base = rb->add_argument(carried[1], "seq_base_rot");
    std::vector<Value*> state;
    for (size_t i = 2; i < carried.size(); ++i)
      state.push_back(rb->add_argument(carried[i], p_.steady->operand(i + 1)->name() + "_rot"));
    ir::OpBuilder lb(rb);
    Value* offset = lb.index_op(OpKind::mul, k, blocks, "tile_offset", loc);
    Value* tile = lb.index_op(OpKind::add, first, offset, "tile_rot", loc);
    Mapping cur = tile_mapping(tile, tile_seq, seq_base);
    clone_prefix_held(lb, cur);
    clone_head_scalars(lb, cur);
    for (size_t i = 0; i < state.size(); ++i)
      cur[p_.steady->operand(static_cast<int>(i) + 3)] = state[i];
    lb.insert(ir::clone(*p_.steady, cur));
    // The next tile's sequence numbers: what the tile loop's yield computes.
    const Operation* yield = body_->terminator();
    for (const auto& op : body_->ops()) {
      if (op.get() == yield) break;
      if (std::find(p_.prefix.begin(), p_.prefix.end(), op.get()) != p_.prefix.end()) continue;
      if (op.get() == p_.branch) continue;
      bool feeds_yield = false;
      for (const Value* v : yield->operands()) feeds_yield |= v->def() == op.get();
      if (feeds_yield) lb.insert(ir::clone(*op, cur));
    }
    Value* next_seq = mapped(cur, yield->operand(0));
    Value* next_base = mapped(cur, yield->operand(1));
    Value* k_next = lb.index_op(OpKind::add, k, c1, "k_next", loc);
    Value* has_next = lb.compare("lt", k_next, mine, "has_next", loc);
    Operation* step = lb.create(OpKind::if_, {has_next}, state_types, loc);

    // A next tile: its head's first S, this tile's last P·V, the softmax beside it, the store.
    ir::OpBuilder nb(step->add_region());
    Mapping here = cur;
    Value* next_tile = nb.index_op(OpKind::add, tile, blocks, "next_tile", loc);
    Mapping nx = tile_mapping(next_tile, next_seq, next_base);
    clone_all(nb, p_.prefix, nx);
    size_t h = 0;
    for (; h < p_.head.size(); ++h) {
      Operation* copy = nb.insert(ir::clone(*p_.head[h], nx));
      if (p_.head[h] != p_.first_mma) continue;
      copy->set_attr("async", Attribute::unit());
      nb.create(OpKind::mma_commit, {}, {}, p_.first_mma->loc());
      ++h;
      break;
    }
    size_t t = 0;
    for (; t < p_.tail.size(); ++t) {
      nb.insert(ir::clone(*p_.tail[t], here));
      if (p_.tail[t] == p_.tail_commit) {
        ++t;
        break;
      }
    }
    nb.create(OpKind::mma_wait, {}, {}, loc)->set_attr("pending", Attribute::integer(1));
    std::vector<Operation*> deferred;
    for (; h < p_.head.size(); ++h) {
      if (rescales_fresh_accumulator(*p_.head[h])) {
        deferred.push_back(p_.head[h]);
        continue;
      }
      nb.insert(ir::clone(*p_.head[h], nx));
    }
    for (; t < p_.tail.size(); ++t) nb.insert(ir::clone(*p_.tail[t], here));
    map_branch_results(here);
    clone_all(nb, p_.suffix, here);
    clone_all(nb, deferred, nx);
    std::vector<Value*> next_state;
    for (int i = 3; i < p_.steady->num_operands(); ++i)
      next_state.push_back(mapped(nx, p_.steady->operand(i)));
    nb.create(OpKind::yield, next_state, {}, loc);

    // The block's last tile: its last P·V and its store; the carried values are not read again.
    ir::OpBuilder fb(step->add_region());
    Mapping final_tile = cur;
    clone_all(fb, p_.tail, final_tile);
    map_branch_results(final_tile);
    clone_all(fb, p_.suffix, final_tile);
    std::vector<Value*> unused;
    for (const Type& st : state_types) {
      Operation* z = fb.create(OpKind::fill, {}, {st}, loc);
      z->set_attr("value", Attribute::real(0.0));
      unused.push_back(z->result());
    }
    fb.create(OpKind::yield, unused, {}, loc);

    std::vector<Value*> yielded{next_seq, next_base};
    for (int i = 0; i < step->num_results(); ++i) yielded.push_back(step->result(i));
    lb.create(OpKind::yield, yielded, {}, loc);
    std::vector<Value*> results{rot->result(0), rot->result(1)};
    b.create(OpKind::yield, results, {}, loc);

    // Uses of the loop's results now read the versions'.
    Operation* kernel = loop;
    while (kernel->parent_op()) kernel = kernel->parent_op();
    for (int i = 0; i < loop->num_results(); ++i) {
      versions->result(i)->set_name(loop->result(i)->name());
      ir::replace_all_uses(*kernel, loop->result(i), versions->result(i));
    }
    loop->parent_block()->remove(loop);
  }

 private:
  Mapping tile_mapping(Value* tile, Value* tile_seq, Value* seq_base) const {
    Mapping m;
    m[body_->argument(0)] = tile;
    m[body_->argument(1)] = tile_seq;
    m[body_->argument(2)] = seq_base;
    return m;
  }

  // The prefix of a tile whose slots the iteration before waited for (its Q): the same ops, but
  // each aref_wait becomes a view of its slot (`aref_slot {held}`, slot = sequence % slots): the
  // load it waited for is still held (not released). check-protocol counts the reads through a
  // held view as the same use of the slot, not a new load's.
  void clone_prefix_held(ir::OpBuilder& b, Mapping& map) const {
    for (Operation* op : p_.prefix) {
      const Operation* aref = op->kind() == OpKind::aref_wait ? op->operand(0)->def() : nullptr;
      if (!aref || aref->kind() != OpKind::aref) {
        b.insert(ir::clone(*op, map));
        continue;
      }
      Value* slots = b.index_constant(aref->int_attr("slots"), op->loc());
      Value* slot =
          b.index_op(OpKind::rem, mapped(map, op->operand(1)), slots, "held_slot", op->loc());
      std::vector<Type> types;
      for (int i = 0; i < op->num_results(); ++i) types.push_back(op->result(i)->type());
      Operation* view = b.create(OpKind::aref_slot, {op->operand(0), slot}, types, op->loc());
      view->set_attr("held", Attribute::unit());
      for (int i = 0; i < op->num_results(); ++i) {
        view->result(i)->set_name(op->result(i)->name());
        map[op->result(i)] = view->result(i);
      }
    }
  }

  // A head op that makes a key loop's initial value from a fresh accumulator (attention's O:
  // zeros times the first alpha) and that nothing else in the head reads: in the rotated tile
  // loop it runs after the tile's output store, so that its registers (64 per thread at 128x128
  // over two warpgroups) are not live beside the output being stored.
  bool rescales_fresh_accumulator(const Operation& op) const {
    if (op.num_results() != 1 || !op.regions().empty()) return false;
    bool fresh = false;
    for (const Value* v : op.operands()) {
      const Operation* d = v->def();
      fresh |= d && d->kind() == OpKind::fill &&
               std::find(p_.prefix.begin(), p_.prefix.end(), d) != p_.prefix.end();
    }
    if (!fresh) return false;
    bool init = false;
    for (int i = 3; i < p_.steady->num_operands(); ++i)
      init |= p_.steady->operand(i) == op.result();
    if (!init) return false;
    for (const Operation* other : p_.head)
      for (const Value* v : other->operands())
        if (v == op.result()) return false;
    return true;
  }

  // The head's index arithmetic and constants (the key loop's bound, the tail's last key tile):
  // the key loop and the tail of a tile whose head ran in an earlier iteration read them.
  void clone_head_scalars(ir::OpBuilder& b, Mapping& map) const {
    for (Operation* op : p_.head) {
      if (!op->regions().empty() || op->num_results() != 1 || op->result()->type().is_tensor())
        continue;
      if (op->kind() == OpKind::constant || ir::is_index_arithmetic(op->kind()))
        b.insert(ir::clone(*op, map));
    }
  }

  static void clone_all(ir::OpBuilder& b, const std::vector<Operation*>& ops, Mapping& map) {
    for (Operation* op : ops) b.insert(ir::clone(*op, map));
  }

  // The branch's results, as its then-block yields them (the rotated code runs that branch).
  void map_branch_results(Mapping& map) const {
    const Operation* then_yield = p_.branch->region(0)->terminator();
    for (int i = 0; i < p_.branch->num_results(); ++i)
      map[p_.branch->result(i)] = mapped(map, then_yield->operand(i));
  }

  const Plan& p_;
  Block* body_;
};

}  // namespace

void rotate_tiles(ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    if (grid_flag(*kernel, "rotate_tiles") != true) continue;
    if (grid_flag(*kernel, "pingpong") == true) {
      user_error(kernel->loc(),
                 "rotate-tiles: rotate_tiles = true does not go with "
                 "pingpong = true (the turns do not know the rotated tile loop)");
    }
    if (grid_flag(*kernel, "defer_stores") == true) {
      user_error(kernel->loc(),
                 "rotate-tiles: rotate_tiles = true does not go with "
                 "defer_stores = true (defer-stores already moved each tile's "
                 "store into the next tile's first S)");
    }
    std::vector<Operation*> loops;
    for (const auto& role : kernel->region(0)->ops()) {
      if (role->kind() != OpKind::warp_group || role->str_attr("role") != "consumer") continue;
      for (const auto& op : role->region(0)->ops())
        if (op->kind() == OpKind::for_) loops.push_back(op.get());
    }
    int rotated = 0;
    std::string reasons;
    for (Operation* loop : loops) {
      std::string why;
      std::optional<Plan> plan = match(loop, why);
      if (!plan) {
        reasons += (reasons.empty() ? "" : "; ") + why;
        continue;
      }
      Rotator(*plan).run();
      ++rotated;
      report("pipeline", "rotate-tiles: the consumer's tile loop of @" + kernel->signature().name +
                             " rotated (tile t+1's first key tile " + "beside tile t's last)");
    }
    if (rotated == 0) {
      user_error(kernel->loc(),
                 "rotate-tiles: rotate_tiles = true, but no consumer tile loop has "
                 "the form (",
                 reasons.empty() ? "no tile loop" : reasons, ")");
    }
  }
}

}  // namespace tessel::transforms
