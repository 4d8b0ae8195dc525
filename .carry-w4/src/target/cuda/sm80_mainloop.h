// The sm_80 mainloop's planner (class Sm80Mainloop) and the table helpers its files share.
//
// A loop whose body copies global tiles into shared memory and multiplies them with mma is
// emitted as a ring of S shared slots per copy. The prologue issues the copies of the first S-1
// iterations, one cp.async commit group each; iteration k waits until at most S-2 groups are
// pending (so the group of iteration k has landed), synchronizes the block (other threads'
// copies become visible, and every thread is done reading slot (k-1)%S), issues the copies of
// iteration k+S-1 into that freed slot, commits (always, so that the group count stays right
// when nothing is issued near the end), and computes from slot k%S. With S = 1 the copies, a
// wait and a barrier precede the compute and a barrier follows it.
//
// Everything thread-dependent about addresses inside a tile is the same in every iteration, so
// it is found at emission time by brute force over the block's threads and emitted once before
// the loop as `const int` offsets: which elements each thread copies, where a swizzled shared
// layout puts them, which row addresses each lane gives ldmatrix. The mma atom's registers are
// matched to the accumulator's and the fragments' value indices the same way: for every atom
// instance and register, the value index whose element is that register's element in every
// thread, or the loop is refused by name.
//
// emit_cp_async_mma.cpp holds the pipeline driver (run, emit_compute) and the helpers below;
// emit_sm80_copy.cpp the global -> shared copies (plan_load, emit_loads); emit_sm80_mma.cpp the
// fragment loads and mma.sync (plan_operand, plan_mma, emit_fragment_chunk, fragment_reg,
// emit_mma).
#pragma once

#include <array>
#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "layout/swizzle.h"
#include "layout/table.h"
#include "layout/tv_layout.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

// layout_table (src/layout/table.h): a layout evaluated on integers, every index of its domain.
using layout::layout_table;

// A thread-value layout over a 2-D tile as tables: index(t, v) = thr[t] + val[v] (the tile's
// colexicographic index), and the inverse of the value part.
struct TvTable {
  int64_t threads = 0, values = 0;
  int64_t rows = 0, cols = 0;
  std::vector<int64_t> thr, val;
  std::map<int64_t, int64_t> value_at;  // val[v] -> v (the first such v)

  int64_t index(int64_t t, int64_t v) const { return thr[t] + val[v]; }
  // The value of thread t whose element has tile index `i`, or -1.
  int64_t find(int64_t t, int64_t i) const {
    auto it = value_at.find(i - thr[t]);
    return it == value_at.end() ? -1 : it->second;
  }
};

TvTable tv_table(const layout::TVLayout& tv, int64_t rows, int64_t cols);
TvTable tv_table(const std::string& text, int64_t rows, int64_t cols);

std::string num(int64_t x);

// The C expression of f(tid) for tid in [0, f.size()) when f is affine in the bits of tid
// (f(t) = f(0) + sum over set bits b of (f(2^b) - f(0))), with runs of bits whose steps double
// merged: `(tid >> 5) * 512 + (tid & 7) * 64 + 8`. nullopt otherwise.
std::optional<std::string> bits_expr(const std::vector<int64_t>& f);

bool is_scalar_op(const Operation& op);

// The pieces of one pipelined loop, planned before anything is emitted.
class Sm80Mainloop {
 public:
  Sm80Mainloop(Emitter& e, const Operation& loop) : e_(e), loop_(loop) {}

  void run();

 private:
  // One global -> shared copy: its ring of slots and each thread's share of the tile.
  struct Load {
    const Operation* op = nullptr;
    std::string name;  // C name of the read slot's pointer (the copy result's name)
    std::string ring;  // C name of the ring's first byte
    ScalarKind element = ScalarKind::f16;
    int64_t rows = 0, cols = 0, elem_bytes = 2, slot_bytes = 0;
    int64_t async_bytes = 0;  // cp.async of 16, 8 or 4 bytes; 0: ld.global + st.shared per element
    int64_t vec = 1;          // elements per thread access
    // Per pass i of the thread's accesses: the tile coordinate (C expressions) and the shared
    // byte offset's C variable; `partial` when not every thread has pass i.
    std::vector<std::string> row, col, dst;
    std::vector<bool> partial;
    SharedMap map;
  };
  // An operand of one mma: its shared tile view and how each thread gets its fragment.
  struct Operand {
    const SharedTile* tile = nullptr;
    TvTable frag;      // over [rows, K] (A) or [N, K] (B)
    bool b = false;    // B: fragment (n, k) is element (k, n) of the [K, N] view
    SharedMap map;     // the view's layout
    std::string regs;  // C name of the `unsigned` fragment array (values 2j, 2j+1 in [j])
    int ld_count = 0;  // ldmatrix .x1/.x2/.x4, or 0: per-element loads
    bool ld_trans = false;
    std::vector<std::string> ld_offset;  // per chunk of 2*ld_count values: the lane's row offset
    std::vector<bool> loaded;            // per chunk (or value, for per-element loads)
    int64_t view_index(int64_t frag_index) const {
      int64_t r = frag_index % frag.rows, c = frag_index / frag.rows;  // (m|n, k)
      if (!b) return frag_index;                                       // [M,K] view, same index
      return c + frag.cols * r;                                        // [K,N] view: (k, n)
    }
  };
  struct MmaPlan {
    const Operation* op = nullptr;
    bool bf16 = false;
    Operand a, b;
    std::string acc;                 // C name of the accumulator array (updated in place)
    const Value* acc_src = nullptr;  // when not in place: the accumulator copied into `acc` first
    int64_t acc_values = 0;          // the accumulator's values per thread
    // Per instance: the accumulator's value indices of d0..d3 and, per k block, the fragment
    // value indices of a's halves 0..7 and b's halves 0..3.
    struct Instance {
      int64_t c[4];
      std::vector<std::array<int64_t, 8>> a;
      std::vector<std::array<int64_t, 4>> b;
    };
    std::vector<Instance> instances;
    int64_t k_blocks = 0;
  };

  [[noreturn]] void refuse(const Operation& op, const std::string& why) { e_.unsupported(op, why); }
  std::string thread_function(const Operation& op, const std::vector<int64_t>& pre,
                              const SharedMap& map, const std::string& what);
  // A byte offset per thread (`pre`: pre-swizzle element offsets through `map`), as a `const
  // int` declared before the loop, or as an earlier one plus a constant when they differ by one
  // in every thread (fewer live registers).
  std::string offset_var(const Operation& op, const std::vector<int64_t>& pre, const SharedMap& map,
                         int64_t elem_bytes, const std::string& hint, const std::string& what);
  void plan_load(const Operation& op);
  void plan_operand(MmaPlan& m, Operand& o, int index);
  void plan_mma(const Operation& op);
  void emit_loads(const std::string& iter, const std::string& slot);
  void emit_fragment_chunk(Operand& o, int64_t chunk);
  std::string fragment_reg(Operand& o, int64_t v0, int64_t v1);
  void emit_mma(MmaPlan& m);
  void emit_compute(const std::string& slot);

  Emitter& e_;
  const Operation& loop_;
  int64_t stages_ = 1;
  bool any_async_ = false;
  std::vector<Load> loads_;
  std::vector<MmaPlan> mmas_;
  std::vector<std::string> before_;  // lines emitted before the loop (per-thread offsets)
  std::vector<std::pair<std::string, std::vector<int64_t>>> offsets_;  // declared: name, bytes
};

}  // namespace tessel::target::cuda::detail
