// The layout calculator: a recursive-descent evaluator over the layout algebra.
#include "layout/calculator.h"

#include <functional>
#include <map>

#include "layout/parse.h"
#include "support/diagnostics.h"

namespace tessel::layout {

std::string CalcValue::kind_name(Kind kind) {
  switch (kind) {
    case kInteger:
      return "an integer";
    case kTuple:
      return "a tuple";
    case kLayout:
      return "a layout";
    case kTiler:
      return "a tiler";
    case kComposed:
      return "a swizzled layout";
    case kSwizzle:
      return "a swizzle";
    case kTV:
      return "a TV layout";
  }
  return "a value";
}

std::string CalcValue::str() const {
  switch (kind) {
    case kInteger:
      return integer.str();
    case kTuple:
      return tuple.str();
    case kLayout:
      return layout.str();
    case kTiler:
      return tiler.str();
    case kComposed:
      return composed->str();
    case kSwizzle:
      return swizzle.str();
    case kTV:
      return tv.layout().str();
  }
  return "";
}

namespace {

struct Arg {
  CalcValue value;
  Token start;  // where the argument begins, for error columns
};

CalcValue make_int(Extent e) {
  CalcValue v;
  v.kind = CalcValue::kInteger;
  v.integer = std::move(e);
  return v;
}
CalcValue make_layout_value(Layout l) {
  CalcValue v;
  v.kind = CalcValue::kLayout;
  v.layout = std::move(l);
  return v;
}
CalcValue make_tuple(IntTuple t) {
  CalcValue v;
  v.kind = CalcValue::kTuple;
  v.tuple = std::move(t);
  return v;
}

class Evaluator {
 public:
  Evaluator(std::string_view text, const Facts& facts, const std::string& file)
      : ts_(tokenize(text, file), file), facts_(facts) {}

  CalcValue run() {
    if (ts_.at_end()) ts_.error_at(ts_.peek(), "empty expression");
    CalcValue v = expr();
    if (!ts_.at_end()) {
      ts_.error_at(ts_.peek(), "unexpected '" + ts_.peek().text + "' after the expression");
    }
    return v;
  }

 private:
  using Fn = std::function<CalcValue(Evaluator&, const std::vector<Arg>&, const Token&)>;

  CalcValue expr() {
    const Token& t = ts_.peek();
    if (t.kind == Token::kIdent && t.text == "Sw" && is_punct(ts_.peek(1), "<")) return swizzle();
    if (t.kind == Token::kIdent && is_punct(ts_.peek(1), "(")) return call();
    if (is_punct(t, "<")) return tiler(">");
    if (is_punct(t, "[")) return tiler("]");
    return literal();
  }

  static bool is_punct(const Token& t, const char* p) {
    return t.kind == Token::kPunct && t.text == p;
  }

  CalcValue literal() {
    Token start = ts_.peek();
    if (start.kind == Token::kEnd)
      ts_.error_at(start, "expected a layout, found the end of the expression");
    if (start.kind == Token::kPunct && start.text != "(" && start.text != "-") {
      ts_.error_at(start, "expected a layout, an integer or a call, found '" + start.text + "'");
    }
    IntTuple shape = ts_.parse_tuple();
    if (is_punct(ts_.peek(), ":")) {
      ts_.next();
      Token stride_start = ts_.peek();
      IntTuple stride = ts_.parse_tuple();
      if (!congruent(shape, stride)) {
        ts_.error_at(stride_start, "the stride " + stride.str() +
                                       " is not congruent to the shape " + shape.str());
      }
      return at(start, [&] { return make_layout_value(Layout(shape, stride)); });
    }
    if (shape.is_leaf()) return make_int(shape.value());
    CalcValue v = at(start, [&] { return make_layout_value(Layout(shape)); });
    v.bare_shape = true;
    v.tuple = shape;
    return v;
  }

  CalcValue tiler(const char* close) {
    Token open = ts_.next();
    ts_.enter(open);
    std::vector<Tiler> modes;
    while (true) {
      Arg a = arg();
      modes.push_back(as_tiler(a));
      if (ts_.accept(close)) break;
      ts_.expect(",", std::string("or '") + close + "' in a tiler");
    }
    ts_.leave();
    CalcValue v;
    v.kind = CalcValue::kTiler;
    v.tiler = Tiler(std::move(modes));
    return v;
  }

  CalcValue swizzle() {
    Token name = ts_.next();
    ts_.expect("<", "after Sw");
    int b = small_int("B"), m, s;
    ts_.expect(",", "in Sw<B,M,S>");
    m = small_int("M");
    ts_.expect(",", "in Sw<B,M,S>");
    s = small_int("S");
    ts_.expect(">", "to close Sw<B,M,S>");
    CalcValue v;
    v.kind = CalcValue::kSwizzle;
    v.swizzle = at(name, [&] { return Swizzle(b, m, s); });
    if (ts_.peek().kind == Token::kIdent && ts_.peek().text == "o") {
      ts_.next();
      int64 offset = 0;
      if (ts_.peek().kind == Token::kInt && ts_.peek(1).kind == Token::kIdent &&
          ts_.peek(1).text == "o") {
        offset = ts_.next().value;
        ts_.next();
      }
      ts_.enter(name);
      Arg inner = arg();
      ts_.leave();
      Layout l = as_layout(inner, "the layout after 'Sw<...> o'");
      CalcValue c;
      c.kind = CalcValue::kComposed;
      c.composed = ComposedLayout(v.swizzle, offset, l);
      return c;
    }
    return v;
  }

  int small_int(const char* what) {
    bool negative = ts_.accept("-");
    Token t = ts_.peek();
    if (t.kind != Token::kInt)
      ts_.error_at(t, std::string("expected the integer ") + what + " of Sw<B,M,S>");
    ts_.next();
    if (t.value > 64)
      ts_.error_at(t, std::string("the swizzle parameter ") + what + " is too large");
    return static_cast<int>(negative ? -t.value : t.value);
  }

  Arg arg() {
    Token start = ts_.peek();
    return Arg{expr(), start};
  }

  CalcValue call() {
    Token name = ts_.next();
    ts_.expect("(", "after " + name.text);
    ts_.enter(name);
    std::vector<Arg> args;
    if (!ts_.accept(")")) {
      while (true) {
        args.push_back(arg());
        if (ts_.accept(")")) break;
        ts_.expect(",", "or ')' in the arguments of " + name.text);
      }
    }
    ts_.leave();
    auto it = functions().find(name.text);
    if (it == functions().end()) {
      ts_.error_at(name, "unknown function '" + name.text + "' (see `tessel help layout`)");
    }
    return at(name, [&] { return it->second(*this, args, name); });
  }

  // Runs f; a UserError without a location gets the location of `token`.
  template <typename F>
  auto at(const Token& token, F&& f) -> decltype(f()) {
    try {
      return f();
    } catch (const UserError& e) {
      if (e.location().is_known()) throw;
      throw UserError(ts_.location(token), e.message());
    }
  }

  // ---- argument conversions ----

  [[noreturn]] void bad_arg(const Arg& a, const std::string& expected) {
    ts_.error_at(a.start, "expected " + expected + ", found " + CalcValue::kind_name(a.value.kind) +
                              " " + a.value.str());
  }

  Layout as_layout(const Arg& a, const std::string& what = "a layout") {
    switch (a.value.kind) {
      case CalcValue::kLayout:
        return a.value.layout;
      case CalcValue::kTV:
        return a.value.tv.layout();
      case CalcValue::kInteger:
        return at(a.start, [&] { return Layout(IntTuple(a.value.integer), IntTuple(1)); });
      case CalcValue::kTuple:
        return at(a.start, [&] { return Layout(a.value.tuple); });
      default:
        bad_arg(a, what);
    }
  }

  Tiler as_tiler(const Arg& a) {
    if (a.value.kind == CalcValue::kTiler) return a.value.tiler;
    return Tiler(as_layout(a, "a layout or a tiler"));
  }

  Extent as_extent(const Arg& a, const std::string& what = "an integer") {
    if (a.value.kind != CalcValue::kInteger) bad_arg(a, what);
    return a.value.integer;
  }

  int64 as_index(const Arg& a, int64 limit, const std::string& what) {
    Extent e = as_extent(a, what);
    if (!e.is_constant() || e.constant() < 0 || e.constant() >= limit) {
      ts_.error_at(a.start,
                   what + " " + e.str() + " is out of range [0, " + std::to_string(limit) + ")");
    }
    return e.constant();
  }

  IntTuple as_tuple(const Arg& a, const std::string& what) {
    if (a.value.kind == CalcValue::kTuple) return a.value.tuple;
    if (a.value.kind == CalcValue::kInteger) return IntTuple(a.value.integer);
    if (a.value.kind == CalcValue::kLayout && a.value.bare_shape) return a.value.tuple;
    bad_arg(a, what);
  }

  void arity(const std::vector<Arg>& args, const Token& name, size_t lo, size_t hi) {
    if (args.size() >= lo && args.size() <= hi) return;
    std::string want =
        lo == hi ? std::to_string(lo) : std::to_string(lo) + " or " + std::to_string(hi);
    ts_.error_at(name, name.text + " takes " + want + " argument" + (hi == 1 ? "" : "s") +
                           ", got " + std::to_string(args.size()));
  }

  // ---- the function table ----

  static const std::map<std::string, Fn>& functions() {
    static const std::map<std::string, Fn> table = build_table();
    return table;
  }

  static std::map<std::string, Fn> build_table() {
    std::map<std::string, Fn> t;
    using A = const std::vector<Arg>&;
    using N = const Token&;
    auto unary_layout = [](Layout (*op)(const Layout&, const Facts&)) {
      return [op](Evaluator& e, A a, N n) {
        e.arity(a, n, 1, 1);
        return make_layout_value(op(e.as_layout(a[0]), e.facts_));
      };
    };
    auto tiler_op = [](Layout (*op)(const Layout&, const Tiler&, const Facts&)) {
      return [op](Evaluator& e, A a, N n) {
        e.arity(a, n, 2, 2);
        return make_layout_value(op(e.as_layout(a[0]), e.as_tiler(a[1]), e.facts_));
      };
    };
    auto layout_op = [](Layout (*op)(const Layout&, const Layout&, const Facts&)) {
      return [op](Evaluator& e, A a, N n) {
        e.arity(a, n, 2, 2);
        return make_layout_value(op(e.as_layout(a[0]), e.as_layout(a[1]), e.facts_));
      };
    };
    t["size"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 1);
      if (a[0].value.kind == CalcValue::kComposed) return make_int(a[0].value.composed->size());
      if (a[0].value.kind == CalcValue::kTuple) return make_int(product(a[0].value.tuple));
      return make_int(e.as_layout(a[0]).size_extent());
    };
    t["cosize"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 1);
      if (a[0].value.kind == CalcValue::kComposed) return make_int(a[0].value.composed->cosize());
      return make_int(e.as_layout(a[0]).cosize_extent());
    };
    t["rank"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 1);
      if (a[0].value.kind == CalcValue::kComposed) return make_int(a[0].value.composed->rank());
      return make_int(e.as_layout(a[0]).rank());
    };
    t["depth"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 1);
      if (a[0].value.kind == CalcValue::kComposed)
        return make_int(a[0].value.composed->layout().depth());
      return make_int(e.as_layout(a[0]).depth());
    };
    t["shape"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 1);
      return make_tuple(e.as_layout(a[0]).shape());
    };
    t["stride"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 1);
      return make_tuple(e.as_layout(a[0]).stride());
    };
    t["mode"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 2, 2);
      Layout l = e.as_layout(a[0]);
      return make_layout_value(l.mode(static_cast<int>(e.as_index(a[1], l.rank(), "the mode"))));
    };
    t["eval"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 2, 2);
      IntTuple coord = e.as_tuple(a[1], "an index or a coordinate");
      if (a[0].value.kind == CalcValue::kComposed) {
        const ComposedLayout& c = *a[0].value.composed;
        return make_int(coord.is_leaf() ? c(coord.as_int()) : c(coord));
      }
      Layout l = e.as_layout(a[0]);
      if (coord.is_leaf()) {
        int64 i = coord.as_int();
        if (i < 0 || i >= l.size()) {
          e.ts_.error_at(a[1].start, "index " + std::to_string(i) + " is out of range for " +
                                         l.str() + " (size " + std::to_string(l.size()) + ")");
        }
        return make_int(l(i));
      }
      return make_int(l(coord));
    };
    t["coalesce"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 2);
      if (a.size() == 1) return make_layout_value(coalesce(e.as_layout(a[0])));
      return make_layout_value(coalesce(e.as_layout(a[0]), e.as_tuple(a[1], "a profile tuple")));
    };
    t["filter"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 1);
      return make_layout_value(filter(e.as_layout(a[0])));
    };
    t["flatten"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 1);
      return make_layout_value(flatten(e.as_layout(a[0])));
    };
    t["make_layout"] = [](Evaluator& e, A a, N n) {
      if (a.empty()) e.arity(a, n, 1, 1);
      std::vector<Layout> modes;
      for (const Arg& x : a) modes.push_back(e.as_layout(x));
      return make_layout_value(make_layout(modes));
    };
    t["composition"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 2, 2);
      if (a[0].value.kind == CalcValue::kSwizzle || a[0].value.kind == CalcValue::kComposed) {
        ComposedLayout c = a[0].value.kind == CalcValue::kSwizzle
                               ? ComposedLayout(a[0].value.swizzle, 0, e.as_layout(a[1]))
                               : composition(*a[0].value.composed, e.as_tiler(a[1]), e.facts_);
        CalcValue v;
        v.kind = CalcValue::kComposed;
        v.composed = c;
        return v;
      }
      if (a[0].value.kind == CalcValue::kTV) {
        // TV o tile layout is not meaningful; the other order gives (T,V) -> offset.
        e.bad_arg(a[0], "a layout (use compose(TV, L) for a TV layout)");
      }
      return make_layout_value(composition(e.as_layout(a[0]), e.as_tiler(a[1]), e.facts_));
    };
    t["complement"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 2);
      if (a.size() == 1) return make_layout_value(complement(e.as_layout(a[0]), e.facts_));
      return make_layout_value(
          complement(e.as_layout(a[0]), e.as_extent(a[1], "an integer cotarget"), e.facts_));
    };
    t["right_inverse"] = unary_layout(&right_inverse);
    t["left_inverse"] = unary_layout(&left_inverse);
    t["logical_divide"] = tiler_op(&logical_divide);
    t["zipped_divide"] = tiler_op(&zipped_divide);
    t["tiled_divide"] = tiler_op(&tiled_divide);
    t["flat_divide"] = tiler_op(&flat_divide);
    t["logical_product"] = tiler_op(&logical_product);
    t["zipped_product"] = tiler_op(&zipped_product);
    t["tiled_product"] = tiler_op(&tiled_product);
    t["flat_product"] = tiler_op(&flat_product);
    t["blocked_product"] = layout_op(&blocked_product);
    t["raked_product"] = layout_op(&raked_product);
    t["max_common_layout"] = layout_op(&max_common_layout);
    t["max_common_vector"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 2, 2);
      // The size as an extent, so that parametric layouts answer too.
      return make_int(
          max_common_layout(e.as_layout(a[0]), e.as_layout(a[1]), e.facts_).size_extent());
    };
    t["swizzle"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 3, 4);
      int p[3];
      for (int i = 0; i < 3; ++i)
        p[i] = static_cast<int>(e.as_index(a[i], 63, "the swizzle parameter"));
      CalcValue v;
      v.kind = CalcValue::kSwizzle;
      v.swizzle = Swizzle(p[0], p[1], p[2]);
      if (a.size() == 4) {
        v.kind = CalcValue::kComposed;
        v.composed = ComposedLayout(v.swizzle, 0, e.as_layout(a[3]));
      }
      return v;
    };
    t["tv"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 2, 2);
      CalcValue v;
      v.kind = CalcValue::kTV;
      v.tv = TVLayout(e.as_layout(a[0]), e.as_tuple(a[1], "a tile shape such as (16,8)"));
      return v;
    };
    t["make_tv_layout"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 2, 2);
      CalcValue v;
      v.kind = CalcValue::kTV;
      v.tv = make_tv_layout(e.as_layout(a[0]), e.as_layout(a[1]), e.facts_);
      return v;
    };
    t["make_layout_tv"] = t["make_tv_layout"];  // CuTe's name
    t["inverse"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 1, 1);
      if (a[0].value.kind != CalcValue::kTV) e.bad_arg(a[0], "a TV layout (made by tv(L, tile))");
      return make_layout_value(a[0].value.tv.inverse(e.facts_));
    };
    t["compose"] = [](Evaluator& e, A a, N n) {
      e.arity(a, n, 2, 2);
      if (a[0].value.kind != CalcValue::kTV) e.bad_arg(a[0], "a TV layout (made by tv(L, tile))");
      return make_layout_value(a[0].value.tv.compose(e.as_layout(a[1]), e.facts_));
    };
    return t;
  }

  TokenStream ts_;
  const Facts& facts_;
};

}  // namespace

const std::vector<std::pair<std::string, std::string>>& calculator_functions() {
  static const std::vector<std::pair<std::string, std::string>> list = {
      {"size(L) cosize(L) rank(L) depth(L)", "numbers"},
      {"shape(L) stride(L) mode(L,i) eval(L,i|coord)", "parts of a layout; its value at an index"},
      {"coalesce(L[,profile]) filter(L) flatten(L)", "simplify (by mode with a profile)"},
      {"make_layout(L0,L1,...)", "concatenation (L0,L1,...)"},
      {"composition(A,B|<tiler>)", "A o B (by mode with a tiler <B0,B1>)"},
      {"complement(A[,M])", "the rest of A up to M (default cosize(A))"},
      {"right_inverse(L) left_inverse(L)", "inverses"},
      {"logical_divide zipped_divide tiled_divide flat_divide (A,B|<tiler>)", "tiling"},
      {"logical_product zipped_product tiled_product flat_product (A,B|<tiler>)", "products"},
      {"blocked_product(A,B) raked_product(A,B)", "rank-sensitive products"},
      {"max_common_vector(A,B) max_common_layout(A,B)", "the common contiguous part"},
      {"Sw<B,M,S> [o [offset o] L]  swizzle(B,M,S[,L])", "swizzles and swizzled layouts"},
      {"tv(L,(M,N)) make_tv_layout(thr,val) (= make_layout_tv)",
       "thread-value layouts over an MxN tile"},
      {"inverse(TV) compose(TV,L)", "tile -> (t,v) index; (T,V) -> offset through L"},
  };
  return list;
}

CalcValue evaluate_layout_expression(std::string_view text, const Facts& facts,
                                     const std::string& file) {
  Evaluator e(text, facts, file);
  return e.run();
}

void parse_fact(std::string_view text, Facts& facts, const std::string& file) {
  TokenStream ts(tokenize(text, file), file);
  Token name = ts.peek();
  if (name.kind != Token::kIdent)
    ts.error_at(name, "a fact reads like K%64==0 (K divisible by 64)");
  ts.next();
  ts.expect("%", "in a fact such as K%64==0");
  Token d = ts.peek();
  if (d.kind != Token::kInt || d.value <= 0) ts.error_at(d, "expected a positive divisor");
  ts.next();
  if (ts.accept("==")) {
    Token z = ts.peek();
    if (z.kind != Token::kInt || z.value != 0) ts.error_at(z, "a fact must say '== 0'");
    ts.next();
  }
  if (!ts.at_end()) ts.error_at(ts.peek(), "unexpected '" + ts.peek().text + "' after the fact");
  facts.divisible(name.text, d.value);
}

}  // namespace tessel::layout
