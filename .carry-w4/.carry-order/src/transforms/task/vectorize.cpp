// Vectorize (vectorize.h).
#include "transforms/task/vectorize.h"

#include <set>

#include "transforms/task/task_ir_utils.h"

namespace tessel::transforms {

using namespace task::events;
using task::Expr;
using task::Processor;

namespace {

class Vectorizer {
 public:
  explicit Vectorizer(Program& p) : p_(p) {}

  void run(OpList& ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      run(ops[i]->body);  // innermost loops first
      Op& loop = *ops[i];
      if (loop.kind != Op::Kind::pfor || loop.level <= Processor::block) continue;
      OpList body = std::move(loop.body);
      for (auto& op : body) flatten(loop, *op);
      // Who waited for the loop's event waits for the events of the ops it became.
      const int loop_id = loop.id;
      std::vector<int> ids;
      for (const auto& op : body)
        if (op->id >= 0) ids.push_back(op->id);
      walk(p_.body, [&](Op& o) {
        std::vector<EventRef> after;
        for (const EventRef& e : o.after) {
          if (e.op != loop_id) {
            after.push_back(e);
            continue;
          }
          for (int id : ids) after.push_back({id, e.index});
        }
        o.after = std::move(after);
      });
      ops.erase(ops.begin() + static_cast<long>(i));
      for (size_t k = 0; k < body.size(); ++k)
        ops.insert(ops.begin() + static_cast<long>(i + k), std::move(body[k]));
      --i;
    }
  }

 private:
  std::string where(const Op& op) { return op.loc.str(); }

  // The parent tensor whose pieces along one dimension the loop variable `var` walks, if `t` is
  // such a piece; records that dimension.
  int covered_parent(int t, const std::string& var, int64_t count, int& dim) {
    const Tensor& piece = p_.tensors[t];
    if (piece.kind != Tensor::Kind::piece) return -1;
    const Tensor& parent = p_.tensors[piece.parent];
    dim = -1;
    for (size_t d = 0; d < piece.coords.size(); ++d) {
      const Expr& c = piece.coords[d];
      if (c.kind() == Expr::Kind::var && c.name() == var) {
        if (dim >= 0) return -1;
        dim = static_cast<int>(d);
        if (!piece.block[d].is_constant() || !parent.shape[d].is_constant() ||
            piece.block[d].value() * count != parent.shape[d].value())
          return -1;
      } else if (!(c.is_constant() && c.value() == 0) ||
                 piece.block[d].str() != parent.shape[d].str()) {
        return -1;
      }
    }
    return dim >= 0 ? piece.parent : -1;
  }

  bool mentions(const Tensor& t, const std::string& var) {
    for (const Expr& c : t.coords)
      if (c.str().find("%" + var) != std::string::npos) return true;
    return t.kind == Tensor::Kind::piece && mentions(p_.tensors[t.parent], var);
  }

  void flatten(const Op& loop, Op& op) {
    if (loop.vars.size() != 1)
      user_error(loop.loc, "vectorize: a prange over ", task::processor_name(loop.level),
                 "s must have one index");
    const std::string& var = loop.vars[0];
    if (!loop.extents[0].is_constant())
      user_error(loop.loc, "vectorize: the prange over ", task::processor_name(loop.level),
                 "s has extent ", loop.extents[0].str(), ", which is not a constant");
    int64_t count = loop.extents[0].value();
    if (op.kind == Op::Kind::alloc)
      user_error(p_.tensors[op.tensor].loc, "vectorize: tensor %", p_.tensors[op.tensor].name,
                 " is allocated once per ", task::processor_name(loop.level),
                 "; map it to the memory of its parent tensor");
    if (op.kind != Op::Kind::call && op.kind != Op::Kind::copy)
      user_error(op.loc, "vectorize: a loop inside a prange over ",
                 task::processor_name(loop.level), "s");
    int lane_dim = -1;
    auto operand = [&](int& t, bool written) {
      int dim = -1;
      int parent = covered_parent(t, var, count, dim);
      if (parent >= 0) {
        t = parent;
        if (lane_dim < 0 || written) lane_dim = dim;
        return;
      }
      if (written || mentions(p_.tensors[t], var))
        user_error(op.loc, "vectorize: operand ", p_.tensor_ref(t), " of the op at ", where(op),
                   " is neither a piece that the ", task::processor_name(loop.level),
                   "s cover exactly nor the same for every ", task::processor_name(loop.level));
    };
    if (op.kind == Op::Kind::copy) {
      operand(op.src, false);
      operand(op.dst, true);
    } else {
      for (size_t i = 0; i < op.args.size(); ++i)
        operand(op.args[i], task::writes(op.task->params[i].privilege));
    }
    op.lanes.insert(op.lanes.begin(), Lane{count, loop.level, lane_dim < 0 ? 0 : lane_dim});
    // What the loop waited for, each of its ops now waits for itself.
    const size_t own = op.after.size();
    for (const EventRef& e : loop.after) {
      bool seen = false;
      for (const EventRef& x : op.after) seen |= x.op == e.op && x.index == e.index;
      if (!seen) op.after.push_back(e);
    }
    op.event_shape.insert(op.event_shape.begin(), {Expr(count), loop.level});
    for (size_t i = 0; i < own; ++i) {
      EventRef& e = op.after[i];
      // A wait on an op of the same loop body becomes point-wise: its element for this lane.
      bool inside = false;
      for (const auto& o : loop.body)
        if (o && o->id == e.op) inside = true;
      if (inside || body_ids_.count(e.op)) e.index.insert(e.index.begin(), var);
    }
    body_ids_.insert(op.id);
  }

  Program& p_;
  std::set<int> body_ids_;
};

}  // namespace

void vectorize(Program& program) {
  Vectorizer(program).run(program.body);
}

}  // namespace tessel::transforms
