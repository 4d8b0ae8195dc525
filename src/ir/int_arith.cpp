// Integer arithmetic with the IR's semantics.
#include "ir/int_arith.h"

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

}  // namespace tessel::ir
