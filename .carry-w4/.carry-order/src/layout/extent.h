// Extents: the leaves of shapes and strides — integers, or parametric expressions over named sizes.
//
// Graphene (§3.4) lets a shape hold symbols such as M, N, K whose values are only known at launch.
// An `Extent` is either a plain int64 (the fast, common case) or a polynomial in such symbols with
// rational coefficients, e.g. `M/64`, `64*M`, `M*N`. Symbols stand for positive integers.
// Arithmetic is exact: sums and products are always representable; a quotient is representable only
// when the divisor is a single term, and it is an *integer* only when the declared `Facts` prove it
// (for `M/64`, a fact "M divisible by 64" or by a multiple of 64). Nothing is ever rounded
// silently.
//
// Every algebra operation that needs a divisibility or an order between extents asks `Facts` for a
// proof; when none exists it raises a UserError that names the missing fact, so a caller can either
// declare it or pick a different tile. Concrete arithmetic is overflow-checked: an overflow is a
// UserError, never undefined behaviour.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace tessel::layout {

using int64 = std::int64_t;

// Declared divisibility facts about symbols ("K divisible by 64"). A symbol without a fact is only
// known to be a positive integer.
class Facts {
 public:
  Facts() = default;
  // Declares that `symbol` is a multiple of `divisor` (> 0). Repeated facts combine by lcm.
  Facts& divisible(const std::string& symbol, int64 divisor);
  // The largest known divisor of `symbol` (1 when nothing is declared).
  int64 divisor_of(const std::string& symbol) const;
  const std::map<std::string, int64>& all() const { return divisors_; }
  static const Facts& none();

 private:
  std::map<std::string, int64> divisors_;
};

// Values of symbols, for evaluating a parametric extent at launch.
using Bindings = std::map<std::string, int64>;

class Extent {
 public:
  Extent() = default;
  Extent(int64 value) : value_(value) {}  // NOLINT: integers are extents
  static Extent symbol(const std::string& name);

  bool is_constant() const { return poly_ == nullptr; }
  // The integer value; a UserError names the symbols when the extent is parametric.
  int64 constant() const;
  std::optional<int64> as_constant() const {
    return is_constant() ? std::optional<int64>(value_) : std::nullopt;
  }
  // The symbols this extent mentions (sorted, unique).
  std::vector<std::string> symbols() const;
  // Value with every symbol bound; a UserError names an unbound symbol or a non-integral result.
  int64 evaluate(const Bindings& bindings) const;
  // Replaces the bound symbols by their values (others stay symbolic).
  Extent substitute(const Bindings& bindings) const;

  // Printed as CuTe does for integers ("64"), and as e.g. "M/64", "64*M", "M*N+1" otherwise.
  std::string str() const;

  friend Extent operator+(const Extent& a, const Extent& b);
  friend Extent operator-(const Extent& a, const Extent& b);
  friend Extent operator*(const Extent& a, const Extent& b);
  Extent operator-() const;
  friend bool operator==(const Extent& a, const Extent& b);
  friend bool operator!=(const Extent& a, const Extent& b) { return !(a == b); }

  // Internals of the symbolic form (public for the printer and the tests).
  struct Term {
    std::vector<std::pair<std::string, int>> powers;  // sorted by name, exponents > 0
    int64 num = 0;                                    // coefficient num/den, den > 0, coprime
    int64 den = 1;
  };
  struct Poly {
    std::vector<Term> terms;  // sorted by powers, no zero coefficients, never a lone constant
  };
  const Poly* poly() const { return poly_.get(); }
  static Extent from_terms(std::vector<Term> terms);

 private:
  int64 value_ = 0;
  std::shared_ptr<const Poly> poly_;  // null: the extent is the integer value_
};

// --- Proof-carrying arithmetic ----------------------------------------------------------------
// These answer questions "for every value of the symbols allowed by `facts`".

// a / b when it is provably an integer; nullopt otherwise (b must be a single term, nonzero).
std::optional<Extent> exact_div(const Extent& a, const Extent& b, const Facts& facts);
// a / b as an exact rational polynomial, without asking for integrality (the parser uses it for
// literals such as `M/64`, which the writer asserts are integers). nullopt unless b is one term.
std::optional<Extent> rational_div(const Extent& a, const Extent& b);
// Whether b divides a provably (b | a). 0 is divisible by everything.
bool divides(const Extent& b, const Extent& a, const Facts& facts);
// Whether a <= b provably (concrete comparison, or b = k*a with a, b positive).
bool provably_le(const Extent& a, const Extent& b, const Facts& facts);
// Whether the extent is provably positive (concrete > 0, or every coefficient positive).
bool provably_positive(const Extent& a);
// A sentence naming the fact that would make `a / b` an integer, e.g. "M is divisible by 64".
std::string missing_fact(const Extent& a, const Extent& b, const Facts& facts);
// ceil(a / b) for concrete operands; for parametric ones the exact quotient when provable, else a
// UserError naming the missing fact (`what` says which operation asked).
Extent ceil_div(const Extent& a, const Extent& b, const Facts& facts, const std::string& what);

// Overflow-checked int64 arithmetic (UserError on overflow).
int64 checked_add(int64 a, int64 b);
int64 checked_mul(int64 a, int64 b);

std::ostream& operator<<(std::ostream& out, const Extent& value);

}  // namespace tessel::layout
