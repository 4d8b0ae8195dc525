// What warp-specialize's producer may compute and load beside the mainloops: address arithmetic,
// and epilogue operands loaded by TMA (warp_specialize.h, "Epilogue operands"). Internal to
// src/transforms/async (warp_specialize.cpp); the functions are the pass's, split out by topic.
#pragma once

#include <functional>
#include <optional>
#include <set>
#include <string>

#include "ir/ir.h"

namespace tessel::transforms {

// Address arithmetic: sizes, constants, scalar arithmetic, tiles and global views — ops without
// regions or effects whose results are scalars or global tensors.
bool is_address_op(const ir::Operation& op);

// "made by <op at loc>", or "a block argument".
std::string made_by(const ir::Value* v);

// A K-invariant operand of the epilogue that the producer loads by TMA into a slot of its own
// aref (header, "Epilogue operands"): `%r = copy %tile : register<...>` after the last mainloop.
struct EpilogueLoad {
  ir::Operation* copy;    // the consumer's global -> register copy
  ir::Operation* tile;    // the `tile` op it reads
  ir::Type buffer;        // the slot buffer: shared, row-major, unswizzled, the tile's shape
  std::string tma_atom;   // the producer's load into it
  std::string read_atom;  // the consumer's shared -> register copy (ld.shared.bN)
};

// `copy` (a top-level global -> register copy of `kernel` after its last mainloop) as an epilogue
// operand the producer can load, or nullopt with the reason in `why`; `closure` gets the
// top-level ops its tile's address needs; `available(v)`: every role can read v.
std::optional<EpilogueLoad> epilogue_load(const ir::Operation& kernel, ir::Operation* copy,
                                          const std::function<bool(const ir::Value*)>& available,
                                          std::set<const ir::Operation*>& closure,
                                          std::string& why);

}  // namespace tessel::transforms
