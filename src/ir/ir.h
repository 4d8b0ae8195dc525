// The tile IR: SSA values, operations with attributes and nested regions, blocks, and modules.
//
// A tile program says what one thread block computes. A module holds kernels; a kernel op owns one
// region whose block arguments are the kernel's parameters (global tensors and scalars) and whose
// ops run, in order, once per block of the grid that its `block_grid` op declares. Every op has
// operands (values defined earlier in the same block or in an enclosing one: dominance is lexical),
// results, attributes, and possibly regions (`for`, `if`, `kernel`), each region a single block
// that ends in `yield` where it returns values.
//
// Values are SSA with one exception that memory forces on us: a tensor made by `alloc` is a place,
// and `copy %src, %dst` writes into it. Every other op makes a fresh value. Global and shared
// tensors produced by `tile`, `transpose` and `global_view` are *views*: they alias the memory of
// their source. Register tensors are values distributed over the threads of the block; which thread
// holds which element is the register tensor's thread-value layout, absent until layout synthesis.
//
// The op set follows Hexcute's tile primitives (global_view, alloc = register_tensor/shared_tensor,
// copy, mma, cast, rearrange, elementwise, reduce), which are Graphene's specs at block level, plus
// what a whole kernel needs: sizes with divisibility facts, the block grid, tiles of a tensor with
// partial-tile masking, fill, iota, broadcast, scalar arithmetic, for/if/yield and call_external.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "ir/type.h"
#include "support/diagnostics.h"

namespace tessel::ir {

class Operation;
class Block;

enum class OpKind {
  // structure
  kernel,
  for_,
  if_,
  yield,
  call_external,
  // sizes, constants, grid
  size,
  constant,
  block_grid,
  // tensors in memory
  global_view,
  tile,
  tile_extent,
  transpose,
  alloc,
  fill,
  iota,
  copy,
  // compute
  mma,
  cast,
  rearrange,
  broadcast,
  reduce,
  // elementwise, unary
  neg,
  abs,
  exp,
  exp2,
  log,
  log2,
  sqrt,
  rsqrt,
  tanh,
  sigmoid,
  floor,
  // elementwise, binary
  add,
  sub,
  mul,
  div,
  rem,
  max,
  min,
  cdiv,
  cmp,
  // elementwise, ternary
  select,
  fma,
  // asynchrony (src/ir/async.h): roles and arefs ...
  warp_group,
  aref,
  aref_acquire,
  aref_commit,
  aref_wait,
  aref_release,
  mma_commit,
  mma_wait,
  // ... and what arefs lower to
  mbarrier_init,
  block_sync,
  aref_slot,
  mbarrier_wait,
  mbarrier_arrive,
  mbarrier_expect_tx,
  copy_async,
  setmaxnreg,
  // stores through shared memory (an epilogue staged for TMA stores)
  copy_async_commit,
  copy_async_wait,
  fence_proxy_async,
  role_sync,
  // the order in which a role's warpgroups issue (ping-pong of two consumer warpgroups)
  turn_begin,
  turn_wait,
  turn_pass,
  // thread-block clusters (several blocks that share shared memory and barriers)
  cluster_sync,
  // launches that overlap the launch before them (programmatic dependent launch; overlap-launches)
  grid_wait,
  launch_dependents,
  prefetch,
  // register tensors
  slice,
  // the machine
  sm_count,
  cluster_rank,
  // memory the launch provides and blocks that meet through it (a split reduction's partial
  // tiles and arrival counters; see "Workspaces" in verifier.h)
  workspace,
  workspace_part,
  counter_arrive,
  // grouped problems: which group a tile of a flat list of every group's tiles belongs to
  find_group,
};

// Static facts about an op kind.
struct OpInfo {
  OpKind kind;
  std::string_view name;  // the op's name in text
  int arity;              // elementwise arity (1, 2, 3), 0 for other ops
};
const OpInfo& op_info(OpKind kind);
std::string_view op_name(OpKind kind);
std::optional<OpKind> parse_op_kind(std::string_view name);
inline bool is_elementwise(OpKind kind) {
  return op_info(kind).arity > 0;
}
// Integer index arithmetic: + - * / % cdiv min max and comparisons (what int_arith folds). Passes
// that move, copy or hoist scalar index computations ask this.
inline bool is_index_arithmetic(OpKind kind) {
  switch (kind) {
    case OpKind::add:
    case OpKind::sub:
    case OpKind::mul:
    case OpKind::div:
    case OpKind::rem:
    case OpKind::cdiv:
    case OpKind::min:
    case OpKind::max:
    case OpKind::cmp:
      return true;
    default:
      return false;
  }
}

// An SSA value: an op result or a block argument.
class Value {
 public:
  Value(Type type, std::string name) : type_(std::move(type)), name_(std::move(name)) {}
  const Type& type() const { return type_; }
  void set_type(Type type) { type_ = std::move(type); }
  const std::string& name() const { return name_; }  // a name hint for printing, without '%'
  void set_name(std::string name) { name_ = std::move(name); }
  Operation* def() const { return def_; }        // null for a block argument
  Block* owner_block() const { return block_; }  // the block that defines it (args) or holds def
  int index() const { return index_; }           // result or argument number

 private:
  friend class Operation;
  friend class Block;
  Type type_;
  std::string name_;
  Operation* def_ = nullptr;
  Block* block_ = nullptr;
  int index_ = 0;
};

// An attribute value. Floats keep full double precision; lists hold integers.
struct Attribute {
  enum class Kind { unit, integer, real, string, ident, int_list, layout };
  Kind kind = Kind::unit;
  int64_t i = 0;
  double f = 0;
  std::string s;  // string, ident (a bare word such as `sum`), or layout text
  std::vector<int64_t> list;

  static Attribute unit() { return {}; }
  static Attribute integer(int64_t v) { return {Kind::integer, v, 0, {}, {}}; }
  static Attribute real(double v) { return {Kind::real, 0, v, {}, {}}; }
  static Attribute string(std::string v) { return {Kind::string, 0, 0, std::move(v), {}}; }
  static Attribute ident(std::string v) { return {Kind::ident, 0, 0, std::move(v), {}}; }
  static Attribute ints(std::vector<int64_t> v) { return {Kind::int_list, 0, 0, {}, std::move(v)}; }
  static Attribute layout(std::string v) { return {Kind::layout, 0, 0, std::move(v), {}}; }
  std::string str() const;
  bool operator==(const Attribute& other) const;
};

// A divisibility fact about a kernel size: `symbol % divisor == 0`.
struct Fact {
  std::string symbol;
  int64_t divisor = 1;
  bool operator==(const Fact&) const = default;
};

// What only a kernel op has: its name, its size symbols and the facts about them.
struct KernelSignature {
  std::string name;
  std::vector<std::string> sizes;
  std::vector<Fact> facts;
  // `ready(%W, ...)`: parameters (argument numbers) that no earlier launch still running writes,
  // such as a model's weights. The kernel only reads them, and a launch that overlaps the one
  // before it (overlap-launches) may read them before that launch has finished.
  std::vector<int> ready;
};

// A straight-line list of ops with arguments. Every region is one block.
class Block {
 public:
  explicit Block(Operation* parent) : parent_(parent) {}
  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  Operation* parent() const { return parent_; }
  Value* add_argument(Type type, std::string name);
  const std::vector<std::unique_ptr<Value>>& arguments() const { return args_; }
  Value* argument(int i) const { return args_.at(i).get(); }

  const std::vector<std::unique_ptr<Operation>>& ops() const { return ops_; }
  Operation* append(std::unique_ptr<Operation> op);
  Operation* insert(size_t position, std::unique_ptr<Operation> op);
  std::unique_ptr<Operation> remove(Operation* op);  // detaches op and returns it
  Operation* terminator() const;                     // the final yield, or null

 private:
  Operation* parent_;
  std::vector<std::unique_ptr<Value>> args_;
  std::vector<std::unique_ptr<Operation>> ops_;
};

class Operation {
 public:
  Operation(OpKind kind, SourceLocation loc) : kind_(kind), loc_(std::move(loc)) {}
  Operation(const Operation&) = delete;
  Operation& operator=(const Operation&) = delete;

  OpKind kind() const { return kind_; }
  std::string_view name() const { return op_name(kind_); }
  const SourceLocation& loc() const { return loc_; }

  const std::vector<Value*>& operands() const { return operands_; }
  Value* operand(int i) const { return operands_.at(i); }
  int num_operands() const { return static_cast<int>(operands_.size()); }
  void add_operand(Value* value) { operands_.push_back(value); }
  void set_operand(int i, Value* value) { operands_.at(i) = value; }

  const std::vector<std::unique_ptr<Value>>& results() const { return results_; }
  Value* result(int i = 0) const { return results_.at(i).get(); }
  int num_results() const { return static_cast<int>(results_.size()); }
  Value* add_result(Type type, std::string name);

  const std::map<std::string, Attribute>& attributes() const { return attrs_; }
  bool has_attr(const std::string& key) const { return attrs_.count(key) > 0; }
  const Attribute* attr(const std::string& key) const;
  void set_attr(const std::string& key, Attribute value) { attrs_[key] = std::move(value); }
  void remove_attr(const std::string& key) { attrs_.erase(key); }
  // Typed accessors that assert the attribute exists with that kind.
  int64_t int_attr(const std::string& key) const;
  double real_attr(const std::string& key) const;
  const std::string& str_attr(const std::string& key) const;  // string, ident or layout
  const std::vector<int64_t>& ints_attr(const std::string& key) const;

  const std::vector<std::unique_ptr<Block>>& regions() const { return regions_; }
  Block* region(int i) const { return regions_.at(i).get(); }
  Block* add_region();

  Block* parent_block() const { return parent_; }
  Operation* parent_op() const;

  // Only for kernel ops.
  KernelSignature& signature() { return signature_; }
  const KernelSignature& signature() const { return signature_; }

 private:
  friend class Block;
  OpKind kind_;
  SourceLocation loc_;
  std::vector<Value*> operands_;
  std::vector<std::unique_ptr<Value>> results_;
  std::map<std::string, Attribute> attrs_;
  std::vector<std::unique_ptr<Block>> regions_;
  Block* parent_ = nullptr;
  KernelSignature signature_;
};

// A translation unit of the tile IR: one or more kernels.
struct Module {
  std::vector<std::unique_ptr<Operation>> kernels;
  Operation* find_kernel(std::string_view name) const;
};

// A mainloop: a `for` whose body (directly, not in a nested region) copies a global tile into
// shared memory. The loops that pipelining (pipeline-loops) and block ordering (raster-blocks)
// act on.
bool is_mainloop(const Operation& op);

// A tile op's row window (`window = D`: two more operands after the coordinates, the first
// element and the extent of the part of dimension D that the tile addresses; see "Windows" in
// src/ir/grouped.h): the dimension, or -1 for a tile without one.
int tile_window_dim(const Operation& tile);

// A tile op's indirect dimension (`indirect = D`: the last operand is a global i32 tensor of one
// dimension, the row map; the tile's coordinate i along D addresses the tensor's row map[i]; see
// "Indirect tiles" in src/ir/grouped.h): the dimension, or -1 for a tile without one.
int tile_indirect_dim(const Operation& tile);
// The row map of a tile with an indirect dimension (null without one).
const Value* tile_indirect_map(const Operation& tile);

// The dimensions of a `tile` op's tensor that its result keeps: all of them but those its
// `squeeze` attribute drops, in order.
std::vector<int> tile_kept_dims(const Operation& tile);

// How diagnostics and reports name things: "%name" ("%?" for an unnamed value), and an op as
// "NAME at FILE:LINE:COLUMN" (just NAME when its location is unknown).
std::string value_ref(const Value* v);
std::string op_where(const Operation& op);

// The tensor a view stands for: `v` through every `tile` and `transpose` that made it (a
// kernel parameter or an alloc; `v` itself when it is not a view).
const Value* storage_root(const Value* v);

// Visits op and every op nested in its regions, parents before children, in program order.
template <typename F>
void walk(Operation* op, F&& visit) {
  visit(op);
  for (const auto& region : op->regions()) {
    for (size_t i = 0; i < region->ops().size(); ++i) walk(region->ops()[i].get(), visit);
  }
}

// Makes ops at an insertion point: the end of a block, or just before an op of it.
class OpBuilder {
 public:
  explicit OpBuilder(Block* block) : block_(block) {}
  Block* block() const { return block_; }
  void set_block(Block* block) {
    block_ = block;
    before_ = nullptr;
  }
  // New ops go just before `op` (in op's block), in the order they are made.
  void set_insertion_point_before(Operation* op);

  Operation* create(OpKind kind, const std::vector<Value*>& operands,
                    const std::vector<Type>& result_types, SourceLocation loc = {});
  // Inserts an op made elsewhere (e.g. by clone) at the insertion point.
  Operation* insert(std::unique_ptr<Operation> op);

  // Index arithmetic, as the passes that write slots, parities and tile coordinates make it:
  // `%name = KIND %x, %y : index`, and `%cV = const {value = V} : index`.
  Value* index_op(OpKind kind, Value* x, Value* y, const std::string& name,
                  SourceLocation loc = {});
  Value* index_constant(int64_t value, SourceLocation loc = {});
  // `%name = cmp %x, %y {pred = PRED} : i1` (PRED: lt, le, gt, ge, eq, ne).
  Value* compare(const std::string& pred, Value* x, Value* y, const std::string& name,
                 SourceLocation loc = {});

 private:
  Block* block_;
  Operation* before_ = nullptr;
};

// The position of `op` in its block.
size_t position_in_block(const Operation& op);

// The value of an integer `const` op's result; nullopt for any other value.
std::optional<int64_t> int_constant(const Value* v);

// Whether `v` is defined inside `op`: a result or block argument of an op nested in op's regions.
bool defined_inside(const Value* v, const Operation& op);

// Whether `v` is computed from `on`: through the operands of the ops that define it, and for a
// block argument through the operands of the op that owns the block (a loop's bounds and initial
// values) and what its region yields. Conservative for nothing else: a value defined by an op
// with regions depends on everything those regions use.
bool depends_on(const Value* v, const Value* on);

// A deep copy of `op` and its regions. Operands found in `mapping` are replaced by their images;
// others are kept (values defined outside the copy). Every value the copy defines is added to
// `mapping` (old -> new), so copying ops one after another keeps their def-use chains.
std::unique_ptr<Operation> clone(const Operation& op,
                                 std::unordered_map<const Value*, Value*>& mapping);

// Inlines a region: copies the ops of `block` but its final yield to the end of `into` (through
// `mapping`, as clone does) and returns the yield's operands as mapped (the values the region
// gives its owner's results).
std::vector<Value*> inline_block(const Block& block, Block& into,
                                 std::unordered_map<const Value*, Value*>& mapping);

}  // namespace tessel::ir
