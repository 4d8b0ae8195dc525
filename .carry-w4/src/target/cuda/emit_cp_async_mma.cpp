// The sm_80 mainloop's pipeline driver and shared table helpers (design: sm80_mainloop.h).
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "layout/parse.h"
#include "target/cuda/sm80_mainloop.h"

namespace tessel::target::cuda::detail {

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
