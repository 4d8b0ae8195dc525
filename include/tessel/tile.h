// The C++ tile language: write what one thread block computes, over tiles in global, shared and
// register memory, and get verified tile IR.
//
// A kernel is a function of a TileBuilder. Sizes (`b.size("M")`) are symbols that shapes and index
// arithmetic use; `b.global` declares a tensor parameter; `b.block_grid(...)` declares the grid and
// gives this block's indices; `T.tile(shape, coords)` is a view of one tile of a tensor; `b.copy`,
// `b.mma`, `b.cast`, elementwise functions (`exp(x)`, `a * b`, `max(a, b)`, ...), `b.reduce_*`,
// `b.broadcast` and `b.loop` compute. Nothing names a thread, a barrier or an instruction: layouts,
// instructions and memory placement of intermediate tiles are left for tessel to choose, and a
// writer who wants control pins them (`x.pin_layout("...")`, `x.pin_atom("...")`, `b.copy(t,
// Shared)`).
//
// Every call records its C++ call site (std::source_location); the IR verifier reports a mistake
// there. Operators (`a + b`) record it through their right-hand operand (TensorOperand below).
// A frontend in another language (the Python builder, python/src/builder.cpp) drives this same
// builder and sets the location its own caller has instead (`TileBuilder::set_location`).
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <source_location>
#include <string>
#include <vector>

#include "ir/ir.h"

namespace tessel {

using Loc = std::source_location;
using ir::MemorySpace;
using ir::ScalarKind;

// Element types, as the papers name them.
inline constexpr ScalarKind i1 = ScalarKind::i1, i4 = ScalarKind::i4, u4 = ScalarKind::u4,
                            i8 = ScalarKind::i8, u8 = ScalarKind::u8, i16 = ScalarKind::i16,
                            i32 = ScalarKind::i32, i64 = ScalarKind::i64,
                            f8e4m3 = ScalarKind::f8e4m3, f8e5m2 = ScalarKind::f8e5m2,
                            f16 = ScalarKind::f16, bf16 = ScalarKind::bf16, f32 = ScalarKind::f32,
                            f64 = ScalarKind::f64;
// Memory spaces.
inline constexpr MemorySpace Global = MemorySpace::global, Shared = MemorySpace::shared,
                             Register = MemorySpace::reg;

class TileBuilder;

// A divisibility fact a size promises: `b.size("K", divisible_by(8))`.
struct Divisibility {
  int64_t divisor = 1;
};
inline Divisibility divisible_by(int64_t n) {
  return {n};
}

// An index-valued scalar (a size, a block index, a loop index, or arithmetic on them).
class Index {
 public:
  Index() = default;
  Index(TileBuilder* b, ir::Value* v) : b_(b), v_(v) {}
  ir::Value* value() const { return v_; }
  TileBuilder* builder() const { return b_; }

 protected:
  TileBuilder* b_ = nullptr;
  ir::Value* v_ = nullptr;
};

// A kernel size: an index whose symbol can also be an extent of a tensor shape.
class Size : public Index {
 public:
  Size() = default;
  Size(TileBuilder* b, ir::Value* v, std::string symbol)
      : Index(b, v), symbol_(std::move(symbol)) {}
  const std::string& symbol() const { return symbol_; }

 private:
  std::string symbol_;
};

// A grid extent: converting an index to it records the caller's source location (a default
// argument of the converting constructor is evaluated where the conversion happens).
struct GridExtent {
  Index index;
  Loc loc;
  GridExtent(const Index& i, Loc where = Loc::current()) : index(i), loc(where) {}  // NOLINT
  GridExtent(const Size& s, Loc where = Loc::current()) : index(s), loc(where) {}   // NOLINT
};

// One extent of a shape: a number or a size.
struct Dim {
  ir::Extent extent;
  Dim(int64_t n) : extent(n) {}               // NOLINT: shapes read {128, 64}
  Dim(int n) : extent(int64_t{n}) {}          // NOLINT
  Dim(const Size& s) : extent(s.symbol()) {}  // NOLINT
};

// A tile coordinate: an index or a number.
struct Coord {
  Index index;
  int64_t constant = 0;
  bool is_constant = false;
  Coord(const Index& i) : index(i) {}                   // NOLINT
  Coord(const Size& s) : index(s) {}                    // NOLINT
  Coord(int64_t n) : constant(n), is_constant(true) {}  // NOLINT
  Coord(int n) : constant(n), is_constant(true) {}      // NOLINT
};

// The order in which a grid's blocks take their tiles. A grid is a set, so the order is free; it
// decides how evenly the SMs are loaded when tiles differ in work and which tiles share L2.
//  - raster_group: blocks taken in groups of this many along dimension 0 of a 2-D grid (the
//    block_grid's `raster_group` attribute, transforms/schedule/raster_blocks.h); 0 leaves the
//    choice to tessel.
//  - alternate_ends: the grid dimension whose index is taken from both of its ends in turns
//    (alternate_ends() below); -1 for none.
struct GridOrder {
  int64_t raster_group = 0;
  int alternate_ends = -1;
};

// Options of a tile view: a masked tile reads `pad` where it lies outside its tensor and drops
// writes there (a partial tile at the edge of a ragged tensor).
struct TileOptions {
  bool masked = false;
  double pad = 0.0;
  std::vector<int64_t> squeeze;  // dimensions of extent 1 to drop from the tile's shape
};
inline TileOptions masked(double pad = 0.0) {
  return {true, pad, {}};
}

// A tensor or a scalar value of the tile program.
class Tensor {
 public:
  Tensor() = default;
  Tensor(TileBuilder* b, ir::Value* v) : b_(b), v_(v) {}
  ir::Value* value() const { return v_; }
  TileBuilder* builder() const { return b_; }
  const ir::Type& type() const { return v_->type(); }
  ScalarKind element() const { return type().element(); }

  // The tile at tile coordinates `coords` (tile i covers elements [i*shape, (i+1)*shape)).
  Tensor tile(const std::vector<int64_t>& shape, const std::vector<Coord>& coords,
              const TileOptions& options = {}, Loc loc = Loc::current()) const;
  // How many elements of dimension `dim` of this tile lie inside its tensor (partial-tile bounds).
  Index extent(int dim, Loc loc = Loc::current()) const;

  // Pins: the writer's choice that tessel checks instead of choosing.
  Tensor& pin_layout(const std::string& layout, Loc loc = Loc::current());
  Tensor& pin_atom(const std::string& atom);
  Tensor& name(const std::string& name);  // the name the IR text shows

 private:
  TileBuilder* b_ = nullptr;
  ir::Value* v_ = nullptr;
};

// A kernel written in the tile language: its module (one kernel op), verified.
class TileKernel {
 public:
  explicit TileKernel(std::unique_ptr<ir::Module> module) : module_(std::move(module)) {}
  ir::Module& module() { return *module_; }
  const ir::Operation& op() const { return *module_->kernels.at(0); }
  std::string text() const;  // the IR text

 private:
  std::shared_ptr<ir::Module> module_;
};

// Builds the kernel `name` by calling `body` with a builder; verifies the result.
TileKernel tile_kernel(const std::string& name, const std::function<void(TileBuilder&)>& body,
                       Loc loc = Loc::current());
// The same, located at `loc` (a frontend's own source, e.g. a Python `def`).
TileKernel tile_kernel(const std::string& name, const std::function<void(TileBuilder&)>& body,
                       const SourceLocation& loc);

class TileBuilder {
 public:
  TileBuilder(ir::Operation* kernel, Loc loc);

  // ---- explicit locations (for frontends that are not C++) ----
  // While set, every op this builder makes and every error it reports is located at `loc`
  // instead of the C++ call site its functions record; unset (nullopt) restores that.
  void set_location(std::optional<SourceLocation> loc) { location_ = std::move(loc); }
  const std::optional<SourceLocation>& location() const { return location_; }
  // Where an op of a call made at `loc` is located: the explicit location when one is set.
  SourceLocation where(const Loc& loc) const;

  // ---- parameters ----
  Size size(const std::string& symbol, Divisibility fact = {}, Loc loc = Loc::current());
  Tensor global(const std::string& name, ScalarKind element, const std::vector<Dim>& shape,
                Loc loc = Loc::current());
  Tensor scalar(const std::string& name, ScalarKind element, Loc loc = Loc::current());
  // Declares a global tensor parameter ready (`ready(%W)` in the kernel's signature): no launch
  // that may still be running when this kernel starts writes it (a model's weights), so a launch
  // that overlaps the one before it may read it before that one has finished (overlap-launches).
  // The kernel must only read it.
  void ready(const Tensor& parameter, Loc loc = Loc::current());

  // ---- grid and indices ----
  // One, two or three grid extents; returns this block's indices (`auto [i, j] = ...`). The call
  // site is recorded through the first extent's conversion.
  std::array<Index, 1> block_grid(GridExtent x);
  std::array<Index, 2> block_grid(GridExtent x, const Index& y);
  std::array<Index, 3> block_grid(GridExtent x, const Index& y, const Index& z);
  std::vector<Index> grid(const std::vector<Index>& extents, Loc loc = Loc::current());
  // The grid with its blocks taking tiles in `order`: the indices returned are tile coordinates
  // (the dimension order.alternate_ends permuted). The same as order_grid(grid(extents), ...).
  std::vector<Index> grid(const std::vector<Index>& extents, const GridOrder& order,
                          Loc loc = Loc::current());
  // Applies `order` to the indices `ids` of a block_grid of `extents` that grid() made: sets its
  // raster_group and returns the indices with dimension order.alternate_ends permuted.
  std::vector<Index> order_grid(const std::vector<Index>& ids, const std::vector<Index>& extents,
                                const GridOrder& order, Loc loc = Loc::current());
  Index index(int64_t value, Loc loc = Loc::current());

  // ---- tensors ----
  Tensor fill(ScalarKind element, const std::vector<int64_t>& shape, double value,
              MemorySpace space = Register, Loc loc = Loc::current());
  Tensor alloc(ScalarKind element, const std::vector<int64_t>& shape, MemorySpace space,
               Loc loc = Loc::current());
  Tensor iota(ScalarKind element, const std::vector<int64_t>& shape, int dim,
              Loc loc = Loc::current());
  Tensor constant(double value, ScalarKind element, Loc loc = Loc::current());
  // A copy of `src` in a new tensor in `space` (registers unless pinned).
  Tensor copy(const Tensor& src, MemorySpace space = Register, Loc loc = Loc::current());
  // Writes `src` into `dst` (a tile of a global tensor, or a tensor made by alloc).
  void copy(const Tensor& src, const Tensor& dst, Loc loc = Loc::current());
  // c + a·b with a: [M,K], b: [K,N], c: [M,N]; returns the new accumulator.
  Tensor mma(const Tensor& a, const Tensor& b, const Tensor& c, Loc loc = Loc::current());
  Tensor cast(const Tensor& x, ScalarKind element, Loc loc = Loc::current());
  Tensor rearrange(const Tensor& x, const std::string& layout = {}, Loc loc = Loc::current());
  // Adds dimensions `new_dims` (positions in the result) so that x fills `shape`.
  Tensor broadcast(const Tensor& x, const std::vector<int64_t>& shape,
                   const std::vector<int64_t>& new_dims, Loc loc = Loc::current());
  Tensor reduce_sum(const Tensor& x, const std::vector<int64_t>& dims, Loc loc = Loc::current());
  Tensor reduce_max(const Tensor& x, const std::vector<int64_t>& dims, Loc loc = Loc::current());
  Tensor reduce_min(const Tensor& x, const std::vector<int64_t>& dims, Loc loc = Loc::current());
  Tensor transpose(const Tensor& x, Loc loc = Loc::current());
  // The global tensor `x` seen through `layout` (coordinates of `shape` -> offsets into x's
  // memory): with hierarchical modes, its contiguous tiles are Graphene's non-contiguous tiles.
  Tensor global_view(const Tensor& x, const std::string& layout, const std::vector<Dim>& shape,
                     Loc loc = Loc::current());

  // ---- control ----
  // for k in [0, count): carried = body(k, carried). Returns the final carried values.
  std::vector<Tensor> loop(
      const Index& count, const std::vector<Tensor>& init,
      const std::function<std::vector<Tensor>(Index, std::vector<Tensor>)>& body,
      Loc loc = Loc::current());
  Tensor loop(const Index& count, const Tensor& init,
              const std::function<Tensor(Index, Tensor)>& body, Loc loc = Loc::current());
  std::vector<Tensor> loop(
      const Index& lo, const Index& hi, const Index& step, const std::vector<Tensor>& init,
      const std::function<std::vector<Tensor>(Index, std::vector<Tensor>)>& body,
      Loc loc = Loc::current());
  // if cond then then_body() else else_body(); both return values of the same types.
  std::vector<Tensor> if_then_else(const Tensor& cond,
                                   const std::function<std::vector<Tensor>()>& then_body,
                                   const std::function<std::vector<Tensor>()>& else_body,
                                   Loc loc = Loc::current());
  std::vector<Tensor> call_external(const std::string& callee, const std::vector<Tensor>& args,
                                    const std::vector<ir::Type>& results, Loc loc = Loc::current());

  // ---- plumbing shared with the free functions ----
  Tensor elementwise(ir::OpKind kind, const std::vector<Tensor>& operands, SourceLocation loc,
                     const std::string& pred = {});
  Index index_op(ir::OpKind kind, const Index& a, const Index& b, SourceLocation loc);
  Tensor as_tensor(const Index& i) const {
    return Tensor(const_cast<TileBuilder*>(this), i.value());
  }
  // A scalar constant of the element type of `like`.
  Tensor splat(double value, ScalarKind element, SourceLocation loc);
  ir::Operation* create(ir::OpKind kind, const std::vector<ir::Value*>& operands,
                        const std::vector<ir::Type>& types, const SourceLocation& loc);

 private:
  ir::Operation* kernel_;
  ir::OpBuilder ops_;
  std::vector<ir::Operation*> size_ops_;
  std::optional<SourceLocation> location_;
};

// The right-hand operands of the arithmetic operators. Converting to them records the caller's
// source location, so that an operator's op is located at the expression that made it.
struct TensorOperand {
  Tensor tensor;
  Loc loc;
  TensorOperand(const Tensor& t, Loc where = Loc::current()) : tensor(t), loc(where) {}  // NOLINT
};
struct NumberOperand {
  double value;
  Loc loc;
  NumberOperand(double v, Loc where = Loc::current()) : value(v), loc(where) {}  // NOLINT
};
struct IndexOperand {
  Index index;
  Loc loc;
  IndexOperand(const Index& i, Loc where = Loc::current()) : index(i), loc(where) {}  // NOLINT
  IndexOperand(const Size& i, Loc where = Loc::current()) : index(i), loc(where) {}   // NOLINT
};
struct IntOperand {
  int64_t value;
  Loc loc;
  IntOperand(int64_t v, Loc where = Loc::current()) : value(v), loc(where) {}  // NOLINT
  IntOperand(int v, Loc where = Loc::current()) : value(v), loc(where) {}      // NOLINT
};

// ---- index arithmetic ----
Index operator+(const Index& a, const IndexOperand& b);
Index operator-(const Index& a, const IndexOperand& b);
Index operator*(const Index& a, const IndexOperand& b);
Index operator/(const Index& a, const IndexOperand& b);
Index operator%(const Index& a, const IndexOperand& b);
Index operator+(const Index& a, const IntOperand& b);
Index operator-(const Index& a, const IntOperand& b);
Index operator*(const Index& a, const IntOperand& b);
Index operator/(const Index& a, const IntOperand& b);
Index operator%(const Index& a, const IntOperand& b);
Index cdiv(const Index& a, const Index& b, Loc loc = Loc::current());
Index cdiv(const Index& a, int64_t b, Loc loc = Loc::current());
Index min(const Index& a, const Index& b, Loc loc = Loc::current());
Index max(const Index& a, const Index& b, Loc loc = Loc::current());
// Index k of [0, n) taken from both ends in turns, the last first: k = 0, 1, 2, 3, ... gives
// n-1, 0, n-2, 1, ... (a permutation of [0, n) for every n >= 1). Where a tile's work grows with
// its index (causal attention's query tiles), consecutive blocks pair a heavy tile with a light
// one. Made of div, rem, sub, mul and add, without a select:
// (k % 2) * (k / 2) + (1 - k % 2) * (n - 1 - k / 2).
Index alternate_ends(const Index& k, const Index& n, Loc loc = Loc::current());

// ---- elementwise (tensors and scalars; a number takes the other operand's element type) ----
Tensor operator+(const Tensor& a, const TensorOperand& b);
Tensor operator-(const Tensor& a, const TensorOperand& b);
Tensor operator*(const Tensor& a, const TensorOperand& b);
Tensor operator/(const Tensor& a, const TensorOperand& b);
Tensor operator-(const Tensor& a);
Tensor operator+(const Tensor& a, const NumberOperand& b);
Tensor operator-(const Tensor& a, const NumberOperand& b);
Tensor operator*(const Tensor& a, const NumberOperand& b);
Tensor operator/(const Tensor& a, const NumberOperand& b);
Tensor operator<(const Tensor& a, const TensorOperand& b);
Tensor operator<=(const Tensor& a, const TensorOperand& b);
Tensor operator>(const Tensor& a, const TensorOperand& b);
Tensor operator>=(const Tensor& a, const TensorOperand& b);
Tensor exp(const Tensor& x, Loc loc = Loc::current());
Tensor exp2(const Tensor& x, Loc loc = Loc::current());
Tensor log(const Tensor& x, Loc loc = Loc::current());
Tensor log2(const Tensor& x, Loc loc = Loc::current());
Tensor sqrt(const Tensor& x, Loc loc = Loc::current());
Tensor rsqrt(const Tensor& x, Loc loc = Loc::current());
Tensor tanh(const Tensor& x, Loc loc = Loc::current());
Tensor sigmoid(const Tensor& x, Loc loc = Loc::current());
// tanh and sigmoid by the hardware's tanh approximation on the GPU (`tanh {approx}`: one
// MUFU.TANH, relative error about 2^-11; sigmoid as 0.5 tanh(x / 2) + 0.5), for epilogues whose
// outputs are 16-bit; the interpreter computes the exact functions.
Tensor approx_tanh(const Tensor& x, Loc loc = Loc::current());
Tensor approx_sigmoid(const Tensor& x, Loc loc = Loc::current());
Tensor abs(const Tensor& x, Loc loc = Loc::current());
Tensor floor(const Tensor& x, Loc loc = Loc::current());
Tensor max(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor min(const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor max(const Tensor& a, double b, Loc loc = Loc::current());
Tensor min(const Tensor& a, double b, Loc loc = Loc::current());
Tensor select(const Tensor& cond, const Tensor& a, const Tensor& b, Loc loc = Loc::current());
Tensor fma(const Tensor& a, const Tensor& b, const Tensor& c, Loc loc = Loc::current());
Tensor compare(const Tensor& a, const Tensor& b, const std::string& pred, Loc loc = Loc::current());
Tensor transpose(const Tensor& x, Loc loc = Loc::current());

}  // namespace tessel
