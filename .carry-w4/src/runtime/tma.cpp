#include "runtime/tma.h"

#include "runtime/context.h"
#include "runtime/driver.h"
#include "support/diagnostics.h"

namespace tessel::runtime {
namespace {

CUtensorMapDataType data_type(TmaElement element) {
  switch (element) {
    case TmaElement::u8: return CU_TENSOR_MAP_DATA_TYPE_UINT8;
    case TmaElement::u16: return CU_TENSOR_MAP_DATA_TYPE_UINT16;
    case TmaElement::u32: return CU_TENSOR_MAP_DATA_TYPE_UINT32;
    case TmaElement::i32: return CU_TENSOR_MAP_DATA_TYPE_INT32;
    case TmaElement::u64: return CU_TENSOR_MAP_DATA_TYPE_UINT64;
    case TmaElement::i64: return CU_TENSOR_MAP_DATA_TYPE_INT64;
    case TmaElement::f16: return CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
    case TmaElement::bf16: return CU_TENSOR_MAP_DATA_TYPE_BFLOAT16;
    case TmaElement::f32: return CU_TENSOR_MAP_DATA_TYPE_FLOAT32;
    case TmaElement::f64: return CU_TENSOR_MAP_DATA_TYPE_FLOAT64;
    case TmaElement::tf32: return CU_TENSOR_MAP_DATA_TYPE_TFLOAT32;
  }
  TESSEL_ASSERT(false, "unknown TmaElement");
  return CU_TENSOR_MAP_DATA_TYPE_UINT8;
}

CUtensorMapSwizzle swizzle_mode(TmaSwizzle swizzle) {
  switch (swizzle) {
    case TmaSwizzle::none: return CU_TENSOR_MAP_SWIZZLE_NONE;
    case TmaSwizzle::b32: return CU_TENSOR_MAP_SWIZZLE_32B;
    case TmaSwizzle::b64: return CU_TENSOR_MAP_SWIZZLE_64B;
    case TmaSwizzle::b128: return CU_TENSOR_MAP_SWIZZLE_128B;
  }
  TESSEL_ASSERT(false, "unknown TmaSwizzle");
  return CU_TENSOR_MAP_SWIZZLE_NONE;
}

}  // namespace

int element_bytes(TmaElement element) {
  switch (element) {
    case TmaElement::u8: return 1;
    case TmaElement::u16:
    case TmaElement::f16:
    case TmaElement::bf16: return 2;
    case TmaElement::u32:
    case TmaElement::i32:
    case TmaElement::f32:
    case TmaElement::tf32: return 4;
    case TmaElement::u64:
    case TmaElement::i64:
    case TmaElement::f64: return 8;
  }
  TESSEL_ASSERT(false, "unknown TmaElement");
  return 0;
}

int swizzle_bytes(TmaSwizzle swizzle) {
  switch (swizzle) {
    case TmaSwizzle::none: return 0;
    case TmaSwizzle::b32: return 32;
    case TmaSwizzle::b64: return 64;
    case TmaSwizzle::b128: return 128;
  }
  return 0;
}

std::string to_string(TmaElement element) {
  static const char* kNames[] = {"u8",  "u16",  "u32", "i32", "u64", "i64",
                                 "f16", "bf16", "f32", "f64", "tf32"};
  return kNames[static_cast<int>(element)];
}

std::string to_string(TmaSwizzle swizzle) {
  static const char* kNames[] = {"none", "32B", "64B", "128B"};
  return kNames[static_cast<int>(swizzle)];
}

void validate_tma_spec(const TmaSpec& spec) {
  auto fail = [&](auto&&... parts) {
    user_error(SourceLocation::unknown(), "TMA descriptor (", to_string(spec.element), ", rank ",
               spec.shape.size(), ", swizzle ", to_string(spec.swizzle), "): ", parts...);
  };
  std::size_t rank = spec.shape.size();
  if (rank < 1 || rank > 5) fail("rank must be 1 to 5");
  if (spec.box.size() != rank) fail("box has ", spec.box.size(), " extents, shape has ", rank);
  if (spec.strides_bytes.size() != rank - 1) {
    fail("strides_bytes must have rank-1 = ", rank - 1, " entries, has ",
         spec.strides_bytes.size());
  }
  if (spec.address % 16 != 0) fail("global address 0x", std::hex, spec.address, " is not 16-byte aligned");
  const std::uint64_t element = element_bytes(spec.element);
  for (std::size_t i = 0; i < rank; ++i) {
    if (spec.shape[i] == 0 || spec.shape[i] > (1ULL << 32)) {
      fail("shape[", i, "] = ", spec.shape[i], " must be in [1, 2^32]");
    }
    if (spec.box[i] == 0 || spec.box[i] > 256) {
      fail("box[", i, "] = ", spec.box[i], " must be in [1, 256]");
    }
  }
  for (std::size_t i = 0; i + 1 < rank; ++i) {
    std::uint64_t stride = spec.strides_bytes[i];
    if (stride % 16 != 0) {
      fail("stride of dimension ", i + 1, " is ", stride,
           " bytes; TMA needs a multiple of 16 (pad the rows, e.g. an inner extent divisible by ",
           16 / element, ")");
    }
    if (stride >= (1ULL << 40)) fail("stride of dimension ", i + 1, " is 2^40 bytes or more");
  }
  std::uint64_t inner_row_bytes = spec.box[0] * element;
  if (inner_row_bytes % 16 != 0) {
    fail("the box's inner extent is ", spec.box[0], " elements = ", inner_row_bytes,
         " bytes; it must be a multiple of 16 bytes");
  }
  int span = swizzle_bytes(spec.swizzle);
  if (span != 0 && inner_row_bytes > static_cast<std::uint64_t>(span)) {
    fail("the box's inner extent is ", inner_row_bytes, " bytes, wider than the ", span,
         "-byte swizzle span");
  }
}

CUtensorMap make_tma_descriptor(const TmaSpec& spec) {
  validate_tma_spec(spec);
  context();
  std::size_t rank = spec.shape.size();
  std::vector<cuuint64_t> dims(spec.shape.begin(), spec.shape.end());
  std::vector<cuuint64_t> strides(spec.strides_bytes.begin(), spec.strides_bytes.end());
  // Rank 1 has no strides, but the driver rejects a null globalStrides (CUDA_ERROR_INVALID_VALUE
  // seen on H100, driver 580): pass one it will not use, the padded row size.
  if (strides.empty()) {
    strides.push_back((spec.shape[0] * element_bytes(spec.element) + 15) / 16 * 16);
  }
  std::vector<cuuint32_t> box(spec.box.begin(), spec.box.end());
  std::vector<cuuint32_t> element_strides(rank, 1);
  CUtensorMap map;
  check(driver().cuTensorMapEncodeTiled(
            &map, data_type(spec.element), static_cast<cuuint32_t>(rank),
            reinterpret_cast<void*>(spec.address), dims.data(),
            strides.data(), box.data(), element_strides.data(),
            CU_TENSOR_MAP_INTERLEAVE_NONE, swizzle_mode(spec.swizzle), spec.l2_promotion,
            CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE),
        "cuTensorMapEncodeTiled");
  return map;
}

}  // namespace tessel::runtime
