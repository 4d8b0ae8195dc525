// Workspaces (async.h, "Workspaces"): global memory the launch provides, views of its parts, and
// the arrival counters through which the blocks of a split reduction meet.
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

void Emitter::workspace(const Operation& op) {
  const Type& t = op.result()->type();
  if (t.element() != ScalarKind::f32 && t.element() != ScalarKind::i32) {
    unsupported(op, "of " + std::string(ir::to_string(t.element())) +
                        " is not emitted (f32 partials and i32 counters are)");
  }
  std::string name = fresh(op.result()->name());
  KernelParam p;
  p.kind = KernelParam::Kind::workspace;
  p.name = name;
  p.type = t;
  p.tensor = workspaces_++;
  out_.params.push_back(p);
  extra_params_.push_back(std::string(t.element() == ScalarKind::f32 ? "float" : "int") +
                          "* __restrict__ " + name);
  views_[op.result()] = whole_tensor(name, t);
}

void Emitter::workspace_part(const Operation& op) {
  View v = view(op, op.operand(0));
  std::string elements = "1";
  for (const std::string& e : v.extent) elements = elements == "1" ? e : elements + " * " + e;
  v.base = "(" + v.base + " + static_cast<size_t>(" + scalar(op, op.operand(1)) + ") * (" +
           elements + "))";
  views_[op.result()] = v;
}

void Emitter::counter_arrive(const Operation& op) {
  if (issue_one_) unsupported(op, "in a role issued by one thread is not emitted");
  const View& c = view(op, op.operand(0));
  const std::string n = scalar(op, op.operand(1));
  const std::string name = fresh(op.result()->name());
  const std::string word = scratch(op.result()->name(), 1);
  line("int " + name + ";");
  line("{  // counter_arrive: release this role's writes, count once, acquire the others'");
  ++indent_;
  line("__threadfence();");
  line(threads_barrier());
  line("if (tid == 0) {");
  line("  const unsigned before = atomicInc(reinterpret_cast<unsigned*>(" + c.base +
       "), static_cast<unsigned>(" + n + ") - 1u);");
  line("  *reinterpret_cast<int*>(" + word + ") = static_cast<int>(before);");
  line("}");
  line(threads_barrier());
  line(name + " = *reinterpret_cast<const int*>(" + word + ");");
  line("__threadfence();");
  --indent_;
  line("}");
  scalars_[op.result()] = name;
}

}  // namespace tessel::target::cuda::detail
