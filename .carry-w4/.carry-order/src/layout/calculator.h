// The layout calculator behind `tessel layout`: evaluates an expression of layout literals and
// algebra calls, e.g. `logical_divide((4,2,3):(2,1,8), 4:2)`.
//
// Grammar (whitespace is free):
//   expr    := call | swizzle | tiler | literal
//   call    := NAME '(' [expr (',' expr)*] ')'
//   swizzle := 'Sw' '<' INT ',' INT ',' INT '>' ['o' [INT 'o'] expr]      e.g. Sw<3,4,3> o
//   (8,64):(64,1) tiler   := '<' expr (',' expr)* '>'  |  '[' expr (',' expr)* ']'      a by-mode
//   tiler literal := tuple [':' tuple]          a bare tuple is a compact column-major layout;
//                                         a bare integer is an integer (and n:1 where a layout is
//                                         due)
// Every error is a UserError whose location column points into the expression text.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "layout/layout.h"
#include "layout/swizzle.h"
#include "layout/tv_layout.h"

namespace tessel::layout {

struct CalcValue {
  enum Kind { kInteger, kTuple, kLayout, kTiler, kComposed, kSwizzle, kTV };
  Kind kind = kInteger;
  Extent integer;                          // kInteger
  IntTuple tuple;                          // kTuple; also the shape of a bare-shape kLayout
  bool bare_shape = false;                 // a kLayout written as a bare shape
  Layout layout;                           // kLayout
  Tiler tiler{Layout()};                   // kTiler
  std::optional<ComposedLayout> composed;  // kComposed
  Swizzle swizzle;                         // kSwizzle
  TVLayout tv;                             // kTV

  // The result in CuTe notation: "((2,2),3):((24,2),8)", "24", "<3:3,2:1>", "Sw<3,4,3> o 0 o ...".
  // For a TV layout, its (T,V) -> coordinate layout.
  std::string str() const;
  static std::string kind_name(Kind kind);
};

// The names the calculator understands, each with a one-line description (for `tessel help`).
const std::vector<std::pair<std::string, std::string>>& calculator_functions();

// Evaluates `text`. `facts` are the declared divisibilities of symbols ("K divisible by 64").
CalcValue evaluate_layout_expression(std::string_view text, const Facts& facts = Facts::none(),
                                     const std::string& file = "<expr>");

// Parses a fact as written on the command line: "K%64==0" or "K%64" (K divisible by 64).
void parse_fact(std::string_view text, Facts& facts, const std::string& file = "<fact>");

}  // namespace tessel::layout
