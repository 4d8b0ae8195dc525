// What the async passes ask of an op's instruction atom (the `atom` attribute layout synthesis
// sets): its name, whether an mma runs as wgmma (asynchronous, committed in groups), and whether
// a wgmma takes A from registers its loop body computes. One definition for pipeline-loops,
// warp-specialize, pipeline-arefs, lower-mainloops, pingpong-consumers, coarse-pipeline and the
// stage budget; and whether a loop's wgmmas may stay in flight past the ops that follow them.
#pragma once

#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

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

// Every (op, operand index) in `block` and the regions nested in it that reads `v`.
inline std::vector<std::pair<ir::Operation*, int>> uses_in(const ir::Value* v,
                                                           const ir::Block* block) {
  std::vector<std::pair<ir::Operation*, int>> out;
  for (const auto& op : block->ops()) {
    ir::walk(op.get(), [&](ir::Operation* inner) {
      for (int i = 0; i < inner->num_operands(); ++i)
        if (inner->operand(i) == v) out.push_back({inner, i});
    });
  }
  return out;
}

// Whether the wgmma `mmas` of `loop`'s body could be committed as groups left in flight: an
// asynchronous mma's result may feed only the next of these mmas' accumulator or the yield, and
// the carried accumulator only the mmas — another reader would see registers a pending wgmma
// writes. The first value read otherwise and its reader (attention's S read by the softmax, the
// running output rescaled before P·V); nullopt when the mmas may stay in flight. pipeline-loops
// and pipeline-arefs keep such loops' mmas synchronous, and lower-mainloops then leaves them so.
inline std::optional<std::pair<const ir::Value*, ir::Operation*>> read_before_retire(
    const ir::Operation& loop, const std::vector<ir::Operation*>& mmas) {
  const ir::Block* body = loop.region(0);
  auto is_mma = [&](ir::Operation* op) {
    return std::find(mmas.begin(), mmas.end(), op) != mmas.end();
  };
  for (ir::Operation* mma : mmas) {
    for (const auto& [user, index] : uses_in(mma->result(), body))
      if (!(index == 2 && is_mma(user)) && user != body->terminator())
        return std::make_pair(static_cast<const ir::Value*>(mma->result()), user);
    const ir::Value* acc = mma->operand(2);
    if (acc->owner_block() != body || acc->def()) continue;
    for (const auto& [user, index] : uses_in(acc, body))
      if (index != 2 || !is_mma(user)) return std::make_pair(acc, user);
  }
  return std::nullopt;
}

// A loop whose body holds wgmma mmas and register work beside them (an op other than an mma
// whose result is a register tensor: attention's softmax between S = Q·Kᵀ and O += P·V). Its
// warpgroups' paces drift apart (pingpong-consumers gives them turns there; stage-stores then
// lets each warpgroup store its own rows without waiting for the others).
inline bool works_between_wgmmas(const ir::Operation& loop) {
  if (loop.kind() != ir::OpKind::for_) return false;
  bool mma = false, work = false;
  for (const auto& op : loop.region(0)->ops()) {
    mma |= is_wgmma(*op);
    if (op->kind() != ir::OpKind::mma && op->num_results() > 0) {
      const ir::Type& t = op->result()->type();
      work |= t.is_tensor() && t.space() == ir::MemorySpace::reg;
    }
  }
  return mma && work;
}

}  // namespace tessel::transforms
