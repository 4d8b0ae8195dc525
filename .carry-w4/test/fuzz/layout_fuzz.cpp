// Fuzzer for the layout calculator: no input may crash tessel or raise an internal error.
//
// Every input is evaluated as a `tessel layout` expression (with random facts declared). The only
// allowed outcomes are a value or a UserError with a location; an InternalError, any other
// exception, or a crash is a finding. A successful layout result must also print and re-parse to
// itself, and small results are drawn (table and SVG) to exercise the printers.
//
// Two ways to run it:
//   * standalone (default build): `layout_fuzz --seconds N [--seed S]` generates inputs itself —
//     grammar-directed random expressions over random literals, byte-level mutations of them, and
//     random token soup — for N seconds. CTest runs it for a few seconds.
//   * libFuzzer (clang, -DTESSEL_LIBFUZZER=ON): the same check in LLVMFuzzerTestOneInput.
#include <chrono>
#include <cstdio>
#include <cstring>
#include <iostream>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "layout/calculator.h"
#include "layout/parse.h"
#include "layout/print.h"
#include "support/diagnostics.h"

namespace {

using namespace tessel;
using namespace tessel::layout;

// Returns false (and reports) on a finding.
bool check_one(const std::string& input, const Facts& facts, bool* valued = nullptr) {
  CalcValue v;
  try {
    v = evaluate_layout_expression(input, facts);
    if (valued != nullptr) *valued = true;
  } catch (const UserError& e) {
    if (e.location().file.empty() && e.location().column == 0 && e.location().line == 0) {
      // Calculator errors always carry a column; a missing one is a (small) bug worth knowing.
      std::cerr << "FINDING: user error without a location: " << e.what() << "\ninput: " << input
                << "\n";
      return false;
    }
    return true;
  } catch (const InternalError& e) {
    std::cerr << "FINDING: internal error: " << e.what() << "\ninput: " << input << "\n";
    return false;
  } catch (const std::exception& e) {
    std::cerr << "FINDING: exception " << e.what() << "\ninput: " << input << "\n";
    return false;
  }
  // What the command line does next with a value: print it, and draw it. Drawing may refuse
  // (too large, overflow) with a UserError, which is fine; anything else is a finding.
  try {
    if (v.kind == CalcValue::kLayout) {
      Layout back = parse_layout(to_string(v.layout));
      if (back != v.layout) {
        std::cerr << "FINDING: print/parse round trip changed " << to_string(v.layout) << " into "
                  << to_string(back) << "\ninput: " << input << "\n";
        return false;
      }
      if (v.layout.is_constant() && v.layout.size() <= 4096) {
        render_svg(picture(v.layout));
        render_table(picture(v.layout));
      }
    }
    if (v.kind == CalcValue::kTV && v.tv.layout().is_constant() && v.tv.layout().size() <= 4096) {
      render_svg(picture(v.tv));
    }
    if (v.kind == CalcValue::kComposed && v.composed->layout().is_constant() &&
        v.composed->size() <= 4096) {
      render_table(picture(*v.composed));
    }
  } catch (const UserError&) {
  } catch (const InternalError& e) {
    std::cerr << "FINDING: internal error while printing: " << e.what() << "\ninput: " << input
              << "\n";
    return false;
  } catch (const std::exception& e) {
    std::cerr << "FINDING: exception while printing " << e.what() << "\ninput: " << input << "\n";
    return false;
  }
  return true;
}

class Generator {
 public:
  explicit Generator(unsigned seed) : rng_(seed) {}
  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }

  std::string leaf(bool stride) {
    int r = uniform(0, 20);
    if (r == 0) return "M";
    if (r == 1) return "N/8";
    if (r == 2) return stride ? "0" : "1";
    if (r == 3) return std::to_string(uniform(0, 1 << 20));
    return std::to_string(stride ? uniform(0, 64) : uniform(1, 8));
  }
  std::string tuple_like(int depth, std::vector<int>& shape_tree, bool stride, size_t& k) {
    // shape_tree encodes the structure: -1 open, -2 close, >= 0 leaf
    std::string s;
    int code = shape_tree[k++];
    if (code >= 0) return leaf(stride);
    s += "(";
    bool first = true;
    while (shape_tree[k] != -2) {
      if (!first) s += ",";
      first = false;
      s += tuple_like(depth + 1, shape_tree, stride, k);
    }
    ++k;
    return s + ")";
  }
  void structure(int depth, std::vector<int>& out) {
    if (depth > 2 || uniform(0, 2) == 0) {
      out.push_back(0);
      return;
    }
    out.push_back(-1);
    for (int n = uniform(1, 3); n > 0; --n) structure(depth + 1, out);
    out.push_back(-2);
  }
  std::string literal() {
    std::vector<int> tree;
    structure(0, tree);
    size_t k = 0;
    std::string shape = tuple_like(0, tree, false, k);
    if (uniform(0, 4) == 0) return shape;
    k = 0;
    return shape + ":" + tuple_like(0, tree, true, k);
  }
  std::string expr(int depth) {
    static const char* unary[] = {"coalesce", "right_inverse", "left_inverse", "complement",
                                  "size",     "cosize",        "rank",         "depth",
                                  "filter",   "flatten",       "shape",        "stride"};
    static const char* binary[] = {"composition",       "logical_divide", "zipped_divide",
                                   "tiled_divide",      "flat_divide",    "logical_product",
                                   "blocked_product",   "raked_product",  "max_common_vector",
                                   "max_common_layout", "complement",     "make_layout",
                                   "coalesce",          "mode",           "eval",
                                   "zipped_product",    "tiled_product",  "flat_product"};
    const int n_unary = static_cast<int>(std::size(unary)) - 1;
    const int n_binary = static_cast<int>(std::size(binary)) - 1;
    int r = depth > 3 ? 0 : uniform(0, 9);
    if (r <= 2) return literal();
    if (r == 3) return unary[uniform(0, n_unary)] + std::string("(") + expr(depth + 1) + ")";
    if (r == 4) return "<" + expr(depth + 1) + "," + expr(depth + 1) + ">";
    if (r == 5) return std::to_string(uniform(0, 64));
    if (r == 6) {
      return "Sw<" + std::to_string(uniform(0, 3)) + "," + std::to_string(uniform(0, 4)) + "," +
             std::to_string(uniform(-1, 4)) + "> o " + expr(depth + 1);
    }
    if (r == 7)
      return "tv(" + expr(depth + 1) + ",(" + std::to_string(uniform(1, 16)) + "," +
             std::to_string(uniform(1, 16)) + "))";
    return binary[uniform(0, n_binary)] + std::string("(") + expr(depth + 1) + "," +
           expr(depth + 1) + ")";
  }
  std::string mutate(std::string s) {
    static const std::string alphabet = "()<>[],:+-*/%=0123456789MNKoSw_ x\t\x01\xff";
    for (int n = uniform(1, 4); n > 0; --n) {
      int op = uniform(0, 3);
      size_t pos = s.empty() ? 0 : static_cast<size_t>(uniform(0, static_cast<int>(s.size()) - 1));
      char c = alphabet[uniform(0, static_cast<int>(alphabet.size()) - 1)];
      if (op == 0 || s.empty()) {
        s.insert(s.begin() + static_cast<long>(std::min(pos, s.size())), c);
      } else if (op == 1) {
        s.erase(pos, 1);
      } else if (op == 2) {
        s[pos] = c;
      } else {
        size_t len = static_cast<size_t>(uniform(1, 8));
        s.insert(pos, s.substr(pos, len));  // duplicate a run
      }
    }
    return s;
  }
  std::string soup() {
    static const char* tokens[] = {"(",  ")", ",",           ":",  "<", ">",           "[",
                                   "]",  "4", "0",           "-3", "M", "composition", "complement",
                                   "Sw", "o", "99999999999", "/",  "*"};
    std::string s;
    for (int n = uniform(0, 24); n > 0; --n) s += tokens[uniform(0, 18)];
    return s;
  }
  Facts facts() {
    Facts f;
    if (uniform(0, 1)) f.divisible("M", 1 << uniform(0, 8));
    if (uniform(0, 1)) f.divisible("N", 1 << uniform(0, 8));
    return f;
  }
  std::string input() {
    int r = uniform(0, 9);
    if (r <= 4) return expr(0);
    if (r <= 8) return mutate(expr(0));
    return soup();
  }

 private:
  std::mt19937 rng_;
};

}  // namespace

#ifdef TESSEL_LIBFUZZER
extern "C" int LLVMFuzzerTestOneInput(const unsigned char* data, size_t size) {
  std::string input(reinterpret_cast<const char*>(data), size);
  Facts facts;
  facts.divisible("M", 64);
  if (!check_one(input, facts)) __builtin_trap();
  return 0;
}
#else
int main(int argc, char** argv) {
  double seconds = 3;
  double slow = 10;  // an input taking longer than this is a finding (a hang in the making)
  unsigned seed = static_cast<unsigned>(std::random_device{}());
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--seconds") == 0) seconds = std::atof(argv[i + 1]);
    if (std::strcmp(argv[i], "--seed") == 0) seed = static_cast<unsigned>(std::atol(argv[i + 1]));
    if (std::strcmp(argv[i], "--slow") == 0) slow = std::atof(argv[i + 1]);
  }
  std::cout << "layout_fuzz: seed " << seed << ", " << seconds << " s\n";
  Generator g(seed);
  auto start = std::chrono::steady_clock::now();
  long n = 0, ok = 0;
  for (;; ++n) {
    {  // checked every input: one slow input must not overrun the budget unseen
      std::chrono::duration<double> spent = std::chrono::steady_clock::now() - start;
      if (spent.count() > seconds) break;
    }
    std::string in = g.input();
    Facts f = g.facts();
    bool valued = false;
    auto t0 = std::chrono::steady_clock::now();
    bool good = check_one(in, f, &valued);
    std::chrono::duration<double> took = std::chrono::steady_clock::now() - t0;
    if (good && took.count() > slow) {
      std::cerr << "FINDING: slow input (" << took.count() << " s)\ninput: " << in << "\n";
      good = false;
    }
    if (!good) {
      std::cerr << "layout_fuzz: finding after " << n << " inputs (seed " << seed << ")\n";
      return 1;
    }
    ok += valued;
  }
  std::cout << "layout_fuzz: " << n << " inputs, " << ok << " evaluated to a value, no findings\n";
  return 0;
}
#endif
