// Extents: exact integer and parametric arithmetic with divisibility proofs from declared facts.
#include "layout/extent.h"

#include <algorithm>
#include <numeric>
#include <ostream>
#include <sstream>

#include "support/diagnostics.h"

namespace tessel::layout {

int64 checked_add(int64 a, int64 b) {
  int64 r;
  if (__builtin_add_overflow(a, b, &r)) {
    user_error(SourceLocation::unknown(), "integer overflow: ", a, " + ", b, " exceeds 64 bits");
  }
  return r;
}

int64 checked_mul(int64 a, int64 b) {
  int64 r;
  if (__builtin_mul_overflow(a, b, &r)) {
    user_error(SourceLocation::unknown(), "integer overflow: ", a, " * ", b, " exceeds 64 bits");
  }
  return r;
}

namespace {

int64 checked_neg(int64 a) {
  return checked_mul(a, -1);
}

int64 gcd64(int64 a, int64 b) {
  a = a < 0 ? -a : a;
  b = b < 0 ? -b : b;
  while (b != 0) {
    int64 t = a % b;
    a = b;
    b = t;
  }
  return a;
}

using Powers = std::vector<std::pair<std::string, int>>;
using Term = Extent::Term;

void normalize(Term& t) {
  TESSEL_ASSERT(t.den != 0, "zero denominator");
  if (t.den < 0) {
    t.den = checked_neg(t.den);
    t.num = checked_neg(t.num);
  }
  int64 g = gcd64(t.num, t.den);
  if (g > 1) {
    t.num /= g;
    t.den /= g;
  }
}

Powers mul_powers(const Powers& a, const Powers& b) {
  std::map<std::string, int> m(a.begin(), a.end());
  for (const auto& [s, e] : b) m[s] += e;
  return Powers(m.begin(), m.end());
}

// Terms of an extent (a constant becomes one term with no powers).
std::vector<Term> terms_of(const Extent& e) {
  if (e.is_constant()) {
    int64 v = e.constant();
    if (v == 0) return {};
    return {Term{{}, v, 1}};
  }
  return e.poly()->terms;
}

Term add_coeffs(const Term& a, const Term& b) {
  // a.num/a.den + b.num/b.den
  int64 g = gcd64(a.den, b.den);
  int64 den = checked_mul(a.den / g, b.den);
  int64 num = checked_add(checked_mul(a.num, b.den / g), checked_mul(b.num, a.den / g));
  Term t{a.powers, num, den};
  normalize(t);
  return t;
}

std::string powers_str(const Powers& p) {
  std::string s;
  for (const auto& [name, e] : p) {
    for (int i = 0; i < e; ++i) {
      if (!s.empty()) s += "*";
      s += name;
    }
  }
  return s;
}

}  // namespace

// ---- Facts --------------------------------------------------------------------------------------

Facts& Facts::divisible(const std::string& symbol, int64 divisor) {
  if (divisor <= 0) {
    user_error(SourceLocation::unknown(), "fact '", symbol, " divisible by ", divisor,
               "': the divisor must be positive");
  }
  int64& d = divisors_[symbol];
  if (d == 0) d = 1;
  d = checked_mul(d / gcd64(d, divisor), divisor);
  return *this;
}

int64 Facts::divisor_of(const std::string& symbol) const {
  auto it = divisors_.find(symbol);
  return it == divisors_.end() ? 1 : it->second;
}

const Facts& Facts::none() {
  static const Facts empty;
  return empty;
}

// ---- Extent -------------------------------------------------------------------------------------

Extent Extent::symbol(const std::string& name) {
  TESSEL_ASSERT(!name.empty(), "empty symbol name");
  return from_terms({Term{{{name, 1}}, 1, 1}});
}

Extent Extent::from_terms(std::vector<Term> terms) {
  // Merge like terms, drop zeros, sort.
  std::map<Powers, Term> merged;
  for (Term& t : terms) {
    normalize(t);
    if (t.num == 0) continue;
    auto it = merged.find(t.powers);
    if (it == merged.end()) {
      merged.emplace(t.powers, t);
    } else {
      it->second = add_coeffs(it->second, t);
    }
  }
  std::vector<Term> out;
  for (auto& [p, t] : merged) {
    if (t.num != 0) out.push_back(t);
  }
  if (out.empty()) return Extent(0);
  if (out.size() == 1 && out[0].powers.empty() && out[0].den == 1) return Extent(out[0].num);
  Extent e;
  auto poly = std::make_shared<Poly>();
  poly->terms = std::move(out);
  e.poly_ = std::move(poly);
  return e;
}

int64 Extent::constant() const {
  if (poly_ != nullptr) {
    std::string names;
    for (const std::string& s : symbols()) names += (names.empty() ? "" : ", ") + s;
    user_error(SourceLocation::unknown(), "the extent ", str(), " is parametric (it depends on ",
               names, "); bind its symbols to evaluate it");
  }
  return value_;
}

std::vector<std::string> Extent::symbols() const {
  std::vector<std::string> out;
  if (poly_ == nullptr) return out;
  for (const Term& t : poly_->terms) {
    for (const auto& [s, e] : t.powers) out.push_back(s);
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

Extent Extent::substitute(const Bindings& bindings) const {
  if (poly_ == nullptr) return *this;
  std::vector<Term> out;
  for (const Term& t : poly_->terms) {
    Term r{{}, t.num, t.den};
    for (const auto& [s, e] : t.powers) {
      auto it = bindings.find(s);
      if (it == bindings.end()) {
        r.powers.emplace_back(s, e);
      } else {
        for (int i = 0; i < e; ++i) r.num = checked_mul(r.num, it->second);
        normalize(r);
      }
    }
    out.push_back(r);
  }
  return from_terms(std::move(out));
}

int64 Extent::evaluate(const Bindings& bindings) const {
  if (poly_ == nullptr) return value_;
  Extent e = substitute(bindings);
  if (!e.is_constant()) {
    if (e.symbols().empty()) {
      user_error(SourceLocation::unknown(), "the extent ", str(),
                 " is not an integer for the given values of its symbols");
    }
    user_error(SourceLocation::unknown(), "the symbol ", e.symbols().front(),
               " has no value (extent ", str(), ")");
  }
  return e.value_;
}

std::string Extent::str() const {
  if (poly_ == nullptr) return std::to_string(value_);
  std::string s;
  bool first = true;
  for (const Term& t : poly_->terms) {
    int64 num = t.num;
    if (!first) {
      s += num < 0 ? "-" : "+";
      if (num < 0) num = -num;
    } else if (num < 0) {
      s += "-";
      num = -num;
    }
    first = false;
    std::string p = powers_str(t.powers);
    if (p.empty()) {
      s += std::to_string(num);
    } else if (num == 1) {
      s += p;
    } else {
      s += std::to_string(num) + "*" + p;
    }
    if (t.den != 1) s += "/" + std::to_string(t.den);
  }
  return s;
}

Extent operator+(const Extent& a, const Extent& b) {
  if (a.is_constant() && b.is_constant()) return Extent(checked_add(a.value_, b.value_));
  std::vector<Term> t = terms_of(a);
  for (const Term& x : terms_of(b)) t.push_back(x);
  return Extent::from_terms(std::move(t));
}

Extent Extent::operator-() const {
  if (is_constant()) return Extent(checked_neg(value_));
  std::vector<Term> t = terms_of(*this);
  for (Term& x : t) x.num = checked_neg(x.num);
  return from_terms(std::move(t));
}

Extent operator-(const Extent& a, const Extent& b) {
  return a + (-b);
}

Extent operator*(const Extent& a, const Extent& b) {
  if (a.is_constant() && b.is_constant()) return Extent(checked_mul(a.value_, b.value_));
  std::vector<Term> out;
  for (const Term& x : terms_of(a)) {
    for (const Term& y : terms_of(b)) {
      Term t{mul_powers(x.powers, y.powers), x.num, x.den};
      // Cross-cancel before multiplying to keep the numbers small.
      int64 g1 = gcd64(t.num, y.den), g2 = gcd64(y.num, t.den);
      t.num = checked_mul(t.num / g1, y.num / g2);
      t.den = checked_mul(t.den / g2, y.den / g1);
      normalize(t);
      out.push_back(t);
    }
  }
  return Extent::from_terms(std::move(out));
}

bool operator==(const Extent& a, const Extent& b) {
  if (a.is_constant() != b.is_constant()) return false;
  if (a.is_constant()) return a.value_ == b.value_;
  const auto& x = a.poly_->terms;
  const auto& y = b.poly_->terms;
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].powers != y[i].powers || x[i].num != y[i].num || x[i].den != y[i].den) return false;
  }
  return true;
}

// ---- Proofs -------------------------------------------------------------------------------------

namespace {

// The largest integer known to divide every value of the monomial `powers` (product of the
// declared divisors), saturating to avoid overflow.
int64 known_divisor(const Powers& powers, const Facts& facts) {
  int64 d = 1;
  for (const auto& [s, e] : powers) {
    for (int i = 0; i < e; ++i) {
      int64 r;
      if (__builtin_mul_overflow(d, facts.divisor_of(s), &r)) return d;
      d = r;
    }
  }
  return d;
}

// Whether the term num/den * powers is provably an integer.
bool term_integral(const Term& t, const Facts& facts) {
  if (t.den == 1) return true;
  return known_divisor(t.powers, facts) % t.den == 0;
}

// a / b as an exact polynomial (possibly non-integral), when b is a single nonzero term and every
// power of b divides the terms of a.
std::optional<Extent> poly_div(const Extent& a, const Extent& b) {
  std::vector<Term> bt = terms_of(b);
  if (bt.size() != 1) return std::nullopt;
  const Term& d = bt[0];
  std::vector<Term> out;
  for (const Term& t : terms_of(a)) {
    std::map<std::string, int> p(t.powers.begin(), t.powers.end());
    for (const auto& [s, e] : d.powers) {
      auto it = p.find(s);
      if (it == p.end() || it->second < e) return std::nullopt;
      it->second -= e;
      if (it->second == 0) p.erase(it);
    }
    Term r{Powers(p.begin(), p.end()), t.num, t.den};
    // divide by d.num/d.den: multiply by d.den/d.num
    int64 g1 = gcd64(r.num, d.num), g2 = gcd64(d.den, r.den);
    r.num = checked_mul(r.num / g1, d.den / g2);
    r.den = checked_mul(r.den / g2, d.num / g1);
    normalize(r);
    out.push_back(r);
  }
  return Extent::from_terms(std::move(out));
}

}  // namespace

std::optional<Extent> rational_div(const Extent& a, const Extent& b) {
  if (b.is_constant() && b.constant() == 0) return std::nullopt;
  if (a.is_constant() && b.is_constant() && a.constant() % b.constant() == 0) {
    return exact_div(a, b, Facts::none());
  }
  return poly_div(a, b);
}

std::optional<Extent> exact_div(const Extent& a, const Extent& b, const Facts& facts) {
  if (b.is_constant() && b.constant() == 0) return std::nullopt;
  if (a.is_constant() && b.is_constant()) {
    if (a.constant() % b.constant() != 0) return std::nullopt;
    if (a.constant() == INT64_MIN && b.constant() == -1) return std::nullopt;
    return Extent(a.constant() / b.constant());
  }
  std::optional<Extent> q = poly_div(a, b);
  if (!q) return std::nullopt;
  for (const Term& t : terms_of(*q)) {
    if (!term_integral(t, facts)) return std::nullopt;
  }
  return q;
}

bool divides(const Extent& b, const Extent& a, const Facts& facts) {
  return exact_div(a, b, facts).has_value();
}

bool provably_positive(const Extent& a) {
  if (a.is_constant()) return a.constant() > 0;
  for (const Term& t : a.poly()->terms) {
    if (t.num <= 0) return false;
  }
  return true;
}

bool provably_le(const Extent& a, const Extent& b, const Facts& facts) {
  if (a.is_constant() && b.is_constant()) return a.constant() <= b.constant();
  if (a == b) return true;
  // b - a with all coefficients non-negative and a positive constant part is not needed: symbols
  // are >= 1, so a difference whose terms are all positive is >= 0.
  Extent diff = b - a;
  if (diff.is_constant()) return diff.constant() >= 0;
  if (provably_positive(diff)) return true;
  // a | b with both positive gives a <= b.
  if (provably_positive(a) && provably_positive(b) && divides(a, b, facts)) return true;
  return false;
}

std::string missing_fact(const Extent& a, const Extent& b, const Facts& facts) {
  std::optional<Extent> q = poly_div(a, b);
  if (!q) return a.str() + " is a multiple of " + b.str();
  for (const Term& t : terms_of(*q)) {
    if (term_integral(t, facts)) continue;
    std::string p = powers_str(t.powers);
    int64 need = t.den / gcd64(t.den, known_divisor(t.powers, facts));
    int64 have = known_divisor(t.powers, facts);
    int64 want = have * need;  // the divisor the fact must declare
    if (t.powers.size() == 1 && t.powers[0].second == 1) {
      return p + " is divisible by " + std::to_string(want);
    }
    return p + " is divisible by " + std::to_string(t.den);
  }
  return a.str() + " is a multiple of " + b.str();
}

Extent ceil_div(const Extent& a, const Extent& b, const Facts& facts, const std::string& what) {
  if (a.is_constant() && b.is_constant()) {
    int64 x = a.constant(), y = b.constant();
    TESSEL_ASSERT(y > 0, "ceil_div by a non-positive number");
    if (x <= 0) return Extent(x / y);
    return Extent((x - 1) / y + 1);
  }
  if (std::optional<Extent> q = exact_div(a, b, facts)) return *q;
  user_error(SourceLocation::unknown(), what, ": cannot prove that ", missing_fact(a, b, facts),
             " (", a.str(), " / ", b.str(), " must be an integer; declare the fact)");
}

std::ostream& operator<<(std::ostream& out, const Extent& value) {
  return out << value.str();
}

}  // namespace tessel::layout
