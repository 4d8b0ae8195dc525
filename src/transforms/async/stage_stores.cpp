#include "transforms/async/stage_stores.h"

#include <algorithm>
#include <array>
#include <map>
#include <set>
#include <sstream>

#include "ir/async.h"
#include "layout/parse.h"
#include "layout/tv_layout.h"
#include "transforms/async/atom_queries.h"
#include "transforms/pins.h"
#include "transforms/report.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::MemorySpace;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;

constexpr int64_t kPartColumns = 64;  // one 128-byte swizzle row of 16-bit elements

const Type kIndex = Type::scalar(ScalarKind::index);

std::vector<int64_t> split_ints(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) out.push_back(std::stoll(item));
  return out;
}

// "(A,B):(C,D)" -> {A, B, C, D} at the top-level commas; empty when the text has another form.
std::optional<std::array<std::string, 4>> split_tv(const std::string& text) {
  auto halves = text.find("):(");
  if (text.empty() || text.front() != '(' || halves == std::string::npos) return std::nullopt;
  auto split_pair =
      [](const std::string& inner) -> std::optional<std::pair<std::string, std::string>> {
    int depth = 0;
    for (size_t i = 0; i < inner.size(); ++i) {
      if (inner[i] == '(') ++depth;
      if (inner[i] == ')') --depth;
      if (inner[i] == ',' && depth == 0)
        return std::make_pair(inner.substr(0, i), inner.substr(i + 1));
    }
    return std::nullopt;
  };
  auto shape = split_pair(text.substr(1, halves - 1));
  std::string stride_text = text.substr(halves + 3);
  if (stride_text.empty() || stride_text.back() != ')') return std::nullopt;
  auto stride = split_pair(stride_text.substr(0, stride_text.size() - 1));
  if (!shape || !stride) return std::nullopt;
  return std::array<std::string, 4>{shape->first, shape->second, stride->first, stride->second};
}

// The layout of columns [64c, 64c + 64) of a register tile [R, C] in layout `text`, the same for
// every c: the value leaf that steps through the columns (stride R * step, covering C) keeps
// 64 / step of its extent. Checked element by element; nullopt when the parts are not like that.
std::optional<std::string> part_layout(const std::string& text, int64_t rows, int64_t cols) {
  if (cols == kPartColumns) return text;  // one part: the whole
  auto parts = split_tv(text);
  if (!parts) return std::nullopt;
  auto strip = [](std::string s) {
    if (s.size() >= 2 && s.front() == '(' && s.back() == ')') s = s.substr(1, s.size() - 2);
    return s;
  };
  std::string vs = strip((*parts)[1]), vd = strip((*parts)[3]);
  if (vs.find('(') != std::string::npos || vd.find('(') != std::string::npos) return std::nullopt;
  std::vector<int64_t> extent = split_ints(vs), stride = split_ints(vd);
  if (extent.size() != stride.size()) return std::nullopt;
  int found = -1;
  for (size_t i = 0; i < extent.size(); ++i) {
    if (stride[i] % rows != 0) continue;
    int64_t step = stride[i] / rows;
    if (step > 0 && step * extent[i] == cols && kPartColumns % step == 0)
      found = static_cast<int>(i);
  }
  if (found < 0) return std::nullopt;
  extent[found] = kPartColumns / (stride[found] / rows);
  auto join = [](const std::vector<int64_t>& v) {
    std::string s = "(";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + ")";
  };
  std::string out =
      "(" + (*parts)[0] + "," + join(extent) + "):(" + (*parts)[2] + "," + join(stride) + ")";
  // Every part's (thread, value) must be the whole's at the same thread, columns shifted.
  auto tile = [](int64_t r, int64_t c) {
    std::vector<layout::IntTuple> modes = {layout::IntTuple(r), layout::IntTuple(c)};
    return layout::IntTuple(modes);
  };
  layout::TVLayout whole(layout::parse_layout(text), tile(rows, cols));
  layout::TVLayout part(layout::parse_layout(out), tile(rows, kPartColumns));
  if (part.num_threads() != whole.num_threads()) return std::nullopt;
  for (int64_t t = 0; t < whole.num_threads(); ++t) {
    std::set<int64_t> held;
    for (int64_t v = 0; v < whole.num_values(); ++v) held.insert(whole.index(t, v));
    for (int64_t c = 0; c < cols / kPartColumns; ++c) {
      for (int64_t v = 0; v < part.num_values(); ++v) {
        int64_t i = part.index(t, v);
        if (!held.count(i % rows + rows * (i / rows + kPartColumns * c))) return std::nullopt;
      }
    }
  }
  return out;
}

// Whether each warpgroup of a role of `threads` threads holds only its own share of the rows of
// a register tile [rows, cols] in layout `text` (warpgroup w: rows [w rows/W, (w+1) rows/W)), so
// that it can write and send that share alone, synchronizing with no other warpgroup.
bool rows_by_warpgroup(const std::string& text, int64_t rows, int64_t cols, int64_t threads) {
  const int64_t warpgroups = threads / 128;
  if (threads % 128 != 0 || warpgroups < 2 || rows % (8 * warpgroups) != 0) return false;
  std::vector<layout::IntTuple> modes = {layout::IntTuple(rows), layout::IntTuple(cols)};
  layout::TVLayout tv(layout::parse_layout(text), layout::IntTuple(modes));
  if (tv.num_threads() != threads) return false;
  const int64_t share = rows / warpgroups;
  for (int64_t t = 0; t < threads; ++t) {
    for (int64_t v = 0; v < tv.num_values(); ++v) {
      if (tv.index(t, v) % rows / share != t / 128) return false;
    }
  }
  return true;
}

// `stores_by` on the kernel's block_grid: "warpgroup", "role", or "" when not pinned.
std::string stores_by_pin(const Operation& kernel) {
  const Operation* grid = kernel_grid(kernel);
  return grid ? pinned_choice(*grid, "stores_by", {"warpgroup", "role"}) : "";
}

// Whether a role's warpgroups drift apart between its stores: a loop of it works on wgmma
// results in registers between its wgmmas (attention), so a role-wide barrier at the store
// makes the warpgroup that is ahead wait once per tile. A GEMM's consumer warpgroups wait on
// the same ring slots in step, and their role-wide store barrier is what was measured; they go
// by warpgroup only where pinned.
bool drifts_apart(Operation* role) {
  bool drifts = false;
  ir::walk(role, [&](Operation* op) { drifts |= works_between_wgmmas(*op); });
  return drifts;
}

class Stager {
 public:
  explicit Stager(Operation& kernel) : kernel_(kernel), top_(kernel.region(0)) {}

  void run() {
    Operation* first_role = nullptr;
    for (const auto& op : top_->ops()) {
      if (op->kind() == OpKind::warp_group && !first_role) first_role = op.get();
    }
    if (!first_role) return;
    first_role_ = first_role;
    ir::walk(&kernel_, [&](Operation* op) {
      if (op->kind() == OpKind::mma && op->has_attr("atom") &&
          op->str_attr("atom").rfind("wgmma.", 0) == 0) {
        accumulator_layouts_.insert(op->result()->type().layout());
      }
    });
    // The register transpose of an accumulator (a view: swapped operands store Cᵀ = B·Aᵀ into
    // C) holds 16x16 blocks transposed: stmatrix's .trans form writes them.
    ir::walk(&kernel_, [&](Operation* op) {
      if (op->kind() == OpKind::transpose && op->result()->type().space() == MemorySpace::reg &&
          op->operand(0)->type().has_layout() && op->result()->type().has_layout() &&
          accumulator_layouts_.count(op->operand(0)->type().layout())) {
        transposed_layouts_.insert(op->result()->type().layout());
      }
    });
    // A column block of an accumulator (the gates of an LSTM cell's [128,256] one, sliced by the
    // program) keeps its 16x16 blocks.
    ir::walk(&kernel_, [&](Operation* op) {
      if (op->kind() == OpKind::slice && op->operand(0)->type().has_layout() &&
          accumulator_layouts_.count(op->operand(0)->type().layout())) {
        accumulator_layouts_.insert(op->result()->type().layout());
      }
    });
    std::vector<Operation*> stores;
    ir::walk(&kernel_, [&](Operation* op) {
      if (matches(*op)) stores.push_back(op);
    });
    // The buffers alternate over all parts a role stores, in program order (a cell's c' and h'
    // each of one part go out through stage0 and stage1, not both through stage0, where the
    // second part's pending = 1 would let the first one's store still read the buffer).
    std::map<const Operation*, int64_t> parts_in_role;
    for (Operation* store : stores) parts_in_role[ir::enclosing_role(*store)] += parts_of(*store);
    // A role whose warpgroups each hold their own rows of every tile it stores syncs and sends
    // by warpgroup: a warpgroup that finishes its tile first goes on to the next one instead of
    // waiting at a barrier of the whole role (which would put warpgroups that take turns at the
    // tensor cores back in step once per tile).
    const std::string pin = stores_by_pin(kernel_);
    std::map<const Operation*, std::string> role_wide_because;  // the first store's reason
    std::map<const Operation*, bool> wanted;                    // pinned, or drifting apart
    for (Operation* store : stores) {
      Operation* role = const_cast<Operation*>(ir::enclosing_role(*store));
      wanted.emplace(role, pin == "warpgroup" || (pin.empty() && drifts_apart(role)));
      by_warpgroup_.emplace(role, wanted[role]);
      const std::string why = why_not_by_warpgroup(*store);
      if (!why.empty()) role_wide_because.emplace(role, why);
      by_warpgroup_[role] = by_warpgroup_[role] && why.empty();
    }
    // --report=epilogue: how each role's stores go out, and why a role that could have gone by
    // warpgroup (pinned, or drifting apart) did not; a pin that cannot apply says so here
    // instead of leaving the role-wide form unexplained.
    if (report_enabled("epilogue")) {
      for (Operation* store : stores) {
        const Operation* role = ir::enclosing_role(*store);
        std::string line = "stage-stores: the store at " + store->loc().str() + " (" +
                           std::to_string(parts_of(*store)) + " part(s) of " +
                           std::to_string(kPartColumns) + " columns) goes out ";
        if (by_warpgroup_[role]) {
          line += "by warpgroup (" + std::string(pin == "warpgroup" ? "pinned" : "its warpgroups "
                  "drift apart between wgmmas") + ")";
        } else if (wanted[role]) {
          line += "role-wide, though " + std::string(pin == "warpgroup" ? "stores_by = "
                  "warpgroup is pinned" : "its warpgroups drift apart") + ": " +
                  role_wide_because[role];
        } else {
          line += "role-wide (" + std::string(pin == "role" ? "pinned" : "its warpgroups do no "
                  "work between wgmmas, so they stay in step") + "; " +
                  (role_wide_because.count(role) ? "not by warpgroup in any case: " +
                   role_wide_because[role] : "stores_by = warpgroup would split it") + ")";
        }
        report("epilogue", line);
      }
    }
    std::set<Operation*> roles;
    for (Operation* store : stores) {
      const Operation* role = ir::enclosing_role(*store);
      roles.insert(const_cast<Operation*>(role));
      const int64_t first = next_part_[role];
      next_part_[role] += parts_of(*store);
      stage(store, first, parts_in_role[role], by_warpgroup_[role]);  // removes the store
    }
    for (Operation* role : roles) {
      OpBuilder b(role->region(0));
      Operation* wait = b.create(OpKind::copy_async_wait, {}, {}, role->loc());
      wait->set_attr("pending", Attribute::integer(0));
      if (by_warpgroup_[role]) wait->set_attr("by", Attribute::ident("warpgroup"));
    }
  }

 private:
  bool matches(const Operation& op) {
    if (op.kind() != OpKind::copy || op.num_operands() != 2 || !ir::enclosing_role(op))
      return false;
    if (pinned_flag(op, "staged") == false) return false;
    const Type& r = op.operand(0)->type();
    const Type& g = op.operand(1)->type();
    if (!r.is_tensor() || r.space() != MemorySpace::reg || !r.has_layout() || r.rank() != 2)
      return false;
    if (r.element() != ScalarKind::f16 && r.element() != ScalarKind::bf16) return false;
    if (!g.is_tensor() || g.space() != MemorySpace::global) return false;
    const Operation* tile = op.operand(1)->def();
    if (!tile || tile->kind() != OpKind::tile || tile->operand(0)->def() ||
        tile->operand(0)->owner_block() != top_) {
      return false;
    }
    // An indirect tile's rows are scattered (src/ir/grouped.h): no TMA box covers them.
    if (ir::tile_indirect_dim(*tile) >= 0) return false;
    // A tile of a 2-D tensor, or one whose other dimensions are squeezed (a batch index): its
    // columns must be the tensor's innermost dimension, which TMA's boxes run along.
    const std::vector<int> kept = ir::tile_kept_dims(*tile);
    const int rank = tile->operand(0)->type().rank();
    if (kept.size() != 2 || kept[1] != rank - 1) return false;
    if (tile->has_attr("pad") && tile->real_attr("pad") != 0.0) return false;
    std::vector<int64_t> shape = r.static_shape();
    if (shape[0] > 256 || shape[1] % kPartColumns != 0) return false;
    // stmatrix writes 16x16 blocks: a tile of 8 rows (an 8-token W4A16 output) is stored by
    // threads from its registers.
    if (shape[0] % 16 != 0) return false;
    if (!accumulator_layouts_.count(r.layout()) && !transposed_layouts_.count(r.layout()))
      return false;
    return part_layout(r.layout(), shape[0], shape[1]).has_value();
  }

  // Why `store` (matched) cannot be written and sent by each warpgroup of its role alone, or ""
  // when it can: its tile's rows split among the warpgroups as its layout holds them, its rows
  // aligned for TMA (no copy-out fallback, which reads every row), no window, not a register
  // transpose.
  std::string why_not_by_warpgroup(const Operation& store) {
    const Operation* role = ir::enclosing_role(store);
    const Type& rt = store.operand(0)->type();
    const Operation* tile = store.operand(1)->def();
    if (role->has_attr("issue") || role->int_attr("first_thread") % 128 != 0)
      return "its role is issued by one thread or does not start at a warpgroup";
    if (transposed_layouts_.count(rt.layout())) return "it stores a register transpose";
    if (ir::tile_window_dim(*tile) >= 0) return "its tile has a window";
    if (!rows_aligned(tile->operand(0))) {
      return "the rows of " + ir::value_ref(tile->operand(0)) + " are not known to be multiples of "
             "8 elements (the copy-out fallback for unaligned rows reads every row of the buffer; "
             "a fact such as N % 8 == 0 on the kernel says they are)";
    }
    const std::vector<int64_t> shape = rt.static_shape();
    if (!rows_by_warpgroup(rt.layout(), shape[0], shape[1], role->int_attr("threads")))
      return "its warpgroups do not each hold their own rows of the tile";
    return "";
  }

  Value* top_constant(int64_t value) {
    auto it = constants_.find(value);
    if (it != constants_.end()) return it->second;
    OpBuilder b(top_);
    b.set_insertion_point_before(first_role_);
    return constants_[value] = b.index_constant(value, kernel_.loc());
  }

  // The two buffers for parts of R rows of `element`.
  std::pair<Value*, Value*> buffers(int64_t rows, ScalarKind element) {
    auto key = std::make_pair(rows, element);
    auto it = buffers_.find(key);
    if (it != buffers_.end()) return it->second;
    Type t = Type::tensor(element, {rows, kPartColumns}, MemorySpace::shared,
                          "Sw<3,3,3> o 0 o (" + std::to_string(rows) + ",64):(64,1)");
    OpBuilder b(top_);
    b.set_insertion_point_before(first_role_);
    Value* s0 = b.create(OpKind::alloc, {}, {t}, kernel_.loc())->result();
    Value* s1 = b.create(OpKind::alloc, {}, {t}, kernel_.loc())->result();
    s0->set_name("stage0");
    s1->set_name("stage1");
    return buffers_[key] = {s0, s1};
  }

  // Whether rows of the tensor `arg` are a multiple of 8 elements by the facts or statically.
  bool rows_aligned(const Value* arg) const {
    const ir::Extent& e = arg->type().shape().back();
    if (e.is_static()) return e.value % 8 == 0;
    for (const ir::Fact& f : kernel_.signature().facts) {
      if (f.symbol == e.symbol && f.divisor % 8 == 0) return true;
    }
    return false;
  }

  // `rows % 8 == 0` for the row length of `arg`, at the top level.
  Value* rows_aligned_condition(const Value* arg) {
    const ir::Extent& e = arg->type().shape().back();
    Value* size = nullptr;
    for (const auto& op : top_->ops()) {
      if (op->kind() == OpKind::size && op->str_attr("name") == e.symbol) size = op->result();
    }
    OpBuilder b(top_);
    b.set_insertion_point_before(first_role_);
    if (!size) {
      Operation* s = b.create(OpKind::size, {}, {kIndex}, kernel_.loc());
      s->set_attr("name", Attribute::ident(e.symbol));
      s->result()->set_name(e.symbol);
      size = s->result();
    }
    Value* c8 = top_constant(8);
    Value* c0 = top_constant(0);
    b.set_insertion_point_before(first_role_);
    Value* rem = b.index_op(OpKind::rem, size, c8, e.symbol + "_mod8", kernel_.loc());
    return b.compare("eq", rem, c0, e.symbol + "_rows_aligned", kernel_.loc());
  }

  static int64_t parts_of(const Operation& store) {
    return store.operand(0)->type().static_shape()[1] / kPartColumns;
  }

  // Stages `store`, whose first part is part `first` of the `total` its role stores.
  void stage(Operation* store, int64_t first, int64_t total, bool by_warpgroup) {
    Value* out = store->operand(0);
    const Operation* tile = store->operand(1)->def();
    Value* arg = tile->operand(0);
    const Type& rt = out->type();
    const int64_t rows = rt.static_shape()[0], cols = rt.static_shape()[1];
    const int64_t parts = cols / kPartColumns;
    const std::string part = *part_layout(rt.layout(), rows, cols);
    auto [s0, s1] = buffers(rows, rt.element());
    const SourceLocation loc = store->loc();
    Block* block = store->parent_block();
    const bool aligned = rows_aligned(arg);
    Value* cond = aligned ? nullptr : rows_aligned_condition(arg);
    OpBuilder b(block);
    b.set_insertion_point_before(store);
    // A tile with a window (src/ir/grouped.h: one group's rows of C): TMA clips only at the
    // tensor's end, so a part goes by TMA only when the tile's rows lie inside the window, and is
    // copied out by hand (bounds-checked at the window's end) when it holds the group's last rows.
    const int window = ir::tile_window_dim(*tile);
    Value* inside = nullptr;
    if (window >= 0) {
      const int rank = tile->operand(0)->type().rank();
      const int64_t extent = tile->ints_attr("shape")[window];
      Value* next =
          b.index_op(OpKind::add, tile->operand(window + 1), top_constant(1), "next_tile", loc);
      Value* end = b.index_op(OpKind::mul, next, top_constant(extent), "tile_end", loc);
      inside = b.compare("le", end, tile->operand(rank + 2), "inside_window", loc);
      if (cond) {
        Operation* both =
            b.create(OpKind::select, {cond, inside, cond}, {Type::scalar(ScalarKind::i1)}, loc);
        both->result()->set_name("tma_store_ok");
        cond = both->result();
      } else {
        cond = inside;
      }
    }
    Value* cparts = top_constant(parts);
    const int col_dim = tile->operand(0)->type().rank() - 1;
    Value* first_col =
        b.index_op(OpKind::mul, tile->operand(col_dim + 1), cparts, "first_part", loc);
    std::vector<int64_t> part_shape = tile->ints_attr("shape");
    part_shape.back() = kPartColumns;
    const int64_t warpgroups =
        by_warpgroup ? ir::enclosing_role(*store)->int_attr("threads") / 128 : 1;
    std::string tma = "tma.store.2d.box" + std::to_string(rows / warpgroups) + "x64.sw128";
    auto by = [&](Operation* op) {
      if (by_warpgroup) op->set_attr("by", Attribute::ident("warpgroup"));
      return op;
    };
    for (int64_t c = 0; c < parts; ++c) {
      const int64_t index = first + c;
      Value* buf = index % 2 ? s1 : s0;
      // The group before the role's first part is the last part of its previous pass (a
      // persistent role's previous tile): with an odd count that one read this same buffer.
      const int64_t pending = index == 0 && total % 2 == 1 ? 0 : 1;
      Operation* sl =
          b.create(OpKind::slice, {out},
                   {Type::tensor(rt.element(), {rows, kPartColumns}, MemorySpace::reg, part)}, loc);
      sl->set_attr("offsets", Attribute::ints({0, kPartColumns * c}));
      sl->set_attr("shape", Attribute::ints({rows, kPartColumns}));
      sl->result()->set_name(out->name() + "_part" + std::to_string(c));
      by(b.create(OpKind::copy_async_wait, {}, {}, loc))
          ->set_attr("pending", Attribute::integer(pending));
      by(b.create(OpKind::role_sync, {}, {}, loc));
      const bool trans = transposed_layouts_.count(rt.layout()) > 0;
      b.create(OpKind::copy, {sl->result(), buf}, {}, loc)
          ->set_attr("atom", Attribute::string(trans ? "stmatrix.x4.trans.b16" : "stmatrix.x4.b16"));
      b.create(OpKind::fence_proxy_async, {}, {}, loc);
      by(b.create(OpKind::role_sync, {}, {}, loc));
      Value* col = b.index_op(OpKind::add, first_col, top_constant(c), "part_col", loc);
      std::vector<Value*> operands(tile->operands().begin(), tile->operands().end());
      operands[col_dim + 1] = col;
      Operation* t =
          b.create(OpKind::tile, operands,
                   {Type::tensor(rt.element(), {rows, kPartColumns}, MemorySpace::global)}, loc);
      t->set_attr("shape", Attribute::ints(part_shape));
      if (tile->has_attr("squeeze")) t->set_attr("squeeze", *tile->attr("squeeze"));
      if (window >= 0) t->set_attr("window", *tile->attr("window"));
      t->set_attr("masked", Attribute::unit());
      t->set_attr("pad", Attribute::real(0.0));
      t->result()->set_name(arg->name() + "_part");
      OpBuilder send = b;
      Operation* guard = nullptr;
      if (cond) {
        // Rows TMA cannot take: the role's threads copy the buffer out themselves, and the next
        // part's role_sync orders that before the buffer is written again.
        guard = b.create(OpKind::if_, {cond}, {}, loc);
        send = OpBuilder(guard->add_region());
        OpBuilder(guard->add_region()).create(OpKind::copy, {buf, t->result()}, {}, loc);
      }
      Operation* st = by(send.create(OpKind::copy_async, {buf, t->result()}, {}, loc));
      st->set_attr("atom", Attribute::string(tma));
      if (cond && cond != inside) st->set_attr("optional", Attribute::unit());
      if (inside) st->set_attr("inside_window", Attribute::unit());
      by(send.create(OpKind::copy_async_commit, {}, {}, loc));
    }
    block->remove(store);
  }

  Operation& kernel_;
  Block* top_;
  Operation* first_role_ = nullptr;
  std::set<std::string> accumulator_layouts_;
  std::set<std::string> transposed_layouts_;  // of register transposes of accumulators
  std::map<int64_t, Value*> constants_;
  std::map<std::pair<int64_t, ScalarKind>, std::pair<Value*, Value*>> buffers_;
  std::map<const Operation*, int64_t> next_part_;  // per role: its parts staged so far
  std::map<const Operation*, bool> by_warpgroup_;  // per role: its stores sync and go by warpgroup
};

}  // namespace

void stage_stores(ir::Module& module) {
  for (const auto& kernel : module.kernels) Stager(*kernel).run();
}

}  // namespace tessel::transforms
