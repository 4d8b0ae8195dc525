// Pins: attributes a tile program writes on an op (most on its block_grid) to fix a choice a
// pass or the emitter would otherwise make (`pingpong = true`, `stores_by = role`,
// `share_role_code = false`, ...). One reading of them for every pass and the emitter, with one
// message for a bad value. (transforms/pins.h brings these into the passes' namespace.)
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "ir/ir.h"
#include "support/diagnostics.h"

namespace tessel::ir {

// The kernel's block_grid (an op at its top level), or null.
inline const Operation* kernel_grid(const Operation& kernel) {
  for (const auto& op : kernel.region(0)->ops())
    if (op->kind() == OpKind::block_grid) return op.get();
  return nullptr;
}

// `key` on `op` as one of `choices` (an identifier or a string); "" when absent. Any other value
// is a user error at the op: "<op>: <key> must be a, b or c, not <value>".
inline std::string pinned_choice(const Operation& op, const std::string& key,
                                 const std::vector<std::string>& choices) {
  const Attribute* a = op.attr(key);
  if (!a) return "";
  if (a->kind == Attribute::Kind::ident || a->kind == Attribute::Kind::string) {
    for (const std::string& c : choices)
      if (a->s == c) return c;
  }
  std::string list;
  for (size_t i = 0; i < choices.size(); ++i)
    list += (i == 0 ? "" : i + 1 == choices.size() ? " or " : ", ") + choices[i];
  user_error(op.loc(), std::string(op.name()), ": ", key, " must be ", list, ", not ",
             a->kind == Attribute::Kind::unit ? std::string("a bare flag") : a->str());
}

// `key` on `op` pinned true or false; nullopt when absent.
inline std::optional<bool> pinned_flag(const Operation& op, const std::string& key) {
  const std::string v = pinned_choice(op, key, {"true", "false"});
  if (v.empty()) return std::nullopt;
  return v == "true";
}

// `key` pinned true or false on the kernel's block_grid; nullopt when absent.
inline std::optional<bool> grid_flag(const Operation& kernel, const std::string& key) {
  const Operation* grid = kernel_grid(kernel);
  return grid ? pinned_flag(*grid, key) : std::nullopt;
}

}  // namespace tessel::ir
