// SynthesizeSharedLayouts: gathers each shared tile's accesses, tries the instruction choices for
// them, and keeps the cheapest layout, swizzle and atoms.
#include "transforms/layout/shared_layouts_pass.h"

#include <algorithm>
#include <cstdio>
#include <functional>
#include <optional>

#include "ir/column_blocks.h"
#include "layout/parse.h"
#include "support/diagnostics.h"
#include "transforms/layout/layout_utils.h"
#include "transforms/layout/shared_layout.h"
#include "transforms/report.h"

namespace tessel::transforms {

using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Value;
using layout::IntTuple;
using layout::Layout;
using layout::TVLayout;
using target::cuda::Atom;

namespace {

constexpr double kIssueOverheadCycles = 1;  // every warp instruction costs an issue slot

// One way to perform one access: the access for the layout solver, and what it costs.
struct Option {
  std::string atom;  // the instruction
  SharedAccess access;
  int64_t instructions = 0;  // warp-level instructions (or TMA boxes)
  double issue_cycles = 1;   // per instruction
};

// An op that touches the tile, with the ways it can do so.
struct Site {
  Operation* op;
  std::string attr_prefix;  // "" for a copy; "a_" / "b_" for an mma operand
  std::vector<Option> options;
};

// Maps an index of a view's tile to the index of the root tile (colexicographic both).
using IndexMap = std::function<int64_t(int64_t)>;

class SharedSynthesis {
 public:
  SharedSynthesis(Operation* kernel, const target::cuda::Target& target)
      : kernel_(kernel), target_(target) {
    walk(kernel, [&](Operation* op) {
      ops_.push_back(op);
      if (op->kind() == OpKind::block_grid && op->has_attr("threads"))
        threads_ = op->int_attr("threads");
      if (op->kind() == OpKind::block_grid && op->has_attr("target"))
        target_ = target::cuda::Target::named(op->str_attr("target"));
    });
  }

  void run() {
    for (Operation* op : ops_) {
      for (const auto& r : op->results()) {
        Value* v = r.get();
        if (!v->type().is_tensor() || v->type().space() != MemorySpace::shared) continue;
        if (op->kind() == OpKind::transpose || op->kind() == OpKind::tile) continue;  // views
        if (!ir::is_static(v->type().shape())) continue;
        if (v->type().rank() == 1) solve_vector(v);
        if (v->type().rank() == 2) solve(v);
      }
    }
  }

 private:
  // ---- gathering ----

  // Every use of the root through views: (op, operand index, map from the view's index to root).
  struct Reach {
    Operation* op;
    int index;
    Value* view;
    IndexMap map;
    std::vector<Operation*> views;  // transposes on the way (their types get the layout)
  };

  void reach(Value* v, const IndexMap& map, std::vector<Operation*> views,
             std::vector<Reach>& out) {
    for (Operation* op : ops_) {
      for (int i = 0; i < op->num_operands(); ++i) {
        if (op->operand(i) != v) continue;
        if (op->kind() == OpKind::transpose && v->type().rank() == 2) {
          int64_t rows = v->type().static_shape()[0], cols = v->type().static_shape()[1];
          // Index a + cols*b of the transposed view is element (b, a) of v: b + rows*a.
          IndexMap inner = [map, rows, cols](int64_t i) {
            return map(i / cols + rows * (i % cols));
          };
          std::vector<Operation*> vs = views;
          vs.push_back(op);
          reach(op->result(), inner, vs, out);
        } else {
          out.push_back({op, i, v, map, views});
        }
      }
    }
  }

  int bits_of(const Value* v) const { return ir::bit_width(v->type().element()); }

  bool divisible(const ir::Extent& e, int64_t d) const {
    if (e.is_static()) return e.value % d == 0;
    for (const ir::Fact& f : kernel_->signature().facts) {
      if (f.symbol == e.symbol && f.divisor % d == 0) return true;
    }
    return false;
  }

  // The global tensor behind a tile view and whether the tile pads with something TMA cannot.
  Value* global_root(Value* v, bool* odd_pad) const {
    *odd_pad = false;
    while (v->def() && v->def()->kind() == OpKind::tile) {
      if (const ir::Attribute* p = v->def()->attr("pad")) {
        if (!(p->kind == ir::Attribute::Kind::real && p->f == 0.0) &&
            !(p->kind == ir::Attribute::Kind::integer && p->i == 0))
          *odd_pad = true;
      }
      v = v->def()->operand(0);
    }
    return v;
  }

  // A coalesced thread access of a (rows, cols) tile with `vec`-element vectors.
  TVLayout coalesced(int64_t rows, int64_t cols, int64_t vec) const {
    int64_t tc = std::min(threads_, cols / vec);
    while (tc > 1 && (cols / vec) % tc != 0) --tc;
    int64_t tr = std::min(threads_ / tc, rows);
    while (tr > 1 && rows % tr != 0) --tr;
    int64_t rr = rows / tr, rc = cols / (vec * tc);
    auto single = [](int64_t s, int64_t d) {
      return Layout(IntTuple(s), IntTuple(s == 1 ? 0 : d));
    };
    Layout l = layout::make_layout(
        {layout::make_layout({single(tc, rows * vec), single(tr, 1)}),
         layout::make_layout({single(vec, rows), single(rr, tr), single(rc, rows * vec * tc)})});
    return TVLayout(l, IntTuple::tuple({rows, cols}));
  }

  // The ways a copy from global memory can fill the tile.
  std::vector<Option> writer_options(Operation* op, Value* root, bool wgmma_reads) {
    std::vector<Option> out;
    int64_t rows = root->type().static_shape()[0], cols = root->type().static_shape()[1];
    int bits = bits_of(root);
    bool odd_pad = false;
    Value* g = global_root(op->operand(0), &odd_pad);
    bool plain_global =
        !g->def() && g->type().space() == MemorySpace::global && !g->type().has_layout();
    // A global stored in permuted column blocks (ir/column_blocks.h) is copied by TMA only: its
    // boxes move whole blocks, the same bytes as for the row-major tensor (solve() works in the
    // storage's column order); a thread copy would have to address the permutation.
    const std::optional<ir::ColumnBlocks> blocks =
        g->def() ? std::nullopt : ir::column_blocks(g->type());
    const bool blocked = blocks && cols % blocks->block == 0;
    ir::Extent last = g->type().shape().empty() ? ir::Extent(1) : g->type().shape().back();
    std::string name = ir::op_where(*op);
    // TMA: the canonical layout's column slices, one box each.
    if (target_.sm() >= 90 && (plain_global || blocked) && !odd_pad && (cols * bits) % 128 == 0 &&
        rows % 8 == 0 && rows <= 256 && divisible(last, 128 / bits)) {
      int64_t row_bytes = cols * bits / 8;
      int span = row_bytes % 128 == 0  ? 128
                 : row_bytes % 64 == 0 ? 64
                 : row_bytes % 32 == 0 ? 32
                                       : 0;
      int64_t box_cols = (span ? span : std::min<int64_t>(row_bytes, 256)) * 8 / bits;
      if (box_cols <= 256) {
        Atom tma = target::cuda::tma_copy(true, rows, box_cols, bits, span);
        Option o{tma.name, SharedAccess::bulk(name + " (" + tma.name + ")", AccessKind::tma),
                 cols / box_cols, tma.cost.issue_cycles};
        out.push_back(o);
      }
    }
    if (wgmma_reads || blocks) return out;  // wgmma needs the canonical layout: TMA or nothing
    for (int bytes : {16, 8, 4}) {
      int64_t vec = bytes * 8 / bits;
      if (vec < 1 || cols % vec != 0 || !plain_global || !divisible(last, vec)) continue;
      Atom a = target::cuda::cp_async(bytes, bits);
      TVLayout tv = coalesced(rows, cols, vec);
      int64_t instr = (rows * cols / vec + 31) / 32;
      out.push_back({a.name, SharedAccess::from_tv(name + " (" + a.name + ")", tv, int(vec)), instr,
                     a.cost.issue_cycles});
    }
    // Through registers, one element at a time (always possible).
    int bytes = std::max(1, bits / 8);
    Atom ld = target::cuda::vector_copy(MemorySpace::global, MemorySpace::reg, bytes,
                                        bits < 8 ? 8 : bits);
    Atom st = target::cuda::vector_copy(MemorySpace::reg, MemorySpace::shared, bytes,
                                        bits < 8 ? 8 : bits);
    std::string n = ld.name + "+" + st.name;
    out.push_back({n, SharedAccess::from_tv(name + " (" + n + ")", coalesced(rows, cols, 1), 1),
                   (rows * cols + 31) / 32, ld.cost.issue_cycles + st.cost.issue_cycles});
    return out;
  }

  // The ways threads can read a register fragment (table over the root tile) from the tile.
  // With `store`, the same analysis for threads writing the fragment into the tile (stmatrix, which
  // has ldmatrix's contract, on sm_90; st.shared).
  std::vector<Option> reader_options(const std::string& who, const std::vector<int64_t>& table,
                                     int64_t T, int64_t V, int64_t rows, int64_t cols, int bits,
                                     bool store = false) {
    std::vector<Option> out;
    // ldmatrix moves 16-bit units: 16-bit elements one per unit, packed sub-byte elements
    // (int4: four per unit) as whole units, untransposed (a transpose would move units, not the
    // elements inside them). The rows of packed data need not be lines of the tile.
    bool packed = bits < 8 && 16 % bits == 0;  // sub-byte only: 8-bit operands keep ld.shared
    if ((bits == 16 || packed) && T % 32 == 0 && (!store || target_.sm() >= 90)) {
      for (int count : {4, 2, 1}) {
        for (bool trans : {false, true}) {
          for (int d : {1, 0}) {
            if (packed && (trans || d == 0 || store)) continue;
            std::optional<SharedAccess> a =
                match_ldmatrix(table, T, V, rows, cols, count, trans, d, bits);
            if (!a) continue;
            Atom ld =
                store ? target::cuda::stmatrix(count, trans) : target::cuda::ldmatrix(count, trans);
            a->who = who + " (" + ld.name + ")";
            out.push_back(
                {ld.name, *a, (T / 32) * (V / (2 * count * (16 / bits))), ld.cost.issue_cycles});
          }
        }
      }
    }
    // Each thread's values `w` at a time by one vector instruction, touching elements in `order`.
    auto vector_option = [&](const Atom& a, const std::vector<int64_t>& order, int64_t w) {
      SharedAccess acc;
      acc.who = who + " (" + a.name + ")";
      acc.table = order;
      acc.threads = T;
      acc.values = V;
      acc.vector_elems = static_cast<int>(w);
      return Option{a.name, acc, ((T + 31) / 32) * (V / w), a.cost.issue_cycles};
    };
    for (int64_t w = std::max<int64_t>(1, 128 / bits); w >= 1; w /= 2) {
      if (V % w != 0) continue;
      for (int d : {1, 0}) {
        if (!vector_along(table, T, V, rows, w, d)) continue;
        int bytes = static_cast<int>(std::max<int64_t>(1, w * bits / 8));
        Atom a = store ? target::cuda::vector_copy(MemorySpace::reg, MemorySpace::shared, bytes,
                                                   bits < 8 ? 8 : bits)
                       : target::cuda::vector_copy(MemorySpace::shared, MemorySpace::reg, bytes,
                                                   bits < 8 ? 8 : bits);
        out.push_back(vector_option(a, table, w));
        break;
      }
      if (!out.empty() && (out.back().atom.rfind("ld.shared", 0) == 0 ||
                           out.back().atom.rfind("st.shared", 0) == 0))
        break;
    }
    // Packed sub-byte values (u4 weights) and 8-bit floats (fp8 weights) are unpacked from whole
    // words, in whatever order the word holds them (emit_shared_load.cpp's packed4_to_register,
    // packed_words_to_register): a thread that owns aligned runs of consecutive elements along
    // the rows loads each run at once even when its register layout lists them in another order.
    // The run's values, sorted by column, are what the instruction touches; bank conflicts are
    // counted for that order.
    if ((packed || bits == 8) && !store) {
      std::vector<int64_t> sorted(table.size());
      for (int64_t t = 0; t < T; ++t) {
        std::vector<int64_t> mine;
        for (int64_t v = 0; v < V; ++v) mine.push_back(table[size_t(t + T * v)]);
        std::sort(mine.begin(), mine.end(), [rows](int64_t a, int64_t b) {
          return std::pair(a % rows, a / rows) < std::pair(b % rows, b / rows);
        });
        for (int64_t v = 0; v < V; ++v) sorted[size_t(t + T * v)] = mine[size_t(v)];
      }
      int64_t widest = 1;
      for (const Option& o : out) {
        if (o.access.kind == AccessKind::threads && o.atom.rfind("ld.shared", 0) == 0)
          widest = std::max<int64_t>(widest, o.access.vector_elems);
      }
      for (int64_t w = std::max<int64_t>(1, 128 / bits); w > widest; w /= 2) {
        if (V % w != 0 || !vector_along(sorted, T, V, rows, w, 1)) continue;
        Atom a = target::cuda::vector_copy(MemorySpace::shared, MemorySpace::reg,
                                           static_cast<int>(w * bits / 8), 8);
        out.push_back(vector_option(a, sorted, w));
        break;
      }
    }
    std::stable_sort(out.begin(), out.end(), [](const Option& x, const Option& y) {
      return x.instructions * x.issue_cycles < y.instructions * y.issue_cycles;
    });
    // Keep the three cheapest, and always the plain vector access: ldmatrix's variants alone
    // would fill the three places, and each needs a layout that only a thread copy writes (a
    // packed int4 operand's permuted rows), which leaves a TMA writer no reader to pair with.
    if (out.size() > 3) {
      auto plain = std::find_if(out.begin() + 3, out.end(), [](const Option& o) {
        return o.atom.rfind("ld.shared", 0) == 0 || o.atom.rfind("st.shared", 0) == 0;
      });
      std::optional<Option> keep;
      if (plain != out.end()) keep = *plain;
      out.resize(3);
      if (keep) out.push_back(*keep);
    }
    return out;
  }

  // ---- vectors ----

  // A rank-1 shared tile (a row of per-column scales a mainloop reads each K step, say): written
  // by a 1-D TMA box of the whole tile when one fits (16-byte multiple, at most 256 elements, a
  // plain global tensor whose rows are 16-byte multiples, zero padding), and then read by the
  // threads in the widest vectors their register layout allows; it stays row-major ("N:1"),
  // since one-dimensional reads of a few values per thread meet no bank conflicts worth a
  // swizzle. Tiles written or read any other way keep no layout (and the emitter says so).
  void solve_vector(Value* root) {
    Operation* def = root->def();
    if (!def || def->kind() != OpKind::copy || def->num_results() != 1 ||
        def->operand(0)->type().space() != MemorySpace::global || root->type().has_layout())
      return;
    const int64_t n = root->type().static_shape()[0];
    const int bits = bits_of(root);
    bool odd_pad = false;
    Value* g = global_root(def->operand(0), &odd_pad);
    const bool plain_global =
        !g->def() && g->type().space() == MemorySpace::global && !g->type().has_layout();
    if (target_.sm() < 90 || !plain_global || odd_pad || n > 256 || (n * bits) % 128 != 0) return;
    if (g->type().rank() >= 2 && !divisible(g->type().shape().back(), 128 / bits)) return;
    std::vector<std::pair<Operation*, std::string>> readers;
    std::vector<Reach> uses;
    reach(
        root, [](int64_t i) { return i; }, {}, uses);
    for (const Reach& r : uses) {
      const bool read = r.op->kind() == OpKind::copy && r.index == 0 && r.op->num_results() == 1 &&
                        r.op->result()->type().space() == MemorySpace::reg &&
                        r.op->result()->type().has_layout();
      if (!read) return;
      const ir::Type& rt = r.op->result()->type();
      TVLayout tv(layout::parse_layout(rt.layout()), IntTuple::tuple({IntTuple(n)}));
      const std::vector<int64_t> table = tv_table(tv);
      const int64_t T = tv.num_threads(), V = tv.num_values();
      int64_t w = std::min<int64_t>(V, 128 / bits);
      for (; w > 1; w /= 2) {
        if (V % w != 0) continue;
        bool runs = true;
        for (int64_t t = 0; runs && t < T; ++t) {
          for (int64_t v = 0; runs && v < V; v += w) {
            const int64_t base = table[size_t(t + T * v)];
            runs = base % w == 0;
            for (int64_t u = 1; runs && u < w; ++u) runs = table[size_t(t + T * (v + u))] == base + u;
          }
        }
        if (runs) break;
      }
      const int width_bytes = static_cast<int>(std::max<int64_t>(1, w * bits / 8));
      readers.push_back({r.op, target::cuda::vector_copy(MemorySpace::shared, MemorySpace::reg,
                                                         width_bytes, bits < 8 ? 8 : bits)
                                   .name});
    }
    root->set_type(root->type().with_layout(std::to_string(n) + ":1"));
    const std::string tma = target::cuda::tma_copy_1d(true, n, bits).name;
    def->set_attr("atom", ir::Attribute::string(tma));
    report("banks", "banks " + ir::value_ref(root) + " " + root->type().str() +
                        ": row-major, written by " + tma);
    for (auto& [op, atom] : readers) {
      op->set_attr("atom", ir::Attribute::string(atom));
      report("banks", "  " + ir::op_where(*op) + " (" + atom + "): vector reads");
    }
  }

  // ---- solving ----

  static layout::ComposedLayout parse_shared(const std::string& text) {
    size_t o = text.rfind(" o ");
    Layout base = layout::parse_layout(o == std::string::npos ? text : text.substr(o + 3));
    if (o == std::string::npos) return layout::ComposedLayout(layout::Swizzle(), 0, base);
    int b = 0, m = 0, sh = 0;
    long long off = 0;
    std::sscanf(text.c_str(), "Sw<%d,%d,%d> o %lld", &b, &m, &sh, &off);
    return layout::ComposedLayout(layout::Swizzle(b, m, sh), off, base);
  }

  // Why `m` cannot serve the access ("" when it can): thread accesses need their vectors, bulk
  // ones the canonical layout.
  static std::string serves(const layout::ComposedLayout& m, const SharedAccess& a, int64_t rows,
                            int64_t cols, int bits) {
    if (a.kind == AccessKind::threads) return check_alignment(m, a);
    layout::ComposedLayout canonical = canonical_tma_layout(rows, cols, bits);
    if (layout_table(canonical) != layout_table(m))
      return "it needs the canonical layout " + canonical.str();
    return {};
  }

  void solve(Value* root) {
    int64_t rows = root->type().static_shape()[0], cols = root->type().static_shape()[1];
    int bits = bits_of(root);
    IntTuple tile = IntTuple::tuple({rows, cols});
    std::vector<Reach> uses;
    reach(
        root, [](int64_t i) { return i; }, {}, uses);
    std::vector<Site> sites;
    std::vector<Operation*> views;
    bool wgmma_reads = false;
    for (const Reach& r : uses) {
      if (r.op->kind() == OpKind::mma && r.index < 2) {
        const ir::Attribute* atom = r.op->attr("atom");
        if (atom && atom->s.rfind("wgmma", 0) == 0) wgmma_reads = true;
      }
    }
    // The writer: the op that defines the root.
    Operation* def = root->def();
    // A tile of a global stored in permuted column blocks holds each block in the storage's
    // order (TMA copies bytes): the accesses are solved in storage coordinates, element (r, c)
    // at column c - c % B + position(c % B), and the layout found is composed with that map.
    std::optional<ir::ColumnBlocks> blocks;
    if (def && def->kind() == OpKind::copy && def->num_results() == 1 &&
        def->operand(0)->type().space() == MemorySpace::global) {
      bool odd_pad = false;
      Value* g = global_root(def->operand(0), &odd_pad);
      if (!g->def()) blocks = ir::column_blocks(g->type());
    }
    if (blocks && (cols % blocks->block != 0 || wgmma_reads)) {
      user_error(def->loc(), "copy: ", ir::value_ref(root), " ", root->type().str(),
                 " is a tile of a global stored in blocks of ", blocks->block,
                 " permuted columns; such tiles must hold whole blocks and be read by threads "
                 "(not by wgmma)");
    }
    std::vector<int64_t> storage_col(static_cast<size_t>(cols));
    for (int64_t c = 0; c < cols; ++c)
      storage_col[size_t(c)] = blocks ? c - c % blocks->block + blocks->position(c % blocks->block)
                                      : c;
    auto to_storage = [&](int64_t x) { return x % rows + rows * storage_col[size_t(x / rows)]; };
    if (def && def->kind() == OpKind::copy && def->num_results() == 1 &&
        def->operand(0)->type().space() == MemorySpace::global) {
      sites.push_back({def, "", writer_options(def, root, wgmma_reads)});
      if (sites.back().options.empty()) {
        user_error(def->loc(), "copy: ", ir::value_ref(root),
                   " is read by wgmma, which needs the "
                   "canonical swizzled layout that only a TMA copy writes, but no TMA box fits (",
                   root->type().str(),
                   "; a TMA copy needs 16-byte rows, rows % 8 == 0 and "
                   "aligned global rows)");
      }
    }
    for (const Reach& r : uses) {
      for (Operation* v : r.views) {
        if (std::find(views.begin(), views.end(), v) == views.end()) views.push_back(v);
      }
      std::string who = ir::op_where(*r.op);
      if (r.op->kind() == OpKind::mma && r.index < 2) {
        const ir::Attribute* atom = r.op->attr("atom");
        if (atom && atom->s.rfind("wgmma", 0) == 0) {
          sites.push_back(
              {r.op,
               r.index == 0 ? "a_" : "b_",
               {{atom->s, SharedAccess::bulk(who + " (" + atom->s + ")", AccessKind::wgmma), 0,
                 0}}});
          continue;
        }
        const ir::Attribute* frag = r.op->attr(r.index == 0 ? "a_fragment" : "b_fragment");
        if (!frag) continue;  // not yet through synthesize-layouts
        std::vector<int64_t> shape = r.view->type().static_shape();  // [M,K] or [K,N]
        TVLayout tv(layout::parse_layout(frag->s), r.index == 0
                                                       ? IntTuple::tuple({shape[0], shape[1]})
                                                       : IntTuple::tuple({shape[1], shape[0]}));
        std::vector<int64_t> t = tv_table(tv);
        for (int64_t& x : t) {
          if (r.index == 1) {
            // fragment (n, k) over (N, K) is element (k, n) of the [K, N] operand
            int64_t n = x % shape[1], k = x / shape[1];
            x = k + shape[0] * n;
          }
          x = r.map(x);
        }
        sites.push_back(
            {r.op, r.index == 0 ? "a_" : "b_",
             reader_options(who, t, tv.num_threads(), tv.num_values(), rows, cols, bits)});
        continue;
      }
      // Threads reading the tile into a register tensor: `copy %s, %r` or `%r = copy %s`.
      const Value* reg_dst = nullptr;
      if (r.op->kind() == OpKind::copy && r.index == 0) {
        if (r.op->num_operands() == 2) reg_dst = r.op->operand(1);
        if (r.op->num_operands() == 1 && r.op->num_results() == 1) reg_dst = r.op->result();
      }
      if (reg_dst && reg_dst->type().space() == MemorySpace::reg && reg_dst->type().has_layout() &&
          reg_dst->type().rank() == 2) {
        const ir::Type& rt = reg_dst->type();
        TVLayout tv(layout::parse_layout(rt.layout()),
                    IntTuple::tuple({rt.static_shape()[0], rt.static_shape()[1]}));
        std::vector<int64_t> t = tv_table(tv);
        for (int64_t& x : t) x = to_storage(r.map(x));
        sites.push_back(
            {r.op, "",
             reader_options(who, t, tv.num_threads(), tv.num_values(), rows, cols, bits)});
        continue;
      }
      // Threads storing a register tensor into the tile.
      if (r.op->kind() == OpKind::copy && r.index == 1 && r.op->num_operands() == 2 &&
          r.op->operand(0)->type().space() == MemorySpace::reg &&
          r.op->operand(0)->type().has_layout()) {
        const ir::Type& rt = r.op->operand(0)->type();
        TVLayout tv(layout::parse_layout(rt.layout()),
                    IntTuple::tuple({rt.static_shape()[0], rt.static_shape()[1]}));
        std::vector<int64_t> t = tv_table(tv);
        for (int64_t& x : t) x = r.map(x);
        sites.push_back({r.op, "",
                         reader_options(who, t, tv.num_threads(), tv.num_values(), rows, cols, bits,
                                        /*store=*/true)});
        continue;
      }
      // Anything else that touches the tile constrains nothing this pass knows about: say so.
      if (r.op->kind() != OpKind::mma)
        report("banks", "  " + who + ": not modelled (" + std::string(r.op->name()) + ")");
    }
    // A pinned layout: keep the options that it serves.
    std::optional<layout::ComposedLayout> pinned;
    if (root->type().has_layout()) pinned = parse_shared(root->type().layout());
    if (pinned) {
      for (Site& s : sites) {
        std::vector<Option> kept;
        std::string why;
        for (Option& o : s.options) {
          std::string problem = serves(*pinned, o.access, rows, cols, bits);
          if (problem.empty()) {
            kept.push_back(std::move(o));
          } else if (why.empty()) {
            why = o.atom + ": " + problem;
          }
        }
        if (kept.empty()) {
          user_error(s.op->loc(), s.op->name(), ": the access to ", ir::value_ref(root),
                     " cannot use its pinned layout ", root->type().layout(), " (", why, ")");
        }
        s.options = std::move(kept);
      }
    }
    for (Site& s : sites) {
      if (s.options.empty()) {
        user_error(s.op->loc(), s.op->name(), ": no instruction reads ", ir::value_ref(root),
                   " into the register fragment it needs");
      }
    }
    // Try every combination of options; keep the cheapest that has a layout.
    std::vector<size_t> pick(sites.size(), 0), best_pick;
    std::optional<SharedLayoutChoice> best;
    double best_cost = 1e300;
    std::optional<UserError> first_error;
    std::function<void(size_t)> dfs = [&](size_t i) {
      if (i == sites.size()) {
        std::vector<SharedAccess> accesses;
        for (size_t j = 0; j < sites.size(); ++j)
          accesses.push_back(sites[j].options[pick[j]].access);
        try {
          SharedLayoutChoice c;
          if (pinned) {
            c.layout = *pinned;
            c.reason = "pinned";
            for (const SharedAccess& a : accesses)
              c.accesses.push_back({a.who, count_conflicts(*pinned, a, bits)});
          } else {
            c = synthesize_shared_layout(tile, bits, accesses, ir::value_ref(root));
          }
          double cost = 0;
          for (size_t j = 0; j < sites.size(); ++j) {
            const Option& o = sites[j].options[pick[j]];
            double degree = c.accesses[j].banks.ideal ? c.accesses[j].banks.degree() : 1.0;
            cost += o.instructions * (o.issue_cycles * degree + kIssueOverheadCycles);
          }
          if (cost < best_cost) {
            best_cost = cost;
            best = c;
            best_pick = pick;
          }
        } catch (const UserError& e) {
          if (!first_error) first_error = e;
        }
        return;
      }
      for (size_t o = 0; o < sites[i].options.size(); ++o) {
        pick[i] = o;
        dfs(i + 1);
      }
    };
    dfs(0);
    if (!best) {
      const SourceLocation& loc = def ? def->loc() : kernel_->loc();
      if (first_error) user_error(loc, first_error->message());
      user_error(loc, "no shared layout for ", ir::value_ref(root));
    }
    // Apply: the root's type, its views', the atoms and the bank figures.
    layout::ComposedLayout found = best->layout;
    if (blocks) {
      // (r, c) -> storage index r + rows * (c - c % B + position(c % B)), as a layout.
      const Layout perm = layout::flatten(layout::parse_layout(blocks->permutation));
      std::vector<Layout> leaves;
      for (int i = 0; i < perm.rank(); ++i) {
        leaves.push_back(Layout(IntTuple(perm.mode(i).shape().as_int()),
                                IntTuple(perm.mode(i).stride().as_int() * rows)));
      }
      const Layout cols_map = layout::make_layout(
          {layout::make_layout(leaves),
           Layout(IntTuple(cols / blocks->block), IntTuple(rows * blocks->block))});
      const Layout to_storage_map = layout::make_layout({Layout(IntTuple(rows), IntTuple(1)),
                                                         cols_map});
      found = layout::ComposedLayout(found.swizzle(), found.offset(),
                                     layout::composition(found.layout(), to_storage_map));
      for (int64_t x = 0; x < rows * cols; ++x) {
        TESSEL_ASSERT(found.layout()(x) == best->layout.layout()(to_storage(x)),
                      "column-block composition of ", best->layout.str());
      }
    }
    std::string text = found.swizzle().is_identity() && found.offset() == 0
                           ? layout::to_string(found.layout())
                           : found.str();
    root->set_type(root->type().with_layout(text));
    for (Operation* v : views) {
      const Value* src = v->operand(0);
      std::string s = src->type().layout();
      // Swap the two modes of the (possibly swizzled) layout.
      size_t o = s.rfind(" o ");
      std::string prefix = o == std::string::npos ? "" : s.substr(0, o + 3);
      Layout l = layout::parse_layout(o == std::string::npos ? s : s.substr(o + 3));
      Layout swapped = layout::make_layout({l.mode(1), l.mode(0)});
      v->result()->set_type(v->result()->type().with_layout(prefix + layout::to_string(swapped)));
    }
    std::string line = "banks " + ir::value_ref(root) + " " + root->type().str() + ": " +
                       best->reason +
                       (blocks ? " (in storage order: blocks of " + std::to_string(blocks->block) +
                                     " columns permuted by " + blocks->permutation + ")"
                               : std::string());
    report("banks", line);
    for (size_t j = 0; j < sites.size(); ++j) {
      const Option& o = sites[j].options[best_pick[j]];
      Operation* op = sites[j].op;
      const AccessReport& a = best->accesses[j];
      if (sites[j].attr_prefix.empty()) {
        op->set_attr("atom", ir::Attribute::string(o.atom));
      } else if (o.access.kind != AccessKind::wgmma) {
        op->set_attr(sites[j].attr_prefix + "load", ir::Attribute::string(o.atom));
      }
      if (o.access.kind == AccessKind::threads) {
        op->set_attr(sites[j].attr_prefix + "banks", ir::Attribute::string(a.banks.str()));
        report("banks", "  " + a.who + ": " + a.banks.str());
      } else {
        report("banks", "  " + a.who + ": bulk (no bank model)");
      }
    }
  }

  Operation* kernel_;
  target::cuda::Target target_;
  int64_t threads_ = 128;
  std::vector<Operation*> ops_;
};

}  // namespace

void synthesize_shared_layouts(ir::Module& module, const target::cuda::Target& target) {
  for (auto& kernel : module.kernels) SharedSynthesis(kernel.get(), target).run();
}

}  // namespace tessel::transforms
