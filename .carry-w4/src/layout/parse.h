// Reading and writing layouts in CuTe notation: "(4,(2,3)):(2,(1,8))", "(8,64)" (compact
// column-major), "(M/64,64):(64,1)" (parametric leaves).
//
// Leaves are integers or expressions over symbols with + - * and / (e.g. `M/64`, `2*K`); a
// literal's leaves are taken as the writer states them (use Facts to have tessel prove a
// divisibility). A one-element tuple is written `(8)` or `(8,)`. Errors are UserErrors whose
// SourceLocation carries the 1-based column of the offending character.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "layout/layout.h"
#include "layout/tv_layout.h"
#include "support/diagnostics.h"

namespace tessel::layout {

// Parses a layout literal (the whole text). `file` names the source in error locations.
Layout parse_layout(std::string_view text, const std::string& file = "<layout>");
// Parses an integer tuple ("(4,(2,3))", "8", "M").
IntTuple parse_int_tuple(std::string_view text, const std::string& file = "<layout>");

// CuTe notation: shape:stride with plain integers.
std::string to_string(const Layout& layout);
std::string to_string(const IntTuple& tuple);
std::string to_string(const TVLayout& tv);

// --- The tokenizer shared with the layout calculator ---------------------------------------------

struct Token {
  enum Kind { kEnd, kInt, kIdent, kPunct } kind = kEnd;
  std::string text;  // the identifier, the digits, or the punctuation character(s)
  int64 value = 0;   // for kInt
  int column = 1;    // 1-based column of the first character
};

// Splits text into tokens; a UserError (with column) for a character that starts no token or an
// integer that does not fit in 63 bits. Punctuation: ( ) [ ] < > , : + - * / % = and "==".
std::vector<Token> tokenize(std::string_view text, const std::string& file);

// A cursor over tokens with the grammar pieces both parsers use.
class TokenStream {
 public:
  TokenStream(std::vector<Token> tokens, std::string file)
      : tokens_(std::move(tokens)), file_(std::move(file)) {}
  const Token& peek(int ahead = 0) const;
  Token next();
  bool accept(const std::string& punct);
  void expect(const std::string& punct, const std::string& context);
  bool at_end() const { return peek().kind == Token::kEnd; }
  [[noreturn]] void error_at(const Token& token, const std::string& message) const;
  SourceLocation location(const Token& token) const {
    return SourceLocation::at(file_, 1, token.column);
  }

  // Nesting guard for recursive grammars built on this stream (tuples, calls): a UserError at
  // `token` beyond kMaxDepth levels.
  static constexpr int kMaxDepth = 200;
  void enter(const Token& token);
  void leave() { --depth_; }

  // tuple := leaf | '(' tuple (',' tuple)* [','] ')'
  IntTuple parse_tuple();
  // leaf := term (('+'|'-') term)*; term := atom (('*'|'/') atom)*; atom := INT | IDENT | '-' atom
  Extent parse_leaf();
  // layout := tuple [':' tuple]
  Layout parse_layout_literal();

 private:
  Extent parse_term();
  Extent parse_atom();
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_ = 0;  // nesting of tuples, bounded so that hostile input cannot exhaust the stack
  std::string file_;
};

}  // namespace tessel::layout
