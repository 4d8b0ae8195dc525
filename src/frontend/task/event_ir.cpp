// The event IR's tables and printer (event_ir.h).
#include "frontend/task/event_ir.h"

#include <functional>

#include "ir/type.h"

namespace tessel::task::events {

int Program::add_tensor(Tensor t) {
  tensors.push_back(std::move(t));
  return static_cast<int>(tensors.size()) - 1;
}

std::unique_ptr<Op> Program::make_op(Op::Kind kind) {
  auto op = std::make_unique<Op>();
  op->kind = kind;
  if (kind != Op::Kind::alloc) op->id = next_event++;
  return op;
}

int Program::root(int id) const {
  while (tensors.at(id).kind == Tensor::Kind::piece) id = tensors[id].parent;
  return id;
}

namespace {
std::string list(const std::vector<Expr>& xs) {
  std::string s;
  for (size_t i = 0; i < xs.size(); ++i) s += (i ? ", " : "") + xs[i].str();
  return s;
}
}  // namespace

std::string Program::tensor_ref(int id) const {
  const Tensor& t = tensors.at(id);
  if (t.kind != Tensor::Kind::piece) return "%" + t.name;
  return tensor_ref(t.parent) + ".blocks(" + list(t.block) + ")[" + list(t.coords) + "]";
}

void walk(std::vector<std::unique_ptr<Op>>& ops, const std::function<void(Op&)>& f) {
  for (auto& op : ops) {
    f(*op);
    walk(op->body, f);
  }
}

namespace {

std::string event_ref(const EventRef& e) {
  std::string s = "%e" + std::to_string(e.op);
  if (!e.index.empty()) {
    s += "[";
    for (size_t i = 0; i < e.index.size(); ++i)
      s += (i ? ", " : "") + (e.index[i] == ":" ? std::string(":") : "%" + e.index[i]);
    s += "]";
  }
  return s;
}

void print_ops(const Program& p, const std::vector<std::unique_ptr<Op>>& ops, int indent,
               std::string& out) {
  std::string pad(indent, ' ');
  for (const auto& op : ops) {
    out += pad;
    if (op->kind == Op::Kind::alloc) {
      const Tensor& t = p.tensors[op->tensor];
      out += "%" + t.name + " = tensor " + std::string(ir::to_string(t.element)) + " [" +
             list(t.shape) + "] " + std::string(memory_name(t.memory));
      if (op->offset >= 0) out += " {offset = " + std::to_string(op->offset) + "}";
      out += "\n";
      continue;
    }
    out += "%e" + std::to_string(op->id);
    if (!op->event_shape.empty()) {
      out += " : [";
      for (size_t i = 0; i < op->event_shape.size(); ++i)
        out += (i ? ", " : "") + std::string("(") + op->event_shape[i].first.str() + ", " +
               std::string(processor_name(op->event_shape[i].second)) + ")";
      out += "]";
    }
    out += " = ";
    switch (op->kind) {
      case Op::Kind::copy:
        out += "copy " + p.tensor_ref(op->src) + " -> " + p.tensor_ref(op->dst);
        break;
      case Op::Kind::call: {
        out += "call " + op->leaf->name + "(";
        for (size_t i = 0; i < op->args.size(); ++i)
          out += (i ? ", " : "") + p.tensor_ref(op->args[i]);
        out += ") @" + std::string(processor_name(op->level));
        break;
      }
      case Op::Kind::for_loop:
      case Op::Kind::pfor: {
        out += op->kind == Op::Kind::pfor ? "pfor " : "for ";
        for (size_t i = 0; i < op->vars.size(); ++i) out += (i ? ", %" : "%") + op->vars[i];
        out += " in [" + list(op->extents) + "]";
        if (op->kind == Op::Kind::pfor) out += " @" + std::string(processor_name(op->level));
        break;
      }
      default:
        break;
    }
    if (!op->lanes.empty()) {
      out += " lanes [";
      for (size_t i = 0; i < op->lanes.size(); ++i)
        out += (i ? ", " : "") + std::to_string(op->lanes[i].count) + " x " +
               std::string(processor_name(op->lanes[i].level)) + " along " +
               std::to_string(op->lanes[i].dim);
      out += "]";
    }
    out += " after {";
    for (size_t i = 0; i < op->after.size(); ++i) out += (i ? ", " : "") + event_ref(op->after[i]);
    out += "}";
    std::string attrs;
    if (op->pipeline > 0) attrs += "pipeline = " + std::to_string(op->pipeline);
    if (op->warp_specialize >= 0)
      attrs += std::string(attrs.empty() ? "" : ", ") +
               "warp_specialize = " + (op->warp_specialize ? "true" : "false");
    if (op->shared_limit > 0)
      attrs += std::string(attrs.empty() ? "" : ", ") +
               "shared_limit = " + std::to_string(op->shared_limit);
    if (op->raster_group > 0)
      attrs += std::string(attrs.empty() ? "" : ", ") +
               "raster_group = " + std::to_string(op->raster_group);
    if (op->alternate_ends >= 0)
      attrs += std::string(attrs.empty() ? "" : ", ") +
               "alternate_ends = " + std::to_string(op->alternate_ends);
    if (!attrs.empty()) out += " {" + attrs + "}";
    if (op->kind == Op::Kind::for_loop || op->kind == Op::Kind::pfor) {
      out += " {\n";
      print_ops(p, op->body, indent + 2, out);
      if (!op->body.empty() && op->body.back()->id >= 0)
        out += pad + "  yield %e" + std::to_string(op->body.back()->id) + "\n";
      out += pad + "}";
    }
    out += "\n";
  }
}

}  // namespace

std::string Program::print() const {
  // The sizes in the order the lowered kernel takes them (the entry task's, not the arguments').
  std::string out = "tasks @" + name + "[";
  for (size_t i = 0; i < sizes.size(); ++i) out += (i ? ", " : "") + sizes[i];
  out += "](";
  for (size_t i = 0; i < arguments.size(); ++i) {
    const Tensor& t = tensors[arguments[i]];
    out += (i ? ", " : "") + std::string("%") + t.name + ": " +
           std::string(ir::to_string(t.element)) + " [" + list(t.shape) + "] " +
           std::string(memory_name(t.memory));
  }
  out += ") {\n";
  print_ops(*this, body, 2, out);
  out += "}\n";
  return out;
}

}  // namespace tessel::task::events
