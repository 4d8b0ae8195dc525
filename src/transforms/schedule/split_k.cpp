#include "transforms/schedule/split_k.h"

#include <algorithm>

#include "ir/async.h"
#include "ir/canonicalize.h"

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

// The cost model's constants (split_k.h).
constexpr int64_t kMinBlocksPerPart = 4;
constexpr int64_t kMaxParts = 16;

bool uses(Operation* root, const Value* v) {
  bool found = false;
  ir::walk(root, [&](Operation* op) {
    for (const Value* o : op->operands()) found = found || o == v;
  });
  return found;
}

// The ops under `root` (itself included) that use `v`.
std::vector<Operation*> users(Operation* root, const Value* v) {
  std::vector<Operation*> out;
  ir::walk(root, [&](Operation* op) {
    if (std::find(op->operands().begin(), op->operands().end(), v) != op->operands().end())
      out.push_back(op);
  });
  return out;
}

class Splitter {
 public:
  Splitter(Operation& kernel, Operation& grid)
      : kernel_(kernel), top_(*kernel.region(0)), grid_(grid), loc_(grid.loc()) {}

  void run() {
    const Attribute& pin = *grid_.attr("split_k");
    const bool automatic = pin.kind == Attribute::Kind::ident && pin.s == "auto";
    if (!automatic && (pin.kind != Attribute::Kind::integer || pin.i < 1)) {
      user_error(loc_, "split-k: `split_k = ", pin.str(),
                 "` is auto or a positive number of parts per tile");
    }
    if (!automatic && pin.i == 1) {
      grid_.remove_attr("split_k");
      return;
    }
    std::vector<Operation*> roles;
    for (const auto& op : top_.ops()) {
      if (op->kind() == OpKind::warp_group) roles.push_back(op.get());
    }
    if (roles.empty() || grid_.num_results() != 2) {
      user_error(loc_,
                 "split-k: `split_k` needs a warp-specialized kernel (sm_90a, a TMA + wgmma "
                 "mainloop) with a 2-D block_grid");
    }
    for (const auto& op : top_.ops()) {
      if (op->kind() == OpKind::warp_group) continue;
      for (int i = 0; i < grid_.num_results(); ++i) {
        if (uses(op.get(), grid_.result(i))) {
          user_error(op->loc(), "split-k: ", op->name(), " uses the block index ",
                     ir::value_ref(grid_.result(i)), " outside the roles");
        }
      }
    }
    // Every role's K loop, with the one trip count they share.
    Value* k_blocks = nullptr;
    Operation* consumer_loop = nullptr;
    std::vector<std::pair<Operation*, Operation*>> loops;  // (role, its K loop)
    for (Operation* role : roles) {
      for (const auto& op : role->region(0)->ops()) {
        if (op->kind() != OpKind::for_ || ir::int_constant(op->operand(0)) != 0 ||
            ir::int_constant(op->operand(2)) != 1 || op->operand(1)->owner_block() != &top_) {
          continue;
        }
        if (k_blocks && op->operand(1) != k_blocks) {
          user_error(op->loc(), "split-k: the roles' K loops run to ", ir::value_ref(k_blocks),
                     " and ", ir::value_ref(op->operand(1)), "; split-k needs one trip count");
        }
        k_blocks = op->operand(1);
        loops.emplace_back(role, op.get());
        for (const auto& r : op->results()) {
          if (r->type().is_tensor() && r->type().space() == MemorySpace::reg) {
            if (consumer_loop) {
              user_error(op->loc(), "split-k: more than one K loop carries an accumulator");
            }
            consumer_loop = op.get();
            acc_ = r.get();
          }
        }
      }
    }
    if (!consumer_loop) {
      user_error(loc_,
                 "split-k: no role has a K loop `for %k = 0 to %n step 1` that carries a "
                 "register accumulator");
    }
    consumer_ = const_cast<Operation*>(ir::enclosing_role(*consumer_loop));
    find_epilogue(*consumer_loop);

    make_top_level(automatic ? 0 : pin.i, k_blocks, roles.front());
    for (auto& [role, loop] : loops) split_loop(*role, *loop, k_blocks);
    reduce_partials();
  }

 private:
  // The first op after the K loop that reads the accumulator, and the output tile it is stored
  // to.
  void find_epilogue(Operation& loop) {
    Block& body = *consumer_->region(0);
    const size_t after = ir::position_in_block(loop) + 1;
    for (size_t i = after; i < body.ops().size() && !epilogue_; ++i) {
      if (uses(body.ops()[i].get(), acc_)) epilogue_ = body.ops()[i].get();
    }
    if (!epilogue_) user_error(loop.loc(), "split-k: nothing reads the K loop's accumulator");
    // Only the last part runs the epilogue: an aref the epilogue waits on after reading the
    // accumulator would be filled by every part's producer and drained by one consumer.
    for (size_t i = ir::position_in_block(*epilogue_); i < body.ops().size(); ++i) {
      ir::walk(body.ops()[i].get(), [&](Operation* op) {
        if (ir::is_aref_use(op->kind())) {
          user_error(op->loc(), "split-k: ", op->name(), " of ", ir::value_ref(op->operand(0)),
                     " stands after the first read of the accumulator; only the last part runs "
                     "that epilogue, so its operands must arrive before (read them earlier)");
        }
      });
    }
    const std::vector<int64_t> shape = acc_->type().static_shape();
    // A kernel that computes Cᵀ (swapped operands: the weights as wgmma's M, few tokens as its N)
    // stores its accumulator through a register transpose, a view (reduce_partials keeps its
    // partials in the accumulator's orientation).
    for (size_t i = ir::position_in_block(*epilogue_); i < body.ops().size() && !transpose_; ++i) {
      Operation* op = body.ops()[i].get();
      if (op->kind() == OpKind::transpose && op->operand(0) == acc_ &&
          op->result()->type().space() == MemorySpace::reg) {
        transpose_ = op;
      }
    }
    for (size_t i = ir::position_in_block(*epilogue_); i < body.ops().size(); ++i) {
      ir::walk(body.ops()[i].get(), [&](Operation* op) {
        if (op->kind() != OpKind::copy || op->num_operands() != 2) return;
        const Type& r = op->operand(0)->type();
        const Operation* t = op->operand(1)->def();
        // Transposed when the stored value comes through the transpose (a square tile has the
        // same shape either way).
        const bool transposed = transpose_ && ir::depends_on(op->operand(0), transpose_->result());
        const std::vector<int64_t> want =
            transposed ? std::vector<int64_t>{shape[1], shape[0]} : shape;
        if (!r.is_tensor() || r.space() != MemorySpace::reg || r.rank() != 2 ||
            r.static_shape() != want || !t || t->kind() != OpKind::tile ||
            t->num_operands() != 3 || t->operand(0)->type().rank() != 2 ||
            !ir::depends_on(op->operand(0), acc_)) {
          return;
        }
        if (output_tile_) {
          user_error(op->loc(),
                     "split-k: the accumulator is stored to two global tiles; "
                     "split-k reduces one");
        }
        output_tile_ = t;
        stored_transposed_ = transposed;
      });
    }
    if (!output_tile_) {
      user_error(epilogue_->loc(), "split-k: the consumer does not store its ", acc_->type().str(),
                 " accumulator to a global tile of its shape");
    }
    for (int d = 1; d <= 2; ++d) {
      const Value* c = output_tile_->operand(d);
      if (!ir::defined_inside(c, *consumer_)) continue;
      const Operation* def = c->def();
      if (!def || def->parent_block() != &body ||
          ir::position_in_block(*def) >= ir::position_in_block(*epilogue_)) {
        user_error(output_tile_->loc(), "split-k: the output tile's coordinate ", ir::value_ref(c),
                   " is computed after the K loop; compute it before");
      }
    }
  }

  // The part count, the workspaces and the 3-D grid, just before the first role.
  void make_top_level(int64_t fixed, Value* k_blocks, Operation* first_role) {
    OpBuilder b(&top_);
    b.set_insertion_point_before(first_role);
    Value* tiles = b.index_op(OpKind::mul, grid_.operand(0), grid_.operand(1), "split_tiles", loc_);
    if (fixed > 0) {
      splits_ = b.index_constant(fixed, loc_);
    } else {
      Operation* sms = b.create(OpKind::sm_count, {}, {kIndex}, loc_);
      sms->result()->set_name("sms");
      Value* fit = b.index_op(OpKind::div, sms->result(), tiles, "parts_fit", loc_);
      Value* by_k = b.index_op(OpKind::div, k_blocks, b.index_constant(kMinBlocksPerPart, loc_),
                               "parts_by_k", loc_);
      Value* s = b.index_op(OpKind::min, fit, by_k, "parts_min", loc_);
      s = b.index_op(OpKind::min, s, b.index_constant(kMaxParts, loc_), "parts_capped", loc_);
      splits_ = b.index_op(OpKind::max, s, b.index_constant(1, loc_), "splits", loc_);
    }
    if (fixed > 0) splits_->set_name("splits");
    last_part_ = b.index_op(OpKind::sub, splits_, b.index_constant(1, loc_), "last_part", loc_);
    const Type& out = output_tile_->operand(0)->type();
    // The partials are kept in the accumulator's orientation: the output's shape, or its
    // transpose for an accumulator stored transposed (each thread then writes and reads its
    // fragment's adjacent columns as one vector, not scattered over the output's rows).
    std::vector<ir::Extent> partial_shape = out.shape();
    if (stored_transposed_) std::swap(partial_shape[0], partial_shape[1]);
    partial_type_ = Type::tensor(ScalarKind::f32, partial_shape, MemorySpace::global);
    partials_ = b.create(OpKind::workspace, {splits_}, {partial_type_}, loc_)->result();
    partials_->set_name("partials");
    counters_ =
        b.create(OpKind::workspace, {tiles},
                 {Type::tensor(ScalarKind::i32, {ir::Extent(1)}, MemorySpace::global)}, loc_)
            ->result();
    counters_->set_name("counters");
    Operation* grid = b.create(OpKind::block_grid, {grid_.operand(0), grid_.operand(1), splits_},
                               {kIndex, kIndex, kIndex}, loc_);
    for (const auto& [key, value] : grid_.attributes()) {
      if (key == "split_k") continue;
      Attribute copied = value;
      // A pinned cluster gets one block along the parts: the blocks of a cluster then take the
      // same part of adjacent tiles, the same K blocks, and can multicast what they share.
      if (key == "cluster" && copied.kind == Attribute::Kind::int_list && copied.list.size() == 2)
        copied.list.push_back(1);
      grid->set_attr(key, copied);
    }
    // Tells persistent that dimension 2 counts the parts of one tile (taken together), not a
    // batch (taken one after another).
    grid->set_attr("split_parts", Attribute::unit());
    for (int i = 0; i < 2; ++i) {
      grid->result(i)->set_name(grid_.result(i)->name());
      ir::replace_all_uses(kernel_, grid_.result(i), grid->result(i));
    }
    grid->result(2)->set_name("part");
    part_ = grid->result(2);
    bm_ = grid->result(0);
    bn_ = grid->result(1);
    tiles_m_ = grid_.operand(0);
    tiles_n_ = grid_.operand(1);
    grid_has_cluster_ = grid_.has_attr("cluster");
    top_.remove(&grid_);
  }

  // The role's share of K: its loop runs over [first, end) of the K blocks.
  void split_loop(Operation& role, Operation& loop, Value* k_blocks) {
    Block& body = *role.region(0);
    OpBuilder b(&body);
    b.set_insertion_point_before(body.ops().front().get());
    const SourceLocation loc = loop.loc();
    Value* from = b.index_op(OpKind::mul, part_, k_blocks, "k_from", loc);
    Value* first = b.index_op(OpKind::div, from, splits_, "k_first", loc);
    Value* next = b.index_op(OpKind::add, part_, b.index_constant(1, loc), "next_part", loc);
    Value* to = b.index_op(OpKind::mul, next, k_blocks, "k_to", loc);
    Value* end = b.index_op(OpKind::div, to, splits_, "k_end", loc);
    Value* count = b.index_op(OpKind::sub, end, first, "k_count", loc);
    // Every use of K in the role counts this part's blocks (the loop's bound, the last slot's
    // release), except the two that compute them and arithmetic that computes a tile coordinate
    // from K (W4A16's weights stored tile by tile: row bn * K + k), which means the whole K.
    for (Operation* op : users(&role, k_blocks)) {
      if (op == from->def() || op == to->def() || computes_coordinate(*op, role)) continue;
      for (int i = 0; i < op->num_operands(); ++i) {
        if (op->operand(i) == k_blocks) op->set_operand(i, count);
      }
    }

    Value* k = loop.region(0)->argument(0);
    std::vector<Operation*> k_users = users(&loop, k);
    OpBuilder in(loop.region(0));
    in.set_insertion_point_before(loop.region(0)->ops().front().get());
    Value* block = in.index_op(OpKind::add, first, k, "k_block", loc);
    for (Operation* op : k_users) {
      if (op->kind() == OpKind::tile) {
        for (int i = 1; i < op->num_operands(); ++i) {
          if (op->operand(i) == k) op->set_operand(i, block);
        }
        continue;
      }
      if (ir::is_aref_use(op->kind())) continue;  // sequence numbers still count the iterations
      // Arithmetic that computes a tile coordinate from the index (a scale group k·64·KG / K)
      // computes it from the K block; any other use (none today) counts iterations.
      if (!computes_coordinate(*op, loop)) continue;
      for (int i = 0; i < op->num_operands(); ++i) {
        if (op->operand(i) == k) op->set_operand(i, block);
      }
    }
  }

  // Whether `op` is a tile or computes a value that reaches a tile coordinate within `scope`.
  bool computes_coordinate(Operation& op, Operation& scope) {
    if (op.kind() == OpKind::tile) return true;
    for (const auto& r : op.results()) {
      if (reaches_tile(r.get(), scope)) return true;
    }
    return false;
  }

  bool reaches_tile(const Value* v, Operation& scope) {
    for (Operation* op : users(&scope, v)) {
      if (op->kind() == OpKind::tile) return true;
      for (const auto& r : op->results()) {
        if (reaches_tile(r.get(), scope)) return true;
      }
    }
    return false;
  }

  // The consumer writes its partial, arrives, and the last part sums the partials and runs the
  // epilogue (split_k.h).
  void reduce_partials() {
    Block& body = *consumer_->region(0);
    const SourceLocation loc = epilogue_->loc();
    const Type acc_type = acc_->type();
    const std::vector<int64_t> shape = acc_type.static_shape();
    Value* row = output_tile_->operand(stored_transposed_ ? 2 : 1);
    Value* col = output_tile_->operand(stored_transposed_ ? 1 : 2);
    auto partial_tile = [&](OpBuilder& b, Value* index, const std::string& name) {
      Value* part =
          b.create(OpKind::workspace_part, {partials_, index}, {partial_type_}, loc)->result();
      part->set_name(name);
      Operation* t = b.create(
          OpKind::tile, {part, row, col},
          {Type::tensor(ScalarKind::f32, {ir::Extent(shape[0]), ir::Extent(shape[1])},
                        MemorySpace::global)},
          loc);
      t->set_attr("shape", Attribute::ints(shape));
      t->set_attr("masked", Attribute::unit());
      t->set_attr("pad", Attribute::real(0.0));
      t->result()->set_name(name + "_tile");
      return t->result();
    };
    OpBuilder b(&body);
    b.set_insertion_point_before(epilogue_);
    const size_t first_new = ir::position_in_block(*epilogue_);
    b.create(OpKind::copy, {acc_, partial_tile(b, part_, "partial")}, {}, loc);
    Value* tile_row = b.index_op(OpKind::mul, bm_, tiles_n_, "tile_row", loc);
    Value* tile = b.index_op(OpKind::add, tile_row, bn_, "tile_index", loc);
    Value* counter =
        b.create(OpKind::workspace_part, {counters_, tile}, {counters_->type()}, loc)->result();
    counter->set_name("counter");
    Operation* arrive = b.create(OpKind::counter_arrive, {counter, splits_}, {kIndex}, loc);
    arrive->result()->set_name("arrived");
    Value* last = b.compare("eq", arrive->result(), last_part_, "last_arrival", loc);
    Operation* guard = b.create(OpKind::if_, {last}, {}, loc);
    Block* then = guard->add_region();
    guard->add_region();

    // The sum of the partials in part order.
    OpBuilder s(then);
    Operation* zero = s.create(OpKind::fill, {}, {acc_type}, loc);
    zero->set_attr("value", Attribute::real(0.0));
    zero->result()->set_name("sum_zero");
    auto loop = std::make_unique<Operation>(OpKind::for_, loc);
    loop->add_operand(s.index_constant(0, loc));
    loop->add_operand(splits_);
    loop->add_operand(s.index_constant(1, loc));
    loop->add_operand(zero->result());
    Block* lb = loop->add_region();
    Value* index = lb->add_argument(kIndex, "s");
    Value* running = lb->add_argument(acc_type, "running");
    Value* sum = loop->add_result(acc_type, "sum");
    s.insert(std::move(loop));
    OpBuilder l(lb);
    Value* t = partial_tile(l, index, "partial_s");
    Operation* load = l.create(OpKind::copy, {t}, {acc_type}, loc);
    // Through L2 only: other blocks wrote these partials in this launch (see tsl_fetch32).
    if (ir::bit_width(acc_type.element()) == 32)
      load->set_attr("cache", Attribute::string("coherent"));
    Value* loaded = load->result();
    loaded->set_name("partial_value");
    Value* added = l.create(OpKind::add, {running, loaded}, {acc_type}, loc)->result();
    added->set_name("running_next");
    l.create(OpKind::yield, {added}, {}, loc);

    // The epilogue moves into the branch, reading the sum.
    std::vector<std::unique_ptr<Operation>> moved;
    const size_t from = ir::position_in_block(*epilogue_);
    while (body.ops().size() > from) moved.push_back(body.remove(body.ops()[from].get()));
    for (auto& op : moved) s.insert(std::move(op));
    ir::replace_all_uses(*guard, acc_, sum);
    if (grid_has_cluster_) guard_tiles_in_range(body, first_new, loc);
  }

  // In clusters the last cluster along a dimension of an odd tile count has a block past the
  // grid. Its tile index bm * tiles_n + bn would alias another tile's counter (or run past the
  // counters), so the partial, the arrival and the epilogue run only for tiles inside the grid.
  void guard_tiles_in_range(Block& body, size_t first, const SourceLocation& loc) {
    std::vector<std::unique_ptr<Operation>> moved;
    while (body.ops().size() > first) moved.push_back(body.remove(body.ops()[first].get()));
    OpBuilder b(&body);
    Value* in_m = b.compare("lt", bm_, tiles_m_, "in_grid_0", loc);
    Operation* outer = b.create(OpKind::if_, {in_m}, {}, loc);
    Block* outer_then = outer->add_region();
    outer->add_region();
    OpBuilder o(outer_then);
    Value* in_n = o.compare("lt", bn_, tiles_n_, "in_grid_1", loc);
    Operation* inner = o.create(OpKind::if_, {in_n}, {}, loc);
    Block* inner_then = inner->add_region();
    inner->add_region();
    OpBuilder i(inner_then);
    for (auto& op : moved) i.insert(std::move(op));
  }

  Operation& kernel_;
  Block& top_;
  Operation& grid_;
  SourceLocation loc_;
  Operation* consumer_ = nullptr;
  Value* acc_ = nullptr;
  Operation* epilogue_ = nullptr;
  const Operation* output_tile_ = nullptr;
  Operation* transpose_ = nullptr;  // the epilogue's register transpose of the accumulator
  bool stored_transposed_ = false;  // the output tile holds the accumulator transposed
  Value* splits_ = nullptr;
  Value* last_part_ = nullptr;
  Value* partials_ = nullptr;
  Value* counters_ = nullptr;
  Type partial_type_;
  Value* part_ = nullptr;
  Value* bm_ = nullptr;
  Value* bn_ = nullptr;
  Value* tiles_m_ = nullptr;
  Value* tiles_n_ = nullptr;
  bool grid_has_cluster_ = false;  // a cluster is pinned: guard the tiles past the grid
};

}  // namespace

void split_k(ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    Operation* grid = nullptr;
    for (const auto& op : kernel->region(0)->ops()) {
      if (op->kind() == OpKind::block_grid) grid = op.get();
    }
    if (grid && grid->has_attr("split_k")) Splitter(*kernel, *grid).run();
  }
}

}  // namespace tessel::transforms
