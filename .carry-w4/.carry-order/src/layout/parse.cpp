// Parsing and printing layouts in CuTe notation.
#include "layout/parse.h"

#include <cctype>

namespace tessel::layout {

std::vector<Token> tokenize(std::string_view text, const std::string& file) {
  std::vector<Token> out;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    int column = static_cast<int>(i) + 1;
    if (std::isspace(static_cast<unsigned char>(c))) {
      ++i;
      continue;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t j = i;
      int64 v = 0;
      while (j < text.size() && std::isdigit(static_cast<unsigned char>(text[j]))) {
        if (v > (INT64_MAX - 9) / 10) {
          user_error(SourceLocation::at(file, 1, column), "the integer starting here is too large");
        }
        v = v * 10 + (text[j] - '0');
        ++j;
      }
      out.push_back({Token::kInt, std::string(text.substr(i, j - i)), v, column});
      i = j;
      continue;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t j = i;
      while (j < text.size() &&
             (std::isalnum(static_cast<unsigned char>(text[j])) || text[j] == '_')) {
        ++j;
      }
      out.push_back({Token::kIdent, std::string(text.substr(i, j - i)), 0, column});
      i = j;
      continue;
    }
    if (c == '=' && i + 1 < text.size() && text[i + 1] == '=') {
      out.push_back({Token::kPunct, "==", 0, column});
      i += 2;
      continue;
    }
    static const std::string punct = "()[]<>,:+-*/%=";
    if (punct.find(c) != std::string::npos) {
      out.push_back({Token::kPunct, std::string(1, c), 0, column});
      ++i;
      continue;
    }
    std::string shown = std::isprint(static_cast<unsigned char>(c))
                            ? std::string("'") + c + "'"
                            : "byte " + std::to_string(static_cast<unsigned char>(c));
    user_error(SourceLocation::at(file, 1, column), "unexpected character ", shown);
  }
  out.push_back({Token::kEnd, "", 0, static_cast<int>(text.size()) + 1});
  return out;
}

const Token& TokenStream::peek(int ahead) const {
  size_t i = std::min(pos_ + ahead, tokens_.size() - 1);
  return tokens_[i];
}

Token TokenStream::next() {
  Token t = peek();
  if (pos_ + 1 < tokens_.size()) ++pos_;
  return t;
}

bool TokenStream::accept(const std::string& punct) {
  if (peek().kind == Token::kPunct && peek().text == punct) {
    next();
    return true;
  }
  return false;
}

void TokenStream::error_at(const Token& token, const std::string& message) const {
  throw UserError(location(token), message);
}

namespace {
std::string describe(const Token& t) {
  if (t.kind == Token::kEnd) return "the end of the expression";
  return "'" + t.text + "'";
}
}  // namespace

void TokenStream::expect(const std::string& punct, const std::string& context) {
  if (!accept(punct))
    error_at(peek(), "expected '" + punct + "' " + context + ", found " + describe(peek()));
}

void TokenStream::enter(const Token& token) {
  if (++depth_ > kMaxDepth) {
    error_at(token,
             "the expression is nested more than " + std::to_string(kMaxDepth) + " levels deep");
  }
}

IntTuple TokenStream::parse_tuple() {
  if (!(peek().kind == Token::kPunct && peek().text == "(")) return IntTuple(parse_leaf());
  Token open = next();
  enter(open);
  std::vector<IntTuple> elements;
  if (peek().kind == Token::kPunct && peek().text == ")") error_at(peek(), "empty tuple");
  while (true) {
    elements.push_back(parse_tuple());
    if (accept(")")) break;
    expect(",", "or ')' in a tuple");
    if (accept(")")) break;  // trailing comma: "(8,)"
  }
  leave();
  return IntTuple(std::move(elements));
}

namespace {
// Applies an arithmetic step; an overflow (a UserError without a place) is reported at `op`.
template <typename F>
Extent located(const TokenStream& ts, const Token& op, F&& f) {
  try {
    return f();
  } catch (const UserError& e) {
    if (e.location().is_known()) throw;
    ts.error_at(op, e.message());
  }
}
bool is_punct(const Token& t, const char* p) {
  return t.kind == Token::kPunct && t.text == p;
}
}  // namespace

Extent TokenStream::parse_leaf() {
  Extent e = parse_term();
  while (is_punct(peek(), "+") || is_punct(peek(), "-")) {
    Token op = next();
    Extent rhs = parse_term();
    e = located(*this, op, [&] { return op.text == "+" ? e + rhs : e - rhs; });
  }
  return e;
}

Extent TokenStream::parse_term() {
  Extent e = parse_atom();
  while (is_punct(peek(), "*") || is_punct(peek(), "/")) {
    Token op = next();
    Extent rhs = parse_atom();
    if (op.text == "*") {
      e = located(*this, op, [&] { return e * rhs; });
    } else {
      e = located(*this, op, [&] {
        std::optional<Extent> r = rational_div(e, rhs);
        if (!r) error_at(op, "cannot divide " + e.str() + " by " + rhs.str());
        return *r;
      });
    }
  }
  return e;
}

Extent TokenStream::parse_atom() {
  const Token& t = peek();
  if (t.kind == Token::kInt) return Extent(next().value);
  if (t.kind == Token::kIdent) return Extent::symbol(next().text);
  if (peek().kind == Token::kPunct && peek().text == "-") {
    Token minus = next();
    enter(minus);
    Extent inner = parse_atom();
    Extent e = located(*this, minus, [&] { return -inner; });
    leave();
    return e;
  }
  error_at(t, "expected an integer or a symbol, found " + describe(t));
}

Layout TokenStream::parse_layout_literal() {
  Token start = peek();
  IntTuple shape = parse_tuple();
  if (peek().kind == Token::kPunct && peek().text == ":") {
    Token colon = next();
    Token stride_start = peek();
    IntTuple stride = parse_tuple();
    if (!congruent(shape, stride)) {
      error_at(stride_start,
               "the stride " + stride.str() + " is not congruent to the shape " + shape.str());
    }
    try {
      return Layout(shape, stride);
    } catch (const UserError& e) {
      error_at(start, e.message());
    }
    (void)colon;
  }
  try {
    return Layout(shape);
  } catch (const UserError& e) {
    error_at(start, e.message());
  }
}

Layout parse_layout(std::string_view text, const std::string& file) {
  TokenStream ts(tokenize(text, file), file);
  Layout l = ts.parse_layout_literal();
  if (!ts.at_end())
    ts.error_at(ts.peek(), "unexpected " + describe(ts.peek()) + " after the layout");
  return l;
}

IntTuple parse_int_tuple(std::string_view text, const std::string& file) {
  TokenStream ts(tokenize(text, file), file);
  IntTuple t = ts.parse_tuple();
  if (!ts.at_end())
    ts.error_at(ts.peek(), "unexpected " + describe(ts.peek()) + " after the tuple");
  return t;
}

std::string to_string(const Layout& layout) {
  return layout.str();
}
std::string to_string(const IntTuple& tuple) {
  return tuple.str();
}
std::string to_string(const TVLayout& tv) {
  return tv.str();
}

}  // namespace tessel::layout
