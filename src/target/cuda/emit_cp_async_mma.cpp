// The sm_80 mainloop: cp.async (or plain) global -> shared copies, S stages ahead of ldmatrix and
// mma.sync.
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
#include <array>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <numeric>

#include "layout/parse.h"
#include "layout/swizzle.h"
#include "layout/table.h"
#include "layout/tv_layout.h"
#include "target/cuda/atoms.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {
namespace {

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

TvTable tv_table(const layout::TVLayout& tv, int64_t rows, int64_t cols) {
  TvTable out;
  out.threads = tv.num_threads();
  out.values = tv.num_values();
  out.rows = rows;
  out.cols = cols;
  out.thr = layout_table(tv.thread_layout());
  out.val = layout_table(tv.value_layout());
  for (int64_t v = 0; v < out.values; ++v) out.value_at.emplace(out.val[v], v);
  return out;
}

TvTable tv_table(const std::string& text, int64_t rows, int64_t cols) {
  return tv_table(
      layout::TVLayout(layout::parse_layout(text), layout::IntTuple::tuple({rows, cols})), rows,
      cols);
}

// A shared tile's layout text ("Sw<B,M,S> o off o L" or "L"): index (colexicographic over the
// tile) -> element offset, before and after the swizzle.
struct SharedMap {
  layout::Swizzle swizzle;
  int64_t offset = 0;
  std::vector<int64_t> base;  // L at every tile index
  int64_t pre(int64_t index) const { return offset + base[index]; }
  int64_t at(int64_t index) const { return swizzle(pre(index)); }
};

SharedMap shared_map(const std::string& text) {
  SharedMap m;
  size_t o = text.rfind(" o ");
  m.base = layout_table(layout::parse_layout(o == std::string::npos ? text : text.substr(o + 3)));
  if (o != std::string::npos) {
    int b = 0, mm = 0, sh = 0;
    long long off = 0;
    if (std::sscanf(text.c_str(), "Sw<%d,%d,%d> o %lld", &b, &mm, &sh, &off) != 4) {
      TESSEL_ASSERT(false, "unreadable shared layout ", text);
    }
    m.swizzle = layout::Swizzle(b, mm, sh);
    m.offset = off;
  }
  return m;
}

std::string num(int64_t x) {
  return std::to_string(x);
}

// The C expression of f(tid) for tid in [0, f.size()) when f is affine in the bits of tid
// (f(t) = f(0) + sum over set bits b of (f(2^b) - f(0))), with runs of bits whose steps double
// merged: `(tid >> 5) * 512 + (tid & 7) * 64 + 8`. nullopt otherwise.
std::optional<std::string> bits_expr(const std::vector<int64_t>& f) {
  int64_t n = static_cast<int64_t>(f.size());
  if (n == 0 || (n & (n - 1)) != 0) return std::nullopt;
  int nb = 0;
  while ((int64_t(1) << nb) < n) ++nb;
  std::vector<int64_t> d(nb);
  for (int b = 0; b < nb; ++b) d[b] = f[int64_t(1) << b] - f[0];
  for (int64_t t = 0; t < n; ++t) {
    int64_t x = f[0];
    for (int b = 0; b < nb; ++b) {
      if ((t >> b) & 1) x += d[b];
    }
    if (x != f[t]) return std::nullopt;
  }
  std::string e;
  for (int b = 0; b < nb;) {
    if (d[b] == 0) {
      ++b;
      continue;
    }
    int k = 1;
    while (b + k < nb && d[b + k] == d[b] * (int64_t(1) << k)) ++k;
    std::string bits = b == 0 ? "tid" : "(tid >> " + num(b) + ")";
    if (b + k < nb) bits = "(" + bits + " & " + num((int64_t(1) << k) - 1) + ")";
    std::string term = d[b] == 1 ? bits : bits + " * " + num(d[b]);
    e += (e.empty() ? "" : " + ") + term;
    b += k;
  }
  if (f[0] != 0 || e.empty()) e += (e.empty() ? "" : " + ") + num(f[0]);
  return e;
}

bool is_scalar_op(const Operation& op) {
  if (op.num_results() != 1 || !op.result()->type().is_scalar()) return false;
  return op.kind() == OpKind::constant || op.kind() == OpKind::size ||
         ir::is_elementwise(op.kind()) || op.kind() == OpKind::cdiv || op.kind() == OpKind::div;
}

}  // namespace

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

// `pre` is a pre-swizzle element offset per thread; the C expression of its swizzled value in
// bytes, as a `const int` declared before the loop.
std::string Sm80Mainloop::thread_function(const Operation& op, const std::vector<int64_t>& pre,
                                          const SharedMap& map, const std::string& what) {
  std::optional<std::string> e = bits_expr(pre);
  if (!e) {
    refuse(op, "needs " + what +
                   " that is not affine in the bits of the thread index; the sm_80 path cannot "
                   "address it");
  }
  std::string x = *e;
  if (!map.swizzle.is_identity()) {
    x = "tessel::device::swizzle_offset<" + num(map.swizzle.bits) + ", " + num(map.swizzle.base) +
        ", " + num(map.swizzle.shift) + ">(" + x + ")";
  }
  return x;
}

std::string Sm80Mainloop::offset_var(const Operation& op, const std::vector<int64_t>& pre,
                                     const SharedMap& map, int64_t elem_bytes,
                                     const std::string& hint, const std::string& what) {
  std::vector<int64_t> bytes(pre.size());
  for (size_t t = 0; t < pre.size(); ++t) bytes[t] = map.swizzle(pre[t]) * elem_bytes;
  for (const auto& [name, other] : offsets_) {
    int64_t d = bytes[0] - other[0];
    bool same = true;
    for (size_t t = 0; t < pre.size() && same; ++t) same = bytes[t] - other[t] == d;
    if (same) return d == 0 ? name : "(" + name + (d > 0 ? " + " : " - ") + num(std::abs(d)) + ")";
  }
  std::string name = e_.fresh(hint);
  before_.push_back("const int " + name + " = " + thread_function(op, pre, map, what) + " * " +
                    num(elem_bytes) + ";");
  offsets_.emplace_back(name, bytes);
  return name;
}

void Sm80Mainloop::plan_load(const Operation& op) {
  const Value* g = op.operand(0);
  const Type& st = op.result()->type();
  if (g->type().space() != MemorySpace::global || g->type().rank() != 2 || st.rank() != 2 ||
      !is_static(st.shape())) {
    refuse(op, "on the sm_80 path copies rank-2 global tiles of static shape into shared memory");
  }
  if (!st.has_layout())
    refuse(op, "makes a shared tile with no layout; run synthesize-shared-layouts");
  if (st.element() != ScalarKind::f16 && st.element() != ScalarKind::bf16 &&
      st.element() != ScalarKind::f32) {
    refuse(op, "copies " + st.str() + "; the sm_80 path copies f16, bf16 and f32 tiles");
  }
  Load l;
  l.op = &op;
  l.element = st.element();
  l.rows = st.static_shape()[0];
  l.cols = st.static_shape()[1];
  l.elem_bytes = st.element() == ScalarKind::f32 ? 4 : 2;
  l.map = shared_map(st.layout());
  int64_t cosize = 0;
  for (int64_t i = 0; i < l.rows * l.cols; ++i) cosize = std::max(cosize, l.map.at(i) + 1);
  l.slot_bytes = (cosize * l.elem_bytes + 127) / 128 * 128;
  l.name = e_.fresh(op.result()->name());
  l.ring = e_.fresh(op.result()->name() + "_ring");
  // cp.async of the width synthesis chose (16 bytes: .cg; 8 or 4: .ca) when the shared layout
  // keeps every aligned run of that many bytes along a row contiguous and aligned (the global
  // side: see emit_loads).
  std::string atom = op.has_attr("atom") ? op.str_attr("atom") : "";
  if (atom.rfind("cp.async.", 0) == 0) {
    size_t b = atom.rfind(".b");
    int64_t bits = b == std::string::npos ? 0 : std::atoll(atom.c_str() + b + 2);
    l.async_bytes = bits == 128 || bits == 64 || bits == 32 ? bits / 8 : 0;
  }
  l.vec = std::max<int64_t>(1, l.async_bytes / l.elem_bytes);
  bool ok = l.async_bytes >= l.elem_bytes && l.cols % l.vec == 0;
  for (int64_t r = 0; r < l.rows && ok; ++r) {
    for (int64_t c = 0; c < l.cols && ok; c += l.vec) {
      int64_t first = l.map.at(r + l.rows * c);
      ok = first % l.vec == 0;
      for (int64_t u = 1; u < l.vec && ok; ++u) ok = l.map.at(r + l.rows * (c + u)) == first + u;
    }
  }
  if (!ok) l.async_bytes = 0;
  if (l.async_bytes == 0) l.vec = 1;
  any_async_ = any_async_ || l.async_bytes > 0;
  // Coalesced: access c (vec elements) of the tile is row c / per_row, column (c % per_row) *
  // vec; thread tid takes accesses tid, tid + T, ...
  int64_t T = e_.threads_, per_row = l.cols / l.vec, accesses = l.rows * per_row;
  int64_t passes = (accesses + T - 1) / T;
  for (int64_t i = 0; i < passes; ++i) {
    std::string c = i == 0 ? "tid" : "(tid + " + num(i * T) + ")";
    std::string n = l.name + "_" + num(i);
    std::string rv = e_.fresh(n + "_r"), cv = e_.fresh(n + "_c");
    before_.push_back("const int " + rv + " = " + c + " / " + num(per_row) + ";");
    before_.push_back("const int " + cv + " = " + c + " % " + num(per_row) +
                      (l.vec == 1 ? "" : " * " + num(l.vec)) + ";");
    std::vector<int64_t> pre(T);
    for (int64_t t = 0; t < T; ++t) {
      int64_t a = std::min(t + i * T, accesses - 1);  // threads past the end: any valid address
      pre[t] = l.map.pre(a / per_row + l.rows * ((a % per_row) * l.vec));
    }
    std::string dv =
        offset_var(op, pre, l.map, l.elem_bytes, n + "_st", "the copy's shared addresses");
    l.row.push_back(rv);
    l.col.push_back(cv);
    l.dst.push_back(dv);
    l.partial.push_back((i + 1) * T > accesses);
  }
  int64_t offset = e_.alloc_shared(l.slot_bytes * stages_, 128);
  e_.line("unsigned char* const " + l.ring + " = tsl_smem + " + num(offset) + ";  // " +
          num(stages_) + " x " + num(l.slot_bytes) + " bytes: " + st.str());
  SharedTile s;
  s.base = l.name;
  s.element = l.element;
  s.shape = st.static_shape();
  s.layout = st.layout();
  s.source = op.result();
  s.bytes = l.slot_bytes;
  e_.shared_[op.result()] = s;
  loads_.push_back(l);
}

void Sm80Mainloop::plan_operand(MmaPlan& m, Operand& o, int index) {
  const Operation& op = *m.op;
  const Value* v = op.operand(index);
  auto it = e_.shared_.find(v);
  if (it == e_.shared_.end() || v->type().space() != MemorySpace::shared) {
    refuse(op, std::string("on the sm_80 path reads ") + (index == 0 ? "a" : "b") +
                   " from a shared tile copied in this loop (or a transpose of one), not %" +
                   v->name());
  }
  o.tile = &it->second;
  o.b = index == 1;
  const char* frag_attr = index == 0 ? "a_fragment" : "b_fragment";
  if (!op.has_attr(frag_attr))
    refuse(op, std::string("has no ") + frag_attr + "; run layout synthesis");
  std::vector<int64_t> shape = v->type().static_shape();  // [M,K] or [K,N]
  int64_t rows = index == 0 ? shape[0] : shape[1], k = index == 0 ? shape[1] : shape[0];
  o.frag = tv_table(op.str_attr(frag_attr), rows, k);
  if (o.frag.threads != e_.threads_) {
    refuse(op, std::string("has a ") + frag_attr + " over " + num(o.frag.threads) +
                   " threads but the block has " + num(e_.threads_));
  }
  if (o.frag.values % 2 != 0) refuse(op, std::string("has an odd ") + frag_attr);
  o.map = shared_map(v->type().layout());
  o.regs = e_.fresh(op.result()->name() + (index == 0 ? "_fa" : "_fb"));
  // ldmatrix when synthesis chose it: every chunk of 2*count values must be what ldmatrix
  // delivers from the row addresses its lanes give (checked for every thread).
  std::string load = op.has_attr(index == 0 ? "a_load" : "b_load")
                         ? op.str_attr(index == 0 ? "a_load" : "b_load")
                         : "";
  int count = 0;
  bool trans = false;
  if (load.rfind("ldmatrix.x", 0) == 0) {
    count = load[10] - '0';
    trans = load.find(".trans") != std::string::npos;
    if ((count != 1 && count != 2 && count != 4) || o.frag.values % (2 * count) != 0 ||
        e_.threads_ % 32 != 0 || ir::bit_width(v->type().element()) != 16) {
      count = 0;
    }
  }
  int64_t T = e_.threads_;
  auto offset = [&](int64_t t, int64_t val) {  // swizzled element offset of a fragment value
    return o.map.at(o.view_index(o.frag.index(t, val)));
  };
  if (count > 0) {
    int64_t chunks = o.frag.values / (2 * count);
    for (int64_t ch = 0; ch < chunks; ++ch) {
      int64_t v0 = ch * 2 * count;
      std::vector<int64_t> pre(T);
      for (int64_t t = 0; t < T; ++t) {
        int64_t w = t / 32, lane = t % 32, j = (lane / 8) % count, r = lane % 8;
        int64_t src = trans ? 32 * w + r / 2 : 32 * w + 4 * r;
        int64_t sv = trans ? v0 + 2 * j + r % 2 : v0 + 2 * j;
        pre[t] = o.map.pre(o.view_index(o.frag.index(src, sv)));
      }
      // Verify the contract (HOPPER.md §7) against the fragment.
      for (int64_t t = 0; t < T; ++t) {
        int64_t w = t / 32, lane = t % 32;
        for (int64_t j = 0; j < count; ++j) {
          for (int64_t h = 0; h < 2; ++h) {
            int64_t supplier =
                trans ? 32 * w + 8 * j + 2 * (lane % 4) + h : 32 * w + 8 * j + lane / 4;
            int64_t row_addr = o.map.swizzle(pre[supplier]);
            int64_t want = trans ? row_addr + lane / 4 : row_addr + 2 * (lane % 4) + h;
            int64_t unit = 16 / 2;  // elements per 16-byte row
            if (row_addr % unit != 0 || offset(t, v0 + 2 * j + h) != want) {
              refuse(op, std::string("operand ") + (index == 0 ? "a" : "b") + ": " + load +
                             " does not deliver the fragment " + op.str_attr(frag_attr) +
                             " from the shared layout " + v->type().layout());
            }
          }
        }
      }
      o.ld_offset.push_back(
          offset_var(op, pre, o.map, 2, o.regs + "_ld" + num(ch), "ldmatrix row addresses"));
    }
    o.ld_count = count;
    o.ld_trans = trans;
    o.loaded.assign(chunks, false);
  } else {
    o.loaded.assign(o.frag.values, false);
    // Per-element loads: each value's offset is computed where it is loaded (checked now).
    for (int64_t val = 0; val < o.frag.values; ++val) {
      std::vector<int64_t> pre(T);
      for (int64_t t = 0; t < T; ++t) pre[t] = o.map.pre(o.view_index(o.frag.index(t, val)));
      o.ld_offset.push_back(thread_function(op, pre, o.map, "per-element operand addresses"));
    }
  }
}

void Sm80Mainloop::plan_mma(const Operation& op) {
  std::string atom_name = op.has_attr("atom") ? op.str_attr("atom") : "";
  MmaPlan m;
  m.op = &op;
  if (atom_name == "mma.sync.m16n8k16.f32.f16") {
    m.bf16 = false;
  } else if (atom_name == "mma.sync.m16n8k16.f32.bf16") {
    m.bf16 = true;
  } else {
    refuse(op,
           "has atom \"" + atom_name + "\"; the sm_80 path emits mma.sync.m16n8k16.f32.{f16,bf16}");
  }
  Atom atom = mma_sync_m16n8k16(m.bf16 ? ScalarKind::bf16 : ScalarKind::f16);
  const Type& ct = op.operand(2)->type();
  if (ct.element() != ScalarKind::f32 || op.result()->type().element() != ScalarKind::f32) {
    refuse(op, "accumulates in " + ct.str() + "; mma.sync here accumulates f32");
  }
  const Plan& cp = *e_.plan_for(op, ct);
  m.acc_values = cp.values;
  plan_operand(m, m.a, 0);
  plan_operand(m, m.b, 1);
  int64_t K = op.operand(0)->type().static_shape()[1];
  if (K % 16 != 0) refuse(op, "has K = " + num(K) + "; mma.sync m16n8k16 needs a multiple of 16");
  m.k_blocks = K / 16;
  int64_t T = e_.threads_;
  TvTable ac = tv_table(*atom.a, 16, 16), bc = tv_table(*atom.b, 8, 16),
          cc = tv_table(*atom.c, 16, 8);
  // Accumulator instances: value v0 is d0 of a new instance whose block origin in thread t is
  // coord(t, v0) - (row, col) of d0; d1..d3 are the values at the atom's other elements.
  std::map<std::vector<int64_t>, int64_t> acc_value;  // value coordinate -> v
  for (int64_t v = 0; v < cp.values; ++v) acc_value.emplace(cp.value_coord[v], v);
  std::vector<bool> used(cp.values, false);
  auto where = [&](const std::string& what) {
    refuse(op, "cannot map mma.sync's " + what + " onto the layouts synthesis gave (accumulator " +
                   cp.text + "); the atom's registers are not the same values in every thread");
  };
  for (int64_t v0 = 0; v0 < cp.values; ++v0) {
    if (used[v0]) continue;
    MmaPlan::Instance inst{};
    std::vector<int64_t> orow(T), ocol(T);
    for (int64_t t = 0; t < T; ++t) {
      int64_t lane = t % 32, i0 = cc.index(lane, 0);
      std::vector<int64_t> c = cp.coord(t, v0);
      orow[t] = c[0] - i0 % 16;
      ocol[t] = c[1] - i0 / 16;
      if (t % 32 != 0 && (orow[t] != orow[t - 1] || ocol[t] != ocol[t - 1])) {
        where("accumulator (lanes of a warp disagree on the 16x8 block)");
      }
    }
    for (int i = 0; i < 4; ++i) {
      int64_t found = -1;
      for (int64_t t = 0; t < T; ++t) {
        int64_t lane = t % 32, idx = cc.index(lane, i);
        std::vector<int64_t> tp = cp.thread_part(t);
        std::vector<int64_t> want = {orow[t] + idx % 16 - tp[0], ocol[t] + idx / 16 - tp[1]};
        auto it = acc_value.find(want);
        int64_t v = it == acc_value.end() ? -1 : it->second;
        if (v < 0 || (found >= 0 && v != found)) where("accumulator register d" + num(i));
        found = v;
      }
      if (used[found]) where("accumulator register d" + num(i) + " (used twice)");
      used[found] = true;
      inst.c[i] = found;
    }
    for (int64_t kb = 0; kb < m.k_blocks; ++kb) {
      std::array<int64_t, 8> av{};
      for (int h = 0; h < 8; ++h) {
        int64_t found = -1;
        for (int64_t t = 0; t < T; ++t) {
          int64_t idx = ac.index(t % 32, h);
          int64_t r = orow[t] + idx % 16, k = kb * 16 + idx / 16;
          int64_t v = m.a.frag.find(t, r + m.a.frag.rows * k);
          if (v < 0 || (found >= 0 && v != found)) where("A half " + num(h) + " (a_fragment)");
          found = v;
        }
        av[h] = found;
      }
      std::array<int64_t, 4> bv{};
      for (int h = 0; h < 4; ++h) {
        int64_t found = -1;
        for (int64_t t = 0; t < T; ++t) {
          int64_t idx = bc.index(t % 32, h);
          int64_t n = ocol[t] + idx % 8, k = kb * 16 + idx / 8;
          int64_t v = m.b.frag.find(t, n + m.b.frag.rows * k);
          if (v < 0 || (found >= 0 && v != found)) where("B half " + num(h) + " (b_fragment)");
          found = v;
        }
        bv[h] = found;
      }
      inst.a.push_back(av);
      inst.b.push_back(bv);
    }
    m.instances.push_back(inst);
  }
  mmas_.push_back(std::move(m));
}

void Sm80Mainloop::emit_loads(const std::string& iter, const std::string& slot) {
  const ir::Block& body = *loop_.region(0);
  e_.scalars_[body.argument(0)] = iter;
  for (const auto& inner : body.ops()) {
    if (inner->kind() == OpKind::tile || is_scalar_op(*inner)) e_.emit(*inner);
  }
  for (const Load& l : loads_) {
    const View& g = e_.view(*l.op, l.op->operand(0));
    if (g.stride[1] != "1") refuse(*l.op, "copies from a tensor whose last dimension is strided");
    bool masked = g.masked && !(g.full[0] && g.full[1]);
    if (l.async_bytes && masked && g.pad != 0) {
      refuse(*l.op, "pads with " + float_literal(g.pad) +
                        "; cp.async fills out-of-bounds elements with zeros only (pad = 0.0)");
    }
    if (l.async_bytes) {
      // Each run is wholly in or out of bounds and aligned in global memory: the row length and
      // the tile's column origin are multiples of the run.
      int64_t div = g.extent_divisor[1], oa = g.origin_align[1];
      if (div % l.vec != 0 || (oa != 0 && oa % l.vec != 0)) {
        refuse(*l.op, "has atom " + l.op->str_attr("atom") + " but the facts do not prove " +
                          num(l.async_bytes) + "-byte aligned rows of " + g.base);
      }
    }
    std::string dst_slot = l.ring + " + " + slot + " * " + num(l.slot_bytes);
    e_.line("{  // " + l.name + "[" + slot + "] <- " + g.base + " tile (" +
            (l.async_bytes ? "cp.async " + num(l.async_bytes) + " B" : "ld.global + st.shared") +
            ")");
    ++e_.indent_;
    e_.line("unsigned char* const dst = " + dst_slot + ";");
    std::string o0 = g.origin[0], o1 = g.origin[1];
    std::string bf = l.element == ScalarKind::bf16 ? "true" : "false";
    for (size_t i = 0; i < l.row.size(); ++i) {
      std::string r = o0 == "0" ? l.row[i] : o0 + " + " + l.row[i];
      std::string c = o1 == "0" ? l.col[i] : o1 + " + " + l.col[i];
      std::string pred;
      if (masked && !g.full[0]) pred = r + " < " + g.extent[0];
      if (masked && !g.full[1]) pred += (pred.empty() ? "" : " && ") + c + " < " + g.extent[1];
      std::string src = g.base + " + (long long)(" + r + ") * " + g.stride[0] + " + " + c;
      std::string guard = l.partial[i] ? "if (tid + " + num(i * e_.threads_) + " < " +
                                             num(l.rows * l.cols / l.vec) + ") "
                                       : "";
      std::string stmt;
      if (l.async_bytes) {
        std::string n = num(l.async_bytes);
        std::string fn = l.async_bytes == 16 ? "tessel::device::cp_async_cg16"
                                             : "tessel::device::cp_async_ca<" + n + ">";
        std::string zfill = l.async_bytes == 16 ? "tessel::device::cp_async_cg16_zfill"
                                                : "tessel::device::cp_async_ca_zfill<" + n + ">";
        if (pred.empty()) {
          stmt = fn + "(dst + " + l.dst[i] + ", " + src + ");";
        } else {
          stmt = "{ const bool ok = " + pred + "; " + zfill + "(dst + " + l.dst[i] + ", ok ? " +
                 src + " : " + g.base + ", ok ? " + n + " : 0); }";
        }
      } else {
        std::string type = l.elem_bytes == 4 ? "float" : "unsigned short";
        std::string pad = l.elem_bytes == 4 ? float_literal(g.pad)
                                            : "tsl_cvt16(" + float_literal(g.pad) + ", " + bf + ")";
        std::string value =
            pred.empty() ? "*(" + src + ")" : "(" + pred + ") ? *(" + src + ") : " + pad;
        stmt = "*reinterpret_cast<" + type + "*>(dst + " + l.dst[i] + ") = " + value + ";";
      }
      e_.line(guard + stmt);
    }
    --e_.indent_;
    e_.line("}");
  }
}

void Sm80Mainloop::emit_fragment_chunk(Operand& o, int64_t chunk) {
  if (o.loaded[chunk]) return;
  o.loaded[chunk] = true;
  std::string base = o.tile->base;
  if (o.ld_count > 0) {
    int64_t r0 = chunk * o.ld_count;
    std::string regs;
    for (int j = 0; j < o.ld_count; ++j) regs += o.regs + "[" + num(r0 + j) + "], ";
    e_.line("tessel::device::ldmatrix_x" + num(o.ld_count) + (o.ld_trans ? "_trans" : "") + "(" +
            regs + base + " + " + o.ld_offset[chunk] + ");");
    return;
  }
  // Per-element loads: value `chunk` (and its pair, so that a register is whole).
  int64_t v = chunk & ~int64_t(1);
  o.loaded[v] = o.loaded[v + 1] = true;
  e_.line(o.regs + "[" + num(v / 2) +
          "] = tessel::device::pack_b16x2(tessel::device::ld_shared_b16(" + base + " + (" +
          o.ld_offset[v] + ") * 2), tessel::device::ld_shared_b16(" + base + " + (" +
          o.ld_offset[v + 1] + ") * 2));");
}

std::string Sm80Mainloop::fragment_reg(Operand& o, int64_t v0, int64_t v1) {
  for (int64_t v : {v0, v1}) {
    emit_fragment_chunk(o, o.ld_count > 0 ? v / (2 * o.ld_count) : v);
  }
  if (v0 % 2 == 0 && v1 == v0 + 1) return o.regs + "[" + num(v0 / 2) + "]";
  auto half = [&](int64_t v) {
    return "tessel::device::half_b16(" + o.regs + "[" + num(v / 2) + "], " + num(v % 2) + ")";
  };
  return "tessel::device::pack_b16x2(" + half(v0) + ", " + half(v1) + ")";
}

void Sm80Mainloop::emit_mma(MmaPlan& m) {
  e_.line("{  // " + m.acc + " += " + m.a.tile->base + " * " + m.b.tile->base + " (" +
          num(m.instances.size() * m.k_blocks) + " x " + m.op->str_attr("atom") + " a thread)");
  ++e_.indent_;
  e_.line("unsigned " + m.a.regs + "[" + num(m.a.frag.values / 2) + "];");
  e_.line("unsigned " + m.b.regs + "[" + num(m.b.frag.values / 2) + "];");
  std::fill(m.a.loaded.begin(), m.a.loaded.end(), false);
  std::fill(m.b.loaded.begin(), m.b.loaded.end(), false);
  if (m.acc_src) {
    e_.line("#pragma unroll");
    e_.line("for (int v = 0; v < " + num(m.acc_values) + "; ++v) " + m.acc +
            "[v] = " + e_.reg(*m.op, m.acc_src).name + "[v];");
  }
  std::string fn =
      m.bf16 ? "tessel::device::mma_m16n8k16_f32_bf16" : "tessel::device::mma_m16n8k16_f32_f16";
  // The fragments of k step kb+1 are loaded before the mmas of step kb are issued, so that
  // shared-memory latency overlaps tensor-core work.
  auto prepare = [&](int64_t kb) {  // emits step kb's loads; returns its mma lines
    std::vector<std::string> lines;
    for (const auto& inst : m.instances) {
      std::string a[4], b[2];
      for (int r = 0; r < 4; ++r)
        a[r] = fragment_reg(m.a, inst.a[kb][2 * r], inst.a[kb][2 * r + 1]);
      for (int r = 0; r < 2; ++r)
        b[r] = fragment_reg(m.b, inst.b[kb][2 * r], inst.b[kb][2 * r + 1]);
      std::string d;
      for (int i = 0; i < 4; ++i) d += m.acc + "[" + num(inst.c[i]) + "], ";
      lines.push_back(fn + "(" + d + a[0] + ", " + a[1] + ", " + a[2] + ", " + a[3] + ", " + b[0] +
                      ", " + b[1] + ");");
    }
    return lines;
  };
  std::vector<std::string> next = prepare(0);
  for (int64_t kb = 0; kb < m.k_blocks; ++kb) {
    std::vector<std::string> now = std::move(next);
    if (kb + 1 < m.k_blocks) next = prepare(kb + 1);
    for (const std::string& l : now) e_.line(l);
  }
  --e_.indent_;
  e_.line("}");
}

void Sm80Mainloop::emit_compute(const std::string& slot) {
  for (const Load& l : loads_) {
    e_.line("unsigned char* const " + l.name + " = " + l.ring + " + " + slot + " * " +
            num(l.slot_bytes) + ";");
  }
  size_t next_mma = 0;
  const ir::Block& body = *loop_.region(0);
  for (const auto& inner : body.ops()) {
    const Operation& op = *inner;
    if (op.kind() == OpKind::tile || op.kind() == OpKind::copy || op.kind() == OpKind::yield)
      continue;
    if (op.kind() == OpKind::transpose) continue;  // planned: a view of its source's slot
    if (op.kind() == OpKind::mma) {
      emit_mma(mmas_[next_mma++]);
      continue;
    }
    e_.emit(op);
  }
}

void Sm80Mainloop::run() {
  const ir::Block& body = *loop_.region(0);
  if (const ir::Attribute* s = loop_.attr("stages")) {
    if (s->kind != ir::Attribute::Kind::integer || s->i < 1 || s->i > 16) {
      refuse(loop_, "has stages = " + (s->kind == ir::Attribute::Kind::integer ? num(s->i) : s->s) +
                        "; the sm_80 path takes 1 to 16 stages");
    }
    stages_ = s->i;
  }
  // What the body may hold.
  for (const auto& inner : body.ops()) {
    const Operation& op = *inner;
    switch (op.kind()) {
      case OpKind::tile:
        if (op.result()->type().space() != MemorySpace::global)
          refuse(op,
                 "of a shared tensor inside a pipelined loop is not supported on the sm_80 path");
        break;
      case OpKind::copy:
        if (op.num_results() != 1 || op.result()->type().space() != MemorySpace::shared ||
            op.operand(0)->type().space() != MemorySpace::global) {
          refuse(op,
                 "inside a loop that copies into shared memory must copy a global tile into "
                 "shared memory on the sm_80 path");
        }
        if (!op.operand(0)->def() || op.operand(0)->def()->kind() != OpKind::tile ||
            op.operand(0)->def()->parent_block() != &body) {
          refuse(op,
                 "copies a tile that is not made in the loop body (the pipeline re-issues it "
                 "for later iterations)");
        }
        break;
      case OpKind::transpose:
      case OpKind::mma:
      case OpKind::yield:
        break;
      default:
        if (!is_scalar_op(op) && !ir::is_elementwise(op.kind())) {
          refuse(op,
                 "inside a loop that copies into shared memory is not supported on the sm_80 "
                 "path (it takes tile, copy, transpose, mma, elementwise ops and yield)");
        }
    }
  }
  // Loop-carried values, as in a plain loop (declared outside the loop's block: its results).
  std::vector<std::string> carried;
  for (int i = 3; i < loop_.num_operands(); ++i) {
    const Value* init = loop_.operand(i);
    const Value* arg = body.argument(i - 2);
    if (init->type().is_scalar()) {
      std::string name = e_.fresh(arg->name());
      std::string ctype = is_float(init->type().element()) ? "float" : "int";
      e_.line(ctype + " " + name + " = " + e_.scalar(loop_, init) + ";");
      e_.scalars_[arg] = name;
      e_.scalars_[loop_.result(i - 3)] = name;
      carried.push_back(name);
    } else {
      const Reg& a = e_.reg(loop_, init);
      std::string name = e_.fresh(arg->name());
      e_.line("float " + name + "[" + num(a.plan->values) + "];");
      e_.line("#pragma unroll");
      e_.line("for (int v = 0; v < " + num(a.plan->values) + "; ++v) " + name + "[v] = " + a.name +
              "[v];");
      e_.regs_[arg] = Reg{name, a.plan, a.element};
      e_.regs_[loop_.result(i - 3)] = Reg{name, a.plan, a.element};
      carried.push_back(name);
    }
  }
  e_.line("{  // pipelined loop over %" + body.argument(0)->name() + ": " + num(stages_) +
          (stages_ == 1 ? " stage" : " stages"));
  ++e_.indent_;
  // Plan: rings and copies, then the mmas (their operands are the rings' tiles).
  for (const auto& inner : body.ops()) {
    if (inner->kind() == OpKind::copy) plan_load(*inner);
  }
  for (const auto& inner : body.ops()) {
    const Operation& op = *inner;
    if (op.kind() == OpKind::transpose) {
      auto it = e_.shared_.find(op.operand(0));
      if (it == e_.shared_.end()) {
        refuse(op, "inside a pipelined loop transposes %" + op.operand(0)->name() +
                       ", which is not a shared tile copied in the loop");
      }
      const SharedTile& src = it->second;
      SharedTile t = src;
      t.shape = op.result()->type().static_shape();
      t.layout = op.result()->type().layout();
      t.transposed = !src.transposed;
      e_.shared_[op.result()] = t;
    }
    if (op.kind() != OpKind::mma) continue;
    // In place: the accumulator is updated where it lives when nothing else reads it.
    const Value* c = op.operand(2);
    int uses = 0;
    ir::walk(const_cast<Operation*>(&loop_), [&](Operation* o) {
      for (int i = 0; i < o->num_operands(); ++i) uses += o->operand(i) == c;
    });
    bool carried_arg = !c->def() && c->owner_block() == &body;
    plan_mma(op);
    MmaPlan& m = mmas_.back();
    if (uses == 1 && carried_arg) {
      m.acc = e_.reg(op, c).name;
      e_.regs_[op.result()] = e_.reg(op, c);
    } else {
      const Plan* plan = e_.plan_for(op, c->type());
      m.acc = e_.fresh(op.result()->name());
      m.acc_src = c;
      e_.line("float " + m.acc + "[" + num(plan->values) + "];  // the mma's own accumulator");
      e_.regs_[op.result()] = Reg{m.acc, plan, ScalarKind::f32};
    }
  }
  for (const std::string& l : before_) e_.line(l);
  std::string lo = e_.scalar(loop_, loop_.operand(0)), hi = e_.scalar(loop_, loop_.operand(1)),
              step = e_.scalar(loop_, loop_.operand(2));
  std::string iv = e_.fresh(body.argument(0)->name());
  std::string load_iv = e_.fresh(body.argument(0)->name() + "_load");
  auto scaled = [&](int64_t s) { return step == "1" ? num(s) : num(s) + " * " + step; };
  if (stages_ > 1) {
    e_.line("// prologue: the copies of the first " + num(stages_ - 1) + " iterations");
    e_.line("for (int stage = 0; stage < " + num(stages_ - 1) + "; ++stage) {");
    ++e_.indent_;
    e_.line("const int " + load_iv + " = " + lo + " + " +
            (step == "1" ? "stage" : "stage * " + step) + ";");
    e_.line("if (" + load_iv + " < " + hi + ") {");
    ++e_.indent_;
    emit_loads(load_iv, "stage");
    --e_.indent_;
    e_.line("}");
    if (any_async_) e_.line("tessel::device::cp_async_commit_group();");
    --e_.indent_;
    e_.line("}");
    e_.line("int read_slot = 0, write_slot = " + num(stages_ - 1) + ";");
  }
  e_.line("for (int " + iv + " = " + lo + "; " + iv + " < " + hi + "; " + iv + " += " + step +
          ") {");
  ++e_.indent_;
  if (stages_ > 1) {
    if (any_async_) e_.line("tessel::device::cp_async_wait_group<" + num(stages_ - 2) + ">();");
    e_.line("__syncthreads();");
    e_.line("{");
    ++e_.indent_;
    e_.line("const int " + load_iv + " = " + iv + " + " + scaled(stages_ - 1) + ";");
    e_.line("if (" + load_iv + " < " + hi + ") {");
    ++e_.indent_;
    emit_loads(load_iv, "write_slot");
    --e_.indent_;
    e_.line("}");
    if (any_async_) e_.line("tessel::device::cp_async_commit_group();");
    --e_.indent_;
    e_.line("}");
  } else {
    emit_loads(iv, "0");
    if (any_async_) e_.line("tessel::device::cp_async_wait_all();");
    e_.line("__syncthreads();");
  }
  e_.scalars_[body.argument(0)] = iv;
  emit_compute(stages_ > 1 ? "read_slot" : "0");
  if (stages_ == 1) e_.line("__syncthreads();");
  // The yield.
  const Operation& y = *body.ops().back();
  TESSEL_ASSERT(y.kind() == OpKind::yield, "a loop body ends with yield");
  for (int i = 0; i < y.num_operands(); ++i) {
    const Value* v = y.operand(i);
    if (v->type().is_scalar()) {
      e_.line(carried[i] + " = " + e_.scalar(y, v) + ";");
    } else {
      const Reg& yr = e_.reg(y, v);
      if (yr.name == carried[i]) continue;
      e_.line("#pragma unroll");
      e_.line("for (int v = 0; v < " + num(yr.plan->values) + "; ++v) " + carried[i] +
              "[v] = " + yr.name + "[v];");
    }
  }
  if (stages_ > 1) {
    e_.line("read_slot = read_slot + 1 == " + num(stages_) + " ? 0 : read_slot + 1;");
    e_.line("write_slot = write_slot + 1 == " + num(stages_) + " ? 0 : write_slot + 1;");
  }
  --e_.indent_;
  e_.line("}");
  if (any_async_ && stages_ > 1) e_.line("tessel::device::cp_async_wait_all();");
  --e_.indent_;
  e_.line("}");
}

void Emitter::cp_async_mma_mainloop(const Operation& for_op) {
  Sm80Mainloop(*this, for_op).run();
}

}  // namespace tessel::target::cuda::detail
