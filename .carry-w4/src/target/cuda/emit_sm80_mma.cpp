// The sm_80 mainloop's fragment loads (ldmatrix or per-element) and mma.sync emission.
#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "target/cuda/atoms.h"
#include "target/cuda/sm80_mainloop.h"

namespace tessel::target::cuda::detail {

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

}  // namespace tessel::target::cuda::detail
