// The task language's recorded program: index expressions, and the builders that record variant
// bodies, checking what can be checked without a mapping (names, privileges, ranks).
#include <algorithm>

#include "tessel/task.h"

namespace tessel::task {

std::string_view privilege_name(Privilege p) {
  switch (p) {
    case Privilege::read:
      return "read";
    case Privilege::write:
      return "write";
    case Privilege::read_write:
      return "read-write";
    case Privilege::reduce:
      return "reduce";
  }
  return "?";
}

// ---- expressions ----

struct Expr::Node {
  Kind kind = Kind::constant;
  int64_t value = 0;
  std::string name;
  int param = -1, dim = -1;
  std::vector<Expr> operands;  // binary: lhs, rhs (a vector: a Node must not hold an Expr by value)
};

Expr::Expr(int64_t value) {
  auto n = std::make_shared<Node>();
  n->value = value;
  node_ = std::move(n);
}

Expr Expr::size(const std::string& symbol) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::size;
  n->name = symbol;
  return Expr(std::shared_ptr<const Node>(std::move(n)));
}
Expr Expr::tunable(const std::string& name) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::tunable;
  n->name = name;
  return Expr(std::shared_ptr<const Node>(std::move(n)));
}
Expr Expr::extent(int param, int dim) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::extent;
  n->param = param;
  n->dim = dim;
  return Expr(std::shared_ptr<const Node>(std::move(n)));
}
Expr Expr::var(const std::string& name) {
  auto n = std::make_shared<Node>();
  n->kind = Kind::var;
  n->name = name;
  return Expr(std::shared_ptr<const Node>(std::move(n)));
}
Expr Expr::binary(Kind kind, const Expr& a, const Expr& b) {
  auto n = std::make_shared<Node>();
  n->kind = kind;
  n->operands = {a, b};
  return Expr(std::shared_ptr<const Node>(std::move(n)));
}

Expr::Kind Expr::kind() const {
  return node_->kind;
}
int64_t Expr::value() const {
  return node_->value;
}
const std::string& Expr::name() const {
  return node_->name;
}
int Expr::param() const {
  return node_->param;
}
int Expr::dim() const {
  return node_->dim;
}
const Expr& Expr::lhs() const {
  return node_->operands.at(0);
}
const Expr& Expr::rhs() const {
  return node_->operands.at(1);
}

std::string Expr::str() const {
  switch (kind()) {
    case Kind::constant:
      return std::to_string(value());
    case Kind::size:
      return name();
    case Kind::tunable:
      return "$" + name();
    case Kind::extent:
      return "dim(" + std::to_string(param()) + "," + std::to_string(dim()) + ")";
    case Kind::var:
      return "%" + name();
    case Kind::cdiv:
      return "cdiv(" + lhs().str() + ", " + rhs().str() + ")";
    case Kind::min:
      return "min(" + lhs().str() + ", " + rhs().str() + ")";
    default:
      break;
  }
  const char* op = kind() == Kind::add   ? " + "
                   : kind() == Kind::sub ? " - "
                   : kind() == Kind::mul ? "*"
                                         : "/";
  // Parentheses where the text would otherwise read as another tree: a sum inside anything but
  // a sum, and a product or quotient on the right of one (a*(b/c) is not a*b/c with floor
  // division). The event IR's parser (event_parser.h) reads `+` as binding looser than `-` and
  // `*` `/` from the left, so that every printed expression parses back to a tree that prints
  // the same.
  auto wrap = [&](const Expr& e, bool right) {
    bool sum = e.kind() == Kind::add || e.kind() == Kind::sub;
    bool product = e.kind() == Kind::mul || e.kind() == Kind::div;
    bool in_product = kind() == Kind::mul || kind() == Kind::div;
    return (sum && kind() != Kind::add) || (product && in_product && right) ? "(" + e.str() + ")"
                                                                            : e.str();
  };
  return wrap(lhs(), false) + op + wrap(rhs(), true);
}

Expr operator+(const Expr& a, const Expr& b) {
  return Expr::binary(Expr::Kind::add, a, b);
}
Expr operator-(const Expr& a, const Expr& b) {
  return Expr::binary(Expr::Kind::sub, a, b);
}
Expr operator*(const Expr& a, const Expr& b) {
  return Expr::binary(Expr::Kind::mul, a, b);
}
Expr operator/(const Expr& a, const Expr& b) {
  return Expr::binary(Expr::Kind::div, a, b);
}
Expr cdiv(const Expr& a, const Expr& b) {
  return Expr::binary(Expr::Kind::cdiv, a, b);
}
Expr min(const Expr& a, const Expr& b) {
  return Expr::binary(Expr::Kind::min, a, b);
}

namespace {
int64_t apply(Expr::Kind k, int64_t a, int64_t b) {
  switch (k) {
    case Expr::Kind::add:
      return a + b;
    case Expr::Kind::sub:
      return a - b;
    case Expr::Kind::mul:
      return a * b;
    case Expr::Kind::div:
      return b == 0 ? 0 : a / b;
    case Expr::Kind::cdiv:
      return b == 0 ? 0 : (a + b - 1) / b;
    case Expr::Kind::min:
      return std::min(a, b);
    default:
      return 0;
  }
}
}  // namespace

Expr simplify(const Expr& e, const std::function<Expr(const Expr&)>& leaf) {
  switch (e.kind()) {
    case Expr::Kind::constant:
      return e;
    case Expr::Kind::size:
    case Expr::Kind::tunable:
    case Expr::Kind::extent:
    case Expr::Kind::var: {
      if (!leaf) return e;
      Expr r = leaf(e);
      return r.kind() == e.kind() && r.name() == e.name() && r.param() == e.param()
                 ? r
                 : simplify(r, leaf);
    }
    default:
      break;
  }
  Expr a = simplify(e.lhs(), leaf), b = simplify(e.rhs(), leaf);
  Expr::Kind k = e.kind();
  if (a.is_constant() && b.is_constant()) return Expr(apply(k, a.value(), b.value()));
  auto is = [](const Expr& x, int64_t v) { return x.is_constant() && x.value() == v; };
  if (k == Expr::Kind::add && is(a, 0)) return b;
  if ((k == Expr::Kind::add || k == Expr::Kind::sub) && is(b, 0)) return a;
  if (k == Expr::Kind::mul && (is(a, 0) || is(b, 0))) return Expr(0);
  if (k == Expr::Kind::mul && is(a, 1)) return b;
  if ((k == Expr::Kind::mul || k == Expr::Kind::div || k == Expr::Kind::cdiv) && is(b, 1)) return a;
  // (x * c) / c and cdiv(x * c, c) are x: a piece index times its block over the same block.
  if ((k == Expr::Kind::div || k == Expr::Kind::cdiv) && b.is_constant() &&
      a.kind() == Expr::Kind::mul && a.rhs().is_constant() && a.rhs().value() % b.value() == 0)
    return simplify(a.lhs() * Expr(a.rhs().value() / b.value()));
  return Expr::binary(k, a, b);
}

bool evaluate(const Expr& e, const std::function<bool(const Expr&, int64_t&)>& leaf, int64_t& out) {
  switch (e.kind()) {
    case Expr::Kind::constant:
      out = e.value();
      return true;
    case Expr::Kind::size:
    case Expr::Kind::tunable:
    case Expr::Kind::extent:
    case Expr::Kind::var:
      return leaf && leaf(e, out);
    default:
      break;
  }
  int64_t a = 0, b = 0;
  if (!evaluate(e.lhs(), leaf, a) || !evaluate(e.rhs(), leaf, b)) return false;
  out = apply(e.kind(), a, b);
  return true;
}

// ---- the program ----

Expr global_extent(const std::string& extent) {
  bool number = !extent.empty() && std::all_of(extent.begin(), extent.end(),
                                               [](char c) { return c >= '0' && c <= '9'; });
  return number ? Expr(static_cast<int64_t>(std::stoll(extent))) : Expr::size(extent);
}

int64_t global_extent(const std::string& extent, const std::map<std::string, int64_t>& sizes) {
  Expr e = global_extent(extent);
  if (e.is_constant()) return e.value();
  auto it = sizes.find(extent);
  if (it == sizes.end()) user_error(SourceLocation::unknown(), "no value for size ", extent);
  return it->second;
}

namespace {
SourceLocation at(const Loc& loc) {
  return SourceLocation::from(loc);
}
LeafOp leaf_op(LeafOp::Kind kind, std::vector<int> operands, const SourceLocation& loc,
               std::string op = {}, double value = 0, int dim = 0) {
  LeafOp l;
  l.kind = kind;
  l.operands = std::move(operands);
  l.op = std::move(op);
  l.value = value;
  l.dim = dim;
  l.loc = loc;
  return l;
}
}  // namespace

void TaskProgram::global(const std::string& name, ScalarKind element,
                         std::vector<std::string> shape, Loc loc) {
  if (find_global(name)) user_error(at(loc), "global tensor '", name, "' is declared twice");
  globals_.push_back({name, element, std::move(shape)});
}

void TaskProgram::task(const std::string& name, std::vector<Param> params, Loc loc) {
  if (find_task(name)) user_error(at(loc), "task '", name, "' is declared twice");
  tasks_.push_back({name, std::move(params), at(loc)});
}

Variant TaskProgram::new_variant(const std::string& task, const std::string& variant,
                                 VariantKind kind, Loc loc, const TaskDecl*& decl) const {
  decl = find_task(task);
  if (!decl) user_error(at(loc), "variant '", variant, "' of an undeclared task '", task, "'");
  if (find_variant(variant)) user_error(at(loc), "variant '", variant, "' is declared twice");
  Variant v;
  v.name = variant;
  v.task = task;
  v.kind = kind;
  v.loc = at(loc);
  return v;
}

void TaskProgram::inner(const std::string& task, const std::string& variant,
                        const std::function<void(Inner&)>& body, Loc loc) {
  const TaskDecl* decl = nullptr;
  Variant v = new_variant(task, variant, VariantKind::inner, loc, decl);
  for (size_t i = 0; i < decl->params.size(); ++i) {
    TensorDef p;
    p.kind = TensorDef::Kind::param;
    p.param = static_cast<int>(i);
    v.tensors.push_back(p);
  }
  Inner b(&v, decl);
  body(b);
  variants_.push_back(std::move(v));
}

void TaskProgram::leaf(const std::string& task, const std::string& variant,
                       const std::function<void(Leaf&)>& body, Loc loc) {
  const TaskDecl* decl = nullptr;
  Variant v = new_variant(task, variant, VariantKind::leaf, loc, decl);
  Leaf b(&v, decl);
  body(b);
  variants_.push_back(std::move(v));
}

void TaskProgram::entry(const std::string& task, std::vector<std::string> globals, Loc loc) {
  const TaskDecl* decl = find_task(task);
  if (!decl) user_error(at(loc), "entry: no task '", task, "'");
  if (globals.size() != decl->params.size())
    user_error(at(loc), "entry: task '", task, "' takes ", decl->params.size(), " tensors, given ",
               globals.size());
  entry_task_ = task;
  entry_args_.clear();
  for (const std::string& g : globals) {
    const GlobalTensor* t = find_global(g);
    if (!t) user_error(at(loc), "entry: no global tensor '", g, "'");
    entry_args_.push_back(static_cast<int>(t - globals_.data()));
  }
}

const TaskDecl* TaskProgram::find_task(const std::string& name) const {
  for (const TaskDecl& t : tasks_)
    if (t.name == name) return &t;
  return nullptr;
}
const Variant* TaskProgram::find_variant(const std::string& name) const {
  for (const Variant& v : variants_)
    if (v.name == name) return &v;
  return nullptr;
}
const GlobalTensor* TaskProgram::find_global(const std::string& name) const {
  for (const GlobalTensor& g : globals_)
    if (g.name == name) return &g;
  return nullptr;
}

// ---- inner bodies ----

Expr TensorRef::dim(int d) const {
  const TensorDef& t = variant_->tensors.at(id_);
  switch (t.kind) {
    case TensorDef::Kind::param:
      return Expr::extent(t.param, d);
    case TensorDef::Kind::local:
      return t.shape.at(d);
    case TensorDef::Kind::piece:
      return variant_->partitions.at(t.partition).block.at(d);
  }
  return Expr(0);
}

TensorRef PartitionRef::operator()(const Indices& given, Loc loc) const {
  const PartitionDef& p = b_->v_->partitions.at(id_);
  Indices coords = given;
  if (p.kind == PartitionKind::mma) {
    // One coordinate, the warpgroup's: rows for A and C, the whole tensor for B.
    if (given.size() != 1)
      user_error(at(loc), "a piece of an mma partition takes 1 coordinate, given ", given.size());
    coords = p.operand == MmaOperand::B ? Indices{Expr(0), Expr(0)} : Indices{given[0], Expr(0)};
  }
  if (coords.size() != p.block.size())
    user_error(at(loc), "a piece of a rank-", p.block.size(), " partition takes ", p.block.size(),
               " coordinates, given ", coords.size());
  TensorDef t;
  t.kind = TensorDef::Kind::piece;
  t.partition = id_;
  t.coords = coords;
  t.loc = at(loc);
  b_->v_->tensors.push_back(t);
  return TensorRef(b_->v_, static_cast<int>(b_->v_->tensors.size()) - 1);
}

TensorRef Inner::param(int i) const {
  if (i < 0 || i >= static_cast<int>(task_->params.size()))
    user_error(v_->loc, "variant '", v_->name, "': task '", task_->name, "' has ",
               task_->params.size(), " parameters, not ", i + 1);
  return TensorRef(v_, i);
}

TensorRef Inner::param(const std::string& name, Loc loc) const {
  for (size_t i = 0; i < task_->params.size(); ++i)
    if (task_->params[i].name == name) return TensorRef(v_, static_cast<int>(i));
  user_error(at(loc), "task '", task_->name, "' has no parameter '", name, "'");
}

Expr Inner::tunable(const std::string& name) {
  if (std::find(v_->tunables.begin(), v_->tunables.end(), name) == v_->tunables.end())
    v_->tunables.push_back(name);
  return Expr::tunable(name);
}

TensorRef Inner::make_tensor(ScalarKind element, std::vector<Expr> shape, Loc loc) {
  TensorDef t;
  t.kind = TensorDef::Kind::local;
  t.element = element;
  t.shape = std::move(shape);
  t.loc = at(loc);
  v_->tensors.push_back(t);
  return TensorRef(v_, static_cast<int>(v_->tensors.size()) - 1);
}

PartitionRef Inner::blocks(const TensorRef& t, std::vector<Expr> block, Loc loc) {
  if (t.id() < 0) user_error(at(loc), "blocks: an empty tensor reference");
  PartitionDef p;
  p.source = t.id();
  p.block = std::move(block);
  p.loc = at(loc);
  v_->partitions.push_back(p);
  return PartitionRef(this, static_cast<int>(v_->partitions.size()) - 1);
}

PartitionRef Inner::mma_partition(const TensorRef& t, MmaOperand operand, Loc loc) {
  if (t.id() < 0) user_error(at(loc), "mma_partition: an empty tensor reference");
  PartitionDef p;
  p.kind = PartitionKind::mma;
  p.operand = operand;
  p.source = t.id();
  // wgmma's M: 64 rows a warpgroup (the machine model's mma_warpgroup_rows checks the rest).
  p.block = operand == MmaOperand::B ? std::vector<Expr>{t.dim(0), t.dim(1)}
                                     : std::vector<Expr>{Expr(64), t.dim(1)};
  p.loc = at(loc);
  v_->partitions.push_back(p);
  return PartitionRef(this, static_cast<int>(v_->partitions.size()) - 1);
}

void Inner::launch(const std::string& task, const std::vector<TensorRef>& args, Loc loc) {
  Stmt s;
  s.kind = Stmt::Kind::launch;
  s.task = task;
  for (const TensorRef& a : args) {
    if (a.id() < 0) user_error(at(loc), "launch ", task, ": an empty tensor reference");
    s.args.push_back(a.id());
  }
  s.loc = at(loc);
  current().push_back(std::move(s));
}

void Inner::srange(const std::string& var, const Expr& extent,
                   const std::function<void(const Expr&)>& body, Loc loc) {
  Stmt s;
  s.kind = Stmt::Kind::srange;
  s.vars = {var};
  s.extents = {extent};
  s.loc = at(loc);
  current().push_back(std::move(s));
  stack_.push_back(&current().back().body);
  body(Expr::var(var));
  stack_.pop_back();
}

void Inner::prange(std::vector<std::string> vars, std::vector<Expr> extents,
                   const std::function<void(const Indices&)>& body, Loc loc) {
  if (vars.size() != extents.size() || vars.empty())
    user_error(at(loc), "prange: ", vars.size(), " indices but ", extents.size(), " extents");
  Stmt s;
  s.kind = Stmt::Kind::prange;
  s.vars = vars;
  s.extents = std::move(extents);
  s.loc = at(loc);
  current().push_back(std::move(s));
  stack_.push_back(&current().back().body);
  Indices idx;
  for (const std::string& v : vars) idx.push_back(Expr::var(v));
  body(idx);
  stack_.pop_back();
}

// ---- leaf bodies ----

int Leaf::param(const std::string& name, Loc loc) const {
  for (size_t i = 0; i < task_->params.size(); ++i)
    if (task_->params[i].name == name) return static_cast<int>(i);
  user_error(at(loc), "task '", task_->name, "' has no parameter '", name, "'");
}

bool Leaf::readable(int p) const {
  return reads(task_->params[p].privilege) ||
         std::find(written_.begin(), written_.end(), p) != written_.end();
}

void Leaf::check(const std::vector<int>& operands, const SourceLocation& loc) {
  for (size_t i = 0; i < operands.size(); ++i) {
    int p = operands[i];
    if (i > 0 && p < 0) continue;  // a number
    if (p < 0 || p >= static_cast<int>(task_->params.size()))
      user_error(loc, "leaf '", v_->name, "': no parameter number ", p);
    Privilege priv = task_->params[p].privilege;
    if (i == 0 && !writes(priv))
      user_error(loc, "leaf '", v_->name, "' writes '", task_->params[p].name, "', which task '",
                 task_->name, "' only reads");
    if (i > 0 && !readable(p))
      user_error(loc, "leaf '", v_->name, "' reads '", task_->params[p].name, "', which task '",
                 task_->name, "' only writes (and this leaf has not written yet)");
  }
  if (!operands.empty()) written_.push_back(operands[0]);
}

void Leaf::fill(int dst, double value, Loc loc) {
  check({dst}, at(loc));
  v_->ops.push_back(leaf_op(LeafOp::Kind::fill, {dst}, at(loc), "", value, 0));
}
void Leaf::copy(int src, int dst, Loc loc) {
  check({dst, src}, at(loc));
  v_->ops.push_back(leaf_op(LeafOp::Kind::copy, {dst, src}, at(loc), "", 0, 0));
}
void Leaf::mma(int c, int a, int b, Loc loc) {
  bool accumulates = c >= 0 && c < static_cast<int>(task_->params.size()) && readable(c);
  check({c, a, b}, at(loc));
  if (!accumulates)
    user_error(at(loc), "leaf '", v_->name, "': mma accumulates into '", task_->params[c].name,
               "', which needs read-write or reduce privilege (or a value this leaf wrote)");
  v_->ops.push_back(leaf_op(LeafOp::Kind::mma, {c, a, b}, at(loc), "", 0, 0));
}
void Leaf::mma_kn(int c, int a, int b, Loc loc) {
  mma(c, a, b, loc);
  v_->ops.back().b_kn = true;
}
void Leaf::elementwise(int dst, const std::string& op, std::vector<LeafArg> srcs, Loc loc) {
  static const std::vector<std::pair<std::string, size_t>> known = {
      {"add", 2}, {"sub", 2},  {"mul", 2},  {"div", 2},  {"max", 2},     {"min", 2},
      {"fma", 3}, {"neg", 1},  {"exp", 1},  {"exp2", 1}, {"relu", 1},    {"sigmoid", 1},
      {"silu", 1}};
  auto it = std::find_if(known.begin(), known.end(), [&](const auto& k) { return k.first == op; });
  if (it == known.end()) user_error(at(loc), "leaf elementwise: unknown operation '", op, "'");
  if (srcs.size() != it->second)
    user_error(at(loc), "leaf elementwise ", op, " takes ", it->second, " operands");
  LeafOp l = leaf_op(LeafOp::Kind::elementwise, {dst}, at(loc), op, 0, 0);
  bool tensor = false;
  for (const LeafArg& a : srcs) {
    if (a.is_number) {
      l.scalars.push_back(a.value);
      l.operands.push_back(-static_cast<int>(l.scalars.size()));
    } else {
      l.operands.push_back(a.param);
      tensor = true;
    }
  }
  if (!tensor)
    user_error(at(loc), "leaf elementwise ", op, ": every operand is a number (give a tensor)");
  check(l.operands, at(loc));
  v_->ops.push_back(std::move(l));
}
void Leaf::reduce_sum(int dst, int src, int dim, Loc loc) {
  check({dst, src}, at(loc));
  v_->ops.push_back(leaf_op(LeafOp::Kind::reduce_sum, {dst, src}, at(loc), "", 0, dim));
}
void Leaf::reduce_max(int dst, int src, int dim, Loc loc) {
  bool folds = dst >= 0 && dst < static_cast<int>(task_->params.size()) && readable(dst);
  check({dst, src}, at(loc));
  if (!folds)
    user_error(at(loc), "leaf '", v_->name, "': reduce_max folds into '", task_->params[dst].name,
               "', which needs read-write privilege (or a value this leaf wrote)");
  v_->ops.push_back(leaf_op(LeafOp::Kind::reduce_max, {dst, src}, at(loc), "", 0, dim));
}
void Leaf::mask(int dst, int ref, int dim, int ref_dim, double value, Loc loc) {
  bool keeps = dst >= 0 && dst < static_cast<int>(task_->params.size()) && readable(dst);
  check({dst, ref}, at(loc));
  if (!keeps)
    user_error(at(loc), "leaf '", v_->name, "': mask keeps the other elements of '",
               task_->params[dst].name, "', which needs read-write privilege (or a value this "
               "leaf wrote)");
  LeafOp l = leaf_op(LeafOp::Kind::mask, {dst, ref}, at(loc), "", value, dim);
  l.ref_dim = ref_dim;
  v_->ops.push_back(std::move(l));
}
void Leaf::mask_causal(int dst, int rows, int cols, int ref_dim, double value, Loc loc) {
  bool keeps = dst >= 0 && dst < static_cast<int>(task_->params.size()) && readable(dst);
  check({dst, rows, cols}, at(loc));
  if (!keeps)
    user_error(at(loc), "leaf '", v_->name, "': mask_causal keeps the other elements of '",
               task_->params[dst].name, "', which needs read-write privilege (or a value this "
               "leaf wrote)");
  LeafOp l = leaf_op(LeafOp::Kind::mask_causal, {dst, rows, cols}, at(loc), "", value, 0);
  l.ref_dim = ref_dim;
  v_->ops.push_back(std::move(l));
}

}  // namespace tessel::task
