// The tile IR verifier: the kernel, its grid, control flow, scopes and reads of alloc'd tensors
// (the ops on tensors are checked in verify_tensor_ops.cpp; the class is in verifier_internal.h).
#include "ir/verifier.h"

#include "ir/verifier_internal.h"

namespace tessel::ir {
namespace detail {

void Verifier::kernel(const Operation& op) {
  kernel_ = &op;
  const KernelSignature& sig = op.signature();
  if (sig.name.empty()) error(op, "a kernel needs a name");
  std::set<std::string> sizes;
  for (const std::string& s : sig.sizes) {
    if (!sizes.insert(s).second) error(op, "size ", s, " is declared twice");
  }
  sizes_ = sizes;
  for (const Fact& fact : sig.facts) {
    if (!sizes.count(fact.symbol)) {
      error(op, "the fact ", fact.symbol, " % ", fact.divisor, " == 0 names an undeclared size");
    }
    if (fact.divisor <= 0) error(op, "the divisor of a fact must be positive, not ", fact.divisor);
  }
  if (op.regions().size() != 1) error(op, "a kernel has exactly one region");
  const Block& body = *op.region(0);
  for (const auto& arg : body.arguments()) {
    const Type& t = arg->type();
    if (t.is_tensor() && t.space() != MemorySpace::global) {
      error(op, "parameter ", value_ref(arg.get()), " is a ", to_string(t.space()),
            " tensor; kernel parameters are global tensors or scalars");
    }
    check_type(op, t);
  }
  std::set<int> ready;
  for (int index : sig.ready) {
    const Value* arg = body.argument(index);
    if (!arg->type().is_tensor()) {
      error(op, "ready(", value_ref(arg), ") names a scalar; ready parameters are global tensors");
    }
    if (!ready.insert(index).second) error(op, "ready(", value_ref(arg), ") is named twice");
  }
  scopes_.emplace_back();
  for (const auto& arg : body.arguments()) scopes_.back().insert(arg.get());
  block(body);
  scopes_.pop_back();
  verify_roles(op);
  // A ready tensor is only read: a launch may read it before the launch before it has finished.
  walk(const_cast<Operation*>(&op), [&](Operation* o) {
    const bool store = (o->kind() == OpKind::copy || o->kind() == OpKind::copy_async) &&
                       o->num_results() == 0 && o->num_operands() == 2;
    if (!store) return;
    const Value* root = storage_root(o->operand(1));
    if (!root->def() && root->owner_block() == &body && ready.count(root->index())) {
      error(*o, "writes ", value_ref(root),
            ", which the kernel declares ready (only read, and written by no launch that may "
            "still run)");
    }
  });
}

bool Verifier::visible(const Value* v) const {
  for (const auto& scope : scopes_) {
    if (scope.count(v)) return true;
  }
  return false;
}

void Verifier::check_type(const Operation& op, const Type& t) {
  if (!t.is_tensor()) return;
  for (const Extent& e : t.shape()) {
    if (!e.is_static() && !sizes_.count(e.symbol)) {
      error(op, "type ", t.str(), " uses size ", e.symbol, ", which the kernel does not declare");
    }
    if (e.is_static() && e.value <= 0) error(op, "type ", t.str(), " has an empty extent");
  }
  if (t.space() != MemorySpace::global && !is_static(t.shape())) {
    error(op, "a ", to_string(t.space()), " tensor needs a static shape, not ",
          to_string(t.shape()));
  }
  std::string problem = check_tensor_layout(t);
  if (!problem.empty()) error(op, problem);
}

void Verifier::block(const Block& b) {
  for (size_t i = 0; i < b.ops().size(); ++i) {
    const Operation& op = *b.ops()[i];
    if (op.kind() == OpKind::yield && i + 1 != b.ops().size()) {
      error(op, "yield must be the last op of its region");
    }
    operation(op);
    for (const auto& r : op.results()) scopes_.back().insert(r.get());
  }
}

void Verifier::operation(const Operation& op) {
  for (int i = 0; i < op.num_operands(); ++i) {
    const Value* v = op.operand(i);
    if (v == nullptr) error(op, "operand ", i, " is missing");
    if (!visible(v)) {
      error(op, "operand ", i, " (", value_ref(v),
            ") does not dominate this use: it is not defined "
            "earlier in this region or an enclosing one");
    }
  }
  for (const auto& r : op.results()) check_type(op, r->type());
  check_reads(op);
  if (is_elementwise(op.kind())) return elementwise(op);
  if (is_async_op(op.kind())) {
    verify_async_op(op);
    if (op.kind() == OpKind::warp_group) {
      region(op, *op.region(0), [](const Operation&) {});
    }
    return;
  }
  switch (op.kind()) {
    case OpKind::kernel:
      error(op, "a kernel cannot be nested in another op");
    case OpKind::size:
      return size_op(op);
    case OpKind::slice: {
      counts(op, 1, 1);
      const Type& src = tensor_operand(op, 0, "the sliced tensor");
      const Type& t = op.result()->type();
      if (src.space() != MemorySpace::reg || !t.is_tensor() || t.space() != MemorySpace::reg ||
          t.element() != src.element()) {
        error(op,
              "takes a static part of a register tensor into a register tensor of the same "
              "element type");
      }
      const auto& offsets = need_attr(op, "offsets", Attribute::Kind::int_list, "a list").list;
      const auto& shape = need_attr(op, "shape", Attribute::Kind::int_list, "a list").list;
      if (static_cast<int>(offsets.size()) != src.rank() ||
          static_cast<int>(shape.size()) != src.rank()) {
        error(op, "needs one offset and one extent per dimension of ", src.str());
      }
      std::vector<int64_t> whole = src.static_shape();
      for (int d = 0; d < src.rank(); ++d) {
        if (offsets[d] < 0 || shape[d] <= 0 || offsets[d] + shape[d] > whole[d]) {
          error(op, "part [", offsets[d], ", ", offsets[d] + shape[d], ") of dimension ", d,
                " lies outside ", src.str());
        }
        if (!(t.shape()[d] == Extent(shape[d]))) {
          error(op, "the result's shape ", to_string(t.shape()), " is not the part's");
        }
      }
      return;
    }
    case OpKind::sm_count:
    case OpKind::cluster_rank:
      if (op.num_operands() != 0 || op.num_results() != 1 ||
          op.result()->type() != Type::scalar(ScalarKind::index)) {
        error(op, "takes nothing and makes one index: `%n = ", op.name(), " : index`");
      }
      if (!op.parent_op() || op.parent_op()->kind() != OpKind::kernel) {
        error(op, "stands at the top level of the kernel");
      }
      return;
    case OpKind::workspace:
      // async.h, "Workspaces".
      if (op.num_operands() != 1 || op.num_results() != 1) {
        error(op,
              "takes a count and makes one global tensor: `%w = workspace %n : "
              "global<f32>[M,N]`");
      }
      need_index(op, 0);
      if (!grid_invariant(op.operand(0))) {
        error(op, "the count ", value_ref(op.operand(0)),
              " must be computed from sizes, constants and sm_count (the launch evaluates it)");
      }
      if (!op.result()->type().is_tensor() || op.result()->type().space() != MemorySpace::global ||
          op.result()->type().has_layout()) {
        error(op, "makes a row-major global tensor, not ", op.result()->type().str());
      }
      if (op.parent_op() != kernel_) error(op, "stands at the top level of the kernel");
      return;
    case OpKind::workspace_part:
      if (op.num_operands() != 2 || op.num_results() != 1 || !op.operand(0)->def() ||
          op.operand(0)->def()->kind() != OpKind::workspace) {
        error(op, "takes a workspace and an index: `%t = workspace_part %w, %i : T`");
      }
      need_index(op, 1);
      if (op.result()->type() != op.operand(0)->type()) {
        error(op, "makes one tensor of the workspace's type ", op.operand(0)->type().str(),
              ", not ", op.result()->type().str());
      }
      return;
    case OpKind::counter_arrive: {
      const Type i32_counter = Type::tensor(ScalarKind::i32, {Extent(1)}, MemorySpace::global);
      if (op.num_operands() != 2 || op.num_results() != 1 || op.operand(0)->type() != i32_counter ||
          op.result()->type() != Type::scalar(ScalarKind::index)) {
        error(op,
              "takes a global<i32>[1] counter and a count and makes an index: "
              "`%k = counter_arrive %c, %n : index`");
      }
      need_index(op, 1);
      if (op.parent_op() == kernel_) {
        error(op,
              "stands in a role or a loop of the block (it waits for the writes of the "
              "threads that run it), not at the top level");
      }
      return;
    }
    case OpKind::find_group: {
      // src/ir/grouped.h
      const Type& ends = op.num_operands() == 2 && op.num_results() == 4
                             ? tensor_operand(op, 0, "the groups' row ends")
                             : (error(op,
                                      "takes the groups' row ends and a tile index and makes four "
                                      "indices: `%g, %gt, %first, %rows = find_group %ends, %t "
                                      "{tile = R} : index, index, index, index`"),
                                op.operand(0)->type());
      if (ends.space() != MemorySpace::global || ends.rank() != 1 ||
          ends.element() != ScalarKind::i32) {
        error(op, "reads the groups' row ends from a global<i32>[G], not ", ends.str());
      }
      need_index(op, 1);
      if (need_attr(op, "tile", Attribute::Kind::integer, "tile = R (rows per tile)").i <= 0)
        error(op, "tile must be positive");
      for (const auto& r : op.results()) {
        if (r->type() != Type::scalar(ScalarKind::index)) error(op, "makes four indices");
      }
      return;
    }
    case OpKind::constant:
      return constant(op);
    case OpKind::block_grid:
      return block_grid(op);
    case OpKind::global_view:
      return global_view(op);
    case OpKind::tile:
      return tile(op);
    case OpKind::tile_extent:
      return tile_extent(op);
    case OpKind::transpose:
      return transpose(op);
    case OpKind::alloc:
    case OpKind::fill:
    case OpKind::iota:
      return creation(op);
    case OpKind::copy:
      return copy(op);
    case OpKind::mma:
      return mma(op);
    case OpKind::cast:
      return cast(op);
    case OpKind::rearrange:
      return rearrange(op);
    case OpKind::broadcast:
      return broadcast(op);
    case OpKind::reduce:
      return reduce(op);
    case OpKind::for_:
      return for_op(op);
    case OpKind::if_:
      return if_op(op);
    case OpKind::yield:
      return yield(op);
    case OpKind::call_external:
      if (!op.attr("callee") || op.attr("callee")->kind != Attribute::Kind::string) {
        error(op, "needs a callee = \"name\" attribute");
      }
      return;
    default:
      error(op, "no verifier rule for this op");
  }
}

void Verifier::counts(const Operation& op, int operands, int results) {
  if (op.num_operands() != operands) {
    error(op, "takes ", operands, " operand(s), not ", op.num_operands());
  }
  if (op.num_results() != results) error(op, "has ", results, " result(s), not ", op.num_results());
}

void Verifier::no_regions(const Operation& op) {
  if (!op.regions().empty()) error(op, "has no regions");
}

const Attribute& Verifier::need_attr(const Operation& op, const std::string& key,
                                     Attribute::Kind kind, std::string_view what) {
  const Attribute* a = op.attr(key);
  if (!a || a->kind != kind) error(op, "needs a ", key, " attribute (", what, ")");
  return *a;
}

void Verifier::need_index(const Operation& op, int i) {
  const Type& t = op.operand(i)->type();
  if (t != Type::scalar(ScalarKind::index)) {
    error(op, "operand ", i, " (", value_ref(op.operand(i)), ") must be an index, not ", t.str());
  }
}

const Type& Verifier::tensor_operand(const Operation& op, int i, std::string_view role) {
  const Type& t = op.operand(i)->type();
  if (!t.is_tensor())
    error(op, role, " ", value_ref(op.operand(i)), " must be a tensor, not ", t.str());
  return t;
}

void Verifier::size_op(const Operation& op) {
  counts(op, 0, 1);
  const Attribute& name = need_attr(op, "name", Attribute::Kind::ident, "name = SYMBOL");
  if (!sizes_.count(name.s)) error(op, "size ", name.s, " is not declared by the kernel");
  if (op.result()->type() != Type::scalar(ScalarKind::index)) error(op, "the result is an index");
}

void Verifier::constant(const Operation& op) {
  counts(op, 0, 1);
  const Type& t = op.result()->type();
  if (!t.is_scalar()) error(op, "makes a scalar; use fill for a tensor");
  const Attribute* v = op.attr("value");
  if (!v) error(op, "needs a value attribute");
  if (is_float(t.element())) {
    if (v->kind != Attribute::Kind::real)
      error(op, "a ", t.str(), " constant needs a real value such as 1.0");
  } else if (v->kind != Attribute::Kind::integer) {
    error(op, "a ", t.str(), " constant needs an integer value");
  } else if (t.element() != ScalarKind::index && bit_width(t.element()) < 64) {
    int bits = bit_width(t.element());
    int64_t lo = is_signed(t.element()) ? -(int64_t{1} << (bits - 1)) : 0;
    int64_t hi = is_signed(t.element()) ? (int64_t{1} << (bits - 1)) - 1 : (int64_t{1} << bits) - 1;
    if (v->i < lo || v->i > hi) error(op, "value ", v->i, " does not fit in ", t.str());
  }
}

void Verifier::block_grid(const Operation& op) {
  if (op.num_operands() < 1 || op.num_operands() > 3) error(op, "takes 1 to 3 grid extents");
  if (op.num_results() != op.num_operands()) {
    error(op, "gives one block index per grid extent: ", op.num_operands(), " extent(s) but ",
          op.num_results(), " result(s)");
  }
  if (op.parent_op() != kernel_) error(op, "must be in the kernel's top-level region");
  if (seen_grid_) error(op, "a kernel declares its grid once");
  seen_grid_ = true;
  if (const Attribute* c = op.attr("cluster");
      c && !(c->kind == Attribute::Kind::ident && c->s == "auto")) {
    // Blocks per cluster along each grid dimension (async.h, "Clusters"), or `auto`
    // (cluster-blocks decides).
    if (c->kind != Attribute::Kind::int_list ||
        static_cast<int>(c->list.size()) != op.num_operands()) {
      error(op, "`cluster` lists the blocks per cluster along each of its ", op.num_operands(),
            " grid dimension(s), as [2, 1], or is auto");
    }
    int64_t blocks = 1;
    for (int64_t e : c->list) {
      if (e < 1) error(op, "`cluster` extents are positive");
      blocks *= e;
    }
    if (blocks > 8) error(op, "a cluster of ", blocks, " blocks is over the portable limit of 8");
  }
  if (const Attribute* b = op.attr("blocks_per_sm");
      b && (b->kind != Attribute::Kind::integer || b->i < 1 || b->i > 32)) {
    // Blocks the kernel is compiled to share an SM with (its launch bound; the register budget
    // of its roles is 64K / (blocks * threads)); the H100 holds at most 32 blocks per SM.
    error(op, "`blocks_per_sm` is a number of blocks from 1 to 32");
  }
  for (int i = 0; i < op.num_operands(); ++i) {
    need_index(op, i);
    if (!grid_invariant(op.operand(i))) {
      error(op, "grid extent ", value_ref(op.operand(i)),
            " must be computed from sizes and constants only");
    }
    if (op.result(i)->type() != Type::scalar(ScalarKind::index))
      error(op, "block indices are index");
  }
}

bool Verifier::grid_invariant(const Value* v) {
  const Operation* def = v->def();
  if (!def) return false;
  if (def->kind() == OpKind::size || def->kind() == OpKind::constant ||
      def->kind() == OpKind::sm_count)
    return true;
  if (!is_elementwise(def->kind())) return false;
  return std::all_of(def->operands().begin(), def->operands().end(), grid_invariant);
}

void Verifier::for_op(const Operation& op) {
  if (op.num_operands() < 3) error(op, "needs a lower bound, an upper bound and a step");
  for (int i = 0; i < 3; ++i) need_index(op, i);
  int carried = op.num_operands() - 3;
  if (op.num_results() != carried) {
    error(op, "has ", carried, " loop-carried value(s) but ", op.num_results(), " result(s)");
  }
  if (op.regions().size() != 1) error(op, "has one region");
  const Block& body = *op.region(0);
  if (static_cast<int>(body.arguments().size()) != 1 + carried) {
    error(op, "the body takes the loop index and ", carried, " loop-carried value(s)");
  }
  if (body.argument(0)->type() != Type::scalar(ScalarKind::index))
    error(op, "the loop index is an index");
  for (int i = 0; i < carried; ++i) {
    const Type& init = op.operand(3 + i)->type();
    if (body.argument(1 + i)->type() != init || op.result(i)->type() != init) {
      error(op, "loop-carried value ", value_ref(body.argument(1 + i)), " is ", init.str(),
            " on entry but ", body.argument(1 + i)->type().str(), " in the body and ",
            op.result(i)->type().str(), " as a result");
    }
  }
  region(op, body, [&](const Operation& yield_op) {
    if (yield_op.num_operands() != carried) {
      error(yield_op, "the loop body yields ", yield_op.num_operands(),
            " value(s) but the loop carries ", carried);
    }
    for (int i = 0; i < carried; ++i) {
      const Type& init = op.operand(3 + i)->type();
      const Type& got = yield_op.operand(i)->type();
      if (got != init) {
        error(yield_op, "loop-carried type change: ", value_ref(body.argument(1 + i)),
              " enters the loop as ", init.str(), " but the body yields ", got.str());
      }
    }
  });
}

void Verifier::if_op(const Operation& op) {
  counts(op, 1, op.num_results());
  if (op.operand(0)->type() != Type::scalar(ScalarKind::i1)) {
    error(op, "the condition ", value_ref(op.operand(0)), " must be an i1 scalar, not ",
          op.operand(0)->type().str());
  }
  if (op.regions().size() != 2) error(op, "has a then region and an else region");
  for (int r = 0; r < 2; ++r) {
    const Block& b = *op.region(r);
    if (!b.arguments().empty()) error(op, "its regions take no arguments");
    if (op.num_results() > 0 && b.ops().empty()) {
      error(op, "yields ", op.num_results(), " value(s), so the ", r ? "else" : "then",
            " region must yield them");
    }
    region(op, b, [&](const Operation& yield_op) {
      if (yield_op.num_operands() != op.num_results()) {
        error(yield_op, "the ", r ? "else" : "then", " region yields ", yield_op.num_operands(),
              " value(s) but the if has ", op.num_results(), " result(s)");
      }
      for (int i = 0; i < op.num_results(); ++i) {
        if (yield_op.operand(i)->type() != op.result(i)->type()) {
          error(yield_op, "yields ", yield_op.operand(i)->type().str(), " for result ", i,
                " of type ", op.result(i)->type().str());
        }
      }
    });
  }
}

void Verifier::yield(const Operation& op) {
  const Operation* parent = op.parent_op();
  if (!parent || (parent->kind() != OpKind::for_ && parent->kind() != OpKind::if_)) {
    error(op, "yield ends the region of a for or an if");
  }
  if (op.num_results() != 0) error(op, "has no results");
}

void Verifier::check_reads(const Operation& op) {
  // A copy's second operand is written (copy_async of a global tile into shared memory too).
  bool is_store =
      (op.kind() == OpKind::copy ||
       (op.kind() == OpKind::copy_async && op.operand(0)->type().space() == MemorySpace::global)) &&
      op.num_operands() == 2;
  bool is_view = op.kind() == OpKind::tile || op.kind() == OpKind::transpose ||
                 op.kind() == OpKind::tile_extent;
  for (int i = 0; i < op.num_operands(); ++i) {
    if (is_view || (is_store && i == 1)) continue;
    const Value* root = storage_root(op.operand(i));
    if (root->def() && root->def()->kind() == OpKind::alloc && !written_.count(root)) {
      error(op, to_string(root->type().space()), " tensor ", value_ref(root),
            " is read before it is written (alloc makes it uninitialized)");
    }
  }
  if (is_store) written_.insert(storage_root(op.operand(1)));
}

}  // namespace detail

using detail::Verifier;
void verify_kernel(const Operation& kernel) {
  if (kernel.kind() != OpKind::kernel)
    user_error(kernel.loc(), kernel.name(), ": expected a kernel");
  Verifier().kernel(kernel);
}

void verify(const Module& module) {
  std::set<std::string> names;
  for (const auto& kernel : module.kernels) {
    if (!names.insert(kernel->signature().name).second) {
      user_error(kernel->loc(), "kernel: two kernels are named @", kernel->signature().name);
    }
    verify_kernel(*kernel);
  }
}

}  // namespace tessel::ir
