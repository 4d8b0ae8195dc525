// Casts and elementwise ops over register tensors (value by value in each thread).
#include <algorithm>
#include <cmath>
#include <functional>

#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

void Emitter::cast(const Operation& op) {
  const Value* src = op.operand(0);
  const Type& to = op.result()->type();
  if (to.is_scalar()) {
    std::string name = fresh(op.result()->name());
    std::string ctype = is_float(to.element()) ? "float" : "int";
    line("const " + ctype + " " + name + " = (" + ctype + ")(" + scalar(op, src) + ");");
    scalars_[op.result()] = name;
    return;
  }
  // Packed 4-bit integers are exact in f16, bf16 and f32: their cast is the same registers —
  // f16x2 words when packed4_to_register unpacked them for casts to f16, else the floats of
  // their values (register_c_type). So are fp8 values in f16.
  const Reg& words = reg_words(op, src);
  const ScalarKind from = src->type().element();
  // fp8 values read for casts to f16 arrive converted (packed_words_to_register: one cvt per
  // pair, exact).
  const bool fp8_as_f16 = (from == ScalarKind::f8e4m3 || from == ScalarKind::f8e5m2) &&
                          words.packed && words.element == ScalarKind::f16 &&
                          to.element() == ScalarKind::f16;
  if (((from == ScalarKind::u4 || from == ScalarKind::i4) || fp8_as_f16) &&
      words.plan == plan_for(op, to) &&
      is_register_float(to.element()) && (!words.packed || to.element() == ScalarKind::f16)) {
    line("// " + words.name + " as " + std::string(ir::to_string(to.element())) + " (exact" +
         (words.packed ? ", f16x2 pairs)" : ")"));
    regs_[op.result()] = Reg{words.name, words.plan, to.element(), words.packed};
    return;
  }
  const Reg& a = reg(op, src);
  // A cast to f16 or bf16 whose only uses are stores into global or shared tensors of that type
  // (directly, or through slices of it), or the A operand of a wgmma in RS form (packed into
  // pairs by a converting instruction), needs no rounding of its own: each store rounds to
  // nearest even as it converts (tsl_cvt16, the stmatrix packs), and rounding twice is rounding
  // once. Its result names its source's registers: a GEMM epilogue saves a conversion pair per
  // accumulator value, and in gemm_bf16 the rounded copy of the tile (bf16 rounding through a
  // shift, which ptxas cannot fold into the packs) made the consumer spill.
  const bool narrow = to.element() == ScalarKind::f16 || to.element() == ScalarKind::bf16;
  int uses = 0;
  std::function<bool(const Value*)> stored_only = [&](const Value* v) {
    bool only = true;
    ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
      for (int i = 0; i < user->num_operands(); ++i) {
        if (user->operand(i) != v) continue;
        ++uses;
        const bool store = user->kind() == OpKind::copy && user->num_results() == 0 && i == 0 &&
                           (user->operand(1)->type().space() == MemorySpace::global ||
                            user->operand(1)->type().space() == MemorySpace::shared) &&
                           user->operand(1)->type().element() == to.element();
        const bool part = user->kind() == OpKind::slice && stored_only(user->result());
        // wgmma's RS form packs its A operand into 16-bit pairs, which rounds as a store does.
        const bool rs_operand =
            user->kind() == OpKind::mma && i == 0 && user->has_attr("atom") &&
            user->str_attr("atom").size() > 3 &&
            user->str_attr("atom").compare(user->str_attr("atom").size() - 3, 3, ".rs") == 0;
        only = only && (store || part || rs_operand);
      }
    });
    return only;
  };
  const bool skip_rounding = narrow && stored_only(op.result());
  if (skip_rounding && uses > 0 && a.plan == plan_for(op, to)) {
    // (The comment names C variables only: IR names may differ between a compile from source and
    // one from the cached lowered IR, whose printer made them unique.)
    line("// " + a.name + " as " + std::string(ir::to_string(to.element())) +
         " (rounded by the store)");
    regs_[op.result()] = Reg{a.name, a.plan, to.element()};
    return;
  }
  // A 16-bit tile that a loop carries (overlap-epilogue's output tile) is packed: it stays live
  // beside the next tile's accumulators.
  bool carried = false;
  ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
    if (user->kind() != OpKind::yield) return;
    for (const Value* v : user->operands()) carried = carried || v == op.result();
  });
  const Plan* plan = plan_for(op, to);
  if (a.plan != plan) unsupported(op, "changes the layout; rearrange first");
  if (carried && packable(to.element(), plan->values)) {
    Reg r{fresh(op.result()->name()), plan, to.element(), true};
    line("unsigned " + r.name + "[" + std::to_string(plan->values / 2) + "];  // packed pairs");
    line("#pragma unroll");
    line("for (int p = 0; p < " + std::to_string(plan->values / 2) + "; ++p) " + r.name +
         "[p] = tessel::device::" +
         (to.element() == ScalarKind::bf16 ? "pack_bf16x2(" : "pack_f16x2(") + a.name +
         "[2 * p], " + a.name + "[2 * p + 1]);");
    regs_[op.result()] = r;
    return;
  }
  const Reg& r = new_reg(op);
  line("#pragma unroll");
  line(value_loop(r.plan->values) + " " + r.name + "[v] = " + round_to(r.element, a.name + "[v]") +
       ";");
}

// Whether `result`, and the results of mmas that accumulate into it (they share its registers),
// reach the yield of `carried`'s loop only as the value carried in `carried`'s own position: the
// registers they share with `carried` are then what the next iteration reads, and no other
// carried value's copy reads registers the yield has already overwritten.
bool Emitter::yielded_only_in_place(const Value* result, const Value* carried) const {
  const ir::Block* body = carried->owner_block();
  const Operation* yield = body->terminator();
  std::vector<const Value*> aliases{result};
  for (size_t i = 0; i < aliases.size(); ++i) {
    ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
      if (user->kind() == OpKind::mma && user->num_operands() > 2 && user->operand(2) == aliases[i])
        aliases.push_back(user->result());
    });
  }
  for (int k = 0; yield && k < yield->num_operands(); ++k) {
    const bool alias =
        std::find(aliases.begin(), aliases.end(), yield->operand(k)) != aliases.end();
    if (alias && body->argument(k + 1) != carried) return false;
  }
  return true;
}

// The C expression of each operand of a value-by-value op with register result type `t`: a
// scalar as it is, a register tensor as its value `v` (in `t`'s layout, else unsupported).
std::vector<std::string> Emitter::value_args(const Operation& op, const Type& t) {
  std::vector<std::string> args;
  for (const Value* v : op.operands()) {
    if (v->type().is_scalar()) {
      args.push_back(scalar(op, v));
      continue;
    }
    const Reg& a = reg(op, v);
    if (a.plan != plan_for(op, t)) {
      unsupported(op, "mixes layouts: %" + v->name() + " has " + a.plan->text +
                          " but the result has " + t.layout() + "; rearrange first");
    }
    args.push_back(a.name + "[v]");
  }
  return args;
}

std::string Emitter::apply(OpKind k, const std::vector<std::string>& a, bool is_f, bool approx) {
  switch (k) {
    case OpKind::neg:
      return "-(" + a[0] + ")";
    case OpKind::abs:
      return is_f ? "fabsf(" + a[0] + ")" : "abs(" + a[0] + ")";
    case OpKind::exp:
      return "expf(" + a[0] + ")";
    case OpKind::exp2:
      // ex2.approx.ftz (one MUFU.EX2; relative error about 2^-22): exp2 is the op a program
      // writes for speed (softmax with a folded log2(e)); exp stays expf's accurate sequence.
      return "tessel::device::exp2_approx(" + a[0] + ")";
    case OpKind::log:
      return "logf(" + a[0] + ")";
    case OpKind::log2:
      return "log2f(" + a[0] + ")";
    case OpKind::sqrt:
      return "sqrtf(" + a[0] + ")";
    case OpKind::rsqrt:
      // rsqrtf: one MUFU.RSQ (2 ulp), as CUDA's LayerNorm and RMSNorm kernels take it (PyTorch's,
      // cuDNN's); 1.0f / sqrtf(x) was an IEEE square root and division, two slow-path calls
      // beside a row program's 32 registers (call F of
      // bench/results/2026-11-29-rows-chunked-blocks-h200.md). The interpreter keeps the exact
      // 1 / sqrt (the GPU checks compare within a relative tolerance).
      return "rsqrtf(" + a[0] + ")";
    case OpKind::tanh:
      // `approx`: tanh.approx.f32, one MUFU.TANH (verify_tensor_ops.cpp); else tanhf's sequence.
      return (approx ? "tessel::device::tanh_approx(" : "tanhf(") + a[0] + ")";
    case OpKind::sigmoid:
      if (approx) return "tessel::device::sigmoid_approx(" + a[0] + ")";
      // ex2 and rcp (runtime/device/convert.cuh: __expf's error bound, 4 instructions). expf and
      // an IEEE division were 14, and the division's slow-path call costs registers at every
      // use besides: an epilogue of 96 sigmoids spilled the accumulators around it.
      return "tessel::device::sigmoid(" + a[0] + ")";
    case OpKind::floor:
      return "floorf(" + a[0] + ")";
    case OpKind::add:
      return a[0] + " + " + a[1];
    case OpKind::sub:
      return a[0] + " - (" + a[1] + ")";
    case OpKind::mul:
      return "(" + a[0] + ") * (" + a[1] + ")";
    case OpKind::div:
      return "(" + a[0] + ") / (" + a[1] + ")";
    case OpKind::rem:
      return is_f ? "fmodf(" + a[0] + ", " + a[1] + ")" : "(" + a[0] + ") % (" + a[1] + ")";
    case OpKind::max:
      return is_f ? "fmaxf(" + a[0] + ", " + a[1] + ")" : "max(" + a[0] + ", " + a[1] + ")";
    case OpKind::min:
      return is_f ? "fminf(" + a[0] + ", " + a[1] + ")" : "min(" + a[0] + ", " + a[1] + ")";
    case OpKind::cdiv:
      return "(" + a[0] + " + " + a[1] + " - 1) / (" + a[1] + ")";
    case OpKind::fma:
      return is_f ? "fmaf(" + a[0] + ", " + a[1] + ", " + a[2] + ")"
                  : "(" + a[0] + ") * (" + a[1] + ") + " + a[2];
    case OpKind::select:
      return "(" + a[0] + ") ? (" + a[1] + ") : (" + a[2] + ")";
    default:
      return {};
  }
}

void Emitter::elementwise(const Operation& op) {
  const Type& t = op.result()->type();
  bool is_f = is_float(t.element());
  if (t.is_scalar()) {
    std::vector<std::string> args;
    for (const Value* v : op.operands()) args.push_back(scalar(op, v));
    std::string e = apply(op.kind(), args, is_f, op.has_attr("approx"));
    if (e.empty()) unsupported(op, "is not supported by the CUDA emitter yet");
    std::string name = fresh(op.result()->name());
    line(std::string("const ") + (is_f ? "float " : "int ") + name + " = " + e + ";");
    scalars_[op.result()] = name;
    return;
  }
  if (t.space() != MemorySpace::reg) unsupported(op, "on a " + t.str() + " is not supported yet");
  if (packed_elementwise(op)) return;
  const std::vector<std::string> args = value_args(op, t);
  std::string e = apply(op.kind(), args, is_f, op.has_attr("approx"));
  if (e.empty()) unsupported(op, "is not supported by the CUDA emitter yet");
  // A loop-carried tensor whose only use is this op (attention's rescaling of the running output,
  // %o_run * alpha) is updated in its own registers: the mma that accumulates into the result
  // then updates the carried registers in place too, and the yield copies nothing — a copy would
  // read registers that the mma, still in flight across the back edge, writes.
  for (const Value* v : op.operands()) {
    if (v->def() || !v->type().is_tensor() || !v->owner_block() || !v->owner_block()->parent() ||
        v->owner_block()->parent()->kind() != OpKind::for_)
      continue;
    int uses = 0;
    ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
      for (const Value* u : user->operands()) uses += u == v;
    });
    const Reg& a = reg(op, v);
    if (uses != 1 || a.packed || a.plan != plan_for(op, t) || !is_register_float(t.element()) ||
        !yielded_only_in_place(op.result(), v))
      continue;
    regs_[op.result()] = Reg{a.name, a.plan, t.element()};
    line("#pragma unroll");
    line("for (int v = 0; v < " + std::to_string(a.plan->values) + "; ++v) " + a.name +
         "[v] = " + round_to(t.element(), e) + ";  // in place");
    return;
  }
  const Reg& r = new_reg(op);
  line("#pragma unroll");
  line(value_loop(r.plan->values) + " " + r.name + "[v] = " + round_to(r.element, e) + ";");
}

// An f16 or bf16 op (add, sub, mul, fma, max, min, neg) with an operand held packed in 16-bit
// pairs computes in pairs: one f16x2 / bf16x2 instruction for two values, each result rounded to
// the format as the tile IR's op is (computing in f32 and rounding once at the end would differ
// from the interpreter in the last bit). Unpacked operands are packed pair by pair (exact: they
// hold values of the format), scalars once. The result stays packed. A W4A16 GEMM's dequant
// (q - zero) * scale runs two instructions per two weights this way instead of six.
bool Emitter::packed_elementwise(const Operation& op) {
  const Type& t = op.result()->type();
  const ScalarKind e = t.element();
  static const std::map<OpKind, const char*> ops = {
      {OpKind::add, "add_x2"}, {OpKind::sub, "sub_x2"}, {OpKind::mul, "mul_x2"},
      {OpKind::fma, "fma_x2"}, {OpKind::max, "max_x2"}, {OpKind::min, "min_x2"},
      {OpKind::neg, ""}};
  auto it = ops.find(op.kind());
  if ((e != ScalarKind::f16 && e != ScalarKind::bf16) || it == ops.end()) return false;
  const Plan* plan = plan_for(op, t);
  if (plan->values % 2 != 0) return false;
  bool any_packed = false;
  for (const Value* v : op.operands()) {
    if (v->type().is_scalar()) continue;
    const Reg& a = reg_words(op, v);
    if (a.plan != plan || v->type().element() != e) return false;
    any_packed = any_packed || a.packed;
  }
  if (!any_packed) return false;
  const std::string bf = e == ScalarKind::bf16 ? "true" : "false";
  const std::string pack =
      e == ScalarKind::bf16 ? "tessel::device::pack_bf16x2(" : "tessel::device::pack_f16x2(";
  std::vector<std::string> words;
  for (const Value* v : op.operands()) {
    if (v->type().is_scalar()) {
      std::string splat = fresh("splat");
      line("const unsigned " + splat + " = " + pack + scalar(op, v) + ", " + scalar(op, v) + ");");
      words.push_back(splat);
      continue;
    }
    const Reg& a = reg_words(op, v);
    words.push_back(a.packed ? a.name + "[p]"
                             : pack + a.name + "[2 * p], " + a.name + "[2 * p + 1])");
  }
  std::string expr;
  if (op.kind() == OpKind::neg) {
    expr = "(" + words[0] + ") ^ 0x80008000u";
  } else {
    expr = std::string("tessel::device::") + it->second + "(";
    for (const std::string& w : words) expr += w + ", ";
    expr += bf + ")";
  }
  Reg r{fresh(op.result()->name()), plan, e, true};
  line("unsigned " + r.name + "[" + std::to_string(plan->values / 2) + "];  // packed pairs");
  line("#pragma unroll");
  line("for (int p = 0; p < " + std::to_string(plan->values / 2) + "; ++p) " + r.name +
       "[p] = " + expr + ";");
  declared_in_[r.name] = op.parent_block();
  regs_[op.result()] = r;
  return true;
}

// cmp of scalars (a bool) or of register tensors (an i1 tensor, value by value; a scalar operand
// is the same for every value).
void Emitter::cmp(const Operation& op) {
  static const std::map<std::string, std::string> ops = {{"lt", "<"},  {"le", "<="}, {"gt", ">"},
                                                         {"ge", ">="}, {"eq", "=="}, {"ne", "!="}};
  const std::string pred = ops.at(op.str_attr("pred"));
  const Type& t = op.result()->type();
  if (t.is_scalar()) {
    std::string name = fresh(op.result()->name());
    line("const bool " + name + " = (" + scalar(op, op.operand(0)) + ") " + pred + " (" +
         scalar(op, op.operand(1)) + ");");
    scalars_[op.result()] = name;
    return;
  }
  if (t.space() != MemorySpace::reg) unsupported(op, "on a " + t.str() + " is not supported yet");
  const std::vector<std::string> args = value_args(op, t);
  const Reg& r = new_reg(op);
  line("#pragma unroll");
  line("for (int v = 0; v < " + std::to_string(r.plan->values) + "; ++v) " + r.name + "[v] = (" +
       args[0] + ") " + pred + " (" + args[1] + ");");
}

// iota along `dim`: each value's coordinate in that dimension, the thread's part (a variable of
// the layout's plan) plus the value's (a constant per unrolled value).
void Emitter::iota(const Operation& op) {
  const Type& t = op.result()->type();
  if (!t.is_tensor() || t.space() != MemorySpace::reg) {
    unsupported(op, "of a " + t.str() + " is not supported yet (iota makes register tensors)");
  }
  const size_t dim = static_cast<size_t>(op.int_attr("dim"));
  const Reg& r = new_reg(op);
  const Plan& plan = *r.plan;
  std::string values;
  for (int64_t v = 0; v < plan.values; ++v)
    values += (v ? ", " : "") + std::to_string(plan.value_coord[v][dim]);
  std::string table = fresh(op.result()->name() + "_coord");
  line("const int " + table + "[" + std::to_string(plan.values) + "] = {" + values + "};");
  line("#pragma unroll");
  line("for (int v = 0; v < " + std::to_string(plan.values) + "; ++v) " + r.name +
       "[v] = " + plan.var[dim] + " + " + table + "[v];");
}

}  // namespace tessel::target::cuda::detail
