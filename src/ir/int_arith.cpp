// Integer arithmetic with the IR's semantics.
#include "ir/int_arith.h"

#include <algorithm>
#include <vector>

namespace tessel::ir {

int64_t wrap_integer(ScalarKind kind, int64_t value) {
  int bits = bit_width(kind);
  if (bits >= 64) return value;
  uint64_t mask = (uint64_t{1} << bits) - 1;
  uint64_t u = static_cast<uint64_t>(value) & mask;
  if (is_signed(kind) && (u >> (bits - 1)) & 1) u |= ~mask;
  return static_cast<int64_t>(u);
}

std::optional<int64_t> eval_integer(OpKind op, ScalarKind kind, int64_t a, int64_t b,
                                    std::string_view pred) {
  // Unsigned kinds compare and divide as unsigned values; every value is held zero-extended.
  auto ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  bool sgn = is_signed(kind);
  int64_t r = 0;
  switch (op) {
    case OpKind::neg:
      r = static_cast<int64_t>(0 - ua);
      break;
    case OpKind::abs:
      r = a < 0 ? static_cast<int64_t>(0 - ua) : a;
      break;
    case OpKind::add:
      r = static_cast<int64_t>(ua + ub);
      break;
    case OpKind::sub:
      r = static_cast<int64_t>(ua - ub);
      break;
    case OpKind::mul:
      r = static_cast<int64_t>(ua * ub);
      break;
    case OpKind::div:
      if (b == 0) return std::nullopt;
      if (sgn && a == INT64_MIN && b == -1) return wrap_integer(kind, a);
      r = sgn ? a / b : static_cast<int64_t>(ua / ub);
      break;
    case OpKind::rem:
      if (b == 0) return std::nullopt;
      if (sgn && a == INT64_MIN && b == -1) return 0;
      r = sgn ? a % b : static_cast<int64_t>(ua % ub);
      break;
    case OpKind::cdiv:
      if (b <= 0) return std::nullopt;
      if (sgn) {
        r = a / b + ((a % b != 0 && a > 0) ? 1 : 0);
      } else {
        r = static_cast<int64_t>(ua / ub + (ua % ub != 0 ? 1 : 0));
      }
      break;
    case OpKind::max:
      r = sgn ? (a > b ? a : b) : static_cast<int64_t>(ua > ub ? ua : ub);
      break;
    case OpKind::min:
      r = sgn ? (a < b ? a : b) : static_cast<int64_t>(ua < ub ? ua : ub);
      break;
    case OpKind::cmp: {
      bool lt = sgn ? a < b : ua < ub;
      bool eq = a == b;
      if (pred == "lt") return lt;
      if (pred == "le") return lt || eq;
      if (pred == "gt") return !lt && !eq;
      if (pred == "ge") return !lt;
      if (pred == "eq") return eq;
      if (pred == "ne") return !eq;
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
  return wrap_integer(kind, r);
}

namespace {

// `assumed` holds the carried values taken to hold while their loop is examined, in the order
// they were taken; a refuted one is dropped with every one taken after it (those may have held
// only because of it).
bool never_negative(const Value* v, std::vector<const Value*>& assumed, int depth) {
  if (!v || depth > 64 || !v->type().is_scalar() || !is_integer(v->type().element())) return false;
  const Operation* def = v->def();
  if (!def) {
    // A block argument: a for loop's induction variable or one of its carried values.
    const Block* block = v->owner_block();
    const Operation* loop = block ? block->parent() : nullptr;
    if (!loop || loop->kind() != OpKind::for_) return false;
    if (v->index() == 0) return never_negative(loop->operand(0), assumed, depth + 1);
    if (std::find(assumed.begin(), assumed.end(), v) != assumed.end()) return true;
    const size_t mark = assumed.size();
    assumed.push_back(v);
    const int carried = v->index() - 1;
    const Operation* yield = block->terminator();
    const bool holds = loop->num_operands() > 3 + carried &&
                       never_negative(loop->operand(3 + carried), assumed, depth + 1) && yield &&
                       yield->num_operands() > carried &&
                       never_negative(yield->operand(carried), assumed, depth + 1);
    if (!holds) assumed.resize(mark);
    return holds;
  }
  auto all = [&] {
    for (const Value* o : def->operands())
      if (!never_negative(o, assumed, depth + 1)) return false;
    return true;
  };
  switch (def->kind()) {
    case OpKind::constant: {
      const Attribute* a = def->attr("value");
      return a && a->kind == Attribute::Kind::integer && a->i >= 0;
    }
    case OpKind::size:
    case OpKind::block_grid:
    case OpKind::sm_count:
    case OpKind::cluster_rank:
      return true;
    case OpKind::add:
    case OpKind::mul:
    case OpKind::div:
    case OpKind::cdiv:
    case OpKind::min:
      return all();
    case OpKind::rem:
      return never_negative(def->operand(0), assumed, depth + 1);
    case OpKind::sub:
      // A difference a pass knows to be a count (split-k's K tiles of a part, persistent's rows
      // left in a raster group) carries `nonneg`; the interpreter checks it.
      return def->has_attr("nonneg");
    case OpKind::find_group:  // a group index, a tile in it, its first row and its row count
      return true;
    case OpKind::max:
      return never_negative(def->operand(0), assumed, depth + 1) ||
             never_negative(def->operand(1), assumed, depth + 1);
    case OpKind::for_: {
      // The loop's result: its carried value after the last iteration (or the initial one).
      const Block& body = *def->region(0);
      return never_negative(body.argument(v->index() + 1), assumed, depth + 1);
    }
    default:
      return false;
  }
}

}  // namespace

bool never_negative(const Value* v) {
  std::vector<const Value*> assumed;
  return never_negative(v, assumed, 0);
}

}  // namespace tessel::ir
