#include "transforms/schedule/persistent.h"

#include <algorithm>
#include <functional>
#include <map>
#include <tuple>

#include "ir/async.h"
#include "ir/canonicalize.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;

const Type kIndex = Type::scalar(ScalarKind::index);

// How many sequence numbers a role uses of each aref per tile, in the order the role first uses
// them: the trip count of the loop (from 0 in steps of 1) that holds the aref's acquire / wait
// ops, or 1 when they stand in no loop of the role (an aref used once per tile; `one` makes the
// constant). Empty when the role uses no aref.
std::vector<std::pair<const Value*, Value*>> per_tile_counts(const Operation& role,
                                                             const std::function<Value*()>& one) {
  std::vector<std::pair<const Value*, Value*>> counts;
  ir::walk(const_cast<Operation*>(&role), [&](Operation* op) {
    if (op->kind() != OpKind::aref_acquire && op->kind() != OpKind::aref_wait) return;
    const Operation* loop = op->parent_op();
    while (loop && loop->kind() != OpKind::for_ && loop != &role) loop = loop->parent_op();
    Value* count = nullptr;
    if (loop == &role) {
      count = one();
    } else if (!loop || ir::int_constant(loop->operand(0)) != 0 ||
               ir::int_constant(loop->operand(2)) != 1) {
      user_error(op->loc(), "persistent: ", op->name(),
                 " must stand in a loop `for %k = 0 to %n step 1` (its trip count is the number "
                 "of sequence numbers per tile) or in no loop of its role (one per tile)");
    } else {
      count = loop->operand(1);
    }
    const Value* aref = op->operand(0);
    auto it =
        std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == aref; });
    if (it == counts.end()) {
      counts.emplace_back(aref, count);
    } else if (it->second != count) {
      user_error(op->loc(), "persistent: the ops of ", ir::value_ref(aref),
                 " in one role stand in loops of different trip counts (",
                 ir::value_ref(it->second), " and ", ir::value_ref(count), ")");
    }
  });
  return counts;
}

void make_kernel_persistent(Operation& kernel) {
  Block& body = *kernel.region(0);
  Operation* grid = nullptr;
  std::vector<Operation*> roles;
  for (const auto& op : body.ops()) {
    if (op->kind() == OpKind::block_grid) grid = op.get();
    if (op->kind() == OpKind::warp_group) roles.push_back(op.get());
  }
  if (!grid || roles.empty()) return;
  if (const Attribute* pin = grid->attr("persistent")) {
    if (pin->kind != Attribute::Kind::integer || (pin->i != 0 && pin->i != 1)) {
      user_error(grid->loc(), "persistent: block_grid's `persistent` is 0 or 1, not ", pin->str());
    }
    if (pin->i == 0) return;
  }
  if (grid->num_results() > 3) {
    user_error(grid->loc(), "persistent: a grid of ", grid->num_results(),
               " dimensions is not made persistent (one to three; pin persistent = 0)");
  }
  for (const auto& r : grid->results()) {
    ir::walk(&kernel, [&](Operation* op) {
      for (const Value* v : op->operands()) {
        if (v == r.get() && !ir::enclosing_role(*op)) {
          user_error(op->loc(), "persistent: ", op->name(), " uses the block index ",
                     ir::value_ref(v),
                     " outside the roles; only roles may (each visits "
                     "several tiles)");
        }
      }
    });
  }

  // The grid: min(tiles, SMs) blocks; in clusters (cluster-blocks), min(cluster tiles, SMs / C)
  // clusters of C blocks, the blocks of a cluster taking adjacent tiles at once.
  const SourceLocation loc = grid->loc();
  OpBuilder top(&body);
  top.set_insertion_point_before(grid);
  // A third dimension varies fastest when it counts split-k's parts of one tile (`split_parts`):
  // the blocks that take the parts of one tile run at once. Any other (a batch) varies slowest:
  // the tiles of one problem run together, sharing its operands in L2. The tiles keep the
  // raster order of the first two dimensions either way.
  const bool three_d = grid->num_results() == 3;
  const bool parts_fastest = three_d && grid->has_attr("split_parts");
  const bool two_d = grid->num_results() >= 2;
  std::vector<int64_t> cluster(grid->num_results(), 1);
  if (const Attribute* pin = grid->attr("cluster")) {
    if (pin->kind != Attribute::Kind::int_list) {
      user_error(grid->loc(), "persistent: `cluster = ", pin->str(),
                 "` is decided by cluster-blocks, which runs first");
    }
    cluster = pin->list;
  }
  int64_t blocks_per_cluster = 1;
  int cluster_dim = -1;
  for (size_t d = 0; d < cluster.size(); ++d) {
    blocks_per_cluster *= cluster[d];
    if (cluster[d] > 1) {
      if (cluster_dim >= 0) {
        user_error(grid->loc(), "persistent: a cluster of ", grid->attr("cluster")->str(),
                   " groups blocks along two dimensions, which is not made persistent yet");
      }
      cluster_dim = static_cast<int>(d);
    }
  }
  // The grid of tiles in units of clusters.
  Value* tiles_m = grid->operand(0);
  Value* tiles_n = two_d ? grid->operand(1) : nullptr;
  if (cluster_dim == 0) {
    tiles_m = top.index_op(OpKind::cdiv, tiles_m, top.index_constant(cluster[0], loc),
                           "cluster_rows", loc);
  } else if (cluster_dim == 1) {
    tiles_n = top.index_op(OpKind::cdiv, tiles_n, top.index_constant(cluster[1], loc),
                           "cluster_cols", loc);
  }
  // split-k's parts vary fastest within the cluster's tiles: both blocks of a cluster take the
  // same part (the same K blocks) of adjacent tiles. A batch varies slowest: both blocks of a
  // cluster take adjacent tiles of the same problem. Clusters along the third dimension are not
  // done.
  if (three_d && cluster_dim == 2) {
    user_error(grid->loc(),
               "persistent: a cluster along the grid's third dimension is not made "
               "persistent (cluster blocks along the first two, or pin persistent = 0)");
  }
  Value* tiles = two_d ? top.index_op(OpKind::mul, tiles_m, tiles_n, "tiles", loc) : tiles_m;
  Value* tiles_2d = tiles;
  Value* parts = three_d ? grid->operand(2) : nullptr;
  if (three_d) tiles = top.index_op(OpKind::mul, tiles, parts, "units", loc);
  Operation* sms = top.create(OpKind::sm_count, {}, {kIndex}, loc);
  sms->result()->set_name("sms");
  Value* blocks = nullptr;  // the grid
  Value* step = nullptr;    // tiles between a block's (or cluster's) consecutive tiles
  if (cluster_dim < 0) {
    blocks = top.index_op(OpKind::min, tiles, sms->result(), "blocks", loc);
    step = blocks;
  } else {
    // At least one cluster, also on fewer SMs than a cluster has (the interpreter's default).
    Value* c = top.index_constant(blocks_per_cluster, loc);
    Value* fit = top.index_op(OpKind::div, sms->result(), c, "clusters_fit", loc);
    fit = top.index_op(OpKind::max, fit, top.index_constant(1, loc), "clusters_fit", loc);
    step = top.index_op(OpKind::min, tiles, fit, "clusters", loc);
    blocks = top.index_op(OpKind::mul, step, c, "blocks", loc);
  }
  Operation* new_grid = top.create(OpKind::block_grid, {blocks}, {kIndex}, loc);
  new_grid->result()->set_name(cluster_dim < 0 ? "first_tile" : "block");
  for (const auto& [key, value] : grid->attributes()) {
    if (key != "raster_group" && key != "persistent" && key != "cluster" && key != "split_parts")
      new_grid->set_attr(key, value);
  }
  Value* first = new_grid->result();
  Value* rank = nullptr;
  if (cluster_dim >= 0) {
    new_grid->set_attr("cluster", Attribute::ints({blocks_per_cluster}));
    Operation* r = top.create(OpKind::cluster_rank, {}, {kIndex}, loc);
    r->result()->set_name("cluster_rank");
    rank = r->result();
    first = top.index_op(OpKind::div, new_grid->result(),
                         top.index_constant(blocks_per_cluster, loc), "first_tile", loc);
  }
  // Raster groups count cluster rows when clusters stack blocks along dimension 0.
  int64_t group = grid->has_attr("raster_group") ? grid->int_attr("raster_group") : 1;
  if (cluster_dim == 0) group = std::max<int64_t>(1, group / cluster[0]);
  Value* c0 = top.index_constant(0, loc);
  Value* c_group = two_d ? top.index_constant(group, loc) : nullptr;
  Value* per_group =
      two_d ? top.index_op(OpKind::mul, c_group, tiles_n, "per_group", loc) : nullptr;

  Value* c1 = nullptr;
  auto one = [&]() {
    if (!c1) c1 = top.index_constant(1, loc);
    return c1;
  };
  for (Operation* role : roles) {
    // One carried sequence base per distinct per-tile count (arefs used as often share it).
    const auto arefs = per_tile_counts(*role, one);
    std::vector<Value*> counts;
    std::map<const Value*, size_t> base_of;  // aref -> its count's index
    for (const auto& [aref, count] : arefs) {
      auto it = std::find(counts.begin(), counts.end(), count);
      base_of[aref] = static_cast<size_t>(it - counts.begin());
      if (it == counts.end()) counts.push_back(count);
    }
    Block* role_body = role->region(0);
    auto loop = std::make_unique<Operation>(OpKind::for_, role->loc());
    loop->add_operand(first);
    loop->add_operand(tiles);
    loop->add_operand(step);
    Block* tile_body = loop->add_region();
    Value* t = tile_body->add_argument(kIndex, three_d ? "unit" : "tile");
    std::vector<Value*> bases;
    for (size_t i = 0; i < std::max<size_t>(1, counts.size()); ++i) {
      // A once-per-tile aref counts the tiles this block has done.
      const bool tiles_done = i < counts.size() && counts[i] == c1;
      loop->add_operand(c0);
      bases.push_back(tile_body->add_argument(kIndex, tiles_done ? "tile_seq" : "seq_base"));
      loop->add_result(kIndex, tiles_done ? "tile_seq_end" : "seq_end");
    }
    // The role's ops move into the loop, after the tile's coordinates.
    // Trailing drains of TMA stores stay after the loop: one wait at the end, not one per tile.
    std::vector<std::unique_ptr<Operation>> drains;
    while (!role_body->ops().empty() &&
           role_body->ops().back()->kind() == OpKind::copy_async_wait) {
      drains.insert(drains.begin(), role_body->remove(role_body->ops().back().get()));
    }
    std::vector<std::unique_ptr<Operation>> ops;
    while (!role_body->ops().empty()) ops.push_back(role_body->remove(role_body->ops()[0].get()));
    Operation* placed = role_body->append(std::move(loop));
    for (auto& d : drains) role_body->append(std::move(d));
    OpBuilder b(tile_body);
    std::vector<Value*> coords;
    Value* part = nullptr;
    if (parts_fastest) {
      part = b.index_op(OpKind::rem, t, parts, grid->result(2)->name(), loc);
      t = b.index_op(OpKind::div, t, parts, "tile", loc);
    } else if (three_d) {
      part = b.index_op(OpKind::div, t, tiles_2d, grid->result(2)->name(), loc);
      t = b.index_op(OpKind::rem, t, tiles_2d, "tile", loc);
    }
    if (two_d) {
      Value* group_index = b.index_op(OpKind::div, t, per_group, "group", loc);
      Value* group_first = b.index_op(OpKind::mul, group_index, c_group, "group_first", loc);
      Value* left = b.index_op(OpKind::sub, tiles_m, group_first, "rows_left", loc);
      Value* rows = b.index_op(OpKind::min, left, c_group, "group_rows", loc);
      Value* within = b.index_op(OpKind::rem, t, per_group, "in_group", loc);
      Value* row_in = b.index_op(OpKind::rem, within, rows, "row_in_group", loc);
      coords.push_back(b.index_op(OpKind::add, group_first, row_in, grid->result(0)->name(), loc));
      coords.push_back(b.index_op(OpKind::div, within, rows, grid->result(1)->name(), loc));
    } else {
      coords.push_back(t);
    }
    if (part) coords.push_back(part);
    if (cluster_dim >= 0) {
      // The cluster's tile along its dimension, then this block's within it (its rank).
      Value*& c = coords[cluster_dim];
      const std::string name = c->name();
      c->set_name(name + "_cluster");
      Value* scaled = b.index_op(OpKind::mul, c, b.index_constant(cluster[cluster_dim], loc),
                                 name + "_first", loc);
      c = b.index_op(OpKind::add, scaled, rank, name, loc);
    }
    for (auto& op : ops) b.insert(std::move(op));
    for (int i = 0; i < grid->num_results(); ++i)
      ir::replace_all_uses(*placed, grid->result(i), coords[i]);
    // Sequence numbers continue across tiles.
    std::vector<Operation*> sequenced;
    ir::walk(placed, [&](Operation* op) {
      if (ir::is_aref_use(op->kind())) sequenced.push_back(op);
    });
    // One `add` per sequence number and block (an acquire and its commit share it; the earlier
    // op of a block dominates the later ones).
    std::map<std::tuple<const Value*, const Block*, const Value*>, Value*> made;
    for (Operation* op : sequenced) {
      Value* base = bases[base_of.at(op->operand(0))];
      Value*& seq = made[{op->operand(1), op->parent_block(), base}];
      if (!seq) {
        OpBuilder at(op->parent_block());
        at.set_insertion_point_before(op);
        seq = at.index_op(OpKind::add, base, op->operand(1), "seq", op->loc());
      }
      op->set_operand(1, seq);
    }
    std::vector<Value*> next;
    for (size_t i = 0; i < bases.size(); ++i) {
      next.push_back(i < counts.size()
                         ? b.index_op(OpKind::add, bases[i], counts[i],
                                      counts[i] == c1 ? "tile_seq_next" : "seq_next", loc)
                         : bases[i]);
    }
    b.create(OpKind::yield, next, {}, loc);
  }
  body.remove(grid);
}

}  // namespace

void make_persistent(ir::Module& module) {
  for (const auto& kernel : module.kernels) make_kernel_persistent(*kernel);
}

}  // namespace tessel::transforms
