// The task language (Cypress, PLDI 2025, §3): a computation written sequentially as tasks over
// tensors, and nothing about where it runs. A separate mapping (src/frontend/task/mapping.h) says
// which variant of each task runs on which processor level and where each tensor lives; the
// compiler (src/transforms/task/) infers parallelism, data movement and synchronization from the
// tasks' privileges, and a mapping can change only speed, never results.
//
// A *task* is a name and a signature: its tensor parameters, each with a privilege (read, write,
// read-write, reduce). A task has *variants*, all sharing that signature:
//  - an *inner* variant partitions its tensors (`blocks`) and launches sub-tasks on the pieces:
//    one launch, a sequential `srange` of launches, or a parallel `prange` whose launches must not
//    write the same piece (aliasing writes are an error);
//  - a *leaf* variant computes on its tensors with the tile language's operations (fill, copy,
//    mma, elementwise, reduce, mask) and launches nothing.
// Variants read *tunables* (`b.tunable("U")`): integers the mapping fixes, such as tile sizes.
//
// Variant bodies are C++ functions of a builder, called once when the program is made: they
// record statements over symbolic index expressions (`Expr`: constants, the kernel's sizes,
// tunables, a parameter's extent, loop indices and arithmetic). The program is therefore data
// that the task interpreter runs directly (the oracle, sequential semantics) and the compiler
// lowers; every statement keeps its C++ call site for error messages.
//
// A GEMM (Cypress Figure 5, examples/tasks/gemm.cpp):
//   TaskProgram p("gemm");
//   p.task("gemm", {{"C", Privilege::write}, {"A", Privilege::read}, {"B", Privilege::read}});
//   p.inner("gemm", "gemm_grid", [](Inner& b) {
//     auto [C, A, B] = b.params<3>();
//     auto U = b.tunable("U"), V = b.tunable("V");
//     auto Cp = b.blocks(C, {U, V}), Ap = b.blocks(A, {U, A.dim(1)}), Bp = b.blocks(B, {V,
//     B.dim(1)}); b.prange({"i", "j"}, {cdiv(C.dim(0), U), cdiv(C.dim(1), V)}, [&](const Indices&
//     ij) {
//       b.launch("gemm", {Cp({ij[0], ij[1]}), Ap({ij[0], 0}), Bp({ij[1], 0})});
//     });
//   });
#pragma once

#include <array>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <source_location>
#include <string>
#include <string_view>
#include <vector>

#include "ir/type.h"
#include "support/diagnostics.h"

namespace tessel::task {

using ir::ScalarKind;
using Loc = std::source_location;

enum class Privilege { read, write, read_write, reduce };
std::string_view privilege_name(Privilege p);
inline bool reads(Privilege p) {
  return p != Privilege::write;
}
inline bool writes(Privilege p) {
  return p != Privilege::read;
}

// ---------------------------------------------------------------------------------------------
// Index expressions.

class Expr {
 public:
  enum class Kind { constant, size, tunable, extent, var, add, sub, mul, div, cdiv, min };
  Expr(int64_t value = 0);                       // NOLINT: shapes read {U, 64}
  Expr(int value) : Expr(int64_t{value}) {}      // NOLINT
  static Expr size(const std::string& symbol);   // a size of the kernel's global tensors (M)
  static Expr tunable(const std::string& name);  // fixed by the mapping
  static Expr extent(int param, int dim);        // extent `dim` of the variant's parameter
  static Expr var(const std::string& name);      // a loop index
  static Expr binary(Kind kind, const Expr& a, const Expr& b);

  Kind kind() const;
  int64_t value() const;            // constant
  const std::string& name() const;  // size, tunable, var
  int param() const;                // extent
  int dim() const;                  // extent
  const Expr& lhs() const;
  const Expr& rhs() const;
  bool is_constant() const { return kind() == Kind::constant; }
  std::string str() const;

 private:
  struct Node;
  explicit Expr(std::shared_ptr<const Node> node) : node_(std::move(node)) {}
  std::shared_ptr<const Node> node_;
};
Expr operator+(const Expr& a, const Expr& b);
Expr operator-(const Expr& a, const Expr& b);
Expr operator*(const Expr& a, const Expr& b);
Expr operator/(const Expr& a, const Expr& b);  // exact division (floor for non-negative values)
Expr cdiv(const Expr& a, const Expr& b);
Expr min(const Expr& a, const Expr& b);
using Indices = std::vector<Expr>;

// Folds constants and the identities x+0, x*1, x*0, x/1; replaces leaves through `leaf` (which
// returns the replacement, or the leaf itself).
Expr simplify(const Expr& e, const std::function<Expr(const Expr&)>& leaf = nullptr);
// The value of `e` when every leaf has one (`leaf` returns false for an unknown one).
bool evaluate(const Expr& e, const std::function<bool(const Expr&, int64_t&)>& leaf, int64_t& out);

// ---------------------------------------------------------------------------------------------
// The recorded program.

// blocks: tiles of a given extent. mma: the pieces of one operand that the warpgroups of a
// block's wgmma take, one piece per warpgroup (Cypress's partition_by_mma at the warpgroup level;
// below it, the thread-level fragments are layout synthesis's): the accumulator C [M, N] and A
// [M, K] in rows of the instruction's M = 64 (piece i: rows [64 i, 64 i + 64)), B [N, K] whole
// for every warpgroup. Its pieces take one coordinate, the warpgroup's.
enum class PartitionKind { blocks, mma };
enum class MmaOperand { A, B, C };

// A tensor a variant body names: a parameter, a local (`make_tensor`), or a piece of a partition.
struct TensorDef {
  enum class Kind { param, local, piece } kind = Kind::param;
  int param = -1;                        // param
  ScalarKind element = ScalarKind::f32;  // local
  std::vector<Expr> shape;               // local
  int partition = -1;                    // piece
  std::vector<Expr> coords;              // piece
  SourceLocation loc;
};

struct PartitionDef {
  PartitionKind kind = PartitionKind::blocks;
  int source = -1;                     // a tensor of the variant
  std::vector<Expr> block;             // the pieces' extents
  MmaOperand operand = MmaOperand::C;  // mma
  SourceLocation loc;
};

// A statement of an inner variant.
struct Stmt {
  enum class Kind { launch, srange, prange } kind = Kind::launch;
  std::string task;               // launch
  std::vector<int> args;          // launch: tensors of the variant
  std::vector<std::string> vars;  // srange / prange
  std::vector<Expr> extents;      // srange / prange: vars[i] in [0, extents[i])
  std::vector<Stmt> body;         // srange / prange
  SourceLocation loc;
};

// An operation of a leaf variant, on its parameters (tile-language semantics, in place). Tensors
// are matrices or vectors written with the rank of the pieces they are (a [1, U, D] piece of a
// [BH, S, D] tensor is a U×D matrix): extents of 1 are no dimension of their own.
//   fill:        dst = value
//   copy:        dst = src (converted to dst's element type)
//   mma:         dst += a · bᵀ  (dst [m,n], a [m,k], b [n,k]; products summed in f32); with
//                `b_kn`, dst += a · b (b [k,n]: the P·V of attention with V [keys, d]). Leading
//                extents, if any, are 1.
//   elementwise: dst = op(src...)  with op one of add, sub, mul, div, max, min, fma (a·b + c),
//                neg, exp, exp2, relu, sigmoid, silu (x·sigmoid(x)); computed in f32, then
//                converted to dst's element type. A source is a tensor of dst's rank whose every
//                extent is dst's or 1 (an extent of 1 is broadcast: a [U, 1] column of row
//                values along a [U, W] tile's columns), or a number (`Leaf::number`).
//   reduce_sum:  dst += Σ over dimension `dim` of src (dst has src's other dimensions, or all
//                of them with `dim` of extent 1)
//   reduce_max:  dst = max(dst, max over dimension `dim` of src) (the running row max)
//   mask:        dst[c] = value wherever c[dim] is the index of an element of `ref` along
//                `ref_dim` that lies outside the tensor `ref` is a piece of (keys past a ragged
//                sequence length: the scores of a partial key tile set to -inf); ref's data is
//                not read
//   mask_causal: dst[.., r, c] = value wherever column c's position in the tensor `cols` is a
//                piece of (along `ref_dim`) is after row r's position in the tensor of `rows`
//                (keys after the query: causal attention); operands {dst, rows, cols}
struct LeafOp {
  enum class Kind {
    fill,
    copy,
    mma,
    elementwise,
    reduce_sum,
    reduce_max,
    mask,
    mask_causal
  } kind = Kind::fill;
  // Parameters: dst first. An elementwise source < 0 is the number scalars[-1 - operand].
  std::vector<int> operands;
  std::string op;             // elementwise
  double value = 0;           // fill, mask
  int dim = 0;                // reduce_sum, reduce_max, mask (of dst)
  SourceLocation loc;
  std::vector<double> scalars;  // elementwise
  bool b_kn = false;            // mma: b is [k, n]
  int ref_dim = 0;              // mask, mask_causal: the dimension of the refs that dst walks
};

struct Param {
  std::string name;
  Privilege privilege = Privilege::read;
};

struct TaskDecl {
  std::string name;
  std::vector<Param> params;
  SourceLocation loc;
};

enum class VariantKind { inner, leaf };

struct Variant {
  std::string name;
  std::string task;
  VariantKind kind = VariantKind::inner;
  std::vector<std::string> tunables;  // the names the body reads
  std::vector<TensorDef> tensors;     // inner: params first, then locals and pieces
  std::vector<PartitionDef> partitions;
  std::vector<Stmt> body;   // inner
  std::vector<LeafOp> ops;  // leaf
  SourceLocation loc;
};

// A tensor of the kernel: an argument in global memory whose extents are size symbols ("M") or
// numbers ("1").
struct GlobalTensor {
  std::string name;
  ScalarKind element = ScalarKind::f16;
  std::vector<std::string> shape;
};
// An extent of a global tensor as an expression: a number, or the size symbol.
Expr global_extent(const std::string& extent);
// Its value at `sizes` (UserError naming a size that has none).
int64_t global_extent(const std::string& extent, const std::map<std::string, int64_t>& sizes);

class Inner;
class Leaf;

class TaskProgram {
 public:
  explicit TaskProgram(std::string name) : name_(std::move(name)) {}
  const std::string& name() const { return name_; }

  void global(const std::string& name, ScalarKind element, std::vector<std::string> shape,
              Loc loc = Loc::current());
  void task(const std::string& name, std::vector<Param> params, Loc loc = Loc::current());
  void inner(const std::string& task, const std::string& variant,
             const std::function<void(Inner&)>& body, Loc loc = Loc::current());
  void leaf(const std::string& task, const std::string& variant,
            const std::function<void(Leaf&)>& body, Loc loc = Loc::current());
  // The launch the mapping's entrypoint instance runs: `task` on the named global tensors.
  void entry(const std::string& task, std::vector<std::string> globals, Loc loc = Loc::current());

  const std::vector<GlobalTensor>& globals() const { return globals_; }
  const std::vector<TaskDecl>& tasks() const { return tasks_; }
  const std::vector<Variant>& variants() const { return variants_; }
  const std::string& entry_task() const { return entry_task_; }
  const std::vector<int>& entry_args() const { return entry_args_; }  // into globals()
  const TaskDecl* find_task(const std::string& name) const;
  const Variant* find_variant(const std::string& name) const;
  const GlobalTensor* find_global(const std::string& name) const;

 private:
  // A new variant of `task` (checked: the task declared, the variant name new), and its task.
  Variant new_variant(const std::string& task, const std::string& variant, VariantKind kind,
                      Loc loc, const TaskDecl*& decl) const;

  std::string name_;
  std::vector<GlobalTensor> globals_;
  std::vector<TaskDecl> tasks_;
  std::vector<Variant> variants_;
  std::string entry_task_;
  std::vector<int> entry_args_;
};

// ---------------------------------------------------------------------------------------------
// Builders of variant bodies.

// A tensor of an inner variant's body.
class TensorRef {
 public:
  TensorRef() = default;
  TensorRef(Variant* v, int id) : variant_(v), id_(id) {}
  int id() const { return id_; }
  // Extent `d` of this tensor, as an expression of the variant's parameters and tunables.
  Expr dim(int d) const;

 private:
  Variant* variant_ = nullptr;
  int id_ = -1;
};

class PartitionRef {
 public:
  PartitionRef() = default;
  PartitionRef(Inner* b, int id) : b_(b), id_(id) {}
  // The piece at `coords` (piece i of a blocks partition covers [i*block, (i+1)*block)).
  TensorRef operator()(const Indices& coords, Loc loc = Loc::current()) const;

 private:
  Inner* b_ = nullptr;
  int id_ = -1;
};

class Inner {
 public:
  Inner(Variant* v, const TaskDecl* task) : v_(v), task_(task) {}
  TensorRef param(int i) const;
  TensorRef param(const std::string& name, Loc loc = Loc::current()) const;
  template <size_t N>
  std::array<TensorRef, N> params() const {
    std::array<TensorRef, N> out;
    for (size_t i = 0; i < N; ++i) out[i] = param(static_cast<int>(i));
    return out;
  }
  Expr tunable(const std::string& name);
  TensorRef make_tensor(ScalarKind element, std::vector<Expr> shape, Loc loc = Loc::current());
  PartitionRef blocks(const TensorRef& t, std::vector<Expr> block, Loc loc = Loc::current());
  // The pieces of a rank-2 operand of a wgmma over warpgroups (PartitionKind::mma).
  PartitionRef mma_partition(const TensorRef& t, MmaOperand operand, Loc loc = Loc::current());
  void launch(const std::string& task, const std::vector<TensorRef>& args,
              Loc loc = Loc::current());
  void srange(const std::string& var, const Expr& extent,
              const std::function<void(const Expr&)>& body, Loc loc = Loc::current());
  void prange(std::vector<std::string> vars, std::vector<Expr> extents,
              const std::function<void(const Indices&)>& body, Loc loc = Loc::current());

  Variant& variant() { return *v_; }

 private:
  friend class PartitionRef;
  std::vector<Stmt>& current() { return stack_.empty() ? v_->body : *stack_.back(); }
  Variant* v_;
  const TaskDecl* task_;
  std::vector<std::vector<Stmt>*> stack_;
};

// A source of a leaf's elementwise op: a parameter (its number, `b.param("x")`) or a number.
struct LeafArg {
  int param = -1;
  double value = 0;
  bool is_number = false;
  LeafArg(int p) : param(p) {}  // NOLINT: {b.param("x"), b.param("y")}
  static LeafArg number(double v) {
    LeafArg a(-1);
    a.value = v;
    a.is_number = true;
    return a;
  }
};

class Leaf {
 public:
  Leaf(Variant* v, const TaskDecl* task) : v_(v), task_(task) {}
  int param(const std::string& name, Loc loc = Loc::current()) const;
  static LeafArg number(double v) { return LeafArg::number(v); }
  void fill(int dst, double value, Loc loc = Loc::current());
  void copy(int src, int dst, Loc loc = Loc::current());
  void mma(int c, int a, int b, Loc loc = Loc::current());     // c += a·bᵀ, b [n, k]
  void mma_kn(int c, int a, int b, Loc loc = Loc::current());  // c += a·b,  b [k, n]
  void elementwise(int dst, const std::string& op, std::vector<LeafArg> srcs,
                   Loc loc = Loc::current());
  void reduce_sum(int dst, int src, int dim, Loc loc = Loc::current());
  void reduce_max(int dst, int src, int dim, Loc loc = Loc::current());
  // dst[c] = value where c[dim] indexes an element of ref along ref_dim outside ref's tensor.
  void mask(int dst, int ref, int dim, int ref_dim, double value, Loc loc = Loc::current());
  // dst[.., r, c] = value where c's position in cols' tensor (along ref_dim) > r's in rows'.
  void mask_causal(int dst, int rows, int cols, int ref_dim, double value,
                   Loc loc = Loc::current());

 private:
  // Privileges: the destination writable; every source readable, or a write-only parameter
  // this leaf has already written (a scratch tensor). Records the destination as written.
  void check(const std::vector<int>& operands, const SourceLocation& loc);
  // Whether parameter `p`'s value can be read here: read privilege, or written by an earlier op.
  bool readable(int p) const;
  Variant* v_;
  const TaskDecl* task_;
  std::vector<int> written_;
};

}  // namespace tessel::task
