// Global tensors stored in permuted column blocks: the layout of a packed-weight tensor.
//
// A global tensor [R, C] whose layout is `(R,(P,C/B)):(C,(S,B))`, with P:S a static layout
// that permutes 0..B-1, stores each row as C/B blocks of B elements, element c of a block at
// position (P:S)(c). Its storage is that of a row-major [R, C] tensor at the granularity of
// whole blocks: a copy of a tile whose columns start and end on block boundaries moves the same
// bytes as it would for the row-major tensor (a TMA box, say), and only the order of elements
// inside each block differs. The W4A16 GEMM declares its packed uint4 weights this way, so that
// each consumer thread's fragment of a row is one contiguous run of shared memory in the order
// in which one instruction unpacks it (examples/kernels/gemm_w4a16_packed.tir). Leading
// dimensions may come before the rows, row-major: [E, R, C] with `(E,R,(P,C/B)):(R*C,C,(S,B))`
// holds E such matrices one after another (an MoE layer's experts, examples/kernels/moe_w4a16.tir).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "ir/type.h"

namespace tessel::ir {

struct ColumnBlocks {
  int64_t block = 0;        // B
  std::string permutation;  // "P:S", a layout of B columns onto 0..B-1 (CuTe text)
  // Position of column c (0 <= c < B) inside its block.
  int64_t position(int64_t c) const;
};

// The column blocks of a global tensor type of rank 2 or more whose layout has the form above;
// nothing for any other type (no layout, a row-major or column-major layout, or a
// non-permutation P:S).
std::optional<ColumnBlocks> column_blocks(const Type& global);

}  // namespace tessel::ir
