// The lexer of the task frontend's two small text formats, the mapping (mapping.cpp) and the
// event IR (event_parser.cpp): words, decimal numbers and one-character punctuation, `//`
// comments (and `#` ones where the format allows them), each token with its line and column.
#pragma once

#include <string>
#include <string_view>

#include "support/diagnostics.h"

namespace tessel::task {

struct Token {
  enum Kind { word, number, punct, end } kind = end;
  std::string text;
  SourceLocation loc;
};

class Lexer {
 public:
  struct Syntax {
    std::string_view punct;          // the one-character punctuation
    bool hash_comments = false;      // `#` starts a comment as `//` does
    bool arrow = false;              // `->` is one token
    std::string_view error_prefix;   // before every message ("event IR: ")
  };
  // Positioned on the first token.
  Lexer(std::string_view text, std::string file, Syntax syntax);

  const Token& token() const { return tok_; }
  const std::string& file() const { return file_; }
  void advance();

  // Where the lexer stands, to look ahead and come back.
  struct State {
    size_t pos;
    int line, col;
    Token tok;
  };
  State save() const { return {pos_, line_, col_, tok_}; }
  void restore(State s) {
    pos_ = s.pos;
    line_ = s.line;
    col_ = s.col;
    tok_ = std::move(s.tok);
  }

 private:
  std::string_view text_;
  std::string file_;
  Syntax syntax_;
  size_t pos_ = 0;
  int line_ = 1, col_ = 1;
  Token tok_;
};

}  // namespace tessel::task
