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

// Whether every mma of `body` takes its A operand from registers the body computes without
// reading any mma's result (W4A16's dequantized weights: computed from loads alone), so that no
// mma of the iteration waits for another; attention's P V, whose A (P) is computed from S = Q Kᵀ,
// does not qualify, nor does its S, an SS mma.
bool every_mma_takes_a_from_loads(const Block* body) {
  std::set<const Value*> mma_results;
  for (const auto& op : body->ops())
    if (op->kind() == OpKind::mma) mma_results.insert(op->result());
  bool any = false;
  for (const auto& op : body->ops()) {
    if (op->kind() != OpKind::mma) continue;
    if (!takes_a_computed_in(*op, body)) return false;
    any = true;
    // Walk A's definitions back within the body: none may read an mma result.
    std::vector<const Value*> work{op->operand(0)};
    std::set<const Value*> seen;
    while (!work.empty()) {
      const Value* v = work.back();
      work.pop_back();
      if (!seen.insert(v).second) continue;
      if (mma_results.count(v)) return false;
      const Operation* def = v->def();
      if (!def || v->owner_block() != body) continue;
      for (const Value* operand : def->operands()) work.push_back(operand);
    }
  }
  return any;
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
  const bool reads_mma = reads_mma_in_iteration(body);
  if (rs && (!reads_mma || every_mma_takes_a_from_loads(body))) {
    // The RS rule. B tiles: those an mma reads from shared memory (with several mmas, one per
    // scale group, every such mma's: W4A16's token tiles); A tiles: the rest (weights, scales),
    // whose slots are free once read into registers. With the scale applied after each group's
    // mma (its result read in the iteration by an fma) the rule still holds: no mma waits for
    // another's result, so attention's reason for an aref per mma (K released before P V
    // retires) does not arise, and one B ring costs one barrier pair where one per tile would
    // cost a pair each (W4A16 at M = 1 on the H200: 5 rings, 341 SASS instructions a K tile
    // and 16.6 µs a launch; 2 rings, 309 and 12.8 µs: 2026-11-28-h200-first-h200.md and
    // 2026-11-29-w4a16-scale-after-mma-h200.md in bench/results).
    std::set<const Operation*> mmas;
    for (const auto& op : body->ops())
      if (op->kind() == OpKind::mma) mmas.insert(op.get());
    std::optional<size_t> b_group, a_group;
    for (size_t i = 0; i < n; ++i) {
      const std::set<const Operation*> users = readers(loads[i]->result(), body);
      const bool b_tile = reads_mma ? std::any_of(users.begin(), users.end(),
                                                  [&](const Operation* op) {
                                                    return mmas.count(op) > 0;
                                                  })
                                    : users.count(rs) > 0;
      std::optional<size_t>& g = b_tile ? b_group : a_group;
      if (!g) g = i;
      parent[i] = *g;
    }
  } else if (!reads_mma) {
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
