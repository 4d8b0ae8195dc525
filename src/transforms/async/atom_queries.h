// What the async passes ask of an op's instruction atom (the `atom` attribute layout synthesis
// sets): its name, and whether an mma runs as wgmma (asynchronous, committed in groups). One
// definition for pipeline-loops, warp-specialize, pipeline-arefs, lower-mainloops,
// pingpong-consumers, coarse-pipeline and the stage budget.
#pragma once

#include <string>

#include "ir/ir.h"

namespace tessel::transforms {

// The op's `atom` attribute, or "" when it has none.
inline std::string atom_of(const ir::Operation& op) {
  const ir::Attribute* a = op.attr("atom");
  return a && a->kind == ir::Attribute::Kind::string ? a->s : std::string();
}

// An mma whose atom is a wgmma.
inline bool is_wgmma(const ir::Operation& op) {
  return op.kind() == ir::OpKind::mma && atom_of(op).rfind("wgmma.", 0) == 0;
}

}  // namespace tessel::transforms
