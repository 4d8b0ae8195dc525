// Types of the tile IR: names, predicates and printing.
#include "ir/type.h"

#include <array>

#include "support/diagnostics.h"

namespace tessel::ir {
namespace {

struct ScalarInfo {
  ScalarKind kind;
  std::string_view name;
  int bits;
};

constexpr std::array<ScalarInfo, 15> kScalars = {{
    {ScalarKind::i1, "i1", 1},
    {ScalarKind::i4, "i4", 4},
    {ScalarKind::u4, "u4", 4},
    {ScalarKind::i8, "i8", 8},
    {ScalarKind::u8, "u8", 8},
    {ScalarKind::i16, "i16", 16},
    {ScalarKind::i32, "i32", 32},
    {ScalarKind::i64, "i64", 64},
    {ScalarKind::f8e4m3, "f8e4m3", 8},
    {ScalarKind::f8e5m2, "f8e5m2", 8},
    {ScalarKind::f16, "f16", 16},
    {ScalarKind::bf16, "bf16", 16},
    {ScalarKind::f32, "f32", 32},
    {ScalarKind::f64, "f64", 64},
    {ScalarKind::index, "index", 64},
}};

const ScalarInfo& info(ScalarKind kind) {
  // kScalars lists the kinds in their enum's order (checked once), so the kind indexes it.
  static const bool in_order = [] {
    for (size_t i = 0; i < kScalars.size(); ++i) {
      if (static_cast<size_t>(kScalars[i].kind) != i) return false;
    }
    return true;
  }();
  const size_t k = static_cast<size_t>(kind);
  if (in_order && k < kScalars.size()) return kScalars[k];
  for (const ScalarInfo& entry : kScalars) {
    if (entry.kind == kind) return entry;
  }
  TESSEL_ASSERT(false, "unknown scalar kind");
  return kScalars[0];
}

}  // namespace

std::string_view to_string(ScalarKind kind) {
  return info(kind).name;
}

std::optional<ScalarKind> parse_scalar_kind(std::string_view text) {
  for (const ScalarInfo& entry : kScalars) {
    if (entry.name == text) return entry.kind;
  }
  return std::nullopt;
}

bool is_float(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::f8e4m3:
    case ScalarKind::f8e5m2:
    case ScalarKind::f16:
    case ScalarKind::bf16:
    case ScalarKind::f32:
    case ScalarKind::f64:
      return true;
    default:
      return false;
  }
}

bool is_integer(ScalarKind kind) {
  return !is_float(kind);
}

bool is_signed(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::i4:
    case ScalarKind::i8:
    case ScalarKind::i16:
    case ScalarKind::i32:
    case ScalarKind::i64:
    case ScalarKind::index:
      return true;
    default:
      return false;
  }
}

int bit_width(ScalarKind kind) {
  return info(kind).bits;
}

std::string_view to_string(MemorySpace space) {
  switch (space) {
    case MemorySpace::global:
      return "global";
    case MemorySpace::shared:
      return "shared";
    case MemorySpace::reg:
      return "register";
  }
  return "?";
}

std::optional<MemorySpace> parse_memory_space(std::string_view text) {
  if (text == "global") return MemorySpace::global;
  if (text == "shared") return MemorySpace::shared;
  if (text == "register") return MemorySpace::reg;
  return std::nullopt;
}

std::string Extent::str() const {
  return is_static() ? std::to_string(value) : symbol;
}

std::string to_string(const Shape& shape) {
  std::string out = "[";
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) out += ",";
    out += shape[i].str();
  }
  return out + "]";
}

bool is_static(const Shape& shape) {
  for (const Extent& e : shape) {
    if (!e.is_static()) return false;
  }
  return true;
}

Type Type::scalar(ScalarKind kind) {
  Type t;
  t.element_ = kind;
  return t;
}

Type Type::tensor(ScalarKind element, Shape shape, MemorySpace space, std::string layout) {
  Type t;
  t.kind_ = Kind::tensor;
  t.element_ = element;
  t.shape_ = std::move(shape);
  t.space_ = space;
  t.layout_ = std::move(layout);
  return t;
}

Type Type::with_element(ScalarKind element) const {
  Type t = *this;
  t.element_ = element;
  return t;
}

Type Type::with_shape(Shape shape) const {
  Type t = *this;
  t.shape_ = std::move(shape);
  return t;
}

Type Type::with_space(MemorySpace space) const {
  Type t = *this;
  t.space_ = space;
  return t;
}

Type Type::with_layout(std::string layout) const {
  Type t = *this;
  t.layout_ = std::move(layout);
  return t;
}

Type Type::aref(std::vector<Type> buffers) {
  Type t;
  t.kind_ = Kind::aref;
  t.buffers_ = std::move(buffers);
  return t;
}

Type Type::mbarrier(int64_t count) {
  Type t;
  t.kind_ = Kind::mbarrier;
  t.count_ = count;
  return t;
}

std::vector<int64_t> Type::static_shape() const {
  std::vector<int64_t> out;
  for (const Extent& e : shape_) {
    TESSEL_ASSERT(e.is_static(), "static_shape of a parametric shape ", to_string(shape_));
    out.push_back(e.value);
  }
  return out;
}

int64_t Type::static_bytes() const {
  int64_t n = 1;
  for (const Extent& e : shape_) {
    TESSEL_ASSERT(e.is_static(), "static_bytes of a parametric shape ", to_string(shape_));
    n *= e.value;
  }
  return (n * bit_width(element_) + 7) / 8;
}

std::string Type::str() const {
  if (kind_ == Kind::aref) {
    std::string out = "aref<";
    for (size_t i = 0; i < buffers_.size(); ++i) out += (i ? ", " : "") + buffers_[i].str();
    return out + ">";
  }
  if (kind_ == Kind::mbarrier) return "mbarrier<" + std::to_string(count_) + ">";
  if (kind_ == Kind::scalar) return std::string(to_string(element_));
  std::string out = std::string(to_string(space_)) + "<" + std::string(to_string(element_));
  if (!layout_.empty()) out += ", " + layout_;
  return out + ">" + to_string(shape_);
}

}  // namespace tessel::ir
