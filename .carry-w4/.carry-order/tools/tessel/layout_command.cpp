// `tessel layout EXPR`: the layout calculator — evaluates CuTe layout algebra and draws layouts.
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "layout/calculator.h"
#include "layout/parse.h"
#include "layout/print.h"
#include "support/command_line.h"
#include "support/diagnostics.h"
#include "tessel/command.h"

namespace tessel::tool {
namespace {

using namespace tessel::layout;

std::string usage() {
  std::string u =
      "usage: tessel layout [--table] [--svg FILE] [--tv MxN] [--assume 'K%64==0'] [--bind M=128] "
      "EXPR\n"
      "\n"
      "Evaluates EXPR with CuTe's layout algebra. The first line of output is the result in CuTe\n"
      "notation (shape:stride, e.g. ((2,2),3):((24,2),8)), or a number for "
      "size/cosize/rank/depth.\n"
      "\n"
      "EXPR is a layout literal, (4,(2,3)):(2,(1,8)) — a bare shape such as (8,4) is compact\n"
      "column-major and a bare integer n is n:1 where a layout is expected — or a call of:\n";
  for (const auto& [name, what] : calculator_functions()) {
    u += "  " + name + std::string(name.size() < 66 ? 66 - name.size() : 1, ' ') + what + "\n";
  }
  u +=
      "A by-mode tiler is written <3:3,(2,4):(1,8)> (or [..]); leaves may be symbols such as M or\n"
      "M/64 (parametric extents): declare what is known with --assume and draw with --bind.\n"
      "\n"
      "options:\n"
      "  --table          print the result as a grid (rows: mode 0; columns: the other modes)\n"
      "  --svg FILE       write a colored SVG picture of the result\n"
      "  --tv MxN         read the result as a thread-value layout (T,V) -> MxN tile (e.g. --tv "
      "16x8,\n"
      "                   or --tv 64x256); the grid and picture then label each tile cell with "
      "the\n"
      "                   thread and value that hold it (T5V2), colored by thread. tv(L,(16,8)) "
      "in\n"
      "                   EXPR says the same.\n"
      "  --assume FACT    a divisibility fact, K%64==0 (repeatable)\n"
      "  --bind S=N       bind a symbol before drawing (repeatable)\n"
      "\n"
      "examples:\n"
      "  tessel layout 'composition((6,2):(8,2),(4,3):(3,1))'\n"
      "  tessel layout 'logical_divide((4,2,3):(2,1,8),4:2)' --table\n"
      "  tessel layout --tv 16x8 --svg mma_c.svg '((4,8),(2,2)):((32,1),(16,8))'\n"
      "  tessel layout --assume 'M%128==0' 'zipped_divide((M,N):(1,M),<128:1,64:1>)'\n";
  return u;
}

// "16x8" or "(16,8)".
IntTuple parse_tile(const std::string& text) {
  std::string t = text;
  if (t.find('x') != std::string::npos && t.find('(') == std::string::npos) {
    std::string tuple = "(";
    for (char c : t) tuple += c == 'x' ? ',' : c;
    t = tuple + ")";
  }
  return parse_int_tuple(t, "<--tv>");
}

void parse_binding(const std::string& text, Bindings& bindings) {
  size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    user_error(SourceLocation::at("<--bind>", 1, 1), "a binding reads like M=128, not '", text,
               "'");
  }
  std::string name = text.substr(0, eq);
  IntTuple value = parse_int_tuple(text.substr(eq + 1), "<--bind>");
  if (!value.is_leaf() || !value.value().is_constant() || value.value().constant() <= 0) {
    user_error(SourceLocation::at("<--bind>", 1, static_cast<int>(eq) + 2), "the value of ", name,
               " must be a positive integer");
  }
  bindings[name] = value.value().constant();
}

int run_layout(const std::vector<std::string>& args) {
  bool table = false;
  std::string svg_file, tv_tile;
  Facts facts;
  Bindings bindings;
  std::vector<std::string> expression_parts =
      OptionParser("layout")
          .flag("--table", table)
          .value("--svg", svg_file)
          .value("--tv", tv_tile)
          .value("--assume", [&](const std::string& fact) { parse_fact(fact, facts); })
          .value("--bind", [&](const std::string& binding) { parse_binding(binding, bindings); })
          .parse(args);
  std::string expr;
  for (const std::string& part : expression_parts) {
    expr += (expr.empty() ? "" : " ") + part;  // an unquoted expression split by the shell
  }
  if (expr.empty()) user_error(SourceLocation::unknown(), "no expression given\n", usage());

  CalcValue result;
  try {
    result = evaluate_layout_expression(expr, facts);
    if (!tv_tile.empty()) {
      if (result.kind != CalcValue::kLayout && result.kind != CalcValue::kTV) {
        user_error(SourceLocation::unknown(), "--tv needs a layout result, got ",
                   CalcValue::kind_name(result.kind), " ", result.str());
      }
      Layout l = result.kind == CalcValue::kTV ? result.tv.layout() : result.layout;
      result.kind = CalcValue::kTV;
      result.tv = TVLayout(l, parse_tile(tv_tile));
    }
  } catch (const UserError& e) {
    if (e.location().file != "<expr>") throw;
    throw with_source_excerpt(e, expr);  // a caret under the column of the expression
  }

  std::cout << result.str() << "\n";
  if (!bindings.empty() && result.kind == CalcValue::kLayout && !result.layout.is_constant()) {
    std::string with;
    for (const auto& [name, value] : bindings) {
      with += (with.empty() ? "" : ", ") + name + "=" + std::to_string(value);
    }
    std::cout << "with " << with << ": " << result.layout.bind(bindings).str() << "\n";
  }
  if (result.kind == CalcValue::kTV) {
    std::cout << "(T,V) -> " << result.tv.tile_shape().str() << ": "
              << result.tv.thread_layout().size_extent().str() << " threads x "
              << result.tv.value_layout().size_extent().str() << " values\n";
  }
  if (!table && svg_file.empty()) return 0;

  LayoutPicture pic;
  switch (result.kind) {
    case CalcValue::kLayout:
      pic = picture(result.layout.bind(bindings));
      break;
    case CalcValue::kComposed:
      pic = picture(*result.composed);
      break;
    case CalcValue::kTV:
      pic = picture(TVLayout(result.tv.layout().bind(bindings),
                             substitute(result.tv.tile_shape(), bindings)));
      break;
    default:
      user_error(SourceLocation::unknown(), "--table and --svg draw layouts, not ",
                 CalcValue::kind_name(result.kind));
  }
  if (table) std::cout << render_table(pic);
  if (!svg_file.empty()) {
    std::ofstream out(svg_file);
    if (!out) user_error(SourceLocation::unknown(), "cannot write the SVG file '", svg_file, "'");
    out << render_svg(pic);
    if (!out) user_error(SourceLocation::unknown(), "writing the SVG file '", svg_file, "' failed");
  }
  return 0;
}

const bool registered = register_command(
    {"layout", "the layout calculator: CuTe layout algebra, tables and SVG pictures", usage(),
     &run_layout});

}  // namespace
}  // namespace tessel::tool
