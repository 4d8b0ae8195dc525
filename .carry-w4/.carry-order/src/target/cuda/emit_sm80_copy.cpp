// The sm_80 mainloop's global -> shared copies: cp.async or element copies into the swizzled ring.
#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include "target/cuda/sm80_mainloop.h"

namespace tessel::target::cuda::detail {

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

}  // namespace tessel::target::cuda::detail
