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

// A scalar, a tensor, or one of the two kinds of value that asynchrony is made of (src/ir/async.h):
// an aref, `aref<T1, T2, ...>` (a ring of slots in shared memory, each slot holding one buffer of
// each listed shared tensor type), and an array of mbarriers, `mbarrier<N>`. Equality is
// structural.
class Type {
 public:
  enum class Kind { scalar, tensor, aref, mbarrier };

  Type() = default;
  static Type scalar(ScalarKind kind);
  static Type tensor(ScalarKind element, Shape shape, MemorySpace space, std::string layout = {});
  static Type aref(std::vector<Type> buffers);
  static Type mbarrier(int64_t count);

  Kind kind() const { return kind_; }
  bool is_scalar() const { return kind_ == Kind::scalar; }
  bool is_tensor() const { return kind_ == Kind::tensor; }
  bool is_aref() const { return kind_ == Kind::aref; }
  bool is_mbarrier() const { return kind_ == Kind::mbarrier; }
  // An aref's buffer types (one per buffer of a slot); an mbarrier array's barrier count.
  const std::vector<Type>& buffers() const { return buffers_; }
  int64_t count() const { return count_; }
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
  // Bytes of a tensor of static shape, rounded up to whole bytes (asserts that the shape is
  // static): what one shared buffer, ring slot or TMA box of this type holds.
  int64_t static_bytes() const;

  std::string str() const;  // "f32", "register<f32>[128,256]", "shared<f16, (8,8):(8,1)>[8,8]"
  bool operator==(const Type&) const = default;

 private:
  Kind kind_ = Kind::scalar;
  std::vector<Type> buffers_;
  int64_t count_ = 0;
  ScalarKind element_ = ScalarKind::f32;
  Shape shape_;
  MemorySpace space_ = MemorySpace::reg;
  std::string layout_;
};

}  // namespace tessel::ir
