// Which aref each of a mainloop's TMA loads goes through (warp_specialize_groups.h). Split from
// warp_specialize.cpp.
#include "transforms/async/warp_specialize_groups.h"

#include <algorithm>
#include <optional>
#include <set>

#include "transforms/async/atom_queries.h"

namespace tessel::transforms {
namespace {

using ir::Block;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Value;

// Whether an mma of the loop body has its result read in the same iteration by an op other than
// the next mma (as its accumulator) or the yield (attention's S, read by the softmax).
bool reads_mma_in_iteration(const Block* body) {
  for (const auto& op : body->ops()) {
    if (op->kind() != OpKind::mma) continue;
    bool read = false;
    for (const auto& top : body->ops()) {
      if (top.get() == body->terminator()) continue;
      ir::walk(top.get(), [&](Operation* user) {
        for (int i = 0; i < user->num_operands(); ++i) {
          if (user->operand(i) == op->result() && !(user->kind() == OpKind::mma && i == 2))
            read = true;
        }
      });
    }
    if (read) return true;
  }
  return false;
}

// The ops of `body` that read shared tile `v`, looking through the views of it (a transpose,
// a slice): the mmas and copies that consume the loaded data.
std::set<const Operation*> readers(const Value* v, const Block* body) {
  std::set<const Operation*> out;
  std::vector<const Value*> work{v};
  while (!work.empty()) {
    const Value* u = work.back();
    work.pop_back();
    ir::walk(const_cast<Block*>(body)->parent(), [&](Operation* op) {
      if (std::find(op->operands().begin(), op->operands().end(), u) == op->operands().end())
        return;
      if (op->num_results() == 1 && op->result()->type().is_tensor() &&
          op->result()->type().space() == MemorySpace::shared) {
        work.push_back(op->result());  // a view
      } else {
        out.insert(op);
      }
    });
  }
  return out;
}

}  // namespace

std::vector<size_t> group_loads(const Operation& loop, const std::vector<Operation*>& loads) {
  const size_t n = loads.size();
  std::vector<size_t> parent(n);
  for (size_t i = 0; i < n; ++i) parent[i] = i;
  auto find = [&](size_t i) {
    while (parent[i] != i) i = parent[i] = parent[parent[i]];
    return i;
  };
  const Block* body = loop.region(0);
  const Operation* rs = nullptr;
  for (const auto& op : body->ops())
    if (!rs && takes_a_computed_in(*op, body)) rs = op.get();
  if (rs && !reads_mma_in_iteration(body)) {
    std::optional<size_t> b_group, a_group;
    for (size_t i = 0; i < n; ++i) {
      const bool b_tile = readers(loads[i]->result(), body).count(rs) > 0;
      std::optional<size_t>& g = b_tile ? b_group : a_group;
      if (!g) g = i;
      parent[i] = *g;
    }
  } else if (!reads_mma_in_iteration(body)) {
    for (size_t i = 0; i < n; ++i) parent[i] = 0;
  } else {
    std::vector<std::set<const Operation*>> users;
    for (const Operation* load : loads) users.push_back(readers(load->result(), body));
    for (size_t i = 0; i < n; ++i) {
      for (size_t j = i + 1; j < n; ++j) {
        bool shared = std::any_of(users[i].begin(), users[i].end(),
                                  [&](const Operation* op) { return users[j].count(op) > 0; });
        if (shared) parent[find(j)] = find(i);
      }
    }
  }
  std::vector<size_t> group, root_group(n, n);
  size_t groups = 0;
  for (size_t i = 0; i < n; ++i) {
    size_t r = find(i);
    if (root_group[r] == n) root_group[r] = groups++;
    group.push_back(root_group[r]);
  }
  return group;
}

}  // namespace tessel::transforms
