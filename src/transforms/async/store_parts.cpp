#include "transforms/async/store_parts.h"

#include <algorithm>
#include <unordered_set>

namespace tessel::transforms {

using ir::Attribute;
using ir::Block;
using ir::OpBuilder;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Value;

std::optional<OutputTile> find_output_tile(const Block& body) {
  const auto& ops = body.ops();
  for (size_t i = 0; i < ops.size(); ++i) {
    const Operation& op = *ops[i];
    if (op.kind() != OpKind::cast || !op.result()->type().is_tensor() ||
        op.result()->type().space() != ir::MemorySpace::reg)
      continue;
    const ScalarKind e = op.result()->type().element();
    if (e != ScalarKind::f16 && e != ScalarKind::bf16) continue;
    for (size_t j = i + 1; j < ops.size(); ++j) {
      if (ops[j]->kind() == OpKind::slice && ops[j]->operand(0) == op.result())
        return OutputTile{ops[i].get(), i, j};
    }
  }
  return std::nullopt;
}

std::string collect_carried(const Operation& loop, const std::vector<Operation*>& moved,
                            const std::vector<const Value*>& outs, std::vector<Value*>& carried) {
  auto is_output = [&](const Value* v) {
    return std::find(outs.begin(), outs.end(), v) != outs.end();
  };
  std::unordered_set<const Operation*> moved_set;
  for (Operation* op : moved) ir::walk(op, [&](Operation* o) { moved_set.insert(o); });
  const ir::Type index = ir::Type::scalar(ScalarKind::index);
  std::string why;
  for (Operation* op : moved) {
    ir::walk(op, [&](Operation* o) {
      for (Value* v : o->operands()) {
        if (!why.empty() || !ir::defined_inside(v, loop)) continue;
        if (v->def() && moved_set.count(v->def())) continue;
        if (v->owner_block() && moved_set.count(v->owner_block()->parent())) continue;
        if (std::find(carried.begin(), carried.end(), v) != carried.end()) continue;
        if (is_output(v) || v->type() == index) {
          carried.push_back(v);
        } else {
          why = ir::op_where(*o) + " uses " + ir::value_ref(v) + " (" + v->type().str() +
                ") of the tile body, which is neither an output tile nor an index";
        }
      }
    });
    if (!why.empty()) return why;
  }
  // The output tiles first, in the order of `outs`, then the scalars in the order found.
  std::vector<Value*> ordered;
  for (const Value* out : outs) {
    auto it = std::find(carried.begin(), carried.end(), out);
    if (it == carried.end()) return "the stores do not use the output tile " + ir::value_ref(out);
    ordered.push_back(*it);
  }
  for (Value* v : carried) {
    if (!is_output(v)) ordered.push_back(v);
  }
  carried = std::move(ordered);
  return "";
}

CarriedAcross carry_across_tiles(Operation& loop, const std::vector<Value*>& carried) {
  Block& body = *loop.region(0);
  const SourceLocation loc = loop.loc();
  OpBuilder before(loop.parent_block());
  before.set_insertion_point_before(&loop);
  CarriedAcross out;
  for (Value* v : carried) {
    Value* init = nullptr;
    if (v->type().is_tensor()) {
      Operation* zeros = before.create(OpKind::fill, {}, {v->type()}, loc);
      zeros->set_attr("value", Attribute::real(0.0));
      zeros->result()->set_name(v->name() + "_none");
      init = zeros->result();
    } else {
      init = before.index_constant(0, loc);
    }
    loop.add_operand(init);
    out.previous.push_back(body.add_argument(v->type(), "prev_" + v->name()));
    out.last.push_back(loop.add_result(v->type(), "last_" + v->name()));
    body.terminator()->add_operand(v);
  }
  OpBuilder top(&body);
  top.set_insertion_point_before(body.ops().front().get());
  out.has_prev = top.compare("ne", body.argument(0), loop.operand(0), "has_prev_tile", loc);
  return out;
}

}  // namespace tessel::transforms
