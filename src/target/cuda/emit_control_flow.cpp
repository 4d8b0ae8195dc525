// Control flow: `for` loops (loop-carried registers, accumulators continued in place or started
// by the first wgmma's scale-d = 0) and `if`s with results, and the yields that end their regions.
// Split from emit.cpp; see emit_internal.h for the Emitter's state.
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

// Yield operand `i` of `yield` into the C variable `target` that holds `to` (a loop's carried
// value, an if's result): a scalar assigned, a register tensor copied value by value (as 16-bit
// pairs when `to` is packed); nothing when the yielded value already lives in `target`.
void Emitter::assign_yielded(const Operation& yield, int i, const std::string& target,
                             const Value* to) {
  const Value* y = yield.operand(i);
  if (y->type().is_scalar()) {
    line(target + " = " + scalar(yield, y) + ";");
    return;
  }
  if (regs_[to].packed) {
    const Reg& yr = reg_words(yield, y);
    if (yr.name == target) return;
    for (int64_t p = 0; p < yr.plan->values / 2; ++p)
      line(target + "[" + std::to_string(p) + "] = " + pair_expr(yr, 2 * p, 2 * p + 1) + ";");
    return;
  }
  const Reg& yr = reg(yield, y);
  if (yr.name == target) return;
  if (yr.packed || yr.plan != regs_[to].plan) {
    unsupported(yield, "yields %" + y->name() + " in another layout than the value it becomes");
  }
  line("#pragma unroll");
  line("for (int v = 0; v < " + std::to_string(yr.plan->values) + "; ++v) " + target +
       "[v] = " + yr.name + "[v];");
}

// Whether `v`'s only use is as the accumulator (operand 2) of one wgmma mma.
bool Emitter::only_wgmma_accumulator(const Value* v) const {
  int uses = 0;
  bool accumulator = false;
  ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* user) {
    for (int i = 0; i < user->num_operands(); ++i) {
      if (user->operand(i) != v) continue;
      ++uses;
      accumulator = user->kind() == OpKind::mma && i == 2 && user->has_attr("atom") &&
                    user->str_attr("atom").rfind("wgmma.", 0) == 0;
    }
  });
  return uses == 1 && accumulator;
}

// Whether loop-carried value `i` of `op` (body argument i) starts as zeros (a `fill 0.0`) and is
// used in the body only as the accumulator of one wgmma mma: then the mma's first k-step can
// overwrite it in the loop's first iteration instead of the registers being zeroed.
bool Emitter::zero_start_accumulator(const Operation& op, int i) {
  const Value* init = op.operand(2 + i);
  const Operation* fill = init->def();
  if (!fill || fill->kind() != OpKind::fill || fill->real_attr("value") != 0.0) return false;
  const Value* arg = op.region(0)->argument(i);
  const Operation* user = nullptr;
  int uses = 0;
  ir::walk(const_cast<Operation*>(&op), [&](Operation* o) {
    for (const Value* v : o->operands()) {
      if (v == arg) {
        ++uses;
        user = o;
      }
    }
  });
  return uses == 1 && user->kind() == OpKind::mma && user->operand(2) == arg &&
         user->parent_block() == op.region(0) && user->has_attr("atom") &&
         user->str_attr("atom").rfind("wgmma.", 0) == 0;
}

// Whether loop-carried value `i` of `op` (body argument i) continues, in place, what the loop just
// before `op` carried: its initial value is that loop's result and has no other use (a mainloop
// split in two, overlap-epilogue's first K blocks and the rest). The C array is then shared.
// The next loop after `op` in its block, other ops between (the mainloops of a kernel that
// accumulates over two operand pairs in a row are separated by the first one's drain).
const Operation* Emitter::next_loop(const Operation& op) {
  const auto& ops = op.parent_block()->ops();
  for (size_t at = ir::position_in_block(op) + 1; at < ops.size(); ++at) {
    if (ops[at]->kind() == OpKind::for_) return ops[at].get();
  }
  return nullptr;
}

bool Emitter::continues_in_place(const Operation& op, int i) {
  const Value* init = op.operand(2 + i);
  const Operation* before = init->def();
  if (!before || before->kind() != OpKind::for_ || next_loop(*before) != &op ||
      !init->type().is_tensor()) {
    return false;
  }
  int uses = 0;
  ir::walk(const_cast<Operation*>(&kernel_), [&](Operation* o) {
    for (const Value* v : o->operands()) uses += v == init;
  });
  auto it = regs_.find(init);
  return uses == 1 && it != regs_.end() && !it->second.packed;
}

void Emitter::for_op(const Operation& op) {
  const ir::Block& body = *op.region(0);
  std::vector<std::string> carried;
  std::vector<ZeroStart> zero_started;
  for (int i = 3; i < op.num_operands(); ++i) {
    const Value* init = op.operand(i);
    const Value* arg = body.argument(i - 2);
    if (init->type().is_scalar()) {
      std::string name = fresh(arg->name());
      std::string ctype = is_float(init->type().element()) ? "float" : "int";
      line(ctype + " " + name + " = " + scalar(op, init) + ";");
      scalars_[arg] = name;
      scalars_[op.result(i - 3)] = name;
      carried.push_back(name);
    } else if (packable(init->type().element(), reg_words(op, init).plan->values)) {
      // A carried 16-bit tensor is held packed (see Reg).
      const Reg& a = reg_words(op, init);
      const int64_t words = a.plan->values / 2;
      std::string name = fresh(arg->name());
      line("unsigned " + name + "[" + std::to_string(words) + "];  // packed pairs");
      for (int64_t p = 0; p < words; ++p)
        line(name + "[" + std::to_string(p) + "] = " + pair_expr(a, 2 * p, 2 * p + 1) + ";");
      const Reg carried_reg{name, a.plan, a.element, true};
      regs_[arg] = carried_reg;
      regs_[op.result(i - 3)] = carried_reg;
      carried.push_back(name);
    } else if (continues_in_place(op, i - 2)) {
      const Reg a = reg(op, init);
      // The argument's own name is taken (unused) as for any other, so that the C names that
      // follow are the same whether the IR came from the passes or from its printed text.
      fresh(arg->name());
      // A zero start the loop before left open (its fix-up waits for this loop to run too).
      auto open = open_zero_starts_.find(a.name);
      if (open != open_zero_starts_.end()) {
        zero_started.push_back(open->second);
        open_zero_starts_.erase(open);
      }
      regs_[arg] = a;
      regs_[op.result(i - 3)] = a;
      carried.push_back(a.name);
    } else {
      const Reg& a = reg(op, init);
      std::string name = fresh(arg->name());
      line(register_c_type(a.element) + " " + name + "[" + std::to_string(a.plan->values) + "];");
      if (zero_start_accumulator(op, i - 2)) {
        // Not initialized: the first iteration's wgmma overwrites it (scale-d = 0), and a loop
        // of no iterations copies the zeros after it. Zeroing it here instead makes ptxas
        // serialize every wgmma (warning C7515: the moves reach a loop where a group is pending).
        zero_started.push_back({name, a.name, a.plan->values, ""});
      } else {
        line("#pragma unroll");
        line("for (int v = 0; v < " + std::to_string(a.plan->values) + "; ++v) " + name +
             "[v] = " + a.name + "[v];");
      }
      regs_[arg] = Reg{name, a.plan, a.element};
      declared_in_[name] = op.parent_block();
      regs_[op.result(i - 3)] = Reg{name, a.plan, a.element};
      carried.push_back(name);
    }
  }
  std::string iv = fresh(body.argument(0)->name());
  scalars_[body.argument(0)] = iv;
  const std::string lower = scalar(op, op.operand(0)), upper = scalar(op, op.operand(1));
  // The first wgmma of the first loop that runs overwrites the accumulator; in a loop that
  // continues another, only when that one ran no iteration.
  for (int i = 3; i < op.num_operands(); ++i) {
    for (const ZeroStart& z : zero_started) {
      if (regs_[body.argument(i - 2)].name != z.name) continue;
      zero_start_[body.argument(i - 2)] =
          z.ran.empty() ? iv + " != " + lower : "(" + iv + " != " + lower + ") || " + z.ran;
    }
  }
  line("for (int " + iv + " = " + lower + "; " + iv + " < " + upper + "; " + iv +
       " += " + scalar(op, op.operand(2)) + ") {");
  ++indent_;
  block_ops(body, [&](const Operation& yield) {
    for (int i = 0; i < yield.num_operands(); ++i)
      assign_yielded(yield, i, carried[i], body.argument(i + 1));
  });
  --indent_;
  line("}");
  // A loop of no iterations leaves the zeros. Written after the wgmma groups are drained when an
  // mma_wait follows the loop: a write to the accumulator while a group may be pending makes
  // ptxas serialize every wgmma (C7514), even on a path where none is.
  for (ZeroStart& z : zero_started) {
    const std::string ran = "(" + lower + " < " + upper + ")";
    z.ran = z.ran.empty() ? ran : "(" + z.ran + " || " + ran + ")";
  }
  // A loop that continues this one in place takes the fix-up over: it runs after both.
  const auto& ops = op.parent_block()->ops();
  size_t at = ir::position_in_block(op);
  if (!zero_started.empty() && next_loop(op)) {
    const Operation& next = *next_loop(op);
    bool all = true;
    for (const ZeroStart& z : zero_started) {
      bool continued = false;
      for (int i = 3; i < next.num_operands(); ++i) {
        continued =
            continued || (regs_.count(next.operand(i)) && regs_[next.operand(i)].name == z.name &&
                          continues_in_place(next, i - 2));
      }
      all = all && continued;
    }
    if (all) {
      for (const ZeroStart& z : zero_started) open_zero_starts_[z.name] = z;
      return;
    }
  }
  std::vector<std::string> fixups;
  for (const ZeroStart& z : zero_started) {
    fixups.push_back("if (!" + z.ran + ") {  // no iteration overwrote " + z.name);
    fixups.push_back("  #pragma unroll");
    fixups.push_back("  for (int v = 0; v < " + std::to_string(z.values) + "; ++v) " + z.name +
                     "[v] = " + z.init + "[v];");
    fixups.push_back("}");
  }
  if (!fixups.empty() && at + 1 < ops.size() && ops[at + 1]->kind() == OpKind::mma_wait &&
      ops[at + 1]->int_attr("pending") == 0) {
    after_drain_ = std::move(fixups);
  } else {
    for (const std::string& l : fixups) line(l);
  }
}

// An if; its results (register tensors or scalars, specialize-masks' select) are declared before
// it and assigned by each branch's yield.
void Emitter::if_op(const Operation& op) {
  std::vector<std::string> results;
  for (int i = 0; i < op.num_results(); ++i) {
    const Type& t = op.result(i)->type();
    if (t.is_scalar()) {
      std::string name = fresh(op.result(i)->name());
      line(std::string(is_float(t.element()) ? "float " : "int ") + name + ";");
      scalars_[op.result(i)] = name;
      results.push_back(name);
    } else if (t.is_tensor() && t.space() == MemorySpace::reg) {
      results.push_back(new_reg(op, i).name);
    } else {
      unsupported(op, "with a result of type " + t.str() + " is not emitted yet");
    }
  }
  auto branch = [&](const ir::Block& b) {
    ++indent_;
    block_ops(b, [&](const Operation& yield) {
      for (int i = 0; i < yield.num_operands(); ++i)
        assign_yielded(yield, i, results[i], op.result(i));
    });
    --indent_;
  };
  line("if (" + scalar(op, op.operand(0)) + ") {");
  branch(*op.region(0));
  if (!op.region(1)->ops().empty()) {
    line("} else {");
    branch(*op.region(1));
  }
  line("}");
}

}  // namespace tessel::target::cuda::detail
