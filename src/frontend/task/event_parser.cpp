// The event IR's parser (event_parser.h): a recursive-descent parser over the task frontend's
// lexer (lexer.h) and the grammar Program::print writes:
//
//   program  := 'tasks' '@' NAME '[' sizes ']' '(' args ')' '{' op* '}'
//   arg      := '%' NAME ':' ELEMENT '[' exprs ']' MEMORY
//   op       := '%' NAME '=' 'tensor' ELEMENT '[' exprs ']' MEMORY ('{' 'offset' '=' N '}')?
//             | '%e' N (':' '[' ('(' expr ',' LEVEL ')')* ']')? '=' body lanes? after attrs?
//             region?
//   body     := 'copy' tref '->' tref | 'call' NAME '(' trefs ')' '@' LEVEL
//             | ('for' | 'pfor') vars 'in' '[' exprs ']' ('@' LEVEL)?      (pfor: the level)
//   tref     := '%' NAME ('.' 'blocks' '(' exprs ')' '[' exprs ']')*
//   lanes    := 'lanes' '[' (N 'x' LEVEL 'along' N)* ']'
//   after    := 'after' '{' ('%e' N ('[' (VAR | ':')* ']')?)* '}'
//   attrs    := '{' (('pipeline' | 'warp_specialize' | 'shared_limit'        (for)
//                    | 'raster_group' | 'alternate_ends') '=' value)* '}'     (pfor)
//   region   := '{' op* ('yield' '%e' N)? '}'
//   expr     := sum;  sum := diff ('+' diff)*;  diff := prod ('-' prod)*
//   prod     := atom (('*' | '/') atom)*
//   atom     := N | '-' N | SIZE | '$' TUNABLE | '%' VAR | 'dim' '(' N ',' N ')'
//             | ('cdiv' | 'min') '(' expr ',' expr ')' | '(' expr ')'
//
// `+` binds looser than `-` so that `a + b - c` reads back as the a + (b - c) that prints so
// (Expr::str writes a sum's operands without parentheses).
#include "frontend/task/event_parser.h"

#include <cctype>
#include <map>
#include <set>

#include "frontend/task/lexer.h"
#include "ir/type.h"

namespace tessel::task::events {

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::string file,
         const std::function<const TaskProgram*(const std::string&)>& program_of)
      : lex_(text, std::move(file), {"{}[](),:=@%$.+-*/", false, true, "event IR: "}),
        program_of_(program_of) {}

  Program parse() {
    expect_word("tasks");
    expect_punct("@");
    SourceLocation name_loc = tok_.loc;
    p_.name = take_word("the task program's name");
    program_ = program_of_ ? program_of_(p_.name) : nullptr;
    if (!program_) fail(name_loc, "no task program named '", p_.name, "'");
    list("[", "]", [&] {
      SourceLocation loc = tok_.loc;
      std::string s = take_word("a size symbol");
      for (const std::string& t : p_.sizes)
        if (t == s) fail(loc, "size '", s, "' is listed twice");
      p_.sizes.push_back(s);
    });
    list("(", ")", [&] {
      SourceLocation loc = tok_.loc;
      expect_punct("%");
      Tensor t;
      t.kind = Tensor::Kind::argument;
      t.loc = loc;
      t.name = take_word("an argument name");
      expect_punct(":");
      t.element = element();
      t.shape = exprs("[", "]");
      t.memory = memory();
      p_.arguments.push_back(define(t, loc));
    });
    expect_punct("{");
    ops(p_.body);
    expect_punct("}");
    if (tok_.kind != Token::end) fail(tok_.loc, "expected the end of the file, got ", describe());
    p_.next_event = max_event_ + 1;
    return std::move(p_);
  }

 private:
  template <typename... Parts>
  [[noreturn]] void fail(const SourceLocation& loc, Parts&&... parts) {
    user_error(loc, "event IR: ", std::forward<Parts>(parts)...);
  }

  // ---- ops ----

  void ops(std::vector<std::unique_ptr<Op>>& out) {
    while (is_punct("%")) out.push_back(op());
  }

  std::unique_ptr<Op> op() {
    SourceLocation loc = tok_.loc;
    expect_punct("%");
    SourceLocation name_loc = tok_.loc;
    std::string name = take_word("a tensor or an event (%e<n>)");
    if (is_punct("=") && peek_word("tensor")) return alloc(name, loc);
    auto op = std::make_unique<Op>();
    op->loc = loc;
    op->id = event_number(name, name_loc);
    if (events_.count(op->id)) fail(name_loc, "event %e", op->id, " is defined twice");
    if (accept_punct(":")) {
      list("[", "]", [&] {
        expect_punct("(");
        Expr e = expr();
        expect_punct(",");
        Processor level = processor();
        expect_punct(")");
        op->event_shape.push_back({e, level});
      });
    }
    expect_punct("=");
    SourceLocation kind_loc = tok_.loc;
    std::string kind = take_word("copy, call, for or pfor");
    if (kind == "copy") {
      op->kind = Op::Kind::copy;
      op->src = tensor_ref();
      expect_punct("->");
      op->dst = tensor_ref();
    } else if (kind == "call") {
      op->kind = Op::Kind::call;
      SourceLocation leaf_loc = tok_.loc;
      std::string leaf = take_word("a leaf variant");
      op->leaf = program_->find_variant(leaf);
      if (!op->leaf || op->leaf->kind != VariantKind::leaf)
        fail(leaf_loc, "task program '", p_.name, "' has no leaf variant '", leaf, "'");
      op->task = program_->find_task(op->leaf->task);
      list("(", ")", [&] { op->args.push_back(tensor_ref()); });
      if (op->args.size() != op->task->params.size())
        fail(leaf_loc, "'", leaf, "' takes ", op->task->params.size(), " tensors, not ",
             op->args.size());
      expect_punct("@");
      op->level = processor();
    } else if (kind == "for" || kind == "pfor") {
      op->kind = kind == "for" ? Op::Kind::for_loop : Op::Kind::pfor;
      do {
        SourceLocation vloc = tok_.loc;
        expect_punct("%");
        std::string v = take_word("a loop variable");
        if (vars_.count(v)) fail(vloc, "loop variable %", v, " is already in use");
        op->vars.push_back(v);
      } while (accept_punct(","));
      expect_word("in");
      op->extents = exprs("[", "]");
      if (op->extents.size() != op->vars.size())
        fail(kind_loc, kind, " has ", op->vars.size(), " variables but ", op->extents.size(),
             " extents");
      if (op->kind == Op::Kind::pfor) {
        expect_punct("@");
        op->level = processor();
      }
    } else {
      fail(kind_loc, "expected copy, call, for or pfor, got '", kind, "'");
    }
    if (accept_word("lanes")) {
      list("[", "]", [&] {
        Lane lane;
        lane.count = take_number();
        expect_word("x");
        lane.level = processor();
        expect_word("along");
        lane.dim = static_cast<int>(take_number());
        op->lanes.push_back(lane);
      });
    }
    expect_word("after");
    list("{", "}", [&] { op->after.push_back(event_ref()); });
    // Attributes, or a loop's body: a body starts with an op (%) or `yield`, attributes with a
    // key.
    if (is_punct("{") && peek_is_word() && !peek_word("yield")) attrs(*op);
    events_.insert(op->id);
    max_event_ = std::max(max_event_, op->id);
    if (op->kind == Op::Kind::for_loop || op->kind == Op::Kind::pfor) {
      for (const std::string& v : op->vars) vars_.insert(v);
      expect_punct("{");
      ops(op->body);
      if (accept_word("yield")) {
        SourceLocation yloc = tok_.loc;
        expect_punct("%");
        int id = event_number(take_word("an event"), yloc);
        if (op->body.empty() || op->body.back()->id != id)
          fail(yloc, "yield %e", id, " is not the last event of the loop's body");
      } else if (!op->body.empty() && op->body.back()->id >= 0) {
        fail(tok_.loc, "the loop's body ends with %e", op->body.back()->id,
             " but does not yield it");
      }
      expect_punct("}");
      for (const std::string& v : op->vars) vars_.erase(v);
    }
    return op;
  }

  std::unique_ptr<Op> alloc(const std::string& name, const SourceLocation& loc) {
    expect_punct("=");
    expect_word("tensor");
    Tensor t;
    t.kind = Tensor::Kind::allocation;
    t.name = name;
    t.loc = loc;
    t.element = element();
    t.shape = exprs("[", "]");
    t.memory = memory();
    auto op = std::make_unique<Op>();
    op->kind = Op::Kind::alloc;
    op->loc = loc;
    op->tensor = define(t, loc);
    if (is_punct("{") && peek_word("offset")) {
      advance();
      expect_word("offset");
      expect_punct("=");
      op->offset = take_number();
      expect_punct("}");
    }
    return op;
  }

  void attrs(Op& op) {
    list("{", "}", [&] {
      SourceLocation loc = tok_.loc;
      std::string key = take_word(
          "pipeline, warp_specialize, shared_limit, raster_group or alternate_ends");
      expect_punct("=");
      if (key == "pipeline") {
        SourceLocation vloc = tok_.loc;
        op.pipeline = take_number();
        if (op.pipeline < 1) fail(vloc, "pipeline depth must be at least 1");
        op.mapping_loc = loc;
      } else if (key == "warp_specialize") {
        SourceLocation vloc = tok_.loc;
        std::string v = take_word("true or false");
        if (v != "true" && v != "false") fail(vloc, "expected true or false, got '", v, "'");
        op.warp_specialize = v == "true" ? 1 : 0;
      } else if (key == "shared_limit") {
        op.shared_limit = take_number();
        if (!op.mapping_loc.is_known()) op.mapping_loc = loc;
      } else if (key == "raster_group" || key == "alternate_ends") {
        // The grid's tile order: on a pfor over blocks, of a dimension it has.
        if (op.kind != Op::Kind::pfor || op.level != Processor::block)
          fail(loc, key, " orders the blocks of a pfor over blocks, not of this op");
        SourceLocation vloc = tok_.loc;
        int64_t v = take_number();
        const int64_t dims = static_cast<int64_t>(op.vars.size());
        const std::string has = std::to_string(dims) + (dims == 1 ? " dimension" : " dimensions");
        if (key == "raster_group") {
          if (v < 1) fail(vloc, "raster_group must be at least 1, not ", v);
          if (dims != 2) fail(loc, "raster_group orders a 2-D pfor; this one has ", has);
          op.raster_group = v;
        } else {
          if (v >= dims)
            fail(vloc, "alternate_ends names dimension ", v, ", but the pfor has ", has);
          op.alternate_ends = static_cast<int>(v);
        }
        if (!op.mapping_loc.is_known()) op.mapping_loc = loc;
      } else {
        fail(loc, "unknown attribute '", key,
             "' (pipeline, warp_specialize, shared_limit, raster_group, alternate_ends)");
      }
    });
    if (!op.mapping_loc.is_known()) op.mapping_loc = op.loc;
  }

  // ---- tensors and events ----

  int define(Tensor t, const SourceLocation& loc) {
    if (names_.count(t.name)) fail(loc, "tensor %", t.name, " is defined twice");
    int id = p_.add_tensor(std::move(t));
    names_[p_.tensors[id].name] = id;
    return id;
  }

  // A tensor reference: a tensor by name, or a chain of pieces; a piece spelled the same way as
  // an earlier one is that piece.
  int tensor_ref() {
    SourceLocation loc = tok_.loc;
    expect_punct("%");
    std::string name = take_word("a tensor");
    auto it = names_.find(name);
    if (it == names_.end()) fail(loc, "tensor %", name, " is not defined (yet)");
    int id = it->second;
    while (is_punct(".")) {
      advance();
      expect_word("blocks");
      Tensor t;
      t.kind = Tensor::Kind::piece;
      t.parent = id;
      t.loc = loc;
      t.block = exprs("(", ")");
      t.coords = exprs("[", "]");
      const Tensor& parent = p_.tensors[id];
      if (t.block.size() != parent.shape.size() || t.coords.size() != parent.shape.size())
        fail(loc, "a piece of %", parent.name.empty() ? std::string("(piece)") : parent.name,
             " needs ", parent.shape.size(), " extents and coordinates");
      t.element = parent.element;
      t.memory = parent.memory;
      t.shape = t.block;
      std::string key = std::to_string(id) + "|" + list_str(t.block) + "|" + list_str(t.coords);
      auto seen = pieces_.find(key);
      if (seen != pieces_.end()) {
        id = seen->second;
        continue;
      }
      id = p_.add_tensor(std::move(t));
      pieces_[key] = id;
    }
    return id;
  }

  EventRef event_ref() {
    SourceLocation loc = tok_.loc;
    expect_punct("%");
    EventRef e;
    e.op = event_number(take_word("an event (%e<n>)"), loc);
    if (!events_.count(e.op)) fail(loc, "event %e", e.op, " is not defined before this op");
    if (is_punct("[")) {
      list("[", "]", [&] {
        if (accept_punct(":")) {
          e.index.push_back(":");
          return;
        }
        SourceLocation vloc = tok_.loc;
        expect_punct("%");
        std::string v = take_word("a loop variable or ':'");
        if (!vars_.count(v)) fail(vloc, "%", v, " is not a variable of an enclosing loop");
        e.index.push_back(v);
      });
    }
    return e;
  }

  int event_number(const std::string& name, const SourceLocation& loc) {
    if (name.size() < 2 || name[0] != 'e' ||
        name.find_first_not_of("0123456789", 1) != std::string::npos || name.size() > 10)
      fail(loc, "expected an event %e<n>, got %", name);
    return std::stoi(name.substr(1));
  }

  ScalarKind element() {
    SourceLocation loc = tok_.loc;
    std::string w = take_word("an element type");
    auto k = ir::parse_scalar_kind(w);
    if (!k) fail(loc, "unknown element type '", w, "'");
    return *k;
  }

  Memory memory() {
    SourceLocation loc = tok_.loc;
    std::string w = take_word("a memory");
    auto m = parse_memory(w);
    if (!m) fail(loc, "unknown memory '", w, "' (none, global, shared, register)");
    return *m;
  }

  Processor processor() {
    SourceLocation loc = tok_.loc;
    std::string w = take_word("a processor level");
    auto p = parse_processor(w);
    if (!p) fail(loc, "unknown processor level '", w, "' (grid, block, warpgroup, warp, thread)");
    return *p;
  }

  // ---- expressions ----

  std::vector<Expr> exprs(const char* open, const char* close) {
    std::vector<Expr> out;
    list(open, close, [&] { out.push_back(expr()); });
    return out;
  }

  Expr expr() {
    Expr e = diff();
    while (accept_punct("+")) e = e + diff();
    return e;
  }

  Expr diff() {
    Expr e = prod();
    while (accept_punct("-")) e = e - prod();
    return e;
  }

  Expr prod() {
    Expr e = atom();
    while (true) {
      if (accept_punct("*")) {
        e = e * atom();
      } else if (accept_punct("/")) {
        e = e / atom();
      } else {
        return e;
      }
    }
  }

  Expr atom() {
    SourceLocation loc = tok_.loc;
    if (tok_.kind == Token::number) return Expr(take_number());
    if (accept_punct("-")) return Expr(-take_number());
    if (accept_punct("(")) {
      Expr e = expr();
      expect_punct(")");
      return e;
    }
    if (accept_punct("$")) return Expr::tunable(take_word("a tunable"));
    if (accept_punct("%")) {
      std::string v = take_word("a loop variable");
      if (!vars_.count(v)) fail(loc, "%", v, " is not a variable of an enclosing loop");
      return Expr::var(v);
    }
    std::string w = take_word("an expression");
    if (w == "cdiv" || w == "min") {
      expect_punct("(");
      Expr a = expr();
      expect_punct(",");
      Expr b = expr();
      expect_punct(")");
      return w == "cdiv" ? cdiv(a, b) : min(a, b);
    }
    if (w == "dim") {
      expect_punct("(");
      int param = static_cast<int>(take_number());
      expect_punct(",");
      int d = static_cast<int>(take_number());
      expect_punct(")");
      return Expr::extent(param, d);
    }
    bool known = false;
    for (const std::string& s : p_.sizes) known |= s == w;
    if (!known) fail(loc, "'", w, "' is not a size of the program (", list_names(), ")");
    return Expr::size(w);
  }

  std::string list_names() const {
    std::string s;
    for (const std::string& n : p_.sizes) s += (s.empty() ? "" : ", ") + n;
    return s.empty() ? "none" : s;
  }

  static std::string list_str(const std::vector<Expr>& xs) {
    std::string s;
    for (const Expr& x : xs) s += x.str() + ",";
    return s;
  }

  // ---- tokens ----

  template <typename F>
  void list(const char* open, const char* close, F item) {
    expect_punct(open);
    if (accept_punct(close)) return;
    while (true) {
      item();
      if (accept_punct(close)) return;
      expect_punct(",");
    }
  }

  int64_t take_number() {
    if (tok_.kind != Token::number) fail(tok_.loc, "expected a number, got ", describe());
    int64_t v = std::stoll(tok_.text);
    advance();
    return v;
  }

  std::string take_word(const char* what) {
    if (tok_.kind != Token::word) fail(tok_.loc, "expected ", what, ", got ", describe());
    std::string w = tok_.text;
    advance();
    return w;
  }

  void expect_word(const char* w) {
    if (tok_.kind != Token::word || tok_.text != w)
      fail(tok_.loc, "expected '", w, "', got ", describe());
    advance();
  }
  bool accept_word(const char* w) {
    if (tok_.kind != Token::word || tok_.text != w) return false;
    advance();
    return true;
  }
  bool is_punct(const char* p) const { return tok_.kind == Token::punct && tok_.text == p; }
  bool accept_punct(const char* p) {
    if (!is_punct(p)) return false;
    advance();
    return true;
  }
  void expect_punct(const char* p) {
    if (!is_punct(p)) fail(tok_.loc, "expected '", p, "', got ", describe());
    advance();
  }
  std::string describe() const {
    return tok_.kind == Token::end ? std::string("the end of the input") : "'" + tok_.text + "'";
  }

  bool peek_is_word() { return peek_word(nullptr); }
  // Whether the token after the current one is the word `w` (any word when null).
  bool peek_word(const char* w) {
    Lexer::State saved = lex_.save();
    advance();
    bool yes = tok_.kind == Token::word && (!w || tok_.text == w);
    lex_.restore(std::move(saved));
    return yes;
  }

  void advance() { lex_.advance(); }

  Lexer lex_;
  const Token& tok_ = lex_.token();
  std::function<const TaskProgram*(const std::string&)> program_of_;
  const TaskProgram* program_ = nullptr;
  Program p_;
  std::map<std::string, int> names_;   // tensor name -> id
  std::map<std::string, int> pieces_;  // parent|block|coords -> id
  std::set<int> events_;
  std::set<std::string> vars_;  // the enclosing loops' variables
  int max_event_ = -1;
};

}  // namespace

Program parse_program(std::string_view text, const std::string& file,
                      const std::function<const TaskProgram*(const std::string&)>& program_of) {
  return Parser(text, file, program_of).parse();
}

}  // namespace tessel::task::events
