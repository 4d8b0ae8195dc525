// Types of the tile IR: scalar element types, extents, memory spaces, and tensor types.
//
// A value of the tile IR is either a scalar (an element type, `index` for sizes and coordinates) or
// a tensor. A tensor type says four things: its element type, its shape (each extent static, like
// 128, or a kernel size symbol, like M), the memory it lives in (global, shared, register), and
// optionally its layout. An absent layout means "to be inferred" (layout synthesis fills it in); a
// present one is a plain `shape:stride` layout for global and shared tensors and a thread-value
// layout
// `(T,V) -> coordinates` for register tensors. Layouts are kept as their canonical CuTe text, so
// that types stay cheap to copy and compare; `src/layout/` parses and prints them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace tessel::ir {

enum class ScalarKind {
  i1,
  i4,
  u4,
  i8,
  u8,
  i16,
  i32,
  i64,
  f8e4m3,
  f8e5m2,
  f16,
  bf16,
  f32,
  f64,
  index,
};

std::string_view to_string(ScalarKind kind);
std::optional<ScalarKind> parse_scalar_kind(std::string_view text);
bool is_float(ScalarKind kind);
bool is_integer(ScalarKind kind);  // includes i1 and index
bool is_signed(ScalarKind kind);   // signed integers and index
int bit_width(ScalarKind kind);    // index counts as 64

enum class MemorySpace { global, shared, reg };
std::string_view to_string(MemorySpace space);  // "global", "shared", "register"
std::optional<MemorySpace> parse_memory_space(std::string_view text);

// One extent of a shape: a static number, or a kernel size symbol (M, N, ...).
struct Extent {
  int64_t value = 0;
  std::string symbol;  // non-empty: parametric

  Extent() = default;
  Extent(int64_t v) : value(v) {}                  // NOLINT: extents read like numbers
  Extent(std::string s) : symbol(std::move(s)) {}  // NOLINT
  bool is_static() const { return symbol.empty(); }
  std::string str() const;
  bool operator==(const Extent&) const = default;
};
using Shape = std::vector<Extent>;
std::string to_string(const Shape& shape);  // "[M,64]"
bool is_static(const Shape& shape);

// A scalar or a tensor type. Equality is structural.
class Type {
 public:
  Type() = default;
  static Type scalar(ScalarKind kind);
  static Type tensor(ScalarKind element, Shape shape, MemorySpace space, std::string layout = {});

  bool is_scalar() const { return !is_tensor_; }
  bool is_tensor() const { return is_tensor_; }
  ScalarKind element() const { return element_; }  // the scalar kind for a scalar type
  const Shape& shape() const { return shape_; }
  int rank() const { return static_cast<int>(shape_.size()); }
  MemorySpace space() const { return space_; }
  const std::string& layout() const { return layout_; }  // canonical text; empty = to be inferred
  bool has_layout() const { return !layout_.empty(); }

  // The same tensor type with another element type / shape / space / layout.
  Type with_element(ScalarKind element) const;
  Type with_shape(Shape shape) const;
  Type with_space(MemorySpace space) const;
  Type with_layout(std::string layout) const;

  // Static extents as numbers (asserts that the shape is static).
  std::vector<int64_t> static_shape() const;

  std::string str() const;  // "f32", "register<f32>[128,256]", "shared<f16, (8,8):(8,1)>[8,8]"
  bool operator==(const Type&) const = default;

 private:
  bool is_tensor_ = false;
  ScalarKind element_ = ScalarKind::f32;
  Shape shape_;
  MemorySpace space_ = MemorySpace::reg;
  std::string layout_;
};

}  // namespace tessel::ir
