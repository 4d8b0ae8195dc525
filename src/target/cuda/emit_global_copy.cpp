// Copies between global tiles and register tensors: vector widths from the facts, predicates
// for partial tiles, cache hints.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <numeric>
#include <set>

#include "support/float_formats.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

bool block_invariant_read_only(const Operation& kernel, const Operation& load) {
  const Value* tensor = load.operand(0);
  std::vector<const Operation*> tiles;
  while (tensor->def() && tensor->def()->kind() == OpKind::tile) {
    tiles.push_back(tensor->def());
    tensor = tensor->def()->operand(0);
  }
  if (tensor->def() || tensor->owner_block()->parent() != &kernel) return false;
  // The tensor and its tiles (a tile is defined before its uses: one walk in order finds them).
  std::set<const Value*> views = {tensor};
  bool only_loaded = true;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    for (const Value* x : op->operands()) {
      if (!views.count(x)) continue;
      if (op->kind() == OpKind::tile && op->operand(0) == x) {
        views.insert(op->result());
      } else if (op->kind() != OpKind::copy || op->num_operands() != 1 ||
                 op->result()->type().space() != MemorySpace::reg) {
        only_loaded = false;
      }
    }
  });
  if (!only_loaded) return false;
  // What differs between the blocks of a launch: block_grid's indices and cluster ranks.
  std::vector<const Value*> block_indices;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    if (op->kind() == OpKind::block_grid || op->kind() == OpKind::cluster_rank) {
      for (int r = 0; r < op->num_results(); ++r) block_indices.push_back(op->result(r));
    }
  });
  for (const Operation* t : tiles) {
    for (int i = 1; i < t->num_operands(); ++i) {
      for (const Value* b : block_indices)
        if (ir::depends_on(t->operand(i), b)) return false;
    }
  }
  return true;
}

std::string Emitter::tile_start(const View& g) const {
  std::string at = g.base;
  for (size_t d = 0; d < g.origin.size(); ++d) {
    if (g.origin[d] == "0") continue;
    at += " + " + (g.stride[d] == "1" ? "(" + g.origin[d] + ")"
                                       : "(long long)(" + g.origin[d] + ") * " + g.stride[d]);
  }
  return at;
}

std::string Emitter::round_to(ScalarKind k, const std::string& e) {
  if (k == ScalarKind::f16) return "tsl_round_f16(" + e + ")";
  if (k == ScalarKind::bf16) return "tsl_round_bf16(" + e + ")";
  return e;
}

// copy global tile -> register (a result) or register -> global tile (no result).
void Emitter::copy(const Operation& op) {
  if (op.num_operands() == 2 && op.operand(1)->type().space() == MemorySpace::shared &&
      op.operand(0)->type().space() == MemorySpace::reg) {
    if (op.has_attr("atom") && op.str_attr("atom").rfind("st.shared", 0) == 0)
      return register_to_shared(op);
    return stmatrix_store(op);
  }
  if (op.num_operands() == 2 && op.operand(0)->type().space() == MemorySpace::shared &&
      op.operand(1)->type().space() == MemorySpace::global) {
    return shared_to_global(op);
  }
  if (op.num_operands() == 1 && op.num_results() == 1 &&
      op.operand(0)->type().space() == MemorySpace::shared &&
      op.result()->type().space() == MemorySpace::reg) {
    return shared_to_register(op);
  }
  bool load = op.num_results() == 1;
  const Value* gv = op.operand(load ? 0 : 1);
  const Value* rv = load ? op.result() : op.operand(0);
  if (gv->type().space() != MemorySpace::global || rv->type().space() != MemorySpace::reg) {
    unsupported(op, "between " + std::string(to_string(op.operand(0)->type().space())) + " and " +
                        std::string(to_string(load ? op.result()->type().space()
                                                   : op.operand(1)->type().space())) +
                        " memory is not supported yet (only global <-> register)");
  }
  const View& g = view(op, gv, /*indirect_ok=*/true);
  // `cache = "stream"` on a load: data read once, 16-byte loads that skip L1 and leave L2 first.
  // `cache = "coherent"` on a load of 32-bit values: cached in L2 only (ld.global.cg), for data
  // other blocks of the launch wrote (split-k's partial tiles; see tsl_fetch32).
  std::string stream, coherent;
  if (op.has_attr("cache")) {
    std::string cache = op.str_attr("cache");
    if ((cache != "stream" && cache != "coherent") || !load) {
      unsupported(op, "has cache = \"" + cache +
                          "\"; only loads take a cache hint, \"stream\" or \"coherent\"");
    }
    if (cache == "coherent" && ir::bit_width(op.result()->type().element()) != 32)
      unsupported(op, "has cache = \"coherent\", which loads of 32-bit values take only");
    (cache == "stream" ? stream : coherent) = ", true";
  }
  // In a chunked kernel (32 registers a thread, emit_chunked.cpp), masked 16-byte fetches of data
  // every block reads and nothing writes (a row program's weight and bias vectors) take the
  // non-coherent read-only path (tsl_ld_guarded16_invariant); unmasked loads stay as they are.
  const bool invariant =
      load && stream.empty() && chunking() && block_invariant_read_only(kernel_, op);
  const std::string fetch16_args = invariant ? ", false, true" : stream;  // tsl_fetch16's
  // A load whose only use is the next op, `add %x, %loaded` of the same layout (split-k's sum of
  // partial tiles): each fetched value is added where it lands, so that the loaded tile's values
  // die one by one instead of all living beside %x (128 + 128 registers would spill).
  const Operation* fused = load ? accumulating_add(op) : nullptr;
  const bool packed = load && !fused && held_packed(op, g);
  Reg r = load ? (packed ? new_packed_reg(op) : new_reg(op)) : reg(op, rv);
  const Plan& plan = *r.plan;
  std::string addend, sum;
  if (fused) {
    const Value* other = fused->operand(0) == op.result() ? fused->operand(1) : fused->operand(0);
    addend = reg(*fused, other).name;
    sum = new_reg(*fused).name;
    fused_.insert(fused);
  }
  auto add_values = [&](int64_t v, int64_t w) {
    if (!fused) return;
    for (int64_t i = v; i < v + w; ++i) {
      const std::string k = "[" + std::to_string(i) + "]";
      line(sum + k + " = " + addend + k + " + " + r.name + k + ";");
    }
  };
  size_t rank = g.shape.size();
  if (plan.tile != g.shape) unsupported(op, "between tiles of different shapes");
  if (load && r.element != g.element) unsupported(op, "changes the element type; cast instead");
  line("{  // " + std::string(load ? "load " : "store ") + r.name + (load ? " <- " : " -> ") +
       g.base + " tile");
  ++indent_;
  std::string off;
  for (size_t d = 0; d < rank; ++d) {
    std::string c = "c" + std::to_string(d);
    std::string e = g.origin[d];
    if (plan.var[d] != "0") e = e == "0" ? plan.var[d] : e + " + " + plan.var[d];
    line("const int " + c + " = " + e + ";");
    if (static_cast<int>(d) == g.indirect_dim) continue;  // (its rows come from the map below)
    std::string term = g.stride[d] == "1" ? c : "(long long)" + c + " * " + g.stride[d];
    off += (off.empty() ? "" : " + ") + term;
  }
  std::string ptype = std::string(load ? "const " : "") + storage_type(g.element) + "*";
  line(ptype + " p = " + g.base + (off.empty() ? "" : " + " + off) + ";");
  // An indirect tile (src/ir/grouped.h): the row of each of the thread's row positions, read from
  // the row map once (32-bit: the 16 rows of a 64-row accumulator tile beside it without spills),
  // for positions inside the map only (others are masked anyway).
  if (g.indirect_dim >= 0) {
    const size_t d = static_cast<size_t>(g.indirect_dim);
    std::vector<int64_t> positions;
    for (int64_t v = 0; v < plan.values; ++v) {
      const int64_t k = plan.value_coord[v][d];
      if (std::find(positions.begin(), positions.end(), k) == positions.end())
        positions.push_back(k);
    }
    const std::string c = "c" + std::to_string(d);
    for (int64_t k : positions) {
      const std::string at = c + (k ? " + " + std::to_string(k) : "");
      line("const int row" + std::to_string(k) + " = " + at + " < " + g.extent[d] + " ? __ldg(" +
           g.indirect_map + " + " + at + ") : 0;");
    }
  }
  std::string bf = g.element == ScalarKind::bf16 ? "true" : "false";
  int64_t bytes = g.element == ScalarKind::f32 ? 4 : 2;
  size_t last = rank - 1;
  // The accesses of values `values` (increasing) as `view` describes them (its facts decide
  // predicates and widths).
  auto value_accesses = [&](const View& g, const std::vector<int64_t>& values) {
    // Conversions of masked vector loads, after all fetches (with the values they convert).
    std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> unpacks;
    for (size_t at = 0; at < values.size();) {
      const int64_t v = values[at];
      int64_t w = vector_width(g, plan, v, bytes);
      for (int64_t i = 1; i < w; ++i) {
        if (at + i >= values.size() || values[at + i] != v + i) w = 1;
      }
      // A column vector read in a chunk beside a held row (LayerNorm's weight and bias at 32
      // registers a thread) is fetched 8 bytes at a time, both halves under the vector's
      // predicate: with 16-byte fetches the chunk's peak (the held row's 16 words, both
      // vectors' 8) is 2 registers over and ptxas spills (8 bytes, reloaded at each store); so
      // fetched it compiles without spills and runs 2-3.5% faster at 2047 x 32760, 3000 x 16376
      // and 4096 x 16384, the same at 2048 x 32768 (bench/results/2026-11-29-rows-emitted-h200.md,
      // call D). Only there, and only in the run's first half of chunks (emit_chunked.cpp): split
      // in the kernel's other runs too, ptxas reloaded the held row from global memory.
      const bool halves = invariant && chunk_beside_held_row_ && bytes == 2 && w == 8;
      const auto& vc = plan.value_coord[v];
      std::string voff;
      for (size_t d = 0; d < rank; ++d) {
        if (static_cast<int>(d) == g.indirect_dim) {
          voff += (voff.empty() ? "" : " + ") +
                  ("(long long)row" + std::to_string(vc[d]) + " * " + g.stride[d]);
          continue;
        }
        if (vc[d] == 0) continue;
        std::string term = g.stride[d] == "1" ? std::to_string(vc[d])
                                              : std::to_string(vc[d]) + " * " + g.stride[d];
        voff += (voff.empty() ? "" : " + ") + term;
      }
      std::string addr = voff.empty() ? "p" : "p + " + voff;
      std::string pred;
      if (g.masked) {
        for (size_t d = 0; d < rank; ++d) {
          if (g.full[d]) continue;
          pred += (pred.empty() ? "" : " && ") + std::string("c") + std::to_string(d) +
                  (vc[d] ? " + " + std::to_string(vc[d]) : "") + " < " + g.extent[d];
        }
      }
      (void)last;
      std::string slot = r.name + "[" + std::to_string(v) + "]";
      std::string stmt;
      if (load && r.packed) {
        // Words as loaded (held_packed: every access a vector of whole words); out-of-bounds
        // lanes get the pad's bits, the pad rounded to the element type as the tile's type says.
        const std::string ws = std::to_string(w), word = r.name + "[" + std::to_string(v / 2) + "]";
        if (pred.empty()) {
          stmt = "tsl_load16_words<" + ws + stream + ">(" + addr + ", &" + word + ");";
        } else {
          const std::string n = std::to_string(v);
          line("const bool ok" + n + " = " + pred + ";");
          stmt = "const auto raw" + n + " = tsl_fetch16<" + ws + fetch16_args + ">(" + addr +
                 ", ok" + n + ", " + pad_word(g) + ");";
          unpacks.push_back({"tsl_words16<" + ws + ">(raw" + n + ", &" + word + ");", {v, w}});
        }
      } else if (load) {
        if (w > 1) {
          stmt = bytes == 2 ? "tsl_load16<" + std::to_string(w) + stream + ">(" + addr + ", &" +
                                  slot + ", " + bf + ");"
                            : "tsl_load32<" + std::to_string(w) + coherent + ">(" + addr + ", &" +
                                  slot + ");";
        } else {
          stmt = slot + " = " +
                 (bytes == 2         ? "tsl_load(" + addr + ", " + bf + ")"
                  : coherent.empty() ? "*(" + addr + ")"
                                     : "__ldcg(" + addr + ")") +
                 ";";
        }
        if (!pred.empty() && w > 1) {
          // Fetch now, convert after the tile's last fetch (see tsl_fetch16).
          const std::string n = std::to_string(v);
          line("const bool ok" + n + " = " + pred + ";");
          // A pad exact in the 16-bit element type is fetched as its bits into out-of-bounds
          // lanes and converted with the rest: no select after the conversion.
          const bool pad_bits = bytes == 2 && pad_exact(g);
          // Under `halves`, two 8-byte fetches of the vector under its one predicate.
          const int64_t part = halves && pad_bits ? 4 : w;
          for (int64_t h = 0; h < w; h += part) {
            const std::string nh = std::to_string(v + h), ps = std::to_string(part);
            const std::string args = part == w ? (bytes == 2 ? fetch16_args : coherent) : "";
            const std::string fetch =
                "const auto raw" + nh + " = tsl_fetch" + (bytes == 2 ? "16" : "32") + "<" + ps +
                args + ">(" + (h ? addr + " + " + std::to_string(h) : addr) + ", ok" + n +
                (pad_bits ? ", " + pad_word(g) : std::string()) + ");";
            if (h + part < w) line(fetch); else stmt = fetch;
            const std::string into = "&" + r.name + "[" + nh + "]";
            unpacks.push_back(
                {bytes == 2
                     ? "tsl_unpack16<" + ps + ">(raw" + nh + ", " + into + ", " + bf +
                           (pad_bits ? std::string() : ", ok" + n + ", " + float_literal(g.pad)) +
                           ");"
                     : "tsl_unpack32<" + ps + ">(raw" + nh + ", " + into + ", ok" + n + ", " +
                           float_literal(g.pad) + ");",
                 {v + h, part}});
          }
        } else if (!pred.empty()) {
          std::string pad;
          for (int64_t i = 0; i < w; ++i) {
            pad += r.name + "[" + std::to_string(v + i) + "] = " + float_literal(g.pad) + "; ";
          }
          stmt = "if (" + pred + ") " + stmt + " else { " + pad + "}";
        }
      } else {
        if (w > 1) {
          stmt = bytes == 2
                     ? "tsl_store16<" + std::to_string(w) + ">(" + addr + ", &" + slot + ", " + bf +
                           ");"
                     : "tsl_store32<" + std::to_string(w) + ">(" + addr + ", &" + slot + ");";
        } else {
          stmt = "*(" + addr +
                 ") = " + (bytes == 2 ? "tsl_cvt16(" + slot + ", " + bf + ")" : slot) + ";";
        }
        // Threads that hold copies of the same element (stride-0 thread leaves): one writes.
        std::string rep = representative(plan, std::vector<bool>(plan.leaves.size(), false));
        if (rep != "true") pred = pred.empty() ? rep : rep + " && " + pred;
        if (!pred.empty()) stmt = "if (" + pred + ") " + stmt;
      }
      line(stmt);
      if (load && (pred.empty() || w == 1)) add_values(v, w);
      at += static_cast<size_t>(w);
    }
    for (const auto& [u, converted] : unpacks) {
      line(u);
      add_values(converted.first, converted.second);
    }
  };
  auto rows_grouped = [&](const View& g) {
    return roles_ && g.masked && rank == 2 && !g.full[0] && g.element == ScalarKind::f32;
  };
  // The whole tile. An f32 tile of a warp-specialized kernel (split-k's partial tiles) whose rows
  // are not proven inside goes row by row: the values of one row offset of the thread under one
  // branch on that row (a thread whose rows all lie outside, as most do when M is 16, skips them
  // all), the columns predicated inside it, and not at all in the version for tiles whose columns
  // are inside. Other tiles keep one predicate per access (the memory-bound kernels' code, whose
  // speed was measured as it is).
  auto accesses = [&](const View& g) {
    const auto [lo, hi] = value_range(plan.values);
    std::vector<int64_t> all;
    for (int64_t v = lo; v < hi; ++v) all.push_back(v);
    if (!rows_grouped(g)) {
      value_accesses(g, all);
      return;
    }
    std::vector<int64_t> offsets;
    for (int64_t v = 0; v < plan.values; ++v) {
      const int64_t r = plan.value_coord[v][0];
      if (std::find(offsets.begin(), offsets.end(), r) == offsets.end()) offsets.push_back(r);
    }
    View inside = g;
    inside.full[0] = true;
    for (int64_t offset : offsets) {
      std::vector<int64_t> row;
      for (int64_t v = lo; v < hi; ++v) {
        if (plan.value_coord[v][0] == offset) row.push_back(v);
      }
      line("if (c0" + (offset ? " + " + std::to_string(offset) : std::string()) + " < " +
           g.extent[0] + ") {");
      ++indent_;
      value_accesses(inside, row);
      --indent_;
      if (load) {
        line("} else {");
        ++indent_;
        for (int64_t v : row) {
          line(r.name + "[" + std::to_string(v) + "] = " + float_literal(g.pad) + ";");
          add_values(v, 1);
        }
        --indent_;
      }
      line("}");
    }
  };
  // A store of a tile the facts cannot prove full or row-aligned (a GEMM epilogue at ragged M, N:
  // predicated 2-byte stores of the wgmma accumulator's column pairs) gets a second version for the
  // tiles that are full and whose rows are aligned at run time (every tile but the last row and
  // column of tiles, for every even N): no predicates, vector stores. Loads keep the one version
  // the facts give (their widths are what the memory-bound kernels' facts were chosen for).
  std::string fast_when;
  View fast = g;
  if (!load) {
    // (Rows grouped by branches stay masked: the second version drops the column predicates.)
    for (size_t d = 0; d < rank; ++d) {
      if (!g.masked || g.full[d] || (d == 0 && rows_grouped(g))) continue;
      fast_when += (fast_when.empty() ? "" : " && ") + g.origin[d] + " + " +
                   std::to_string(g.shape[d]) + " <= " + g.extent[d];
      fast.full[d] = true;
    }
    fast.masked = rows_grouped(g);
    const std::string& row = g.extent[last];
    bool symbolic = !row.empty() && !std::isdigit(static_cast<unsigned char>(row[0]));
    int64_t widest = 1;
    if (symbolic && rank > 1) {
      fast.extent_divisor[last] = std::lcm(g.extent_divisor[last], 16 / bytes);
      for (int64_t v = 0; v < plan.values;) {
        int64_t w = vector_width(fast, plan, v, bytes);
        widest = std::max(widest, w);
        v += w;
      }
      if (g.extent_divisor[last] % widest != 0) {
        fast.extent_divisor[last] = std::lcm(g.extent_divisor[last], widest);
        fast_when +=
            (fast_when.empty() ? "" : " && ") + row + " % " + std::to_string(widest) + " == 0";
      } else {
        fast.extent_divisor[last] = g.extent_divisor[last];
      }
    }
  }
  if (fast_when.empty()) {
    accesses(g);
  } else {
    line("if (" + fast_when + ") {  // full tile, aligned rows");
    ++indent_;
    accesses(fast);
    --indent_;
    line("} else {");
    ++indent_;
    accesses(g);
    --indent_;
    line("}");
  }
  --indent_;
  line("}");
}

// Whether a load of a 16-bit tile keeps its values packed, two to a register as loaded, and
// converts them where each reader reads them (reg()): where two or more ops read the tile, other
// tiles are loaded into registers between its first and last reader, and every access is a
// vector of whole words. That is a row held from one loop to the next while the later one brings
// in column vectors: LayerNorm's x, read by its sums and again by its normalization beside its
// weight and bias (schedule-rows' register estimate counts the held row as f16 words). Held as
// floats there, with every masked lane selected after its conversion, it took 70-96 registers at
// N = 8200 (ptxas's choice: 2-3 blocks a SM); packed, 56-72. On the H200, with the guarded loads
// (tsl_fetch16), LayerNorm went from 0.889 to 0.955 of a copy at 8191 x 8200 and RMSNorm from
// 0.986 to 1.039 (bench/results/2026-11-28-exp-to-exp2-h200.md, call F). Where nothing is loaded
// between the readers (softmax: the row and nothing else) the floats are what ptxas keeps
// anyway, and a packed copy beside them cost softmax at 8191 x 8200 a block a SM (56 -> 72
// registers, 1.006 -> 0.901 of a copy, call E): such rows stay floats.
bool Emitter::held_packed(const Operation& load, const View& g) {
  const Value* loaded = load.result();
  const Plan* plan = plan_for(load, loaded->type());
  const int64_t bytes = ir::bit_width(g.element) / 8;
  if (bytes != 2 || !plan || !packable(loaded->type().element(), plan->values)) return false;
  if (g.element != loaded->type().element()) return false;
  // The readers (ops of the load's block, or ops nested in them) and, between the first and the
  // last, loads of other tiles into registers.
  const ir::Block* block = load.parent_block();
  int64_t readers = 0;
  size_t first = 0, last = 0;
  for (size_t i = ir::position_in_block(load) + 1; block && i < block->ops().size(); ++i) {
    ir::walk(block->ops()[i].get(), [&](Operation* o) {
      for (const Value* x : o->operands())
        if (x == loaded) {
          if (readers++ == 0) first = i;
          last = i;
          break;
        }
    });
  }
  if (readers < 2) return false;
  bool loads_between = false;
  for (size_t i = first + 1; i < last; ++i) {
    ir::walk(block->ops()[i].get(), [&](Operation* o) {
      loads_between = loads_between || (o->kind() == OpKind::copy && o->num_operands() == 1 &&
                                        o->operand(0)->type().space() == MemorySpace::global &&
                                        o->result()->type().space() == MemorySpace::reg);
    });
  }
  if (!loads_between) return false;
  for (int64_t v = 0; v < plan->values;) {
    const int64_t w = vector_width(g, *plan, v, bytes);
    if (w < 2 || v % 2 != 0) return false;
    v += w;
  }
  return true;
}

// Whether `g`'s pad is a value of its 16-bit element type (0, -inf, 1: what the pads of the row
// programs are), so that its bits stand for it exactly.
bool Emitter::pad_exact(const View& g) {
  if (std::isnan(g.pad)) return false;
  const uint16_t h = pad_bits16(g);
  const float back = g.element == ScalarKind::bf16 ? bf16_bits_to_float(h) : f16_bits_to_float(h);
  return static_cast<double>(back) == g.pad && std::signbit(back) == std::signbit(g.pad);
}

// `g`'s pad rounded to its 16-bit element type, as bits.
uint16_t Emitter::pad_bits16(const View& g) {
  const float pad = static_cast<float>(g.pad);
  return g.element == ScalarKind::bf16 ? float_to_bf16_bits(pad) : float_to_f16_bits(pad);
}

// The 32-bit word of two pads of `g`'s 16-bit element type (the pad rounded to it).
std::string Emitter::pad_word(const View& g) {
  const uint16_t h = pad_bits16(g);
  char word[16];
  std::snprintf(word, sizeof word, "0x%08xu", (unsigned(h) << 16) | unsigned(h));
  return word;
}

// The `add` that is the only use of `load`'s result and the op right after it, adding a register
// tensor of the same layout and element type; null when there is none.
const Operation* Emitter::accumulating_add(const Operation& load) {
  const Value* loaded = load.result();
  const ir::Block* block = load.parent_block();
  const size_t at = ir::position_in_block(load);
  if (!block || at + 1 >= block->ops().size()) return nullptr;
  const Operation* next = block->ops()[at + 1].get();
  if (next->kind() != OpKind::add || next->result()->type() != loaded->type() ||
      next->operand(0)->type() != next->operand(1)->type() ||
      next->operand(0) == next->operand(1)) {
    return nullptr;
  }
  int64_t uses = 0;
  for (size_t i = at + 1; i < block->ops().size(); ++i) {
    ir::walk(block->ops()[i].get(), [&](Operation* o) {
      for (const Value* x : o->operands()) uses += x == loaded;
    });
  }
  const bool adds = next->operand(0) == loaded || next->operand(1) == loaded;
  return adds && uses == 1 ? next : nullptr;
}

// The widest vector (elements) that values v, v+1, ... of `plan` form in `g`: consecutive
// elements of the contiguous last dimension, aligned by the facts, wholly in or out of bounds.
int64_t Emitter::vector_width(const View& g, const Plan& plan, int64_t v, int64_t bytes) {
  size_t rank = g.shape.size(), last = rank - 1;
  for (int64_t w = 16 / bytes; w >= 2; w /= 2) {
    if (v + w > plan.values) continue;
    bool ok = plan.value_coord[v][last] % w == 0;
    for (int64_t i = 1; ok && i < w; ++i) {
      for (size_t d = 0; d < rank; ++d) {
        int64_t expect = plan.value_coord[v][d] + (d == last ? i : 0);
        ok = ok && plan.value_coord[v + i][d] == expect;
      }
    }
    for (const Leaf& l : plan.leaves) ok = ok && l.coef[last] % w == 0;
    ok = ok && (g.origin_align[last] == 0 || g.origin_align[last] % w == 0);
    // Row starts aligned (the extent of the last dimension is the row stride), and a vector
    // never straddles the end of a row.
    bool row_ok = g.extent_divisor[last] % w == 0;
    if (rank > 1 || (g.masked && !g.full[last])) ok = ok && row_ok;
    if (ok) return w;
  }
  return 1;
}

}  // namespace tessel::target::cuda::detail

namespace tessel::target::cuda::detail {

// copy_async %tile, %buf {atom = "cp.async.cg.shared.global.b128"}: a global tile of 16-bit or
// f32 values into a plain strided shared tensor by every thread of the block, 16 bytes a
// cp.async, coalesced (16-byte access a of the tile is row a / P, columns (a % P) * V ..
// + V - 1 for P accesses a row of V values; thread tid takes accesses tid, tid + T, ...). An
// access outside the tensor (masked tiles) is wholly outside, which the facts must prove (rows a
// multiple of V values, the tile's column origin too), and gets the tile's pad by a plain store.
// Completes in the thread's cp.async groups: copy_async_wait {threads} and a block_sync make the
// whole tile visible (schedule-rows' rows fetched whole into shared memory).
void Emitter::global_to_shared_async(const Operation& op) {
  const View& g = view(op, op.operand(0));
  const SharedTile& buf = store_destination(op);
  if (g.shape.size() != 2 || buf.shape != g.shape) {
    unsupported(op, "loads a tile of rank " + std::to_string(g.shape.size()) +
                        " into shared memory by cp.async; rank-2 tiles of the buffer's shape here");
  }
  const int64_t bytes = g.element == ScalarKind::f32 ? 4 : 2;
  if (g.element != buf.element ||
      (bytes == 2 && g.element != ScalarKind::f16 && g.element != ScalarKind::bf16)) {
    unsupported(op, "copies " + std::string(ir::to_string(g.element)) +
                        " by cp.async; f16, bf16 and f32 tiles into a buffer of the same type");
  }
  const std::optional<StridedBuffer> strided = strided_buffer(buf.layout, buf.shape);
  if (!strided || strided->swizzle || strided->stride[1] != 1 || g.stride[1] != "1") {
    unsupported(op, "loads into a shared buffer in layout " + buf.layout +
                        " by cp.async; rows contiguous in both tensors here");
  }
  const int64_t vec = 16 / bytes, rows = g.shape[0], cols = g.shape[1];
  const int64_t row_stride = strided->stride[0];
  if (cols % vec != 0 || row_stride % vec != 0) {
    unsupported(op, "loads rows of " + std::to_string(cols) +
                        " values by 16-byte cp.async's; rows of whole 16-byte vectors here");
  }
  const bool masked = g.masked && !(g.full[0] && g.full[1]);
  const int64_t div = g.extent_divisor[1], oa = g.origin_align[1];
  if (div % vec != 0 || (oa != 0 && oa % vec != 0)) {
    unsupported(op,
                "loads by 16-byte cp.async's but the facts do not prove 16-byte aligned "
                "rows of " +
                    g.base + " (a row length a multiple of " + std::to_string(vec) + " values)");
  }
  const int64_t per_row = cols / vec, accesses = rows * per_row;
  const std::string type = bytes == 4 ? "float" : "unsigned short";
  // The word a vector past the tile's end is filled with: the pad, as the element type's bits.
  std::string fill = "0u";
  if (masked && g.pad != 0)
    fill = bytes == 4 ? "__float_as_uint(" + float_literal(g.pad) + ")" : pad_word(g);
  line("{  // shared %" + op.operand(1)->name() + " <- " + g.base + " tile (cp.async 16 B, " +
       std::to_string(accesses) + " accesses over " + std::to_string(threads_) + " threads)");
  ++indent_;
  line("unsigned char* const dst = reinterpret_cast<unsigned char*>(" + buf.base + ");");
  // `from_line` (a tile of one row; schedule-rows' rows fetched whole): the accesses counted
  // from the 128-byte line the tile starts in, so that each warp's 512 bytes are four whole
  // lines. Counted from the tile's start, a row 16 bytes into a line (N = 32760, 16376, 8200 f16
  // values) made every warp's cp.async's read 1.5x the row's sectors from L2. Whole lines on the
  // shared side too take a buffer at the row's line phase (`alloc %tile`, shared_alloc): with
  // both, the row's own sectors (6.29 M -> 4.20 M at 2048 x 32760) and softmax 3-5% faster
  // there; with the global side alone, no change (bench/results/2026-11-29-rows-emitted-h200.md,
  // calls G-I). The accesses are rotated by the line's head: access a fetches vector a - head,
  // the first head accesses the tile's last head vectors (a constant trip count, as without the
  // attribute: counted from the line with accesses + head and the head's skipped, every shape
  // ran 1-3% slower, call F); the data lands where it would without it.
  const bool from_line = op.has_attr("from_line");
  if (from_line && rows != 1) {
    unsupported(op, "has from_line with tiles of " + std::to_string(rows) +
                        " rows; tiles of one row here");
  }
  if (from_line) {
    line("const " + type + "* const row = " + tile_start(g) + ";");
    line("const int head = static_cast<int>((reinterpret_cast<unsigned long long>(row) & 127) >> 4);");
  }
  line("#pragma unroll 4");
  line("for (int a = tid; a < " + std::to_string(accesses) + "; a += " + std::to_string(threads_) +
       ") {");
  ++indent_;
  // The access's row r and column c in the tile (from_line: one row, c rotated by the head).
  if (from_line) {
    line("const int c = (a < head ? a + " + std::to_string(accesses) + " - head : a - head) * " +
         std::to_string(vec) + ";");
  } else {
    line("const int r = a / " + std::to_string(per_row) + ", c = a % " + std::to_string(per_row) +
         " * " + std::to_string(vec) + ";");
  }
  const std::string row0 = g.origin[0] == "0" ? "" : "(" + g.origin[0] + ")";
  const std::string gr =
      from_line ? (row0.empty() ? "0" : row0) : (row0.empty() ? "r" : row0 + " + r");
  const std::string gc = g.origin[1] == "0" ? "c" : "(" + g.origin[1] + ") + c";
  line("const " + type + "* src = " +
       (from_line ? "row + c"
                  : g.base + " + (long long)(" + gr + ") * " + g.stride[0] + " + " + gc) +
       ";");
  line("unsigned char* const d = dst + " +
       (from_line ? std::string("c") : "(r * " + std::to_string(row_stride) + " + c)") + " * " +
       std::to_string(bytes) + ";");
  std::string pred;
  if (masked && !g.full[0]) pred = gr + " < " + g.extent[0];
  if (masked && !g.full[1]) pred += (pred.empty() ? "" : " && ") + gc + " < " + g.extent[1];
  if (pred.empty()) {
    line("tessel::device::cp_async_cg16(d, src);");
  } else {
    line("if (" + pred + ") tessel::device::cp_async_cg16(d, src);");
    line("else *reinterpret_cast<uint4*>(d) = make_uint4(" + fill + ", " + fill + ", " + fill +
         ", " + fill + ");");
  }
  --indent_;
  line("}");
  --indent_;
  line("}");
}

}  // namespace tessel::target::cuda::detail
