// The mapping specification's text form (mapping.h): a recursive-descent parser over the task
// frontend's lexer (lexer.h) that keeps a line:column for every item.
#include "frontend/task/mapping.h"

#include "frontend/task/lexer.h"

namespace tessel::task {

const Located<int64_t>* MappingInstance::tunable(const std::string& name) const {
  for (const auto& [n, v] : tunables)
    if (n == name) return &v;
  return nullptr;
}

const MappingInstance* Mapping::find(const std::string& name) const {
  for (const MappingInstance& i : instances)
    if (i.name == name) return &i;
  return nullptr;
}

const MappingInstance* Mapping::entrypoint() const {
  for (const MappingInstance& i : instances)
    if (i.entrypoint) return &i;
  return nullptr;
}

std::string Mapping::text() const {
  std::string out;
  for (const MappingInstance& i : instances) {
    out += "instance " + i.name + " {\n";
    out += "  variant = " + i.variant.value + "\n";
    out += "  proc = " + std::string(processor_name(i.proc.value)) + "\n";
    out += "  mems = [";
    for (size_t m = 0; m < i.mems.size(); ++m)
      out += (m ? ", " : "") + std::string(memory_name(i.mems[m].value));
    out += "]\n";
    if (!i.tunables.empty()) {
      out += "  tunables = {";
      for (size_t t = 0; t < i.tunables.size(); ++t)
        out += (t ? ", " : "") + i.tunables[t].first + " = " +
               std::to_string(i.tunables[t].second.value);
      out += "}\n";
    }
    if (!i.calls.empty()) {
      out += "  calls = [";
      for (size_t c = 0; c < i.calls.size(); ++c) out += (c ? ", " : "") + i.calls[c].value;
      out += "]\n";
    }
    if (i.entrypoint) out += "  entrypoint = true\n";
    if (i.warp_specialize)
      out += std::string("  warp_specialize = ") + (i.warp_specialize->value ? "true" : "false") +
             "\n";
    if (i.pipeline) out += "  pipeline = " + std::to_string(i.pipeline->value) + "\n";
    if (i.shared_limit) out += "  shared_limit = " + std::to_string(i.shared_limit->value) + "\n";
    if (i.order) {
      std::string items;
      if (i.order->raster_group)
        items += "raster_group = " + std::to_string(i.order->raster_group->value);
      if (i.order->alternate_ends)
        items += std::string(items.empty() ? "" : ", ") +
                 "alternate_ends = " + std::to_string(i.order->alternate_ends->value);
      out += "  order = {" + items + "}\n";
    }
    out += "}\n";
  }
  return out;
}

MappingInstance instance(std::string name, std::string variant, Processor proc,
                         std::vector<Memory> mems,
                         std::vector<std::pair<std::string, int64_t>> tunables,
                         std::vector<std::string> calls) {
  MappingInstance i;
  i.name = std::move(name);
  i.variant.value = std::move(variant);
  i.proc.value = proc;
  for (Memory m : mems) i.mems.push_back({m, {}});
  for (auto& [t, v] : tunables) i.tunables.push_back({t, {v, {}}});
  for (std::string& c : calls) i.calls.push_back({std::move(c), {}});
  return i;
}

MappingOrder tile_order(std::optional<int64_t> raster_group,
                        std::optional<int64_t> alternate_ends) {
  MappingOrder o;
  if (raster_group) o.raster_group = Located<int64_t>{*raster_group, {}};
  if (alternate_ends) o.alternate_ends = Located<int64_t>{*alternate_ends, {}};
  return o;
}

namespace {

class Parser {
 public:
  Parser(std::string_view text, std::string file)
      : lex_(text, std::move(file), {"{}[]=,-", true, false, ""}) {}

  Mapping parse() {
    Mapping m;
    m.file = lex_.file();
    while (tok_.kind != Token::end) {
      expect_word("instance");
      MappingInstance inst;
      inst.loc = tok_.loc;
      inst.name = take_word("an instance name");
      if (m.find(inst.name)) fail(inst.loc, "instance '", inst.name, "' is defined twice");
      expect_punct("{");
      std::vector<std::string> seen;
      while (!is_punct("}")) {
        SourceLocation key_loc = tok_.loc;
        std::string key = take_word(
            "a key (variant, proc, mems, tunables, calls, entrypoint, "
            "warp_specialize, pipeline, shared_limit, order) or '}'");
        for (const std::string& s : seen)
          if (s == key) fail(key_loc, "instance '", inst.name, "': '", key, "' is given twice");
        seen.push_back(key);
        expect_punct("=");
        entry(inst, key, key_loc);
      }
      advance();
      if (inst.variant.value.empty()) fail(inst.loc, "instance '", inst.name, "' has no variant");
      m.instances.push_back(std::move(inst));
    }
    return m;
  }

 private:
  template <typename... Parts>
  [[noreturn]] void fail(const SourceLocation& loc, Parts&&... parts) {
    user_error(loc, std::forward<Parts>(parts)...);
  }

  void entry(MappingInstance& inst, const std::string& key, const SourceLocation& key_loc) {
    if (key == "variant") {
      inst.variant.loc = tok_.loc;
      inst.variant.value = take_word("a variant name");
    } else if (key == "proc") {
      SourceLocation loc = tok_.loc;
      std::string name = take_word("a processor level");
      auto p = parse_processor(name);
      if (!p)
        fail(loc, "unknown processor level '", name, "' (grid, block, warpgroup, warp, thread)");
      inst.proc = {*p, loc};
    } else if (key == "mems") {
      list(
          [&] {
            SourceLocation loc = tok_.loc;
            std::string name = take_word("a memory");
            auto mem = parse_memory(name);
            if (!mem) fail(loc, "unknown memory '", name, "' (none, global, shared, register)");
            inst.mems.push_back({*mem, loc});
          },
          "[", "]");
    } else if (key == "tunables") {
      list(
          [&] {
            SourceLocation loc = tok_.loc;
            std::string name = take_word("a tunable name");
            if (inst.tunable(name)) fail(loc, "tunable '", name, "' is given twice");
            expect_punct("=");
            SourceLocation vloc = tok_.loc;
            inst.tunables.push_back({name, {take_number(), vloc}});
          },
          "{", "}");
    } else if (key == "calls") {
      list(
          [&] {
            SourceLocation loc = tok_.loc;
            inst.calls.push_back({take_word("an instance name"), loc});
          },
          "[", "]");
    } else if (key == "entrypoint") {
      inst.entrypoint = take_bool();
    } else if (key == "warp_specialize") {
      SourceLocation loc = tok_.loc;
      inst.warp_specialize = Located<bool>{take_bool(), loc};
    } else if (key == "pipeline") {
      SourceLocation loc = tok_.loc;
      int64_t depth = take_number();
      if (depth < 1) fail(loc, "pipeline depth must be at least 1, not ", depth);
      inst.pipeline = Located<int64_t>{depth, loc};
    } else if (key == "shared_limit") {
      SourceLocation loc = tok_.loc;
      inst.shared_limit = Located<int64_t>{take_number(), loc};
    } else if (key == "order") {
      MappingOrder order;
      order.loc = key_loc;
      list(
          [&] {
            SourceLocation loc = tok_.loc;
            std::string name = take_word("an order (raster_group, alternate_ends)");
            std::optional<Located<int64_t>>* item =
                name == "raster_group" ? &order.raster_group
                : name == "alternate_ends" ? &order.alternate_ends
                                           : nullptr;
            if (!item)
              fail(loc, "unknown order '", name, "' (raster_group, alternate_ends)");
            if (*item) fail(loc, "order '", name, "' is given twice");
            expect_punct("=");
            SourceLocation vloc = tok_.loc;
            *item = Located<int64_t>{take_number(/*negative=*/true), vloc};
          },
          "{", "}");
      inst.order = order;
    } else {
      fail(key_loc, "unknown key '", key,
           "' (variant, proc, mems, tunables, calls, entrypoint, warp_specialize, pipeline, "
           "shared_limit, order)");
    }
  }

  template <typename F>
  void list(F item, const char* open, const char* close) {
    expect_punct(open);
    if (is_punct(close)) {
      advance();
      return;
    }
    while (true) {
      item();
      if (is_punct(close)) break;
      expect_punct(",");
    }
    advance();
  }

  bool take_bool() {
    SourceLocation loc = tok_.loc;
    std::string w = take_word("true or false");
    if (w == "true") return true;
    if (w == "false") return false;
    fail(loc, "expected true or false, got '", w, "'");
  }

  // A number; with `negative`, a `-` before it too (so that a negative value is refused for
  // what it is where it is checked, not as a stray character).
  int64_t take_number(bool negative = false) {
    const bool minus = negative && is_punct("-");
    if (minus) advance();
    if (tok_.kind != Token::number) fail(tok_.loc, "expected a number, got ", describe());
    int64_t v = std::stoll(tok_.text);
    advance();
    return minus ? -v : v;
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
  bool is_punct(const char* p) const { return tok_.kind == Token::punct && tok_.text == p; }
  void expect_punct(const char* p) {
    if (!is_punct(p)) fail(tok_.loc, "expected '", p, "', got ", describe());
    advance();
  }
  std::string describe() const {
    return tok_.kind == Token::end ? std::string("the end of the file") : "'" + tok_.text + "'";
  }

  void advance() { lex_.advance(); }

  Lexer lex_;
  const Token& tok_ = lex_.token();
};

}  // namespace

Mapping parse_mapping(std::string_view text, const std::string& file) {
  return Parser(text, file).parse();
}

}  // namespace tessel::task
