// ScheduleRows: recognizing a row program and the rewrite (new tile shapes; the pair of loops
// peeled under `if cdiv(N, C) == 1` where the row stays in registers, or staged through a shared
// buffer); the cost model that chooses is schedule_rows_model.*.
#include "transforms/layout/schedule_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>
#include <unordered_map>

#include "layout/layout.h"
#include "support/diagnostics.h"
#include "transforms/layout/schedule_rows_model.h"
#include "transforms/pins.h"
#include "transforms/report.h"

namespace tessel::transforms {

using ir::Block;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;
using rows::Candidate;
using rows::Hold;
using rows::Problem;
using rows::RowTraits;

namespace {

// ---- Recognizing a row program -----------------------------------------------------------------

struct Pair {  // a loop that reads global row tiles and a later loop that reads the same again
  Operation* first;
  Operation* second;
  // second-loop copies whose registers the first loop's copies already hold: second -> first
  std::vector<std::pair<Operation*, Operation*>> reuse;
};

struct RowProgram {
  Operation* grid = nullptr;
  Operation* row_cdiv = nullptr;      // cdiv M, R
  std::vector<Operation*> col_cdivs;  // cdiv N, C (loop bounds, a grid dimension)
  std::set<const Value*> col_index;   // loop indices (or the grid's column index)
  std::vector<Operation*> loops, tiles;
  std::vector<Value*> registers;  // every register tensor the kernel makes
  std::string m_name, n_name;
  int64_t rows = 0, cols = 0;  // R and C as written
  int64_t elem_bytes = 2, row_reads = 0, row_writes = 0;
  bool reduces_rows = false;
  int64_t row_reductions = 0;  // reduce ops of the loop that has the most
  std::vector<Pair> pairs;
  // Copies of column tiles ([C]: a weight, a bias) from global memory in the pair's second loop.
  int64_t second_loop_column_reads = 0;
};

std::optional<int64_t> const_of(const Value* v) {
  return ir::int_constant(v);
}

// `cdiv %size, %const`: the size's name and the constant.
std::optional<std::pair<std::string, int64_t>> cdiv_of_size(const Value* v) {
  const Operation* op = v ? v->def() : nullptr;
  if (!op || op->kind() != OpKind::cdiv || op->num_operands() != 2) return std::nullopt;
  const Operation* size = op->operand(0)->def();
  auto c = const_of(op->operand(1));
  if (!size || size->kind() != OpKind::size || !c || *c <= 0) return std::nullopt;
  return std::make_pair(size->str_attr("name"), *c);
}

std::string why_not(Operation& kernel, RowProgram& p) {
  Block& body = *kernel.region(0);
  std::string why;
  ir::walk(&kernel, [&](Operation* op) {
    if (op->kind() == OpKind::mma) why = "it has an mma";
  });
  if (!why.empty()) return why;
  ir::walk(&kernel, [&](Operation* op) {
    if (!why.empty()) return;
    if (op->kind() == OpKind::block_grid) {
      if (p.grid) why = "two block_grid ops";
      p.grid = op;
    }
    for (const auto& r : op->results()) {
      const ir::Type& t = r->type();
      if (!t.is_tensor()) continue;
      if (t.space() == MemorySpace::shared) why = "it uses shared memory";
      if (t.space() == MemorySpace::reg) {
        if (t.has_layout()) why = ir::value_ref(r.get()) + " has a pinned layout";
        p.registers.push_back(r.get());
      }
    }
    for (const auto& region : op->regions())
      for (const auto& arg : region->arguments())
        if (arg->type().is_tensor() && arg->type().space() == MemorySpace::reg) {
          if (arg->type().has_layout()) why = ir::value_ref(arg.get()) + " has a pinned layout";
          p.registers.push_back(arg.get());
        }
  });
  if (!why.empty()) return why;
  if (!p.grid || p.grid->parent_block() != &body) return "no block_grid at the top level";
  if (p.grid->num_operands() < 1 || p.grid->num_operands() > 2) return "a grid of rank 3";
  auto rows = p.grid->operand(0)->def();
  if (!rows || rows->kind() != OpKind::cdiv || !rows->operand(0)->def() ||
      rows->operand(0)->def()->kind() != OpKind::size || !const_of(rows->operand(1)))
    return "the grid is not cdiv(M, rows)";
  p.row_cdiv = rows;
  p.m_name = rows->operand(0)->def()->str_attr("name");
  p.rows = *const_of(rows->operand(1));
  auto note_cols = [&](Operation* cd, const std::pair<std::string, int64_t>& nc) -> bool {
    if (p.cols && (nc.second != p.cols || nc.first != p.n_name)) return false;
    p.cols = nc.second;
    p.n_name = nc.first;
    if (std::find(p.col_cdivs.begin(), p.col_cdivs.end(), cd) == p.col_cdivs.end())
      p.col_cdivs.push_back(cd);
    return true;
  };
  if (p.grid->num_operands() == 2) {
    auto nc = cdiv_of_size(p.grid->operand(1));
    if (!nc || !note_cols(p.grid->operand(1)->def(), *nc))
      return "the grid's columns are not cdiv(N, C)";
    p.col_index.insert(p.grid->result(1));
  }
  for (const auto& op : body.ops()) {
    if (op->kind() != OpKind::for_) continue;
    auto nc = cdiv_of_size(op->operand(1));
    if (const_of(op->operand(0)) != 0 || const_of(op->operand(2)) != 1 || !nc)
      return "a loop at " + ir::op_where(*op) + " is not over cdiv(N, C) column tiles";
    if (!note_cols(op->operand(1)->def(), *nc)) return "loops over different column tiles";
    p.loops.push_back(op.get());
    p.col_index.insert(op->region(0)->argument(0));
  }
  if (!p.cols) return "no loop or grid dimension over column tiles";
  if (p.rows == p.cols) return "rows and columns of a tile are both " + std::to_string(p.rows);
  std::set<const Value*> row_tensors, written;
  ir::walk(&kernel, [&](Operation* op) {
    if (!why.empty()) return;
    if (op->kind() == OpKind::reduce) p.reduces_rows = true;
    if (op->kind() == OpKind::for_) {
      int64_t n = 0;
      ir::walk(op, [&](Operation* inner) { n += inner->kind() == OpKind::reduce; });
      p.row_reductions = std::max(p.row_reductions, n);
    }
    if (op->kind() == OpKind::for_ && op->parent_block() != &body) why = "a nested loop";
    if (op->kind() == OpKind::copy && op->num_operands() == 2 &&
        op->operand(1)->type().space() == MemorySpace::global && op->operand(1)->type().rank() == 2)
      written.insert(op->operand(1)->def() ? op->operand(1)->def()->operand(0) : nullptr);
    if (op->kind() != OpKind::tile) return;
    if (op->has_attr("squeeze") || op->has_attr("window")) {
      why = "a squeezed or windowed tile";
      return;
    }
    const auto& shape = op->ints_attr("shape");
    const int rank = op->operand(0)->type().rank();
    bool ok = false;
    if (rank == 2 && op->num_operands() == 3)
      ok = op->operand(1) == p.grid->result(0) && p.col_index.count(op->operand(2)) &&
           shape == std::vector<int64_t>{p.rows, p.cols};
    if (rank == 1 && op->num_operands() == 2)
      ok = p.col_index.count(op->operand(1)) && shape == std::vector<int64_t>{p.cols};
    if (!ok) {
      why = "the tile at " + ir::op_where(*op) + " is not a row tile [R, C] or a column tile [C]";
      return;
    }
    p.tiles.push_back(op);
    if (rank == 2) {
      row_tensors.insert(op->operand(0));
      p.elem_bytes =
          std::max<int64_t>(p.elem_bytes, ir::bit_width(op->result()->type().element()) / 8);
    }
  });
  if (!why.empty()) return why;
  for (const Value* t : row_tensors) (written.count(t) ? p.row_writes : p.row_reads) += 1;
  // The model and the tiles assume 16-byte accesses along rows: N must be a multiple of them.
  bool vectors = false;
  for (const ir::Fact& f : kernel.signature().facts)
    vectors = vectors || (f.symbol == p.n_name && f.divisor % (16 / p.elem_bytes) == 0);
  if (!vectors)
    return "no fact " + p.n_name + " % " + std::to_string(16 / p.elem_bytes) +
           " == 0: rows cannot move in 16-byte vectors";
  for (Value* v : p.registers) {
    const auto& s = v->type().static_shape();
    bool ok = s == std::vector<int64_t>{p.rows, p.cols} || s == std::vector<int64_t>{p.rows} ||
              s == std::vector<int64_t>{p.cols};
    if (!ok) return ir::value_ref(v) + " is not [R, C], [R] or [C]";
  }
  return "";
}

// The global tile a register copy reads, if it is a row tile.
Operation* row_tile_read(const Operation& op) {
  if (op.kind() != OpKind::copy || op.num_operands() != 1) return nullptr;
  Operation* t = op.operand(0)->def();
  return t && t->kind() == OpKind::tile && t->operand(0)->type().rank() == 2 ? t : nullptr;
}

// Masked lanes of `v` are never observed: it reaches only elementwise ops and casts whose values
// end in stores to masked row tiles at the same coordinates as `tile`.
bool masked_lanes_unobserved(const Value* v, const Operation& tile, const Block& body) {
  for (const auto& op : body.ops()) {
    for (const Value* u : op->operands()) {
      if (u != v) continue;
      if (ir::is_elementwise(op->kind()) || op->kind() == OpKind::cast) {
        if (!masked_lanes_unobserved(op->result(), tile, body)) return false;
      } else if (op->kind() == OpKind::copy && op->num_operands() == 2) {
        const Operation* dst = op->operand(1)->def();
        if (!dst || dst->kind() != OpKind::tile || !dst->has_attr("masked") ||
            dst->num_operands() != 3 || dst->operand(1) != tile.operand(1) ||
            dst->operand(2) != tile.operand(2))
          return false;
      } else {
        return false;
      }
    }
  }
  return true;
}

void find_pairs(Operation& kernel, RowProgram& p) {
  Block& body = *kernel.region(0);
  for (size_t i = 0; i < p.loops.size(); ++i) {
    for (size_t j = i + 1; j < p.loops.size(); ++j) {
      Operation* a = p.loops[i];
      Operation* b = p.loops[j];
      if (a->operand(1) != b->operand(1) || b->num_results() != 0) continue;
      Pair pair{a, b, {}};
      for (const auto& op2 : b->region(0)->ops()) {
        Operation* t2 = row_tile_read(*op2);
        if (!t2) continue;
        for (const auto& op1 : a->region(0)->ops()) {
          Operation* t1 = row_tile_read(*op1);
          if (!t1 || t1->operand(0) != t2->operand(0) ||
              t1->operand(2) != a->region(0)->argument(0) ||
              t2->operand(2) != b->region(0)->argument(0) ||
              op1->result()->type() != op2->result()->type())
            continue;
          bool same_pad = t1->attributes() == t2->attributes();
          if (same_pad || masked_lanes_unobserved(op2->result(), *t2, *b->region(0))) {
            pair.reuse.emplace_back(op2.get(), op1.get());
            break;
          }
        }
      }
      // The ops from the first loop to the second are wrapped in an `if`: nothing after the
      // second may use what they define.
      size_t from = ir::position_in_block(*a), to = ir::position_in_block(*b);
      bool escapes = false;
      for (size_t k = to + 1; k < body.ops().size(); ++k) {
        ir::walk(body.ops()[k].get(), [&](Operation* user) {
          for (const Value* v : user->operands()) {
            const Operation* d = v->def();
            if (d && d->parent_block() == &body) {
              size_t pos = ir::position_in_block(*d);
              escapes = escapes || (pos >= from && pos <= to);
            }
          }
        });
      }
      if (!pair.reuse.empty() && !escapes) {
        for (const auto& op : b->region(0)->ops()) {
          const Operation* t = op->kind() == OpKind::copy && op->num_operands() == 1
                                   ? op->operand(0)->def()
                                   : nullptr;
          p.second_loop_column_reads += t && t->kind() == OpKind::tile &&
                                        t->operand(0)->type().space() == MemorySpace::global &&
                                        t->operand(0)->type().rank() == 1;
        }
        p.pairs.push_back(std::move(pair));
        return;  // one pair per kernel (the statistics loop and the normalizing loop)
      }
    }
  }
}

bool accurate_transcendentals(const RowProgram& p);  // (below, beside the rule that uses it)

// What the cost model needs to know of a recognized row program.
RowTraits traits(const RowProgram& p) {
  RowTraits t;
  t.elem_bytes = p.elem_bytes;
  t.row_reads = p.row_reads;
  t.row_writes = p.row_writes;
  t.has_loops = !p.loops.empty();
  t.has_pair = !p.pairs.empty();
  t.read_again = p.pairs.empty() ? 0 : int64_t(p.pairs[0].reuse.size());
  t.reduces_rows = p.reduces_rows;
  t.row_reductions = p.row_reductions;
  t.second_loop_column_reads = p.second_loop_column_reads;
  t.issue_bound = accurate_transcendentals(p);
  for (Operation* loop : p.loops)
    ir::walk(loop, [&](Operation* op) {
      const bool transcendental = op->kind() == OpKind::exp || op->kind() == OpKind::exp2 ||
                                  op->kind() == OpKind::log || op->kind() == OpKind::log2 ||
                                  op->kind() == OpKind::tanh || op->kind() == OpKind::sigmoid;
      t.transcendentals += transcendental && op->result()->type().is_tensor() &&
                           op->result()->type().rank() == 2;
    });
  return t;
}

// The size a kernel is scheduled for when no hint names it.
constexpr int64_t kDefaultSize = 8192;

int64_t size_hint(Operation& kernel, const std::string& name) {
  int64_t hint = kDefaultSize;
  ir::walk(&kernel, [&](Operation* op) {
    if (op->kind() == OpKind::size && op->str_attr("name") == name && op->has_attr("hint"))
      hint = op->int_attr("hint");
  });
  return hint;
}

// ---- The rewrite -------------------------------------------------------------------------------

ir::Shape retile_shape(const std::vector<int64_t>& s, const RowProgram& p, int64_t r, int64_t c) {
  ir::Shape out;
  for (int64_t e : s) out.emplace_back(e == p.rows ? r : c);
  return out;
}

void retile(RowProgram& p, const Candidate& c) {
  auto constant = [&](Operation* before, int64_t value) {
    ir::OpBuilder b(before->parent_block());
    b.set_insertion_point_before(before);
    return b.index_constant(value, before->loc());
  };
  p.row_cdiv->set_operand(1, constant(p.row_cdiv, c.rows));
  for (Operation* cd : p.col_cdivs) cd->set_operand(1, constant(cd, c.cols));
  for (Operation* t : p.tiles) {
    auto shape = t->ints_attr("shape");
    for (int64_t& e : shape) e = e == p.rows ? c.rows : c.cols;
    t->set_attr("shape", ir::Attribute::ints(shape));
    std::vector<int64_t> s = t->result()->type().static_shape();
    t->result()->set_type(t->result()->type().with_shape(retile_shape(s, p, c.rows, c.cols)));
  }
  for (Value* v : p.registers) {
    v->set_type(v->type().with_shape(retile_shape(v->type().static_shape(), p, c.rows, c.cols)));
  }
  p.grid->set_attr("threads", ir::Attribute::integer(c.threads));
  if (needs_launch_bound(c) && !p.grid->has_attr("blocks_per_sm"))
    p.grid->set_attr("blocks_per_sm", ir::Attribute::integer(c.blocks_per_sm));
  // A grid over (rows, column tiles) with tiles of one row: the column tiles of a row are handed
  // out one after another (raster_group = 1: dimension 1 fastest), so that the row streams in
  // order and, where it does not start on a 128-byte line (N = 8200: 16400-byte rows), the line
  // two neighbouring tiles share is still in L2 for the second; in the hardware's order every row
  // of one column tile runs first and the line is read, and written in part, twice from HBM
  // (bias + GELU at 8191 x 8200, [1,1024] tiles: 1.016 of a copy in row order, 0.886 without).
  // Tiles of several rows keep the hardware's order ([8,256]: 0.93 in row order, 0.99 without).
  if (p.grid->num_results() == 2 && c.rows == 1 && !p.grid->has_attr("raster_group"))
    p.grid->set_attr("raster_group", ir::Attribute::integer(1));
}

// Moves the ops from the pair's first loop to its second into the else branch of a new
// `if %cond` in their place and returns the (empty) then branch, which the caller fills from
// the else branch's ops (`body`: the ops, first to second, in order).
Block* guard_pair(const Pair& pair, Value* cond, std::vector<const Operation*>& body_ops) {
  Block& body = *pair.first->parent_block();
  const size_t from = ir::position_in_block(*pair.first), to = ir::position_in_block(*pair.second);
  auto branch = std::make_unique<Operation>(OpKind::if_, pair.first->loc());
  branch->add_operand(cond);
  Block* then_block = branch->add_region();
  Block* else_block = branch->add_region();
  for (size_t k = from; k <= to; ++k) {
    body_ops.push_back(else_block->append(body.remove(body.ops()[from].get())));
  }
  body.insert(from, std::move(branch));
  return then_block;
}

// Removes the tiles of `block` that nothing in it reads (those whose only reader was rewritten).
void remove_unread_tiles(Block& block) {
  for (size_t k = block.ops().size(); k-- > 0;) {
    Operation* op = block.ops()[k].get();
    if (op->kind() != OpKind::tile) continue;
    bool used = false;
    for (const auto& other : block.ops())
      for (const Value* v : other->operands()) used = used || v == op->result();
    if (!used) block.remove(op);
  }
}

// `if cdiv(N, C) == 1 { first body; the ops between; second body reusing the first's row
// registers } else { the loops as written }`.
void peel(const Pair& pair) {
  ir::OpBuilder b(pair.first->parent_block());
  b.set_insertion_point_before(pair.first);
  Value* zero = b.index_constant(0, pair.first->loc());
  Value* one = b.index_constant(1, pair.first->loc());
  Value* single = b.compare("eq", pair.first->operand(1), one, "row_in_registers");
  std::vector<const Operation*> ops;
  Block* then_block = guard_pair(pair, single, ops);
  std::unordered_map<const Value*, Value*> map;
  std::unordered_map<const Operation*, const Operation*> reused;
  for (const auto& [second, first] : pair.reuse) reused[second] = first;
  auto straight = [&](const Operation& loop) {
    const Block& lb = *loop.region(0);
    map[lb.argument(0)] = zero;
    for (int i = 1; i < int(lb.arguments().size()); ++i) map[lb.argument(i)] = loop.operand(2 + i);
    for (const auto& op : lb.ops()) {
      if (op->kind() == OpKind::yield) {
        for (int i = 0; i < op->num_operands(); ++i) {
          auto it = map.find(op->operand(i));
          map[loop.result(i)] = it == map.end() ? op->operand(i) : it->second;
        }
        continue;
      }
      auto r = reused.find(op.get());
      if (r != reused.end()) {
        map[op->result()] = map.at(r->second->result());
        continue;
      }
      then_block->append(ir::clone(*op, map));
    }
  };
  for (const Operation* op : ops) {
    if (op == pair.first || op == pair.second) {
      straight(*op);
    } else {
      then_block->append(ir::clone(*op, map));
    }
  }
  // The tiles whose only reader was a reused copy are dead in the straight-line copy.
  remove_unread_tiles(*then_block);
}

// Whether the row tiles the second loop reads again can be fetched whole into the shared buffers
// before the first loop (stash's prefetch): 16-byte cp.async's need rows of whole 16-byte vectors
// (a fact N % V == 0 for V values a vector) and 2- or 4-byte values; the first loop's tiles of
// them must depend on nothing the loop computes but its index.
// (Where the second loop also reads two or more column vectors, the model asks more of it:
// schedule_rows_model.cpp.)
bool can_prefetch(const Operation& kernel, const RowProgram& p) {
  if (p.pairs.empty() || (p.elem_bytes != 2 && p.elem_bytes != 4)) return false;
  const int64_t vec = 16 / p.elem_bytes;
  bool aligned = false;
  for (const ir::Fact& f : kernel.signature().facts)
    aligned = aligned || (f.symbol == p.n_name && f.divisor % vec == 0);
  if (!aligned) return false;
  const Pair& pair = p.pairs[0];
  const Block& body = *pair.first->region(0);
  for (const auto& [second, first] : pair.reuse) {
    const Operation* t = first->operand(0)->def();
    if (!t || t->kind() != OpKind::tile || t->operand(0)->type().space() != MemorySpace::global)
      return false;
    for (const Value* v : t->operands()) {
      if (v == body.argument(0)) continue;
      const Operation* d = v->def();
      if (!d) {
        for (const auto& a : body.arguments())
          if (a.get() == v) return false;  // carried
        continue;
      }
      if (d->parent_block() == &body) return false;
    }
  }
  return true;
}

// Whether the pair's first loop computes an accurate exp, log or tanh of every element of a
// tile (expf's sequence of ~8 instructions, tanhf's ~20; exp2 and `approx` are one MUFU each).
bool accurate_transcendentals(const RowProgram& p) {
  if (p.pairs.empty()) return false;
  bool found = false;
  ir::walk(p.pairs[0].first, [&](Operation* op) {
    const bool costly = op->kind() == OpKind::exp || op->kind() == OpKind::log ||
                        op->kind() == OpKind::log2 ||
                        (op->kind() == OpKind::tanh && !op->has_attr("approx"));
    found =
        found || (costly && op->result()->type().is_tensor() && op->result()->type().rank() == 2);
  });
  return found;
}

// `if cdiv(N, C) <= K { the first loop, each row tile it reads again later also written into a
// shared buffer [R, K C]; block_sync; the ops between; the second loop reading those tiles from
// the buffer } else { the loops as written }` (K = the column tiles of the hinted N). Each thread
// writes and reads its own 16-byte vectors (the same register layout in both loops); the
// block_sync keeps that from being a correctness assumption.
//
// With the candidate's `prefetch` (can_prefetch and the model's rules), those tiles are instead
// fetched whole, before the first loop, by every thread's cp.async's straight into the buffers
// (`for %p { copy_async %tile(p), %buf tile(p) }`, copy_async_wait {threads}, block_sync), and
// the first loop reads them from there too: the whole row is in flight at once and no register
// holds it on the way (a block's loads no longer wait for the previous tile's reductions). A
// probe on the H200 measured that form at 1.00-1.01 of a copy for softmax and RMSNorm at 2048 x
// 32768, where the tile-by-tile form reached 0.87-0.94 (scripts/gpu/rows_prefetch_probe.cu,
// bench/results/2026-11-28-rows-h200.md).
void stash(const Pair& pair, const Candidate& c) {
  const bool prefetch = c.prefetch;
  const SourceLocation loc = pair.first->loc();
  ir::OpBuilder b(pair.first->parent_block());
  b.set_insertion_point_before(pair.first);
  Value* zero = b.index_constant(0, loc);
  Value* capacity = b.index_constant(c.stash_cols / c.cols, loc);
  Value* fits = b.compare("le", pair.first->operand(1), capacity, "row_in_shared", loc);
  // One buffer per row tensor read again, made before the branch (the emitter places it). A row
  // fetched whole starts its buffer at its own 128-byte line phase (`alloc %tile`; the fetch
  // counts its accesses from the same line, copy_async {from_line}).
  const bool from_line = prefetch && c.rows == 1;
  std::unordered_map<const Operation*, Value*> buffer;  // first-loop copy -> its buffer
  for (const auto& [second, first] : pair.reuse) {
    const Type& t = first->result()->type();
    const std::string layout =
        layout::make_layout_row_major(layout::IntTuple::tuple({c.rows, c.stash_cols})).str();
    std::vector<Value*> line_of;
    if (from_line) {
      std::unordered_map<const Value*, Value*> at_zero{{pair.first->region(0)->argument(0), zero}};
      Operation* row = b.insert(ir::clone(*first->operand(0)->def(), at_zero));
      row->result()->set_name(first->operand(0)->name() + "_line");
      line_of.push_back(row->result());
    }
    Operation* alloc =
        b.create(OpKind::alloc, line_of,
                 {Type::tensor(t.element(), ir::Shape{ir::Extent(c.rows), ir::Extent(c.stash_cols)},
                               MemorySpace::shared, layout)},
                 loc);
    alloc->result()->set_name(first->result()->name() + "_row");
    buffer[first] = alloc->result();
  }
  std::vector<const Operation*> ops;
  Block* then_block = guard_pair(pair, fits, ops);
  std::unordered_map<const Value*, Value*> map;
  // A tile of `row` at (0, k) of the loop's column tiles.
  auto slice = [&](ir::OpBuilder& at, Value* row, Value* k, const Type& like) {
    Operation* t =
        at.create(OpKind::tile, {row, zero, k},
                  {Type::tensor(like.element(), like.shape(), MemorySpace::shared)}, loc);
    t->set_attr("shape", ir::Attribute::ints({c.rows, c.cols}));
    t->result()->set_name(row->name() + "_tile");
    return t->result();
  };
  for (const Operation* op : ops) {
    if (op == pair.first && prefetch) {
      // The prefetch: every tile of the row into the buffers, then the first loop reads them.
      ir::OpBuilder at(then_block);
      Operation* fetch =
          at.create(OpKind::for_, {op->operand(0), op->operand(1), op->operand(2)}, {}, loc);
      Block* fbody = fetch->add_region();
      Value* k = fbody->add_argument(op->region(0)->argument(0)->type(), "p");
      ir::OpBuilder fb(fbody);
      for (const auto& [second, first] : pair.reuse) {
        std::unordered_map<const Value*, Value*> at_k{{op->region(0)->argument(0), k}};
        Operation* tile = fb.insert(ir::clone(*first->operand(0)->def(), at_k));
        tile->result()->set_name(first->operand(0)->name() + "_fetch");
        Value* view = slice(fb, buffer.at(first), k, first->result()->type());
        Operation* copy = fb.create(OpKind::copy_async, {tile->result(), view}, {}, loc);
        copy->set_attr("atom", ir::Attribute::string("cp.async.cg.shared.global.b128"));
        // Each warp's cp.async's over whole 128-byte lines, where rows start inside one.
        if (from_line) copy->set_attr("from_line", ir::Attribute::unit());
      }
      fb.create(OpKind::yield, {}, {}, loc);
      Operation* wait = at.create(OpKind::copy_async_wait, {}, {}, loc);
      wait->set_attr("pending", ir::Attribute::integer(0));
      wait->set_attr("threads", ir::Attribute::unit());
      at.create(OpKind::block_sync, {}, {}, loc);
      then_block->append(ir::clone(*op, map));
      Block& loop = *then_block->ops().back()->region(0);
      for (const auto& [second, first] : pair.reuse) {
        Operation* copied = map.at(first->result())->def();
        ir::OpBuilder in(&loop);
        in.set_insertion_point_before(copied);
        copied->set_operand(
            0, slice(in, buffer.at(first), loop.argument(0), copied->result()->type()));
        copied->set_attr("atom", ir::Attribute::string("ld.shared.b128"));
      }
      remove_unread_tiles(loop);
      continue;
    }
    then_block->append(ir::clone(*op, map));
    if (op != pair.first) continue;
    // After each copy the second loop reuses: write its registers into the buffer.
    Block& loop = *then_block->ops().back()->region(0);
    for (const auto& [second, first] : pair.reuse) {
      Operation* copied = map.at(first->result())->def();
      ir::OpBuilder at(&loop);
      const size_t next = ir::position_in_block(*copied) + 1;
      if (next < loop.ops().size()) at.set_insertion_point_before(loop.ops()[next].get());
      Value* view = slice(at, buffer.at(first), loop.argument(0), copied->result()->type());
      Operation* store = at.create(OpKind::copy, {copied->result(), view}, {}, loc);
      store->set_attr("atom", ir::Attribute::string("st.shared.b128"));
    }
    ir::OpBuilder sync(then_block);
    sync.create(OpKind::block_sync, {}, {}, loc);
  }
  // The second loop's copies read the buffer instead of global memory.
  Block& second_loop = *then_block->ops().back()->region(0);
  for (const auto& [second, first] : pair.reuse) {
    Operation* copied = map.at(second->result())->def();
    ir::OpBuilder at(&second_loop);
    at.set_insertion_point_before(copied);
    copied->set_operand(
        0, slice(at, buffer.at(first), second_loop.argument(0), copied->result()->type()));
    copied->set_attr("atom", ir::Attribute::string("ld.shared.b128"));
  }
  remove_unread_tiles(second_loop);
}

}  // namespace

void set_size_hints(ir::Operation& kernel, const std::map<std::string, int64_t>& sizes) {
  ir::walk(&kernel, [&](Operation* op) {
    if (op->kind() != OpKind::size) return;
    auto it = sizes.find(op->str_attr("name"));
    if (it != sizes.end()) op->set_attr("hint", ir::Attribute::integer(it->second));
  });
}

void check_size_hints(const ir::Module& module, const std::map<std::string, int64_t>& hints,
                      const std::string& origin) {
  std::set<std::string> names;
  for (const auto& kernel : module.kernels) {
    ir::walk(kernel.get(), [&](Operation* op) {
      if (op->kind() == OpKind::size) names.insert(op->str_attr("name"));
    });
  }
  for (const auto& [name, value] : hints) {
    if (value < 1) {
      user_error(SourceLocation::unknown(), origin, ": ", name, " = ", value,
                 " is not a size (hints are 1 or more)");
    }
    if (names.count(name)) continue;
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    user_error(SourceLocation::unknown(), origin, ": no kernel has a size named '", name,
               "' (sizes: ", known.empty() ? std::string("none") : known, ")");
  }
}

void schedule_rows(ir::Module& module) {
  for (const auto& kernel : module.kernels) {
    RowProgram p;
    const std::string name = "@" + kernel->signature().name;
    std::string why = why_not(*kernel, p);
    if (!why.empty()) {
      report("search", "rows " + name + ": not scheduled (" + why + ")");
      continue;
    }
    find_pairs(*kernel, p);
    Problem pr{size_hint(*kernel, p.m_name), size_hint(*kernel, p.n_name), traits(p)};
    pr.rows.prefetch = can_prefetch(*kernel, p);
    // `threads = T` pinned on the block_grid: the candidates keep T threads (the tile and the
    // row's residency are still chosen).
    const int64_t pinned = p.grid->has_attr("threads") ? p.grid->int_attr("threads") : 0;
    // `tile_cols = C` pinned on the block_grid: the candidates keep tiles C columns wide.
    const int64_t pinned_cols = p.grid->has_attr("tile_cols") ? p.grid->int_attr("tile_cols") : 0;
    // `hold_rows = registers | shared | none` pinned on the block_grid: the candidates keep the
    // rows read again there.
    const std::string hold_pin =
        pinned_choice(*p.grid, "hold_rows", {"registers", "shared", "none"});
    std::optional<Hold> pinned_hold;
    if (!hold_pin.empty()) {
      pinned_hold = hold_pin == "registers" ? Hold::registers
                    : hold_pin == "shared"  ? Hold::shared
                                            : Hold::none;
      if (*pinned_hold != Hold::none && p.pairs.empty()) {
        user_error(p.grid->loc(), "schedule-rows: ", name, " pins hold_rows = ", hold_pin,
                   ", but no later loop reads again the row tiles an earlier loop read");
      }
    }
    std::vector<Candidate> all;
    for (int64_t threads = 64; threads <= 1024; threads += 32) {
      if (pinned && threads != pinned) continue;
      const bool power_of_two = (threads & (threads - 1)) == 0;
      for (int64_t cols : tile_widths(pr, threads, power_of_two, pinned_cols)) {
        for (Hold hold : {Hold::registers, Hold::shared, Hold::none}) {
          if (hold != Hold::none && p.pairs.empty()) continue;
          if (pinned_hold && hold != *pinned_hold) continue;
          if (auto c = evaluate(pr, threads, cols, hold)) all.push_back(*c);
          if (hold == Hold::registers)
            if (auto c = evaluate(pr, threads, cols, hold, /*chunked=*/true)) all.push_back(*c);
        }
      }
    }
    if (all.empty() && (pinned || pinned_hold || pinned_cols)) {
      std::string pins;
      auto add = [&](const std::string& pin) { pins += (pins.empty() ? "" : " and ") + pin; };
      if (pinned) add("threads = " + std::to_string(pinned));
      if (pinned_hold) add("hold_rows = " + hold_pin);
      if (pinned_cols) add("tile_cols = " + std::to_string(pinned_cols));
      user_error(p.grid->loc(), "schedule-rows: no schedule of ", name, " with the pinned ", pins,
                 " fits (threads: a multiple of 32 from 64 to 1024; tile_cols: a multiple of ",
                 "the threads along a row times their 16-byte vectors; at most 4 16-byte vectors ",
                 "of a row per thread, registers for one block",
                 pinned_hold == Hold::shared ? ", the row in at most 226 KiB of shared memory" : "",
                 ")");
    }
    if (all.empty()) {
      report("search", "rows " + name + ": no candidate fits; left as written");
      continue;
    }
    order_candidates(all, pr.rows);
    // Unpinned, the row goes to shared memory only where the model would otherwise read it twice:
    // at N = 16384 every shared form measured slower than the row in registers (layernorm 0.977
    // vs 1.021 of a copy, softmax 0.900 vs 1.044), at N = 32768 and 8200 it beats a second read
    // (softmax 0.944 vs 0.908, layernorm 0.984 vs 0.954; rmsnorm at 8200 0.971 vs 0.944;
    // 2026-11-27-rows-shared-h100.md).
    // That was the row held tile by tile. The row fetched whole (prefetch) keeps its place in
    // the race (on the H200 at 4096 x 16384: softmax_exp2 1.033 fetched whole against 0.946 in
    // registers, RMSNorm 1.023 / 1.031; 2026-11-28-rows-h200.md), except in a program that
    // computes an accurate exp, log or tanh per element, which is issue-bound and loses the
    // bytes in flight to the shared-memory traffic (softmax: 0.844 against 0.911).
    if (!pinned_hold) {
      auto first_not_shared =
          std::find_if(all.begin(), all.end(), [](const Candidate& c) { return !c.stash; });
      const bool issue_bound = accurate_transcendentals(p);
      if (first_not_shared != all.end() && first_not_shared->one_pass)
        all.erase(std::remove_if(
                      all.begin(), all.end(),
                      [&](const Candidate& c) { return c.stash && (!c.prefetch || issue_bound); }),
                  all.end());
    }
    if (report_enabled("search")) {
      report("search", "rows " + name + ": " + p.m_name + " = " + std::to_string(pr.m) + ", " +
                           p.n_name + " = " + std::to_string(pr.n) + " (size hints), tile [" +
                           std::to_string(p.rows) + "," + std::to_string(p.cols) +
                           "] as written, " +
                           std::to_string(p.pairs.empty() ? 0 : p.pairs[0].reuse.size()) +
                           " row tensor(s) read again");
      for (size_t i = 0; i < all.size() && i < 6; ++i) report("search", "  " + all[i].str());
      report("search", "chose for rows " + name + ": " + all[0].str());
    }
    retile(p, all[0]);
    if (all[0].one_pass) peel(p.pairs[0]);
    if (all[0].stash) stash(p.pairs[0], all[0]);
  }
}

}  // namespace tessel::transforms
