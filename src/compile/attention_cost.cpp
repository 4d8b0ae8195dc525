#include "compile/attention_cost.h"

#include "transforms/pins.h"

namespace tessel {

using ir::Operation;
using ir::OpKind;

std::optional<AttentionTraits> attention_traits(const ir::Operation& kernel) {
  const Operation* key_loop = nullptr;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    if (op->kind() != OpKind::for_ || key_loop) return;
    int mmas = 0;
    bool exponent = false;
    for (const auto& inner : op->region(0)->ops()) {
      mmas += inner->kind() == OpKind::mma;
      exponent = exponent || inner->kind() == OpKind::exp || inner->kind() == OpKind::exp2;
    }
    if (mmas == 2 && exponent) key_loop = op;
  });
  if (!transforms::kernel_grid(kernel) || !key_loop) return std::nullopt;
  // The trip count: cdiv %L, %c with %L a size and %c a constant (the lower bound 0, step 1).
  const Operation* count = key_loop->operand(1)->def();
  if (!count || count->kind() != OpKind::cdiv) return std::nullopt;
  const Operation* length = count->operand(0)->def();
  const std::optional<int64_t> tile = ir::int_constant(count->operand(1));
  if (!length || length->kind() != OpKind::size || !tile || *tile <= 0) return std::nullopt;
  if (key_loop->num_operands() < 3 || ir::int_constant(key_loop->operand(0)) != 0 ||
      ir::int_constant(key_loop->operand(2)) != 1) {
    return std::nullopt;
  }
  AttentionTraits t;
  t.pingpong = transforms::grid_flag(kernel, "pingpong").value_or(false);
  t.length = length->str_attr("name");
  t.key_tile = *tile;
  return t;
}

size_t attention_model_choice(const std::vector<std::optional<AttentionTraits>>& traits,
                              const std::map<std::string, int64_t>& sizes) {
  if (traits.empty()) return 0;
  for (const auto& t : traits) {
    if (!t || !sizes.count(t->length)) return 0;
  }
  const AttentionTraits& first = *traits[0];
  const int64_t key_tiles = (sizes.at(first.length) + first.key_tile - 1) / first.key_tile;
  const bool want_pingpong = key_tiles <= kPingpongKeyTiles;
  for (size_t i = 0; i < traits.size(); ++i) {
    if (traits[i]->pingpong == want_pingpong) return i;
  }
  return 0;
}

}  // namespace tessel
