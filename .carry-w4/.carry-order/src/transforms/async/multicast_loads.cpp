#include "transforms/async/multicast_loads.h"

#include <map>
#include <regex>
#include <set>

#include "ir/async.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;

void multicast_kernel(Operation& kernel) {
  Block& body = *kernel.region(0);
  Operation* grid = nullptr;
  const Value* rank = nullptr;
  for (const auto& op : body.ops()) {
    if (op->kind() == OpKind::block_grid) grid = op.get();
    if (op->kind() == OpKind::cluster_rank) rank = op->result();
  }
  if (!grid || !grid->has_attr("cluster") || !rank) return;
  int64_t blocks = 1;
  for (int64_t e : grid->ints_attr("cluster")) blocks *= e;
  if (blocks == 1) return;

  static const std::regex atom_re(R"(tma\.load\.2d\.box(\d+)x(\d+)(\..*))");
  std::set<const Value*> empties;  // the empty barriers of rings with a multicast load
  ir::walk(&kernel, [&](Operation* op) {
    if (op->kind() != OpKind::copy_async || op->num_operands() != 4 || !op->has_attr("atom"))
      return;
    std::smatch m;
    const std::string atom = op->str_attr("atom");
    if (!std::regex_match(atom, m, atom_re)) return;
    const Operation* slot = op->operand(1)->def();
    if (!slot || slot->kind() != OpKind::aref_slot) return;
    if (ir::depends_on(op->operand(0), rank)) return;
    const Type& buffer = op->operand(1)->type();
    const int64_t rows = std::stoll(m[1]);
    if (buffer.static_shape()[0] != rows || !splits_into_row_shares(buffer, blocks)) return;
    // The barrier that frees the slot: what the producer waits on just before taking it.
    const Block* b = slot->parent_block();
    size_t at = ir::position_in_block(*slot);
    const Operation* wait = nullptr;
    while (at > 0 && !wait) {
      const Operation* prev = b->ops()[--at].get();
      if (prev->kind() == OpKind::mbarrier_wait) wait = prev;
    }
    if (!wait) {
      user_error(op->loc(), "multicast-loads: ", op->name(), " loads into a slot of ",
                 ir::value_ref(slot->operand(0)),
                 " that the producer takes without waiting on a barrier first (aref_slot after "
                 "mbarrier_wait, as lower-arefs writes it); its multicast could overwrite a "
                 "peer's slot still in use");
    }
    empties.insert(wait->operand(0));
    op->set_attr("atom", Attribute::string("tma.load.2d.box" + std::to_string(rows / blocks) + "x" +
                                           std::string(m[2]) + std::string(m[3])));
    op->set_attr("multicast", Attribute::unit());
  });
  if (empties.empty()) return;

  // The rings' empty barriers wait for every block's consumers, which arrive cluster-wide.
  ir::walk(&kernel, [&](Operation* op) {
    if (op->kind() == OpKind::mbarrier_init && empties.count(op->result())) {
      op->set_attr("arrivals", Attribute::integer(op->int_attr("arrivals") * blocks));
    }
    if (op->kind() == OpKind::mbarrier_arrive && empties.count(op->operand(0))) {
      op->set_attr("cluster", Attribute::unit());
    }
  });
  // Barriers are published to the cluster before any block uses them, and stay until the end.
  Operation* publish = nullptr;
  for (const auto& op : body.ops()) {
    if (op->kind() == OpKind::block_sync) publish = op.get();
  }
  if (publish) {
    ir::OpBuilder at(&body);
    at.set_insertion_point_before(publish);
    at.create(OpKind::cluster_sync, {}, {}, publish->loc());
    body.remove(publish);
  } else {
    user_error(grid->loc(), "multicast-loads: no block_sync publishes the kernel's barriers (run "
                            "lower-arefs first)");
  }
  ir::OpBuilder end(&body);
  end.create(OpKind::cluster_sync, {}, {}, grid->loc());
}

}  // namespace

bool splits_into_row_shares(const Type& t, int64_t parts) {
  static const std::regex swizzle(R"(^Sw<(\d+),(\d+),(\d+)> o 0 o )");
  static const std::regex row_major(R"(^\((\d+),(\d+)\):\((\d+),1\)$)");
  static const std::regex column_blocks(R"(^\((\d+),\((\d+),(\d+)\)\):\((\d+),\(1,(\d+)\)\)$)");
  if (t.rank() != 2) return false;
  std::string layout = t.layout();
  std::smatch m;
  int64_t repeat = 128;
  if (std::regex_search(layout, m, swizzle)) {
    repeat = std::max<int64_t>(
        128, (int64_t{1} << (std::stoll(m[1]) + std::stoll(m[2]) + std::stoll(m[3]))) *
                 ir::bit_width(t.element()) / 8);
    layout = m.suffix();
  }
  int64_t rows = 0, cols = 0;  // of one row-major block
  if (std::regex_match(layout, m, row_major)) {
    rows = std::stoll(m[1]);
    cols = std::stoll(m[2]);
    if (std::stoll(m[3]) != cols) return false;
  } else if (std::regex_match(layout, m, column_blocks)) {
    rows = std::stoll(m[1]);
    cols = std::stoll(m[2]);
    if (std::stoll(m[4]) != cols || std::stoll(m[5]) != rows * cols) return false;
  } else {
    return false;
  }
  if (rows % parts != 0) return false;
  return (rows / parts) * cols * ir::bit_width(t.element()) / 8 % repeat == 0;
}

void multicast_loads(ir::Module& module) {
  for (const auto& kernel : module.kernels) multicast_kernel(*kernel);
}

}  // namespace tessel::transforms
