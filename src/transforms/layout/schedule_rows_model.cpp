// The cost model of schedule-rows: the machine's figures, a candidate's time, the widths tried,
// the order of candidates, the launch bound (schedule_rows_model.h).
#include "transforms/layout/schedule_rows_model.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <tuple>

#include "support/launch_bound.h"

namespace tessel::transforms::rows {
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
constexpr int64_t kSharedPerSm = 228 * 1024;     // shared memory per SM
constexpr int64_t kSharedPerBlock = 227 * 1024;  // the most one block may have
constexpr int64_t kSharedReserve = 1024;         // per block, beside the rows (the runtime's)

int64_t cdiv(int64_t a, int64_t b) {
  return (a + b - 1) / b;
}

}  // namespace

std::optional<Candidate> evaluate(const Problem& pr, int64_t threads, int64_t cols, Hold hold,
                                  bool chunked) {
  const RowTraits& p = pr.rows;
  const bool one_pass = hold == Hold::registers;
  const bool stash = hold == Hold::shared;
  Candidate c;
  c.threads = threads;
  c.cols = cols;
  c.one_pass = one_pass;
  c.stash = stash;
  c.kind = one_pass      ? "one pass, row in registers"
           : stash       ? "one pass, row in shared memory"
           : !p.has_pair ? "single pass (nothing read twice)"
                         : "two passes (the second from L2 if it holds the rows)";
  const int64_t vec = 16 / p.elem_bytes;
  if (cols % vec) return std::nullopt;
  c.along_row = std::min(threads, cols / vec);
  if (threads % c.along_row) return std::nullopt;
  c.rows = threads / c.along_row;
  c.vectors = cols / (vec * c.along_row);
  // Every thread along the row holds the same whole vectors ([1,768] is 96 vectors: 96 or 32
  // threads, not 64).
  if (c.vectors * vec * c.along_row != cols || c.vectors > 4) return std::nullopt;
  const bool has_loops = p.has_loops;
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
  const int64_t rereads = one_pass || stash || !p.has_pair ? 0 : p.read_again;
  const int64_t held = one_pass ? p.read_again : 0;
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
    c.shared_bytes = p.read_again * c.rows * c.stash_cols * p.elem_bytes;
    if (c.shared_bytes + kSharedReserve > kSharedPerBlock) return std::nullopt;
    c.blocks_per_sm = std::min(c.blocks_per_sm, kSharedPerSm / (c.shared_bytes + kSharedReserve));
  }
  // The row in registers at a full SM's threads (two blocks of 1024, four of 512): 32 registers
  // a thread, which the emitter meets by writing the loops' value-wise ops a 16-byte vector's
  // values at a time (chunked runs, src/target/cuda/emit_chunked.cpp) where the launch bound
  // leaves 32. What a thread then keeps: the held row as 16-bit words over a base of 8, and per
  // chunk a partial for each reduction (chunked folds chain), a 16-byte vector's words less one
  // for each column vector (its loads by the read-only path) and about 4 registers for each
  // transcendental op. Calibrated with ptxas on the examples at [1,32768] over 1024 threads and
  // [1,16384] over 512: RMSNorm (one reduction, one weight: 8 + 16 + 1 + 3 = 28) compiles without
  // spills; LayerNorm (two and two: 32) to 8 bytes of spills (the output's pointer, reloaded once
  // a chunk's store), measured 0.983 and 0.923 of a copy at 2048 x 32768 and 2047 x 32760 against
  // 0.908 and 0.881 with the row in shared memory (bench/results/2026-11-29-rows-chains-h200.md);
  // softmax_exp2 (two reductions, two exp2: 34) spills 168 bytes. RMSNorm so scheduled measured
  // 1.001 and 0.971 (1.022 and 0.989 with chains and the read-only path), where the row fetched
  // whole into shared memory (two blocks of 512) measured 0.986 and 0.926
  // (bench/results/2026-11-29-rows-registers-h200.md): two such blocks keep the row's reads in
  // flight while the other reduces, and leave L1 free for the column vectors (no shared memory).
  // A candidate beside the op-by-op one (same tile and threads), not instead of it. Not for a
  // program with an accurate transcendental per element (issue-bound: unmeasured so chunked).
  // Blocks of 256 threads or more that fill an SM's threads to 7/8 or more count as a full SM,
  // at the registers their launch bound leaves (32 for seven blocks of 288 or six of 320;
  // smaller blocks, at rows of 1024-2048 halves, are unmeasured so), for programs without
  // transcendentals (softmax over 384 threads x 3 vectors, 5 blocks, spills 52-60 bytes at 32
  // registers, ptxas here; its unchunked 288 x 3 blocks measured 1.01-1.02 there). LayerNorm at
  // 8191 x 8200 measured 0.982-0.988 of a copy so over seven blocks of 288 (pinned), 0.986-0.988
  // over six of 320 (the model's choice; 1.023-1.031 with the later chunks' weight and bias by
  // 16-byte fetches, call I), 1.001-1.006 over five of 384 (3 vectors a thread, pinned), against
  // 0.934-0.964 unchunked at three blocks of 288
  // (bench/results/2026-11-29-rows-chunked-blocks-h200.md, calls A-D and I).
  if (chunked) {
    const int64_t full = kThreadsPerSm / threads;
    const int64_t chunked_regs = 8 + held * elements * p.elem_bytes / 4 + p.row_reductions +
                                 3 * p.second_loop_column_reads + 4 * p.transcendentals;
    if (!one_pass || !has_loops || c.vectors < 2 || p.issue_bound ||
        8 * full * threads < 7 * kThreadsPerSm || full <= c.blocks_per_sm || threads < 256 ||
        (full * threads != kThreadsPerSm && p.transcendentals > 0) ||
        chunked_regs > launch_bound_registers(threads, full))
      return std::nullopt;
    c.chunked = true;
    c.regs = launch_bound_registers(threads, full);
    c.blocks_per_sm = full;
    c.kind = "one pass, row in registers, in chunks";
  }
  if (c.blocks_per_sm == 0) return std::nullopt;
  const double used = double(pr.n) / double(has_loops ? kt * cols : cdiv(pr.n, cols) * cols);
  const int64_t reads = std::max<int64_t>(p.row_reads, 1);
  c.in_flight = double(c.blocks_per_sm * threads * c.vectors * 16 * reads) * used;
  // The row fetched whole into shared memory (stash's prefetch, where the program allows it): a
  // block has its whole row in flight at once, before any reduction, and its other row tensors
  // tile by tile as before. Only for blocks of one row and 256 threads or more: the fetch is all
  // in flight at once, but the compute that follows is not, and a block of few threads, or of
  // several rows, takes a long compute phase over its fetched rows, which the bytes in flight do
  // not see (softmax at 4096 x 16384 over [2,256] tiles of 64 threads, 32 column tiles a row: 0.37
  // of a copy; 256-512 threads over one row: 0.98-1.03, bench/results/2026-11-28-rows-h200.md).
  // And two blocks a SM or more: a lone block's fetch and compute phases do not overlap. Where
  // the second loop reads two or more column vectors from global memory (layernorm's weight and
  // bias, from L2, every tile), five or more: each block then waits for them every tile with
  // nothing of its own in flight, which only many blocks hide (layernorm fetched whole on the
  // H200: 0.972 of a copy with 5 blocks a SM at 4096 x 16384 against 0.907 in registers, but
  // 0.860-0.870 with 2-3 at 2048 x 32768 against 0.897 tile by tile, 0.777 with 4 at 8191 x 8200
  // against 0.893 in registers; RMSNorm, with one vector, gained with 2-3: 0.981 against 0.871;
  // bench/results/2026-11-28-rows-h200.md). Other blocks hold the row in shared memory as their
  // first loop reads it, tile by tile.
  const int64_t fewest_blocks = p.second_loop_column_reads > 1 ? 5 : 2;
  const bool prefetch =
      stash && p.prefetch && c.rows == 1 && threads >= 256 && c.blocks_per_sm >= fewest_blocks;
  c.prefetch = prefetch;
  if (prefetch) c.kind = "one pass, row fetched whole into shared memory";
  if (prefetch)
    c.in_flight = double(c.blocks_per_sm) *
                  (double(c.shared_bytes) * double(pr.n) / double(c.stash_cols) +
                   double(threads * c.vectors * 16 * (reads - p.read_again)) * used);
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
  // A block that fetches its whole row first: as the last blocks drain, one row in flight is
  // enough for an SM's share of the bandwidth, which the draining SMs then get: no tail (the probe:
  // 3 blocks a SM of one 64 KiB row each at 2048 x 32768, 5.2 waves, 1.005-1.010 of a copy on the
  // H200, scripts/gpu/rows_prefetch_probe.cu).
  // So does a chunked block (all of its row's loads issued before its first reduction).
  // "A row of about 32 KiB": within a vector's bytes a thread of it, not a cliff at the exact
  // byte — a row of 16376 halves (32752 bytes) had charged the tail where 16384 did not, and
  // RMSNorm at 3000 x 16376 then ran 2 blocks of 512 a SM at 0.960-0.982 of a copy where the
  // chunked 4 blocks it had passed over measured 1.001-1.022
  // (bench/results/2026-11-29-rows-misaligned-h200.md, calls U and V).
  const double about_needed = kInFlightNeeded - 16.0 * double(threads);
  const bool drains_free =
      (prefetch &&
       double(c.shared_bytes) * double(pr.n) / double(c.stash_cols) >= about_needed) ||
      (c.chunked && double(threads * c.vectors * 16) * used >= about_needed);
  if (!drains_free) fraction *= waves / (waves + 0.5);
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
// near fit: the next power of two uses 90% or more of its lanes. For programs with loops over
// column tiles, whose reductions want the row in one tile, and for elementwise ones, where the
// lanes past N still issue every instruction of the tile: bias + GELU at N = 8200 is issue-bound
// on the H200, and [1,2048] tiles (5 to a row, 80% of the lanes used) measured 0.81-0.83 of a
// copy where whole tiles measured 0.91-1.00 (bench/results/2026-11-28-rows-h200.md); one
// tile of 352 threads x 3 vectors uses 97%. A pinned `tile_cols` is the only width tried,
// whatever it is.
std::vector<int64_t> tile_widths(const Problem& pr, int64_t threads, bool power_of_two,
                                 int64_t pinned_cols) {
  if (pinned_cols) return {pinned_cols};
  std::vector<int64_t> widths;
  if (power_of_two)
    for (int64_t cols = 256; cols <= 65536; cols *= 2) widths.push_back(cols);
  int64_t next_power = 256;
  while (next_power < pr.n) next_power *= 2;
  if (10 * pr.n >= 9 * next_power) return widths;
  const int64_t vec = 16 / pr.rows.elem_bytes;
  for (int64_t v = 1; v <= 4; ++v) {
    const int64_t cols = vec * threads * v;
    if (cols >= pr.n && cols < next_power &&
        std::find(widths.begin(), widths.end(), cols) == widths.end())
      widths.push_back(cols);
  }
  return widths;
}

// Cheapest first (in steps of 1%); then more than one block per SM (a lone block's barriers
// cost more than the model says: 0.71-0.85 measured at N = 16384), the one pass, fewer
// registers (less risk of spilling: the estimate is rough), blocks nearest 256 threads.
// Where the row's reductions cross warps, fewer threads come before fewer registers: every
// warp of a block waits at each reduction's barriers, and for the same bytes a block of
// fewer threads with more vectors each waits less (8191 x 8200, one pass, 3-4 blocks a SM:
// softmax 1.050 of a copy over 288 threads x 4 vectors, 1.026 over 352 x 3;
// bench/results/2026-11-27-rows-near-fit-h100.md).
void order_candidates(std::vector<Candidate>& all, const RowTraits& rows) {
  auto key = [&](const Candidate& c) {
    const bool barriers = rows.reduces_rows && c.along_row > 32;
    return std::make_tuple(std::floor(std::log(c.us) / std::log(1.01)), c.blocks_per_sm == 1,
                           !c.one_pass, barriers ? c.threads : 0, c.regs,
                           std::abs(std::log2(double(c.threads) / 256.0)), c.threads, c.cols);
  };
  std::stable_sort(all.begin(), all.end(),
                   [&](const Candidate& a, const Candidate& b) { return key(a) < key(b); });
}

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
bool needs_launch_bound(const Candidate& c) {
  // A chunked candidate's 32 registers are the launch bound's (without it ptxas takes what the
  // unchunked code wants, and the SM holds half the blocks: LayerNorm at 8191 x 8200 over 320
  // threads, 6 blocks counted, unbounded: 0.939-0.947 of a copy, call B of
  // bench/results/2026-11-29-rows-chunked-blocks-h200.md).
  if (c.chunked) return true;
  const int64_t cap = launch_bound_registers(c.threads, c.blocks_per_sm);
  return c.blocks_per_sm > 1 && c.blocks_per_sm <= 4 && (c.regs + 7) / 8 * 8 + 8 > cap;
}

}  // namespace tessel::transforms::rows
