// EliminateCopies (eliminate_copies.h).
#include "transforms/task/eliminate_copies.h"

#include <algorithm>
#include <set>

#include "transforms/task/task_ir_utils.h"

namespace tessel::transforms {

using namespace task::events;

namespace {

bool same_shape(const Tensor& a, const Tensor& b) {
  if (a.shape.size() != b.shape.size()) return false;
  for (size_t i = 0; i < a.shape.size(); ++i)
    if (a.shape[i].str() != b.shape[i].str()) return false;
  return true;
}

bool is_alloc_of(const Op& op, int t) {
  return op.kind == Op::Kind::alloc && op.tensor == t;
}

class Eliminator {
 public:
  explicit Eliminator(Program& p) : p_(p) {}

  void run() {
    while (hoist(p_.body) || hoist_invariant(p_.body) || alias(p_.body) || duplicate(p_.body) ||
           forward(p_.body) || dead(p_.body) || overwritten(p_.body)) {
    }
  }

 private:
  // ---- spill hoisting ----
  bool hoist(OpList& ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      Op& loop = *ops[i];
      if (hoist(loop.body)) return true;
      if (loop.kind != Op::Kind::for_loop) continue;
      OpList& body = loop.body;
      for (size_t a = 0; a < body.size(); ++a) {
        if (body[a]->kind != Op::Kind::alloc) continue;
        int t = body[a]->tensor;
        // The first and last ops touching t after its allocation.
        size_t first = 0, last = 0;
        bool found = false;
        for (size_t j = a + 1; j < body.size(); ++j) {
          if (!touches(p_, *body[j], t)) continue;
          if (!found) first = j;
          last = j;
          found = true;
        }
        if (!found || first == last) continue;
        Op &in = *body[first], &out = *body[last];
        if (in.kind != Op::Kind::copy || out.kind != Op::Kind::copy || in.dst != t ||
            out.src != t || in.src != out.dst)
          continue;
        int x = in.src;
        if (p_.tensors[x].kind == Tensor::Kind::piece) continue;  // may depend on the loop index
        bool outside = true;
        walk(body, [&](Op& o) {
          if (is_alloc_of(o, x)) outside = false;
        });
        if (!outside) continue;
        bool other_use = false;
        for (size_t j = 0; j < body.size(); ++j)
          if (j != first && j != last && touches(p_, *body[j], x)) other_use = true;
        if (other_use) continue;
        // Move: alloc and copy-in before the loop, copy-out after it.
        std::unique_ptr<Op> out_op = std::move(body[last]);
        body.erase(body.begin() + static_cast<long>(last));
        std::unique_ptr<Op> in_op = std::move(body[first]);
        body.erase(body.begin() + static_cast<long>(first));
        std::unique_ptr<Op> alloc_op = std::move(body[a]);
        body.erase(body.begin() + static_cast<long>(a));
        in_op->after = loop.after;
        loop.after.push_back({in_op->id, {}});
        out_op->after = {{loop.id, {}}};
        ops.insert(ops.begin() + static_cast<long>(i) + 1, std::move(out_op));
        ops.insert(ops.begin() + static_cast<long>(i), std::move(in_op));
        ops.insert(ops.begin() + static_cast<long>(i), std::move(alloc_op));
        return true;
      }
    }
    return false;
  }

  // ---- loop-invariant copy-in: a copy into a fresh tensor of data the loop does not change ----
  // (Q's tile of attention, read by every key step): the allocation and the copy move out of the
  // loop, to be done once, as early as the source's data allows.
  // Whether piece t (or a piece it is part of) names one of `vars` in its coordinates or block
  // extents (textually: a longer name that starts the same counts too, which only hoists less).
  bool mentions_var(int t, const std::vector<std::string>& vars) {
    for (; t >= 0; t = p_.tensors[t].kind == Tensor::Kind::piece ? p_.tensors[t].parent : -1) {
      std::vector<task::Expr> exprs = p_.tensors[t].coords;
      exprs.insert(exprs.end(), p_.tensors[t].block.begin(), p_.tensors[t].block.end());
      for (const task::Expr& c : exprs)
        for (const std::string& v : vars)
          if (c.str().find("%" + v) != std::string::npos) return true;
    }
    return false;
  }

  bool hoist_invariant(OpList& ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      Op& loop = *ops[i];
      if (hoist_invariant(loop.body)) return true;
      if (loop.kind != Op::Kind::for_loop) continue;
      OpList& body = loop.body;
      for (size_t a = 0; a < body.size(); ++a) {
        if (body[a]->kind != Op::Kind::alloc) continue;
        int t = body[a]->tensor;
        // The first op touching t copies x into it; no other op of the body writes t.
        size_t first = 0;
        bool found = false, written = false;
        for (size_t j = a + 1; j < body.size(); ++j) {
          if (!touches(p_, *body[j], t)) continue;
          if (!found) {
            first = j;
            found = true;
          } else if (writes(*body[j], t)) {
            written = true;
          }
        }
        if (!found || written) continue;
        Op& in = *body[first];
        if (in.kind != Op::Kind::copy || in.dst != t) continue;
        int x = in.src, root = p_.root(x);
        if (mentions_var(x, loop.vars)) continue;
        bool x_written = false, x_local = false;
        for (const auto& o : body) x_written |= writes(*o, root);
        walk(body, [&](Op& o) { x_local |= is_alloc_of(o, root); });
        if (x_written || x_local) continue;
        std::unique_ptr<Op> in_op = std::move(body[first]);
        body.erase(body.begin() + static_cast<long>(first));
        std::unique_ptr<Op> alloc_op = std::move(body[a]);
        body.erase(body.begin() + static_cast<long>(a));
        // Ops of the body that waited for the copy wait for the loop's start instead.
        int id = in_op->id;
        walk(body, [&](Op& o) {
          o.after.erase(std::remove_if(o.after.begin(), o.after.end(),
                                       [&](const EventRef& e) { return e.op == id; }),
                        o.after.end());
        });
        // As early as its source allows: after the last op before the loop that touches x's
        // data, waiting for what the loop waited for among the ops up to there.
        size_t at = i;
        while (at > 0 && !touches(p_, *ops[at - 1], root) && !is_alloc_of(*ops[at - 1], root)) --at;
        std::set<int> before;
        for (size_t k = 0; k < at; ++k) before.insert(ops[k]->id);
        in_op->after.clear();
        for (const EventRef& e : loop.after)
          if (before.count(e.op)) in_op->after.push_back(e);
        loop.after.push_back({in_op->id, {}});
        ops.insert(ops.begin() + static_cast<long>(at), std::move(in_op));
        ops.insert(ops.begin() + static_cast<long>(at), std::move(alloc_op));
        return true;
      }
    }
    return false;
  }

  // ---- a copy into a tensor that a later copy of the same op list overwrites unread ----
  // (the accumulator copied back after each of two tasks of one loop step: only the last copy
  // counts).
  bool overwritten(OpList& ops) {
    for (size_t i = 0; i < ops.size(); ++i) {
      if (overwritten(ops[i]->body)) return true;
      Op& first = *ops[i];
      if (first.kind != Op::Kind::copy) continue;
      int t = first.dst;
      if (p_.tensors[t].kind != Tensor::Kind::allocation) continue;
      for (size_t j = i + 1; j < ops.size(); ++j) {
        const Op& o = *ops[j];
        if (o.kind == Op::Kind::copy && o.dst == t && !part_of(p_, o.src, t)) {
          erase_op(p_, ops, i);
          return true;
        }
        if (touches(p_, o, t)) break;
      }
    }
    return false;
  }

  // ---- alias a fresh allocation with the tensor it is copied from / into ----
  bool alias(OpList& ops) {
    for (size_t a = 0; a < ops.size(); ++a) {
      if (alias(ops[a]->body)) return true;
      if (ops[a]->kind != Op::Kind::alloc) continue;
      int t = ops[a]->tensor;
      int in = -1, out = -1, last = -1;
      bool whole_only = true, read_into_other = false, written = false;
      for (size_t j = a + 1; j < ops.size(); ++j) {
        const Op& o = *ops[j];
        if (!touches(p_, o, t)) continue;
        last = static_cast<int>(j);
        if (static_cast<int>(j) != in && o.kind != Op::Kind::copy && writes(o, t)) written = true;
        if (o.kind == Op::Kind::copy && o.dst == t && in < 0 && out < 0) {
          in = static_cast<int>(j);
        } else if (o.kind == Op::Kind::copy && o.src == t && in >= 0 && o.dst != ops[in]->src) {
          // A read of t into another tensor (Q's tile into shared memory), not a copy back.
          read_into_other = true;
        } else if (o.kind == Op::Kind::copy && o.src == t && out < 0) {
          out = static_cast<int>(j);
        } else if (o.kind == Op::Kind::copy && (o.src == t || o.dst == t)) {
          whole_only = false;  // a second copy in or out
        }
      }
      if (!whole_only || (in < 0 && out < 0)) continue;
      // t read into another tensor stands for v only while t holds v's data unchanged.
      if (read_into_other && written) continue;
      if (out >= 0 && out != last) continue;  // used after it is copied back
      int v = in >= 0 ? ops[in]->src : ops[out]->dst;
      if (in >= 0 && out >= 0 && ops[out]->dst != v) continue;
      const Tensor &tt = p_.tensors[t], &vt = p_.tensors[v];
      if (tt.memory != vt.memory || tt.element != vt.element || !same_shape(tt, vt)) continue;
      // Nothing else may touch v's data while t stands for it.
      int root = p_.root(v);
      bool clash = false;
      for (int j = in >= 0 ? in : static_cast<int>(a) + 1; j <= last; ++j)
        if (j != in && j != out && touches(p_, *ops[j], root)) clash = true;
      if (clash) continue;
      replace_tensor(p_, t, v);
      if (out >= 0) erase_op(p_, ops, out);
      if (in >= 0) erase_op(p_, ops, in);
      erase_op(p_, ops, a);
      return true;
    }
    return false;
  }

  // ---- duplicates: the same data copied into two fresh tensors ----
  bool same_view(int a, int b) {
    if (a == b) return true;
    const Tensor &ta = p_.tensors[a], &tb = p_.tensors[b];
    if (ta.kind != Tensor::Kind::piece || tb.kind != Tensor::Kind::piece) return false;
    if (ta.block.size() != tb.block.size()) return false;
    for (size_t d = 0; d < ta.block.size(); ++d)
      if (ta.block[d].str() != tb.block[d].str() || ta.coords[d].str() != tb.coords[d].str())
        return false;
    return same_view(ta.parent, tb.parent);
  }

  bool writes(const Op& op, int t) {
    for (const auto& [x, w] : op_tensors(op))
      if (w && op.kind != Op::Kind::alloc && part_of(p_, x, t)) return true;
    for (const auto& o : op.body)
      if (writes(*o, t)) return true;
    return false;
  }

  // Whether any op of the program other than `except` writes tensor t.
  bool written_elsewhere(int t, const Op* except) {
    bool found = false;
    walk(p_.body, [&](Op& o) {
      if (&o != except && o.body.empty() && writes(o, t)) found = true;
    });
    return found;
  }

  bool duplicate(OpList& ops) {
    for (size_t j = 0; j < ops.size(); ++j) {
      if (duplicate(ops[j]->body)) return true;
      Op& second = *ops[j];
      if (second.kind != Op::Kind::copy) continue;
      int t2 = second.dst;
      if (p_.tensors[t2].kind != Tensor::Kind::allocation) continue;
      for (size_t i = 0; i < j; ++i) {
        Op& first = *ops[i];
        if (first.kind != Op::Kind::copy || !same_view(first.src, second.src)) continue;
        int t1 = first.dst;
        const Tensor &a = p_.tensors[t1], &b = p_.tensors[t2];
        if (t1 == t2 || a.kind != Tensor::Kind::allocation || a.memory != b.memory ||
            a.element != b.element || !same_shape(a, b))
          continue;
        // The source is unchanged between the copies, and neither copy is written otherwise.
        int root = p_.root(first.src);
        bool changed = false;
        for (size_t k = i + 1; k < j; ++k) changed |= writes(*ops[k], root);
        if (changed || written_elsewhere(t1, &first) || written_elsewhere(t2, &second)) continue;
        // Who waited for the duplicate waits for the first copy (Figure 10c: b2[e2 / e1]).
        erase_op(p_, ops, j, {EventRef{first.id, {}}});
        replace_tensor(p_, t2, t1);
        for (size_t k = 0; k < ops.size(); ++k) {
          if (is_alloc_of(*ops[k], t2)) {
            erase_op(p_, ops, k);
            break;
          }
        }
        return true;
      }
    }
    return false;
  }

  // ---- forward a -> X -> b into a ----
  bool forward(OpList& ops) {
    for (size_t j = 0; j < ops.size(); ++j) {
      if (forward(ops[j]->body)) return true;
      Op& op2 = *ops[j];
      if (op2.kind != Op::Kind::copy) continue;
      int x = op2.src, b = op2.dst;
      // The last op before op2 that touches x must be a copy a -> x.
      int i1 = -1;
      for (int k = static_cast<int>(j) - 1; k >= 0; --k) {
        if (ops[k]->kind == Op::Kind::alloc) continue;
        if (touches(p_, *ops[k], x)) {
          i1 = k;
          break;
        }
      }
      if (i1 < 0 || ops[i1]->kind != Op::Kind::copy || ops[i1]->dst != x) continue;
      int a = ops[i1]->src;
      const Tensor &ta = p_.tensors[a], &tb = p_.tensors[b];
      if (ta.kind != Tensor::Kind::allocation || tb.kind != Tensor::Kind::allocation) continue;
      if (ta.memory != tb.memory || ta.memory == task::Memory::none || ta.element != tb.element ||
          !same_shape(ta, tb))
        continue;
      // a: allocated in this block, untouched between the copies and after op2; b: allocated in
      // this block, untouched before op2.
      int alloc_a = -1, alloc_b = -1;
      for (size_t k = 0; k < ops.size(); ++k) {
        if (is_alloc_of(*ops[k], a)) alloc_a = static_cast<int>(k);
        if (is_alloc_of(*ops[k], b)) alloc_b = static_cast<int>(k);
      }
      if (alloc_a < 0 || alloc_b < 0 || alloc_b > static_cast<int>(j)) continue;
      bool ok = true;
      for (size_t k = static_cast<size_t>(i1) + 1; k < ops.size() && ok; ++k)
        if (k != j && touches(p_, *ops[k], a)) ok = false;
      for (int k = alloc_b + 1; k < static_cast<int>(j) && ok; ++k)
        if (touches(p_, *ops[k], b)) ok = false;
      if (!ok) continue;
      erase_op(p_, ops, j);
      replace_tensor(p_, b, a);
      erase_op(p_, ops, alloc_b);
      return true;
    }
    return false;
  }

  // ---- self copies, copies nobody reads, unused allocations ----
  bool dead(OpList& ops) {
    for (size_t j = 0; j < ops.size(); ++j) {
      if (dead(ops[j]->body)) return true;
      Op& op = *ops[j];
      if (op.kind == Op::Kind::copy) {
        int root = p_.root(op.dst);
        bool unread =
            p_.tensors[root].kind == Tensor::Kind::allocation && !is_read(p_, p_.body, root);
        if (op.src == op.dst || unread) {
          erase_op(p_, ops, j);
          return true;
        }
      }
      if (op.kind == Op::Kind::alloc) {
        int t = op.tensor;
        bool used = false;
        walk(p_.body, [&](Op& o) {
          if (!is_alloc_of(o, t) && !o.body.size() && touches(p_, o, t)) used = true;
        });
        if (!used) {
          erase_op(p_, ops, j);
          return true;
        }
      }
    }
    return false;
  }

  Program& p_;
};

}  // namespace

void eliminate_copies(Program& program) {
  Eliminator(program).run();
}

}  // namespace tessel::transforms
