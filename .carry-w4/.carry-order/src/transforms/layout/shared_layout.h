// Shared-memory layout synthesis (Hexcute §5.2, Appendix C): one layout per shared tile that gives
// every access contiguous aligned vectors, then the swizzle that minimizes bank conflicts.
//
// Each access to a shared tile is a thread-value layout f: (T,V) -> tile index, with each thread's
// values grouped into vectors of `vector_elems` (16 bytes for ldmatrix, the width of a vector
// ld/st, 1 for a scalar access). A shared layout m: tile index -> offset serves the access when
// m o f maps every vector to consecutive offsets starting at a multiple of its length (the
// alignment constraint). Unification builds m from one access's vector — the vector's elements
// first, the rest of the tile after them in row-major order, so that m^-1 = (vector, complement)
// — and checks that every other access is served too; when no access's choice serves all, the
// error names two accesses that cannot agree.
//
// The swizzle is then chosen by the bank model (target/cuda/banks.h): every Sw<B,M,S> that keeps
// each vector contiguous and stays inside the tile is tried, and the one with the fewest
// wavefronts over all accesses wins (ties: fewer swizzled bits). Tiles that TMA writes or wgmma
// reads get no search: the hardware fixes their layout to the canonical 32/64/128-byte swizzled
// layouts (HOPPER.md §2-3), built by canonical_tma_layout.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "layout/swizzle.h"
#include "layout/tv_layout.h"
#include "target/cuda/banks.h"

namespace tessel::transforms {

enum class AccessKind {
  threads,  // threads address the tile themselves (ld/st, cp.async, ldmatrix, stmatrix)
  tma,      // a TMA box copy writes or reads the whole tile
  wgmma,    // wgmma reads the tile through a matrix descriptor
};

// One access to a shared tile. For a threads access, `table[t + threads*v]` is the tile index
// (colexicographic) of value v of thread t: the access's TV layout evaluated (from_tv), or a
// table built directly when the access is no layout (ldmatrix's row addresses gathered from the
// lanes of a register fragment).
struct SharedAccess {
  std::string who;  // names the access in messages, e.g. "copy at gemm.tir:7:5 (ldmatrix.x4.b16)"
  AccessKind kind = AccessKind::threads;
  std::vector<int64_t> table;
  int64_t threads = 0, values = 0;
  int vector_elems = 1;   // contiguous elements per address
  int active_lanes = 32;  // lanes of each warp that give addresses (8 for ldmatrix.x1)

  static SharedAccess from_tv(std::string who, const layout::TVLayout& tv, int vector_elems,
                              int active_lanes = 32);
  static SharedAccess bulk(std::string who, AccessKind kind);
};

struct AccessReport {
  std::string who;
  target::cuda::BankCount banks;  // zero wavefronts for TMA and wgmma (no bank model: bulk)
};

struct SharedLayoutChoice {
  layout::ComposedLayout layout{layout::Swizzle(), 0, layout::Layout()};
  std::vector<AccessReport> accesses;
  std::string reason;  // why this layout (printable)
};

// The access of ldmatrix.x{count}[.trans] (or stmatrix, the same contract) that delivers a
// register fragment, when the fragment has its contract; `table[t + T*v]` is the tile index
// (colexicographic over rows x cols) of value v of thread t. ldmatrix moves 16-bit units: lane l
// of each warp receives units 2(l%4)+h (h = 0, 1) of row l/4 of matrix j (.trans: unit l/4 of
// rows 2(l%4)+h) as its units 2j+h of each chunk of 2*count units, and lanes 8j..8j+7 give the
// 16-byte row addresses of matrix j. A unit is one 16-bit element, or 16/elem_bits consecutive
// values of a thread for packed sub-byte elements (int4: four), which must lie in one unit of
// shared memory in value order. For 16-bit elements each row is 8 elements along dimension d,
// aligned to 8; a packed row is any 8*16/elem_bits elements (the shared layout puts them
// together), which is what lets an int4 tile reach the mma fragment with no shuffle (Hexcute
// §7.3). The access's vectors are the rows: vector_elems = 8 units, active_lanes = 8 * count.
std::optional<SharedAccess> match_ldmatrix(const std::vector<int64_t>& table, int64_t T, int64_t V,
                                           int64_t rows, int64_t cols, int count, bool trans, int d,
                                           int elem_bits = 16);

// The problem when `m` does not give the access contiguous aligned vectors, else "".
std::string check_alignment(const layout::ComposedLayout& m, const SharedAccess& access);
// The bank model over every warp-wide instruction of the access (threads accesses only).
target::cuda::BankCount count_conflicts(const layout::ComposedLayout& m, const SharedAccess& access,
                                        int elem_bits);
// The unswizzled layout (tile coordinate -> offset) that serves every access; row-major when no
// access needs vectors. UserError naming `tensor` and two accesses when none exists.
layout::Layout unify_alignment(const layout::IntTuple& tile_shape,
                               const std::vector<SharedAccess>& accesses,
                               const std::string& tensor);
// The canonical layout of a (rows, cols) tile whose cols are contiguous (the TMA box's inner
// dimension; K for a K-major wgmma operand, M or N for an MN-major one): atoms of 8 rows x S
// bytes (S = 128, 64 or 32, the largest that divides the row), stacked along the rows (1024 /
// 512 / 256 bytes apart: SBO), then along the columns (LBO), with Sw<log2(S/16), log2(16 bytes /
// element), 3>. Rows of fewer than 32 bytes get the unswizzled core-matrix layout (8 rows x 16
// bytes). UserError when rows is not a multiple of 8 or a row is not a multiple of 16 bytes.
layout::ComposedLayout canonical_tma_layout(int64_t rows, int64_t cols, int elem_bits);
// The best swizzle of `base` for the accesses (see above).
SharedLayoutChoice choose_swizzle(const layout::Layout& base,
                                  const std::vector<SharedAccess>& accesses, int elem_bits);
// The whole synthesis for one shared tile.
SharedLayoutChoice synthesize_shared_layout(const layout::IntTuple& tile_shape, int elem_bits,
                                            const std::vector<SharedAccess>& accesses,
                                            const std::string& tensor);

}  // namespace tessel::transforms
