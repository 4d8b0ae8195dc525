// The cost model of schedule-rows (schedule_rows.h): for a row program's traits and the sizes it
// is scheduled for, the time of each candidate schedule (threads, tile width, where the row read
// again is held) on the H100, which tile widths to try, how to order candidates the model rates
// alike, and when the launch bound must carry the blocks per SM the model counted on. The
// constants and the measurements behind them are in the .cpp.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tessel::transforms::rows {

// What the model needs to know of a row program (schedule_rows.cpp recognizes it).
struct RowTraits {
  int64_t elem_bytes = 2;                 // bytes of a row element
  int64_t row_reads = 0, row_writes = 0;  // row tensors read, written
  bool has_loops = false;                 // loops over column tiles (else every block is one tile)
  bool has_pair = false;                  // a later loop reads again what an earlier one read
  int64_t read_again = 0;                 // row tensors the later loop reads again
  bool reduces_rows = false;              // reduce ops along rows
  int64_t row_reductions = 0;             // reduce ops of the loop that has the most
  int64_t second_loop_column_reads = 0;   // [C] column vectors the later loop reads (weights)
  int64_t transcendentals = 0;            // exp, exp2, log, tanh, sigmoid ops on row tiles
  bool issue_bound = false;  // an accurate exp, log or tanh per element (many instructions)
  bool prefetch = false;  // rows held in shared memory are fetched whole by cp.async first
};

struct Problem {
  int64_t m, n;  // the sizes scheduled for (hints)
  RowTraits rows;
};

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
  bool chunked = false;  // ... at a full SM's threads, 32 registers, its runs emitted in chunks
  bool stash = false;                        // the row in shared memory
  bool prefetch = false;                     // ... fetched whole by cp.async before the loops
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

// The candidate with `threads` threads, tiles `cols` wide and the row held by `hold`, or nullopt
// where it does not fit (registers, shared memory, vectors a thread, masked lanes).
// `chunked`: the row in registers at a full SM's threads, the emitter's chunked runs (nullopt
// where that form does not fit the program).
std::optional<Candidate> evaluate(const Problem& pr, int64_t threads, int64_t cols, Hold hold,
                                  bool chunked = false);

// The tile widths tried with `threads` threads (see the .cpp).
std::vector<int64_t> tile_widths(const Problem& pr, int64_t threads, bool power_of_two,
                                 int64_t pinned_cols);

// Sorts `all` best first.
void order_candidates(std::vector<Candidate>& all, const RowTraits& rows);

// Whether the grid must carry the candidate's blocks per SM as the launch bound's minimum.
bool needs_launch_bound(const Candidate& c);

}  // namespace tessel::transforms::rows
