// What the async passes ask of an op's instruction atom (the `atom` attribute layout synthesis
// sets): its name, whether an mma runs as wgmma (asynchronous, committed in groups), and whether
// a wgmma takes A from registers its loop body computes. One definition for pipeline-loops,
// warp-specialize, pipeline-arefs, lower-mainloops, pingpong-consumers, coarse-pipeline and the
// stage budget.
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

// A wgmma in RS form whose A operand is a register tensor computed in `body` (a W4A16 GEMM's
// dequantized weights): the next iteration rewrites registers it reads until its group retires.
// warp-specialize gives its B tiles an aref of their own, pipeline-arefs keeps no group of it in
// flight, coarse-pipeline's operand form rotates its loop.
inline bool takes_a_computed_in(const ir::Operation& op, const ir::Block* body) {
  if (!is_wgmma(op)) return false;
  const ir::Value* a = op.operand(0);
  return a->type().is_tensor() && a->type().space() == ir::MemorySpace::reg && a->def() &&
         a->owner_block() == body;
}

}  // namespace tessel::transforms
