// The tile IR's core data structures.
#include "ir/ir.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstring>
#include <unordered_set>
#include <vector>

namespace tessel::ir {
namespace {

constexpr OpInfo kOps[] = {
    {OpKind::kernel, "kernel", 0},
    {OpKind::for_, "for", 0},
    {OpKind::if_, "if", 0},
    {OpKind::yield, "yield", 0},
    {OpKind::call_external, "call_external", 0},
    {OpKind::size, "size", 0},
    {OpKind::constant, "const", 0},
    {OpKind::block_grid, "block_grid", 0},
    {OpKind::global_view, "global_view", 0},
    {OpKind::tile, "tile", 0},
    {OpKind::tile_extent, "tile_extent", 0},
    {OpKind::transpose, "transpose", 0},
    {OpKind::alloc, "alloc", 0},
    {OpKind::fill, "fill", 0},
    {OpKind::iota, "iota", 0},
    {OpKind::copy, "copy", 0},
    {OpKind::mma, "mma", 0},
    {OpKind::cast, "cast", 0},
    {OpKind::rearrange, "rearrange", 0},
    {OpKind::broadcast, "broadcast", 0},
    {OpKind::reduce, "reduce", 0},
    {OpKind::neg, "neg", 1},
    {OpKind::abs, "abs", 1},
    {OpKind::exp, "exp", 1},
    {OpKind::exp2, "exp2", 1},
    {OpKind::log, "log", 1},
    {OpKind::log2, "log2", 1},
    {OpKind::sqrt, "sqrt", 1},
    {OpKind::rsqrt, "rsqrt", 1},
    {OpKind::tanh, "tanh", 1},
    {OpKind::sigmoid, "sigmoid", 1},
    {OpKind::floor, "floor", 1},
    {OpKind::add, "add", 2},
    {OpKind::sub, "sub", 2},
    {OpKind::mul, "mul", 2},
    {OpKind::div, "div", 2},
    {OpKind::rem, "rem", 2},
    {OpKind::max, "max", 2},
    {OpKind::min, "min", 2},
    {OpKind::cdiv, "cdiv", 2},
    {OpKind::cmp, "cmp", 2},
    {OpKind::select, "select", 3},
    {OpKind::fma, "fma", 3},
    {OpKind::warp_group, "warp_group", 0},
    {OpKind::aref, "aref", 0},
    {OpKind::aref_acquire, "aref_acquire", 0},
    {OpKind::aref_commit, "aref_commit", 0},
    {OpKind::aref_wait, "aref_wait", 0},
    {OpKind::aref_release, "aref_release", 0},
    {OpKind::mma_commit, "mma_commit", 0},
    {OpKind::mma_wait, "mma_wait", 0},
    {OpKind::mbarrier_init, "mbarrier_init", 0},
    {OpKind::block_sync, "block_sync", 0},
    {OpKind::aref_slot, "aref_slot", 0},
    {OpKind::mbarrier_wait, "mbarrier_wait", 0},
    {OpKind::mbarrier_arrive, "mbarrier_arrive", 0},
    {OpKind::mbarrier_expect_tx, "mbarrier_expect_tx", 0},
    {OpKind::copy_async, "copy_async", 0},
    {OpKind::setmaxnreg, "setmaxnreg", 0},
    {OpKind::copy_async_commit, "copy_async_commit", 0},
    {OpKind::copy_async_wait, "copy_async_wait", 0},
    {OpKind::fence_proxy_async, "fence_proxy_async", 0},
    {OpKind::role_sync, "role_sync", 0},
    {OpKind::turn_begin, "turn_begin", 0},
    {OpKind::turn_wait, "turn_wait", 0},
    {OpKind::turn_pass, "turn_pass", 0},
    {OpKind::cluster_sync, "cluster_sync", 0},
    {OpKind::grid_wait, "grid_wait", 0},
    {OpKind::launch_dependents, "launch_dependents", 0},
    {OpKind::prefetch, "prefetch", 0},
    {OpKind::slice, "slice", 0},
    {OpKind::sm_count, "sm_count", 0},
    {OpKind::cluster_rank, "cluster_rank", 0},
    {OpKind::workspace, "workspace", 0},
    {OpKind::workspace_part, "workspace_part", 0},
    {OpKind::counter_arrive, "counter_arrive", 0},
    {OpKind::find_group, "find_group", 0},
};

}  // namespace

const OpInfo& op_info(OpKind kind) {
  // Indexed by kind once: every pass and check-protocol's model ask per op executed.
  static const std::vector<const OpInfo*> by_kind = [] {
    std::vector<const OpInfo*> table;
    for (const OpInfo& entry : kOps) {
      const size_t k = static_cast<size_t>(entry.kind);
      if (table.size() <= k) table.resize(k + 1, nullptr);
      if (!table[k] && !entry.name.empty()) table[k] = &entry;
    }
    return table;
  }();
  const size_t k = static_cast<size_t>(kind);
  const OpInfo* entry = k < by_kind.size() ? by_kind[k] : nullptr;
  TESSEL_ASSERT(entry, "op kind without an entry in the op table");
  return entry ? *entry : kOps[0];
}

std::string_view op_name(OpKind kind) {
  return op_info(kind).name;
}

std::optional<OpKind> parse_op_kind(std::string_view name) {
  for (const OpInfo& entry : kOps) {
    if (!entry.name.empty() && entry.name == name) return entry.kind;
  }
  return std::nullopt;
}

std::string Attribute::str() const {
  switch (kind) {
    case Kind::unit:
      return "";
    case Kind::integer:
      return std::to_string(i);
    case Kind::real: {
      if (std::isnan(f)) return "nan";
      if (std::isinf(f)) return f < 0 ? "-inf" : "inf";
      // The shortest text that reads back as the same double, always with a '.' or exponent so that
      // it parses as a real again.
      char buffer[64];
      auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, f);
      std::string text(buffer, end);
      if (text.find_first_of(".e") == std::string::npos) text += ".0";
      return text;
    }
    case Kind::string: {
      std::string out = "\"";
      for (char c : s) {
        if (c == '"' || c == '\\') out += '\\';
        out += c;
      }
      return out + "\"";
    }
    case Kind::ident:
      return s;
    case Kind::int_list: {
      std::string out = "[";
      for (size_t k = 0; k < list.size(); ++k) {
        if (k) out += ",";
        out += std::to_string(list[k]);
      }
      return out + "]";
    }
    case Kind::layout:
      return "layout<" + s + ">";
  }
  return "";
}

bool Attribute::operator==(const Attribute& other) const {
  if (kind != other.kind) return false;
  switch (kind) {
    case Kind::unit:
      return true;
    case Kind::integer:
      return i == other.i;
    case Kind::real:
      return (std::isnan(f) && std::isnan(other.f)) || std::memcmp(&f, &other.f, sizeof f) == 0;
    case Kind::int_list:
      return list == other.list;
    default:
      return s == other.s;
  }
}

Value* Block::add_argument(Type type, std::string name) {
  auto value = std::make_unique<Value>(std::move(type), std::move(name));
  value->block_ = this;
  value->index_ = static_cast<int>(args_.size());
  args_.push_back(std::move(value));
  return args_.back().get();
}

Operation* Block::append(std::unique_ptr<Operation> op) {
  return insert(ops_.size(), std::move(op));
}

Operation* Block::insert(size_t position, std::unique_ptr<Operation> op) {
  op->parent_ = this;
  for (auto& result : op->results_) result->block_ = this;
  auto it = ops_.insert(ops_.begin() + static_cast<std::ptrdiff_t>(position), std::move(op));
  return it->get();
}

std::unique_ptr<Operation> Block::remove(Operation* op) {
  auto it = std::find_if(ops_.begin(), ops_.end(), [&](const auto& p) { return p.get() == op; });
  TESSEL_ASSERT(it != ops_.end(), "removing an op from a block that does not hold it");
  std::unique_ptr<Operation> owned = std::move(*it);
  ops_.erase(it);
  owned->parent_ = nullptr;
  return owned;
}

Operation* Block::terminator() const {
  if (ops_.empty() || ops_.back()->kind() != OpKind::yield) return nullptr;
  return ops_.back().get();
}

Value* Operation::add_result(Type type, std::string name) {
  auto value = std::make_unique<Value>(std::move(type), std::move(name));
  value->def_ = this;
  value->block_ = parent_;
  value->index_ = static_cast<int>(results_.size());
  results_.push_back(std::move(value));
  return results_.back().get();
}

const Attribute* Operation::attr(const std::string& key) const {
  auto it = attrs_.find(key);
  return it == attrs_.end() ? nullptr : &it->second;
}

int64_t Operation::int_attr(const std::string& key) const {
  const Attribute* a = attr(key);
  TESSEL_ASSERT(a && a->kind == Attribute::Kind::integer, name(), " has no integer attribute ",
                key);
  return a->i;
}

double Operation::real_attr(const std::string& key) const {
  const Attribute* a = attr(key);
  TESSEL_ASSERT(a && (a->kind == Attribute::Kind::real || a->kind == Attribute::Kind::integer),
                name(), " has no real attribute ", key);
  return a->kind == Attribute::Kind::real ? a->f : static_cast<double>(a->i);
}

const std::string& Operation::str_attr(const std::string& key) const {
  const Attribute* a = attr(key);
  TESSEL_ASSERT(a && (a->kind == Attribute::Kind::string || a->kind == Attribute::Kind::ident ||
                      a->kind == Attribute::Kind::layout),
                name(), " has no string attribute ", key);
  return a->s;
}

const std::vector<int64_t>& Operation::ints_attr(const std::string& key) const {
  const Attribute* a = attr(key);
  TESSEL_ASSERT(a && a->kind == Attribute::Kind::int_list, name(), " has no list attribute ", key);
  return a->list;
}

Block* Operation::add_region() {
  regions_.push_back(std::make_unique<Block>(this));
  return regions_.back().get();
}

Operation* Operation::parent_op() const {
  return parent_ ? parent_->parent() : nullptr;
}

Operation* Module::find_kernel(std::string_view name) const {
  for (const auto& kernel : kernels) {
    if (kernel->signature().name == name) return kernel.get();
  }
  return nullptr;
}

size_t position_in_block(const Operation& op) {
  const Block* block = op.parent_block();
  TESSEL_ASSERT(block, "position_in_block of an op that is in no block");
  for (size_t i = 0; i < block->ops().size(); ++i) {
    if (block->ops()[i].get() == &op) return i;
  }
  TESSEL_ASSERT(false, "an op missing from its own block");
  return 0;
}

namespace {

bool depends_on(const Value* v, const Value* on, std::unordered_set<const Value*>& seen) {
  if (v == on) return true;
  if (!seen.insert(v).second) return false;
  auto operand = [&](const Operation& op, int i) {
    return i < op.num_operands() && depends_on(op.operand(i), on, seen);
  };
  auto any_operand = [&](const Operation& op) {
    for (int i = 0; i < op.num_operands(); ++i) {
      if (operand(op, i)) return true;
    }
    return false;
  };
  // What region `r` of `op` yields at position i.
  auto yielded = [&](const Operation& op, int r, int i) {
    const Operation* y = op.region(r)->terminator();
    return y && operand(*y, i);
  };
  // for: results and iter args follow the bounds (the trip count), the initial value and the
  // yield at their position; the induction variable follows the bounds.
  auto loop_value = [&](const Operation& loop, int iter) {
    if (operand(loop, 0) || operand(loop, 1) || operand(loop, 2)) return true;
    return iter >= 0 && (operand(loop, 3 + iter) || yielded(loop, 0, iter));
  };
  if (const Operation* def = v->def()) {
    if (def->kind() == OpKind::for_) return loop_value(*def, v->index());
    if (def->kind() == OpKind::if_) {
      return operand(*def, 0) || yielded(*def, 0, v->index()) || yielded(*def, 1, v->index());
    }
    if (any_operand(*def)) return true;
    bool found = false;  // another op with regions: everything it reads inside
    walk(const_cast<Operation*>(def), [&](Operation* inner) {
      if (!found && inner != def && any_operand(*inner)) found = true;
    });
    return found;
  }
  const Block* block = v->owner_block();
  const Operation* owner = block ? block->parent() : nullptr;
  if (!owner || owner->kind() == OpKind::kernel) return false;  // a kernel argument
  if (owner->kind() == OpKind::for_) return loop_value(*owner, v->index() - 1);
  return any_operand(*owner);
}

}  // namespace

std::optional<int64_t> int_constant(const Value* v) {
  const Operation* def = v->def();
  if (!def || def->kind() != OpKind::constant) return std::nullopt;
  const Attribute* a = def->attr("value");
  if (!a || a->kind != Attribute::Kind::integer) return std::nullopt;
  return a->i;
}

bool defined_inside(const Value* v, const Operation& op) {
  const Block* b = v->owner_block();
  for (const Operation* p = b ? b->parent() : nullptr; p; p = p->parent_op()) {
    if (p == &op) return true;
  }
  return false;
}

bool depends_on(const Value* v, const Value* on) {
  std::unordered_set<const Value*> seen;
  return depends_on(v, on, seen);
}

void OpBuilder::set_insertion_point_before(Operation* op) {
  TESSEL_ASSERT(op && op->parent_block(), "insertion point before an op that is in no block");
  block_ = op->parent_block();
  before_ = op;
}

Operation* OpBuilder::insert(std::unique_ptr<Operation> op) {
  if (!before_) return block_->append(std::move(op));
  return block_->insert(position_in_block(*before_), std::move(op));
}

Operation* OpBuilder::create(OpKind kind, const std::vector<Value*>& operands,
                             const std::vector<Type>& result_types, SourceLocation loc) {
  auto op = std::make_unique<Operation>(kind, std::move(loc));
  for (Value* v : operands) op->add_operand(v);
  Operation* placed = insert(std::move(op));
  for (const Type& t : result_types) placed->add_result(t, "");
  return placed;
}

Value* OpBuilder::index_op(OpKind kind, Value* x, Value* y, const std::string& name,
                           SourceLocation loc) {
  Operation* op = create(kind, {x, y}, {Type::scalar(ScalarKind::index)}, std::move(loc));
  op->result()->set_name(name);
  return op->result();
}

Value* OpBuilder::compare(const std::string& pred, Value* x, Value* y, const std::string& name,
                          SourceLocation loc) {
  Operation* op = create(OpKind::cmp, {x, y}, {Type::scalar(ScalarKind::i1)}, std::move(loc));
  op->set_attr("pred", Attribute::ident(pred));
  op->result()->set_name(name);
  return op->result();
}

Value* OpBuilder::index_constant(int64_t value, SourceLocation loc) {
  Operation* op = create(OpKind::constant, {}, {Type::scalar(ScalarKind::index)}, std::move(loc));
  op->set_attr("value", Attribute::integer(value));
  op->result()->set_name("c" + std::to_string(value));
  return op->result();
}

std::vector<Value*> inline_block(const Block& block, Block& into,
                                 std::unordered_map<const Value*, Value*>& mapping) {
  std::vector<Value*> out;
  for (const auto& op : block.ops()) {
    if (op->kind() != OpKind::yield) {
      into.append(clone(*op, mapping));
      continue;
    }
    for (Value* v : op->operands()) {
      auto it = mapping.find(v);
      out.push_back(it == mapping.end() ? v : it->second);
    }
  }
  return out;
}

std::unique_ptr<Operation> clone(const Operation& op,
                                 std::unordered_map<const Value*, Value*>& mapping) {
  auto copy = std::make_unique<Operation>(op.kind(), op.loc());
  for (Value* v : op.operands()) {
    auto it = mapping.find(v);
    copy->add_operand(it == mapping.end() ? v : it->second);
  }
  for (const auto& [key, value] : op.attributes()) copy->set_attr(key, value);
  copy->signature() = op.signature();
  for (const auto& region : op.regions()) {
    Block* block = copy->add_region();
    for (const auto& arg : region->arguments()) {
      mapping[arg.get()] = block->add_argument(arg->type(), arg->name());
    }
    for (const auto& inner : region->ops()) block->append(clone(*inner, mapping));
  }
  for (const auto& result : op.results()) {
    mapping[result.get()] = copy->add_result(result->type(), result->name());
  }
  return copy;
}

std::vector<int> tile_kept_dims(const Operation& tile) {
  std::vector<int64_t> squeeze;
  if (tile.has_attr("squeeze")) squeeze = tile.ints_attr("squeeze");
  std::vector<int> kept;
  for (int d = 0; d < tile.operand(0)->type().rank(); ++d) {
    if (std::find(squeeze.begin(), squeeze.end(), d) == squeeze.end()) kept.push_back(d);
  }
  return kept;
}

int tile_window_dim(const Operation& tile) {
  const Attribute* w = tile.attr("window");
  return w && w->kind == Attribute::Kind::integer ? static_cast<int>(w->i) : -1;
}

int tile_indirect_dim(const Operation& tile) {
  const Attribute* d = tile.attr("indirect");
  return d && d->kind == Attribute::Kind::integer ? static_cast<int>(d->i) : -1;
}

const Value* tile_indirect_map(const Operation& tile) {
  return tile_indirect_dim(tile) >= 0 && tile.num_operands() > 0
             ? tile.operand(tile.num_operands() - 1)
             : nullptr;
}

const Value* storage_root(const Value* v) {
  while (v->def() && (v->def()->kind() == OpKind::tile || v->def()->kind() == OpKind::transpose))
    v = v->def()->operand(0);
  return v;
}

std::string value_ref(const Value* v) {
  return "%" + (v->name().empty() ? std::string("?") : v->name());
}

std::string op_where(const Operation& op) {
  const SourceLocation& l = op.loc();
  if (!l.is_known()) return std::string(op.name());
  return std::string(op.name()) + " at " + (l.file.empty() ? "" : l.file + ":") +
         std::to_string(l.line) + ":" + std::to_string(l.column);
}

bool is_mainloop(const Operation& op) {
  if (op.kind() != OpKind::for_) return false;
  for (const auto& inner : op.region(0)->ops()) {
    if (inner->kind() == OpKind::copy && inner->num_results() == 1 &&
        inner->result()->type().is_tensor() &&
        inner->result()->type().space() == MemorySpace::shared && inner->num_operands() >= 1 &&
        inner->operand(0)->type().is_tensor() &&
        inner->operand(0)->type().space() == MemorySpace::global) {
      return true;
    }
  }
  return false;
}

}  // namespace tessel::ir
