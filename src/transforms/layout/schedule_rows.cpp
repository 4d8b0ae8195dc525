// ScheduleRows: recognizing a row program, the cost model over tiles and threads, and the rewrite
// (new tile shapes; the pair of loops peeled under `if cdiv(N, C) == 1` where the row stays in
// registers).
#include "transforms/layout/schedule_rows.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>
#include <tuple>
#include <unordered_map>

#include "layout/layout.h"
#include "support/diagnostics.h"
#include "transforms/pins.h"
#include "transforms/report.h"

namespace tessel::transforms {

using ir::Block;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;

namespace {

// ---- The machine (H100 SXM; docs/HOPPER.md) ---------------------------------------------------
constexpr int64_t kSms = 132;
constexpr int64_t kThreadsPerSm = 2048;
constexpr int64_t kBlocksPerSm = 32;
constexpr int64_t kRegistersPerSm = 65536;
constexpr int64_t kMaxRegisters = 255;
constexpr double kHbmBytesPerUs = 3.0e6;  // what a copy kernel reaches (~3 TB/s)
constexpr double kL2Factor = 5.0;  // L2 hits against HBM bandwidth: rows read again from L2 cost
                                   // little beside the HBM stream (N = 32768, two passes: 0.91-0.98
                                   // of a copy, bench/results/2026-11-26-rows-auto-h100.md)
constexpr double kInFlightNeeded = 32 * 1024;    // bytes in flight per SM for the copy's bandwidth
constexpr double kL2Bytes = 25.0 * 1024 * 1024;  // half of the 50 MB L2: rows read twice stay
// The row held in shared memory: its stores and loads and the block_sync between the loops cost
// beside the same bytes held in registers 2-2.5% (rmsnorm at N = 8192 and 16384:
// 1.050 / 1.047 in registers, 1.028 / 1.022 in shared memory, 2026-11-27-rows-shared-h100.md).
constexpr double kStashFactor = 1.03;
constexpr int64_t kDefaultSize = 8192;
constexpr int64_t kSharedPerSm = 228 * 1024;     // shared memory per SM
constexpr int64_t kSharedPerBlock = 227 * 1024;  // the most one block may have
constexpr int64_t kSharedReserve = 1024;         // per block, beside the rows (the runtime's)

int64_t cdiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

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

// ---- The cost model ----------------------------------------------------------------------------

// Where the rows a later loop reads again are between the loops: in registers (one pass, the
// row in one tile), in shared memory (one pass: the first loop also writes each tile into a
// shared buffer of the whole row, the second reads it there), or nowhere (read twice, the second
// time from L2 if it holds them).
enum class Hold { registers, shared, none };

struct Candidate {
  std::string kind;  // one pass with the row in registers or shared memory, two passes, or
                     // nothing read twice
  int64_t threads = 0, rows = 0, cols = 0, vectors = 0, along_row = 0;
  bool one_pass = false;                     // the row in registers
  bool stash = false;                        // the row in shared memory
  int64_t stash_cols = 0, shared_bytes = 0;  // the shared buffers' columns and bytes per block
  int64_t regs = 0, blocks_per_sm = 0;
  double in_flight = 0, hbm_fraction = 0, hbm_bytes = 0, l2_bytes = 0, us = 0;

  std::string str() const {
    char buf[400];
    std::snprintf(
        buf, sizeof buf,
        "%s: threads %lld, tile [%lld,%lld] (%lld threads along a row, %lld x 16 B each), "
        "~%lld regs, %lld blocks/SM, %.0f KiB in flight/SM, %.2f of HBM bandwidth, HBM "
        "bytes %.2fx, L2 bytes %.2fx, %.1f us",
        kind.c_str(), (long long)threads, (long long)rows, (long long)cols, (long long)along_row,
        (long long)vectors, (long long)regs, (long long)blocks_per_sm, in_flight / 1024,
        hbm_fraction, hbm_bytes, l2_bytes, us);
    return buf;
  }
};

struct Problem {
  int64_t m, n;
  const RowProgram* p;
};

std::optional<Candidate> evaluate(const Problem& pr, int64_t threads, int64_t cols, Hold hold) {
  const RowProgram& p = *pr.p;
  const bool one_pass = hold == Hold::registers;
  const bool stash = hold == Hold::shared;
  Candidate c;
  c.threads = threads;
  c.cols = cols;
  c.one_pass = one_pass;
  c.stash = stash;
  c.kind = one_pass          ? "one pass, row in registers"
           : stash           ? "one pass, row in shared memory"
           : p.pairs.empty() ? "single pass (nothing read twice)"
                             : "two passes (the second from L2 if it holds the rows)";
  const int64_t vec = 16 / p.elem_bytes;
  if (cols % vec) return std::nullopt;
  c.along_row = std::min(threads, cols / vec);
  if (threads % c.along_row) return std::nullopt;
  c.rows = threads / c.along_row;
  c.vectors = cols / (vec * c.along_row);
  if (c.vectors > 4) return std::nullopt;
  const bool has_loops = !p.loops.empty();
  const int64_t kt = has_loops ? cdiv(pr.n, cols) : 1;
  if (one_pass && kt != 1) return std::nullopt;
  // One pass over a tile of which a quarter or more is masked off: the masked lanes' threads and
  // registers still run and hold, which the byte count below does not see (8191 x 8200: one pass
  // over [1,16384] measured 0.75-0.92 of a copy where two passes over [1,4096] measured
  // 0.78-0.95, bench/results/2026-11-27-rows-auto-h100.md).
  if (one_pass && has_loops && 4 * pr.n < 3 * cols) return std::nullopt;
  // Likewise column tiles of which more than 40% of the lanes are masked off in all (the last
  // tile mostly empty: [1,8192] tiles at N = 8200 use half their lanes; [1,4096], which uses two
  // thirds, measured 0.93-0.95 of a copy for the norms, 2026-11-26-rows-auto-h100.md).
  if (has_loops && 10 * pr.n < 6 * kt * cols) return std::nullopt;
  const int64_t rereads =
      one_pass || stash || p.pairs.empty() ? 0 : int64_t(p.pairs[0].reuse.size());
  const int64_t held = one_pass ? int64_t(p.pairs[0].reuse.size()) : 0;
  // Registers: a base for addresses and scalars, one register per element of the thread's part
  // of the tile being worked on (f32), and the tiles held from the first loop to the second in
  // their own type (16-bit values two to a register). Calibrated with ptxas on the auto examples
  // at N = 16384: 512 threads x 32 elements, one held f16 tile: 64 registers in rmsnorm, layernorm
  // and softmax (the estimate 64; the former 24 + 2 per element said 88, so 2 blocks of 512 were
  // never considered); 1024 x 16: 43-55 (estimate 40; one block either way). At least 40 with
  // a reduction (none of those kernels compiles to fewer than 39: 1024 threads are never counted
  // twice per SM), 32 without (bias_gelu_auto: 32 at every tile).
  const int64_t elements = vec * c.vectors;
  c.regs = std::max<int64_t>(p.reduces_rows ? 40 : 32,
                             16 + elements + held * elements * p.elem_bytes / 4);
  if (c.regs > kMaxRegisters) return std::nullopt;
  const int64_t regs_rounded = (c.regs + 7) / 8 * 8;
  const int64_t by_registers = kRegistersPerSm / (regs_rounded * threads);
  c.blocks_per_sm = std::min({kThreadsPerSm / threads, kBlocksPerSm, by_registers});
  if (stash) {
    // One buffer [R, kt C] per row tensor read again, for the column tiles of the hinted N.
    c.stash_cols = kt * cols;
    c.shared_bytes = int64_t(p.pairs[0].reuse.size()) * c.rows * c.stash_cols * p.elem_bytes;
    if (c.shared_bytes + kSharedReserve > kSharedPerBlock) return std::nullopt;
    c.blocks_per_sm = std::min(c.blocks_per_sm, kSharedPerSm / (c.shared_bytes + kSharedReserve));
  }
  if (c.blocks_per_sm == 0) return std::nullopt;
  const double used = double(pr.n) / double(has_loops ? kt * cols : cdiv(pr.n, cols) * cols);
  const int64_t reads = std::max<int64_t>(p.row_reads, 1);
  c.in_flight = double(c.blocks_per_sm * threads * c.vectors * 16 * reads) * used;
  // An elementwise program (no loops) needs twice the bytes in flight: bias + GELU at N = 8192
  // with its column tiles in row order measured 1.044 of a copy with [1,2048] tiles of 128 threads
  // (64 KiB a SM) and 0.93-0.96 with 32 KiB ([8,256] x 256, [1,1024] x 128;
  // 2026-11-27-rows-shared-h100.md).
  const double needed = has_loops ? kInFlightNeeded : 2 * kInFlightNeeded;
  double fraction = std::min(1.0, c.in_flight / needed);
  // The tail: blocks take SMs as others leave, so there are no waves, but as the last blocks
  // drain the SMs hold fewer loads in flight; about half a block's time is lost whatever the
  // number of blocks (waves / (waves + 0.5)). The former waves / ceil(waves) charged 3 blocks of
  // 256 at N = 32768 (5.2 waves) 14% and preferred 2 blocks of 512 (7.8 waves, 3%), measured the
  // other way for softmax (0.966 vs 0.946 of a copy, 2026-11-27-rows-shared-h100.md).
  const double blocks = double(cdiv(pr.m, c.rows) * (has_loops ? 1 : cdiv(pr.n, cols)));
  const double waves = blocks / double(c.blocks_per_sm * kSms);
  fraction *= waves / (waves + 0.5);
  const double ideal = double(pr.m) * pr.n * p.elem_bytes * (p.row_reads + p.row_writes);
  const double again = double(pr.m) * pr.n * p.elem_bytes * rereads;
  const double resident_rows = double(c.blocks_per_sm * kSms * c.rows);
  const bool l2_holds = resident_rows * pr.n * p.elem_bytes * rereads <= kL2Bytes;
  c.hbm_bytes = (ideal + (l2_holds ? 0 : again)) / std::max(ideal, 1.0);
  c.l2_bytes = (l2_holds ? again : 0) / std::max(ideal, 1.0);
  c.hbm_fraction = fraction;
  c.us = (ideal + (l2_holds ? 0 : again)) / (kHbmBytesPerUs * fraction) +
         (l2_holds ? again : 0) / (kHbmBytesPerUs * kL2Factor);
  // A reduction across warps waits at block barriers once per column tile, and while a block
  // waits only the other resident blocks keep loads in flight: with B blocks and r reductions per
  // tile an SM keeps about B / (B + 0.2 r / B) of its bandwidth. Measured
  // (bench/results/2026-11-26-rows-auto-h100.md): one block of 1024 threads per SM at N = 16384,
  // rmsnorm (r = 1) 0.85, layernorm and softmax (r = 2) 0.74 and 0.71 (the model: 0.83, 0.71);
  // two blocks of 512 at N = 32768, two passes, 0.98 / 0.96 / 0.91 (the model: 0.95 / 0.91 and
  // the second read from L2).
  if (p.reduces_rows && c.along_row > 32) {
    const double r = double(std::max<int64_t>(p.row_reductions, 1));
    const double b = double(c.blocks_per_sm);
    c.hbm_fraction *= b / (b + 0.2 * r / b);
    c.us = (ideal + (l2_holds ? 0 : again)) / (kHbmBytesPerUs * c.hbm_fraction) +
           (l2_holds ? again : 0) / (kHbmBytesPerUs * kL2Factor);
    c.us *= 1.0 + 0.01 * double(kt);
  }
  if (stash) c.us *= kStashFactor;
  // A second loop over column tiles that reads column vectors from global memory (L2: the
  // weight and bias of layernorm) waits for them in every tile with nothing of its own in
  // flight (ncu, layernorm at 2048 x 32768 with the row in shared memory: long scoreboard 6.2
  // cycles per instruction over [1,8192] tiles, 5.1 over [1,16384]). 3% per vector and tile
  // past the two [1,16384] tiles the longest rows need, from the measurements there: layernorm
  // 0.885 over [1,8192] x 256 threads, 0.935 over [1,8192] x 512, 1.009-1.021 over [1,16384] x
  // 512, where softmax (no such reads) measured 0.969 and 0.970 over the first and the last
  // (bench/results/2026-11-27-rows-near-fit-h100.md).
  if (has_loops && !one_pass && kt > 2)
    c.us *= 1.0 + 0.03 * double(p.second_loop_column_reads) * double(kt - 2);
  // Without loops every block is one tile, and a block of the last column tile, mostly masked
  // off, holds its slot about as long as a full one: its time counts as the whole tile's (bias +
  // GELU at 8191 x 8200: [1,4096] tiles, the third 8 columns wide, 0.76 of a copy; [8,256] 0.91,
  // bench/results/2026-11-27-rows-shared-h100.md).
  if (!has_loops) c.us /= used;
  return c;
}

// The tile widths tried with `threads` threads: powers of two from 256 to 65536 (blocks of a power
// of two), and, where no power of two is a near fit for the hinted N (N = 8200: 1025 16-byte
// vectors), the widths that cover N in one tile with every thread holding the same 1-4 vectors
// (352 threads x 3 vectors = 8448 columns: 97% of the lanes used, where [1,16384] uses half). A
// near fit: the next power of two uses 90% or more of its lanes. Only for programs with loops
// over column tiles, whose reductions want the row in one tile; an elementwise program's blocks
// are tiles anyway. A pinned `tile_cols` is the only width tried, whatever it is.
std::vector<int64_t> tile_widths(const Problem& pr, int64_t threads, bool power_of_two,
                                 int64_t pinned_cols) {
  if (pinned_cols) return {pinned_cols};
  std::vector<int64_t> widths;
  if (power_of_two)
    for (int64_t cols = 256; cols <= 65536; cols *= 2) widths.push_back(cols);
  int64_t next_power = 256;
  while (next_power < pr.n) next_power *= 2;
  if (pr.p->loops.empty() || 10 * pr.n >= 9 * next_power) return widths;
  const int64_t vec = 16 / pr.p->elem_bytes;
  for (int64_t v = 1; v <= 4; ++v) {
    const int64_t cols = vec * threads * v;
    if (cols >= pr.n && cols < next_power &&
        std::find(widths.begin(), widths.end(), cols) == widths.end())
      widths.push_back(cols);
  }
  return widths;
}

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
  // Where a block is a quarter or more of what an SM holds, the blocks per SM the model counted
  // on become the launch bound's minimum, so that ptxas keeps the registers within 64K / (blocks
  // x threads): one register more than the estimate can cost a whole block (layernorm at 4096 x
  // 16384, [1,16384] over 512 threads: 66 registers, 1 block a SM instead of 2, 0.816 of a copy
  // where 64 registers measured 1.031; bench/results/2026-11-27-rows-near-fit-h100.md). Not for
  // small blocks: at 25 blocks of 64 threads the bound left ptxas 32 registers and it spilled.
  // Only at the edge (the estimate within one allocation step of the cap): elsewhere the bound
  // lets ptxas take registers up to the cap, fewer blocks than it would have given unbounded
  // (softmax at 8191 x 8200, [1,9216] over 288 threads: 56 registers and 4 blocks unbounded,
  // 1.047-1.051 of a copy; 72 and 3 under a bound of 3 blocks, 0.993).
  const int64_t cap = kRegistersPerSm / (c.blocks_per_sm * c.threads) / 8 * 8;
  if (c.blocks_per_sm > 1 && c.blocks_per_sm <= 4 && (c.regs + 7) / 8 * 8 + 8 > cap &&
      !p.grid->has_attr("blocks_per_sm"))
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

// `if cdiv(N, C) <= K { the first loop, each row tile it reads again later also written into a
// shared buffer [R, K C]; block_sync; the ops between; the second loop reading those tiles from
// the buffer } else { the loops as written }` (K = the column tiles of the hinted N). Each thread
// writes and reads its own 16-byte vectors (the same register layout in both loops); the
// block_sync keeps that from being a correctness assumption.
void stash(const Pair& pair, const Candidate& c) {
  const SourceLocation loc = pair.first->loc();
  ir::OpBuilder b(pair.first->parent_block());
  b.set_insertion_point_before(pair.first);
  Value* zero = b.index_constant(0, loc);
  Value* capacity = b.index_constant(c.stash_cols / c.cols, loc);
  Value* fits = b.compare("le", pair.first->operand(1), capacity, "row_in_shared", loc);
  // One buffer per row tensor read again, made before the branch (the emitter places it).
  std::unordered_map<const Operation*, Value*> buffer;  // first-loop copy -> its buffer
  for (const auto& [second, first] : pair.reuse) {
    const Type& t = first->result()->type();
    const std::string layout =
        layout::make_layout_row_major(layout::IntTuple::tuple({c.rows, c.stash_cols})).str();
    Operation* alloc =
        b.create(OpKind::alloc, {},
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

void check_size_hints(const ir::Module& module, const std::map<std::string, int64_t>& hints) {
  std::set<std::string> names;
  for (const auto& kernel : module.kernels) {
    ir::walk(kernel.get(), [&](Operation* op) {
      if (op->kind() == OpKind::size) names.insert(op->str_attr("name"));
    });
  }
  for (const auto& [name, value] : hints) {
    if (names.count(name)) continue;
    std::string known;
    for (const std::string& n : names) known += (known.empty() ? "" : ", ") + n;
    user_error(SourceLocation::unknown(), "--size-hint: no kernel has a size named '", name,
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
    Problem pr{size_hint(*kernel, p.m_name), size_hint(*kernel, p.n_name), &p};
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
    // Cheapest first (in steps of 1%); then more than one block per SM (a lone block's barriers
    // cost more than the model says: 0.71-0.85 measured at N = 16384), the one pass, fewer
    // registers (less risk of spilling: the estimate is rough), blocks nearest 256 threads.
    // Where the row's reductions cross warps, fewer threads come before fewer registers: every
    // warp of a block waits at each reduction's barriers, and for the same bytes a block of
    // fewer threads with more vectors each waits less (8191 x 8200, one pass, 3-4 blocks a SM:
    // softmax 1.050 of a copy over 288 threads x 4 vectors, 1.026 over 352 x 3;
    // bench/results/2026-11-27-rows-near-fit-h100.md).
    auto key = [&](const Candidate& c) {
      const bool barriers = p.reduces_rows && c.along_row > 32;
      return std::make_tuple(std::floor(std::log(c.us) / std::log(1.01)), c.blocks_per_sm == 1,
                             !c.one_pass, barriers ? c.threads : 0, c.regs,
                             std::abs(std::log2(double(c.threads) / 256.0)), c.threads, c.cols);
    };
    std::stable_sort(all.begin(), all.end(),
                     [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
    // Unpinned, the row goes to shared memory only where the model would otherwise read it twice:
    // at N = 16384 every shared form measured slower than the row in registers (layernorm 0.977
    // vs 1.021 of a copy, softmax 0.900 vs 1.044), at N = 32768 and 8200 it beats a second read
    // (softmax 0.944 vs 0.908, layernorm 0.984 vs 0.954; rmsnorm at 8200 0.971 vs 0.944;
    // 2026-11-27-rows-shared-h100.md).
    if (!pinned_hold) {
      auto first_not_shared =
          std::find_if(all.begin(), all.end(), [](const Candidate& c) { return !c.stash; });
      if (first_not_shared != all.end() && first_not_shared->one_pass)
        all.erase(
            std::remove_if(all.begin(), all.end(), [](const Candidate& c) { return c.stash; }),
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
