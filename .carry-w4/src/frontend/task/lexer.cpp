#include "frontend/task/lexer.h"

#include <cctype>

namespace tessel::task {

Lexer::Lexer(std::string_view text, std::string file, Syntax syntax)
    : text_(text), file_(std::move(file)), syntax_(syntax) {
  advance();
}

void Lexer::advance() {
  // Skip blanks and comments.
  while (pos_ < text_.size()) {
    char c = text_[pos_];
    if (c == '\n') {
      ++line_;
      col_ = 1;
      ++pos_;
    } else if (std::isspace(static_cast<unsigned char>(c))) {
      ++pos_;
      ++col_;
    } else if ((syntax_.hash_comments && c == '#') ||
               (c == '/' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '/')) {
      while (pos_ < text_.size() && text_[pos_] != '\n') ++pos_;
    } else {
      break;
    }
  }
  tok_ = {};
  tok_.loc = SourceLocation::at(file_, line_, col_);
  if (pos_ >= text_.size()) return;
  char c = text_[pos_];
  size_t start = pos_;
  if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
    while (pos_ < text_.size() &&
           (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_'))
      ++pos_;
    tok_.kind = Token::word;
  } else if (std::isdigit(static_cast<unsigned char>(c))) {
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ - start > 15) user_error(tok_.loc, syntax_.error_prefix, "number too large");
    tok_.kind = Token::number;
  } else if (syntax_.arrow && c == '-' && pos_ + 1 < text_.size() && text_[pos_ + 1] == '>') {
    pos_ += 2;
    tok_.kind = Token::punct;
  } else if (syntax_.punct.find(c) != std::string_view::npos) {
    ++pos_;
    tok_.kind = Token::punct;
  } else {
    user_error(tok_.loc, syntax_.error_prefix, "unexpected character '", std::string(1, c), "'");
  }
  tok_.text = std::string(text_.substr(start, pos_ - start));
  col_ += static_cast<int>(pos_ - start);
}

}  // namespace tessel::task
