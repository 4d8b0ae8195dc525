// Utilities over the event IR (task_ir_utils.h).
#include "transforms/task/task_ir_utils.h"

#include <algorithm>

namespace tessel::task::events {

std::vector<std::pair<int, bool>> op_tensors(const Op& op) {
  switch (op.kind) {
    case Op::Kind::alloc:
      return {{op.tensor, true}};
    case Op::Kind::copy:
      return {{op.src, false}, {op.dst, true}};
    case Op::Kind::call: {
      std::vector<std::pair<int, bool>> out;
      for (size_t i = 0; i < op.args.size(); ++i)
        out.push_back({op.args[i], writes(op.task->params[i].privilege)});
      return out;
    }
    default:
      return {};
  }
}

bool part_of(const Program& p, int id, int root) {
  while (true) {
    if (id == root) return true;
    if (p.tensors[id].kind != Tensor::Kind::piece) return false;
    id = p.tensors[id].parent;
  }
}

bool touches(const Program& p, const Op& op, int id) {
  for (const auto& [t, w] : op_tensors(op))
    if (part_of(p, t, id)) return true;
  for (const auto& o : op.body)
    if (touches(p, *o, id)) return true;
  return false;
}

bool is_read(const Program& p, const OpList& ops, int id) {
  for (const auto& op : ops) {
    for (const auto& [t, w] : op_tensors(*op)) {
      if (!part_of(p, t, id)) continue;
      if (op->kind == Op::Kind::alloc) continue;
      if (!w) return true;
      // A call that writes a tensor it also reads (read-write) reads it.
      if (op->kind == Op::Kind::call) {
        for (size_t i = 0; i < op->args.size(); ++i)
          if (op->args[i] == t && reads(op->task->params[i].privilege)) return true;
      }
    }
    if (is_read(p, op->body, id)) return true;
  }
  return false;
}

void replace_tensor(Program& p, int from, int to) {
  for (Tensor& t : p.tensors)
    if (t.kind == Tensor::Kind::piece && t.parent == from) t.parent = to;
  walk(p.body, [&](Op& op) {
    if (op.src == from) op.src = from == to ? from : to;
    if (op.dst == from) op.dst = to;
    for (int& a : op.args)
      if (a == from) a = to;
  });
}

void erase_op(Program& p, OpList& ops, size_t i) {
  std::vector<EventRef> instead = ops[i]->after;
  erase_op(p, ops, i, instead);
}

void erase_op(Program& p, OpList& ops, size_t i, const std::vector<EventRef>& instead) {
  int id = ops[i]->id;
  ops.erase(ops.begin() + static_cast<long>(i));
  if (id < 0) return;
  walk(p.body, [&](Op& op) {
    std::vector<EventRef> after;
    auto add = [&](const EventRef& r) {
      bool seen = std::any_of(after.begin(), after.end(), [&](const EventRef& x) {
        return x.op == r.op && x.index == r.index;
      });
      if (!seen) after.push_back(r);
    };
    bool waited = false;
    for (const EventRef& e : op.after) waited |= e.op == id;
    if (!waited) return;
    for (const EventRef& e : op.after) {
      if (e.op != id) {
        add(e);
        continue;
      }
      for (const EventRef& r : instead) add(r);
    }
    op.after = std::move(after);
  });
}

}  // namespace tessel::task::events
