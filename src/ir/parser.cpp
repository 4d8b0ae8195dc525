// The tile IR parser: a hand-written recursive descent over the text, tracking line and column.
#include "ir/parser.h"

#include <cctype>
#include <charconv>
#include <cmath>
#include <limits>
#include <unordered_map>

#include "ir/layout_text.h"

namespace tessel::ir {
namespace {

bool is_name_char(char c) {
  return std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '.';
}

class Parser {
 public:
  Parser(std::string_view text, std::string file) : text_(text), file_(std::move(file)) {}

  std::unique_ptr<Module> module() {
    auto result = std::make_unique<Module>();
    skip_ws();
    while (!at_end()) {
      result->kernels.push_back(kernel());
      skip_ws();
    }
    return result;
  }

  Type type_only() {
    skip_ws();
    Type t = type();
    skip_ws();
    if (!at_end()) fail("unexpected text after the type");
    return t;
  }

 private:
  // ---- characters and locations ----
  bool at_end() const { return pos_ >= text_.size(); }
  char peek(size_t ahead = 0) const {
    return pos_ + ahead < text_.size() ? text_[pos_ + ahead] : '\0';
  }
  char get() {
    char c = text_[pos_++];
    if (c == '\n') {
      ++line_;
      column_ = 1;
    } else {
      ++column_;
    }
    return c;
  }
  SourceLocation here() const { return SourceLocation::at(file_, line_, column_); }

  template <typename... Parts>
  [[noreturn]] void fail(Parts&&... parts) {
    user_error(here(), std::forward<Parts>(parts)...);
  }
  template <typename... Parts>
  [[noreturn]] void fail_at(const SourceLocation& loc, Parts&&... parts) {
    user_error(loc, std::forward<Parts>(parts)...);
  }

  // Skips blanks and comments; with same_line, stops at a newline.
  void skip_ws(bool same_line = false) {
    while (!at_end()) {
      char c = peek();
      if (c == '\n' && same_line) return;
      if (std::isspace(static_cast<unsigned char>(c))) {
        get();
      } else if (c == '/' && peek(1) == '/') {
        while (!at_end() && peek() != '\n') get();
      } else {
        return;
      }
    }
  }

  bool try_char(char c) {
    skip_ws();
    if (peek() == c) {
      get();
      return true;
    }
    return false;
  }

  void expect(char c, std::string_view what) {
    skip_ws();
    if (peek() != c) fail("expected '", c, "' ", what, found());
    get();
  }

  std::string found() {
    if (at_end()) return ", found the end of the text";
    size_t end = pos_;
    while (end < text_.size() && end - pos_ < 12 && text_[end] != '\n') ++end;
    return ", found '" + std::string(text_.substr(pos_, end - pos_)) + "'";
  }

  std::string word() {
    skip_ws();
    std::string out;
    while (!at_end() && is_name_char(peek())) out += get();
    return out;
  }

  bool try_keyword(std::string_view keyword) {
    skip_ws();
    if (text_.substr(pos_, keyword.size()) != keyword) return false;
    char after = pos_ + keyword.size() < text_.size() ? text_[pos_ + keyword.size()] : '\0';
    if (is_name_char(after)) return false;
    for (size_t i = 0; i < keyword.size(); ++i) get();
    return true;
  }

  void expect_keyword(std::string_view keyword) {
    if (!try_keyword(keyword)) fail("expected '", keyword, "'", found());
  }

  int64_t integer() {
    skip_ws();
    std::string digits;
    if (peek() == '-') digits += get();
    while (std::isdigit(static_cast<unsigned char>(peek()))) digits += get();
    int64_t value = 0;
    auto [ptr, ec] = std::from_chars(digits.data(), digits.data() + digits.size(), value);
    if (ec != std::errc() || ptr != digits.data() + digits.size())
      fail("expected an integer", found());
    return value;
  }

  // ---- values and scopes ----
  std::string value_name() {
    skip_ws();
    if (peek() != '%') fail("expected a value such as %x", found());
    get();
    std::string name;
    while (!at_end() && is_name_char(peek())) name += get();
    if (name.empty()) fail("expected a value name after '%'");
    return name;
  }

  Value* use() {
    skip_ws();
    SourceLocation loc = here();
    std::string name = value_name();
    for (auto scope = scopes_.rbegin(); scope != scopes_.rend(); ++scope) {
      auto it = scope->find(name);
      if (it != scope->end()) return it->second;
    }
    fail_at(loc, "use of undefined value %", name);
  }

  void bind(const std::string& name, Value* value, const SourceLocation& loc) {
    for (const auto& scope : scopes_) {
      if (scope.count(name)) fail_at(loc, "value %", name, " is already defined");
    }
    scopes_.back()[name] = value;
    value->set_name(name);
  }

  // ---- types ----
  Type type() {
    skip_ws();
    SourceLocation loc = here();
    std::string head = word();
    if (head.empty()) fail("expected a type", found());
    if (auto kind = parse_scalar_kind(head)) {
      if (peek() == '<') fail("scalar type ", head, " takes no parameters");
      return Type::scalar(*kind);
    }
    if (head == "aref") {
      expect('<', "after aref");
      std::vector<Type> buffers = type_list();
      expect('>', "to close the aref type");
      return Type::aref(std::move(buffers));
    }
    if (head == "mbarrier") {
      expect('<', "after mbarrier");
      skip_ws();
      int64_t count = integer();
      if (count <= 0) fail_at(loc, "an mbarrier array needs at least one barrier");
      expect('>', "to close the mbarrier type");
      return Type::mbarrier(count);
    }
    auto space = parse_memory_space(head);
    if (!space) fail_at(loc, "unknown type '", head, "'");
    if (peek() != '<') fail("expected '<' after ", head);
    get();
    SourceLocation element_loc = (skip_ws(), here());
    std::string element_name = word();
    auto element = parse_scalar_kind(element_name);
    if (!element) fail_at(element_loc, "unknown element type '", element_name, "'");
    std::string layout;
    if (try_char(',')) {
      skip_ws();
      SourceLocation layout_loc = here();
      layout = canonical_layout(raw_until_angle_close(), layout_loc);
    }
    expect('>', "to close the tensor type");
    if (peek() != '[') fail("expected '[' with the tensor's shape after the type's '>'");
    Shape shape = shape_list();
    return Type::tensor(*element, std::move(shape), *space, std::move(layout));
  }

  // Text up to the '>' that closes the enclosing '<', balancing nested angle brackets.
  std::string raw_until_angle_close() {
    std::string out;
    int depth = 0;
    while (!at_end()) {
      char c = peek();
      if (c == '\n') break;
      if (c == '<') ++depth;
      if (c == '>') {
        if (depth == 0) break;
        --depth;
      }
      out += get();
    }
    while (!out.empty() && std::isspace(static_cast<unsigned char>(out.back()))) out.pop_back();
    if (out.empty()) fail("expected a layout");
    return out;
  }

  Shape shape_list() {
    expect('[', "to open a shape");
    Shape shape;
    if (try_char(']')) return shape;
    do {
      skip_ws();
      if (std::isdigit(static_cast<unsigned char>(peek())) || peek() == '-') {
        SourceLocation loc = here();
        int64_t v = integer();
        if (v < 0) fail_at(loc, "an extent cannot be negative");
        shape.emplace_back(v);
      } else {
        std::string symbol = word();
        if (symbol.empty()) fail("expected an extent (a number or a size symbol)", found());
        shape.emplace_back(symbol);
      }
    } while (try_char(','));
    expect(']', "to close the shape");
    return shape;
  }

  // ---- attributes ----
  Attribute attribute_value() {
    skip_ws();
    char c = peek();
    if (c == '"') {
      get();
      std::string s;
      while (!at_end() && peek() != '"') {
        if (peek() == '\n') fail("unterminated string");
        if (peek() == '\\') get();
        s += get();
      }
      if (at_end()) fail("unterminated string");
      get();
      return Attribute::string(s);
    }
    if (c == '[') {
      get();
      std::vector<int64_t> list;
      if (!try_char(']')) {
        do list.push_back(integer());
        while (try_char(','));
        expect(']', "to close the list");
      }
      return Attribute::ints(std::move(list));
    }
    if (c == '-' || std::isdigit(static_cast<unsigned char>(c))) return number();
    std::string w = word();
    if (w.empty()) fail("expected an attribute value", found());
    if (w == "inf") return Attribute::real(std::numeric_limits<double>::infinity());
    if (w == "nan") return Attribute::real(std::numeric_limits<double>::quiet_NaN());
    if (w == "layout" && peek() == '<') {
      get();
      skip_ws();
      SourceLocation loc = here();
      std::string text = raw_until_angle_close();
      expect('>', "to close the layout");
      return Attribute::layout(canonical_layout(text, loc));
    }
    return Attribute::ident(w);
  }

  Attribute number() {
    SourceLocation loc = here();
    std::string text;
    if (peek() == '-') text += get();
    if (text == "-" && (peek() == 'i')) {
      if (word() != "inf") fail_at(loc, "expected a number");
      return Attribute::real(-std::numeric_limits<double>::infinity());
    }
    bool real = false;
    while (!at_end()) {
      char c = peek();
      if (std::isdigit(static_cast<unsigned char>(c))) {
        text += get();
      } else if (c == '.' || c == 'e' || c == 'E') {
        real = true;
        text += get();
        if ((c == 'e' || c == 'E') && (peek() == '-' || peek() == '+')) text += get();
      } else {
        break;
      }
    }
    if (real) {
      double v = 0;
      auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
      if (ec != std::errc() || ptr != text.data() + text.size()) {
        fail_at(loc, "malformed number '", text, "'");
      }
      return Attribute::real(v);
    }
    int64_t v = 0;
    auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), v);
    if (ec != std::errc() || ptr != text.data() + text.size()) {
      fail_at(loc, "malformed number '", text, "'");
    }
    return Attribute::integer(v);
  }

  void attributes(Operation* op) {
    skip_ws(true);
    if (peek() != '{' || at_block_open()) return;
    get();
    if (try_char('}')) return;
    do {
      skip_ws();
      SourceLocation loc = here();
      std::string key = word();
      if (key.empty()) fail("expected an attribute name", found());
      if (op->has_attr(key)) fail_at(loc, "attribute '", key, "' is given twice");
      if (try_char('=')) {
        op->set_attr(key, attribute_value());
      } else {
        op->set_attr(key, Attribute::unit());
      }
    } while (try_char(','));
    expect('}', "to close the attributes");
  }

  // A '{' that ends its line opens a region; attribute dictionaries hold text.
  bool at_block_open() const {
    size_t p = pos_ + 1;
    while (p < text_.size() && (text_[p] == ' ' || text_[p] == '\t' || text_[p] == '\r')) ++p;
    return p >= text_.size() || text_[p] == '\n' || text_.substr(p, 2) == "//";
  }

  std::vector<Type> type_list() {
    std::vector<Type> types;
    do types.push_back(type());
    while (try_char(','));
    return types;
  }

  // ---- ops ----
  std::unique_ptr<Operation> kernel() {
    skip_ws();
    SourceLocation loc = here();
    expect_keyword("kernel");
    auto op = std::make_unique<Operation>(OpKind::kernel, loc);
    expect('@', "before the kernel's name");
    KernelSignature& sig = op->signature();
    sig.name = word();
    if (sig.name.empty()) fail("expected the kernel's name");
    if (try_char('[')) {
      do {
        std::string symbol = word();
        if (symbol.empty()) fail("expected a size symbol", found());
        sig.sizes.push_back(symbol);
      } while (try_char(','));
      expect(']', "to close the kernel's sizes");
    }
    Block* body = op->add_region();
    scopes_.clear();
    scopes_.emplace_back();
    expect('(', "to open the kernel's parameters");
    if (!try_char(')')) {
      do {
        skip_ws();
        SourceLocation arg_loc = here();
        std::string name = value_name();
        expect(':', "after a parameter name");
        Value* arg = body->add_argument(type(), name);
        bind(name, arg, arg_loc);
      } while (try_char(','));
      expect(')', "to close the kernel's parameters");
    }
    if (try_keyword("facts")) {
      expect('(', "to open the facts");
      do {
        Fact fact;
        fact.symbol = word();
        if (fact.symbol.empty()) fail("expected a size symbol in a fact", found());
        expect('%', "in a divisibility fact (SIZE % N == 0)");
        fact.divisor = integer();
        expect('=', "in a divisibility fact (SIZE % N == 0)");
        expect('=', "in a divisibility fact (SIZE % N == 0)");
        skip_ws();
        if (integer() != 0) fail("a fact reads SIZE % N == 0");
        sig.facts.push_back(fact);
      } while (try_char(','));
      expect(')', "to close the facts");
    }
    if (try_keyword("ready")) {
      expect('(', "to open the ready parameters");
      do {
        skip_ws();
        SourceLocation at = here();
        std::string name = value_name();
        int found = -1;
        for (const auto& arg : body->arguments()) {
          if (arg->name() == name) found = arg->index();
        }
        if (found < 0) {
          fail_at(at, "ready(%", name, ") names no parameter of the kernel");
        }
        sig.ready.push_back(found);
      } while (try_char(','));
      expect(')', "to close the ready parameters");
    }
    region_body(body);
    return op;
  }

  // '{' ops '}' in a fresh scope (the block's arguments are bound by the caller).
  void region_body(Block* block) {
    expect('{', "to open a region");
    while (true) {
      skip_ws();
      if (at_end()) fail("expected '}' to close the region");
      if (peek() == '}') {
        get();
        break;
      }
      operation(block);
    }
  }

  void operation(Block* block) {
    skip_ws();
    SourceLocation loc = here();
    std::vector<std::pair<std::string, SourceLocation>> result_names;
    if (peek() == '%') {
      do {
        skip_ws();
        SourceLocation name_loc = here();
        result_names.emplace_back(value_name(), name_loc);
      } while (try_char(','));
      expect('=', "after the op's results");
      skip_ws();
    }
    SourceLocation name_loc = here();
    std::string name = word();
    if (name.empty()) fail("expected an op", found());
    if (name == "kernel") fail_at(name_loc, "a kernel cannot be nested in another op");
    auto kind = parse_op_kind(name);
    if (!kind) fail_at(name_loc, "unknown op '", name, "'");
    auto op = std::make_unique<Operation>(*kind, loc);
    Operation* raw = op.get();
    std::vector<Type> types;
    if (*kind == OpKind::for_) {
      for_op(raw, types);
    } else if (*kind == OpKind::if_) {
      if_op(raw, types);
    } else {
      skip_ws(true);
      if (peek() == '%') {
        do raw->add_operand(use());
        while (try_char(','));
      }
      attributes(raw);
      skip_ws(true);
      if (peek() == ':') {
        get();
        types = type_list();
      }
      if (*kind == OpKind::warp_group) {
        scopes_.emplace_back();
        region_body(raw->add_region());
        scopes_.pop_back();
      }
    }
    if (types.size() != result_names.size()) {
      fail_at(loc, name, " names ", result_names.size(), " result(s) but gives ", types.size(),
              " result type(s)");
    }
    block->append(std::move(op));
    for (size_t i = 0; i < types.size(); ++i) {
      Value* v = raw->add_result(types[i], result_names[i].first);
      bind(result_names[i].first, v, result_names[i].second);
    }
  }

  void for_op(Operation* op, std::vector<Type>& types) {
    Block* body = op->add_region();
    skip_ws();
    SourceLocation iv_loc = here();
    std::string iv = value_name();
    expect('=', "after the loop variable");
    op->add_operand(use());
    expect_keyword("to");
    op->add_operand(use());
    expect_keyword("step");
    op->add_operand(use());
    std::vector<std::pair<std::string, SourceLocation>> carried;
    if (try_keyword("iter")) {
      expect('(', "to open the loop-carried values");
      do {
        skip_ws();
        SourceLocation arg_loc = here();
        carried.emplace_back(value_name(), arg_loc);
        expect('=', "after a loop-carried value's name");
        op->add_operand(use());
      } while (try_char(','));
      expect(')', "to close the loop-carried values");
    }
    attributes(op);
    if (try_char(':')) types = type_list();
    scopes_.emplace_back();
    bind(iv, body->add_argument(Type::scalar(ScalarKind::index), iv), iv_loc);
    for (size_t i = 0; i < carried.size(); ++i) {
      Type t = i < types.size() ? types[i] : op->operand(3 + static_cast<int>(i))->type();
      bind(carried[i].first, body->add_argument(t, carried[i].first), carried[i].second);
    }
    region_body(body);
    scopes_.pop_back();
  }

  void if_op(Operation* op, std::vector<Type>& types) {
    op->add_operand(use());
    attributes(op);
    if (try_char(':')) types = type_list();
    Block* then_block = op->add_region();
    Block* else_block = op->add_region();
    scopes_.emplace_back();
    region_body(then_block);
    scopes_.pop_back();
    if (try_keyword("else")) {
      scopes_.emplace_back();
      region_body(else_block);
      scopes_.pop_back();
    }
  }

  std::string_view text_;
  std::string file_;
  size_t pos_ = 0;
  int line_ = 1;
  int column_ = 1;
  std::vector<std::unordered_map<std::string, Value*>> scopes_;
};

}  // namespace

// Errors show the offending line with a caret under the column, as the layout calculator's do.
std::unique_ptr<Module> parse_module(std::string_view text, const std::string& file_name) {
  try {
    return Parser(text, file_name).module();
  } catch (const UserError& error) {
    throw with_source_excerpt(error, text);
  }
}

Type parse_type(std::string_view text) {
  try {
    return Parser(text, "<type>").type_only();
  } catch (const UserError& error) {
    throw with_source_excerpt(error, text);
  }
}

}  // namespace tessel::ir
