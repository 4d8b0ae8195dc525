// ScheduleRows: the tile shape, block size and row residency of an unpinned row program (a
// kernel without an mma whose blocks own rows and walk their columns), chosen by a cost model.
//
// A row program is what a person writes for RMSNorm, LayerNorm, softmax or a bias + activation
// without thinking about threads: `block_grid cdiv(M, R)` (and, for elementwise kernels, a second
// grid dimension `cdiv(N, C)`), loops `for k in [0, cdiv(N, C))` over column tiles, global tiles
// [R, C] at (row block, column tile) and [C] at (column tile), register tensors of shapes [R, C],
// [R] and [C], and no register layout written by hand. R and C are the program's choice of
// granularity, not a promise about threads: any R and C compute the same result, because every
// tile is masked at the edges and rows never meet. So the pass may pick them again:
//
//   - the tile [R, C] and the block's threads T, so that every thread moves 16-byte vectors along
//     the row (synthesize-layouts' coalesced layout: C/8 threads along a row when that is fewer
//     than T, else T threads along one row with C/(8T) vectors each);
//   - where a later loop reads again the global tile an earlier loop read (the normalizing pass of
//     RMSNorm, LayerNorm, softmax), whether the row stays in registers: with C >= N the loops run
//     once, and the pass puts the kernel's pair of loops under `if cdiv(N, C) == 1`, where a
//     straight-line copy of both bodies reuses the first read's registers (one pass over HBM), and
//     keeps the loops as written in the else branch (any N stays correct); or whether the rows are
//     read twice, the second time from L2 when the rows the resident blocks hold at once fit it.
//
// Cost model (per candidate; constants from the H100): resident blocks per SM from threads and an
// estimate of registers per thread (calibrated with ptxas); bytes in flight per SM (16-byte
// vectors of every row tensor a thread loads at once, times the lanes that are not masked off);
// the achieved fraction of HBM bandwidth min(1, in flight / 32 KiB per SM; 64 KiB without loops);
// HBM bytes (a second read counts when the resident rows overflow half of L2) plus L2 bytes at 5x
// HBM bandwidth; the block-wide reductions' barriers (more reductions per tile cost more, more
// blocks per SM hide them); a row held in shared memory 3% more than in registers, and only where
// the row would otherwise be read twice, unless it is fetched whole (below). Tiles with 40% or
// more of their lanes masked off (one pass: 25%) are not candidates.
// The sizes it is tuned for are the `hint` of the kernel's `size` ops (`%N = size {name = N,
// hint = 8192}`; `tessel compile --size-hint N=8192` and CompileOptions::size_hints write them);
// without a hint, N = 8192 and M = 8192. `--report=search` prints the candidates and the choice.
//
// An elementwise program (a grid over rows and column tiles, no loops) counts a block of a mostly
// masked last column tile as a whole tile's time and wants 64 KiB in flight a SM; with tiles of
// one row its grid gets `raster_group = 1` unless one is pinned: a row's column tiles are handed
// out one after another, so the row streams in order and a 128-byte line that two neighbouring
// tiles share (rows not a multiple of 128 bytes long) is still in L2 for the second tile.
//
// `threads = T` on the block_grid keeps the candidates to T threads per block, `tile_cols = C`
// to tiles C columns wide (a user error when none fits). `hold_rows = registers | shared | none`
// keeps the rows read again in registers (one pass, as above), in shared memory, or nowhere (two
// passes). In shared memory: the first loop
// also writes each row tile it reads into a shared buffer [R, K C] (K column tiles of the hinted
// N; at most 226 KiB a block), a block_sync follows it, and the second loop reads the tiles from
// the buffer, under `if cdiv(N, C) <= K` with the loops as written in the else branch (the
// buffer is allocated either way: a launch past the hint keeps its occupancy cost). The model
// charges it 3% beside the same bytes in registers (its stores, loads and block_sync, measured);
// lit: schedule_rows_shared.tir, bit-identical to two passes in the interpreter. Fetched whole:
// where the facts give 16-byte aligned rows, the second loop reads at most one column vector and
// the block is one row of 256+ threads, two or more a SM, the buffer is filled before the first
// loop by every thread's 16-byte cp.async's (`copy_async ... {atom =
// "cp.async.cg.shared.global.b128"}`, `copy_async_wait {threads}`, block_sync) and both loops read
// it: the whole row in flight at once (the model counts it so, with no tail); such candidates
// race the row in registers unpinned too, except in programs with an accurate exp, log or tanh
// per element (issue-bound).
//
// Kernels that are not row programs (an mma, a pinned layout, shared tensors, tiles
// at other coordinates, register shapes other than [R,C], [R], [C]) are left as they are; with
// `--report=search` the report says why.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "ir/ir.h"

namespace tessel::transforms {

// Writes `hint = V` on the kernel's `size` ops named in `sizes` (the sizes a launch will use): the
// schedule is tuned for them, the kernel stays correct for any size.
void set_size_hints(ir::Operation& kernel, const std::map<std::string, int64_t>& sizes);
// A user error for a hinted name that no kernel of `module` has as a size (a misspelled hint
// would otherwise tune nothing, silently), and for a hint under 1. `origin` says where the hints
// came from ("--size-hint", "compile: size_hints").
void check_size_hints(const ir::Module& module, const std::map<std::string, int64_t>& hints,
                      const std::string& origin = "--size-hint");

// The pass (registered as `schedule-rows`; runs before synthesize-layouts).
void schedule_rows(ir::Module& module);

}  // namespace tessel::transforms
