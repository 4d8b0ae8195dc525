// TMA tensor-map descriptors: built on the host from element type, global shape and strides, box and
// swizzle, checked against the hardware's rules before the driver sees them.
#pragma once

#include <cuda.h>

#include <cstdint>
#include <string>
#include <vector>

namespace tessel::runtime {

enum class TmaElement { u8, u16, u32, i32, u64, i64, f16, bf16, f32, f64, tf32 };
enum class TmaSwizzle { none, b32, b64, b128 };

int element_bytes(TmaElement element);
int swizzle_bytes(TmaSwizzle swizzle);  // 0 for none, else 32 / 64 / 128
std::string to_string(TmaElement element);
std::string to_string(TmaSwizzle swizzle);

// A tiled tensor map. Dimension 0 is the innermost (contiguous) one; `strides_bytes` gives the byte
// strides of dimensions 1.. (dimension 0's stride is the element size), so it has rank-1 entries.
// Out-of-bounds elements of a box read as zero and are not written by stores: this is how tiles at
// the edge of a matrix are handled without predicates.
struct TmaSpec {
  TmaElement element = TmaElement::f16;
  CUdeviceptr address = 0;
  std::vector<std::uint64_t> shape;          // elements per dimension, innermost first
  std::vector<std::uint64_t> strides_bytes;  // rank - 1 entries
  std::vector<std::uint32_t> box;            // box extent per dimension, innermost first
  TmaSwizzle swizzle = TmaSwizzle::none;
  // 128 B, not 256 B: rows that do not start on a 128-byte boundary (K = 1000, 5000; M, N of
  // MN-major operands likewise) ran 10-18% slower with 256-byte promotion and aligned rows the
  // same (bench/results/2026-11-26-tma-l2-promotion-h100.md).
  CUtensorMapL2promotion l2_promotion = CU_TENSOR_MAP_L2_PROMOTION_L2_128B;
};

// Checks `spec` against the rules of cuTensorMapEncodeTiled (rank 1–5; address 16-byte aligned;
// dims in [1, 2^32]; strides multiples of 16 below 2^40; box extents in [1, 256]; the inner box row a
// multiple of 16 bytes and, with a swizzle, no wider than the swizzle span). Throws a UserError that
// names the rule and the offending value. Needs no GPU.
void validate_tma_spec(const TmaSpec& spec);

// Validates, then encodes the descriptor with the driver (needs a GPU).
CUtensorMap make_tma_descriptor(const TmaSpec& spec);

}  // namespace tessel::runtime
