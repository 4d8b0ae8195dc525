// Dependence analysis into the event IR (dependence_analysis.h).
#include "frontend/task/dependence_analysis.h"

#include <algorithm>
#include <set>

namespace tessel::task {

using events::EventRef;
using events::Op;
using events::Program;
using events::Tensor;

namespace {

struct Access {
  std::vector<EventRef> writers, readers;
};
using State = std::map<int, Access>;  // per root tensor

struct Frame {
  const Node* node = nullptr;
  std::vector<int> tensors;                    // variant tensor -> event tensor (-1: not made)
  std::map<std::string, std::string> renames;  // the body's loop variables -> unique names
};

void add_unique(std::vector<EventRef>& to, const std::vector<EventRef>& from) {
  for (const EventRef& e : from) {
    bool seen = std::any_of(to.begin(), to.end(),
                            [&](const EventRef& x) { return x.op == e.op && x.index == e.index; });
    if (!seen) to.push_back(e);
  }
}

class Analysis {
 public:
  explicit Analysis(const Instantiation& inst) : inst_(inst) {}

  Program run() {
    p_.name = inst_.program->name();
    // The kernel's arguments in the order the program declares its global tensors (inputs
    // first, by convention), whatever order the entry task takes them in.
    std::vector<int> by_global;
    for (const GlobalTensor& gt : inst_.program->globals()) {
      Tensor t;
      t.kind = Tensor::Kind::argument;
      t.name = gt.name;
      t.element = gt.element;
      t.memory = Memory::global;
      for (const std::string& s : gt.shape) t.shape.push_back(global_extent(s));
      int id = p_.add_tensor(t);
      p_.arguments.push_back(id);
      by_global.push_back(id);
    }
    std::vector<int> args;
    for (int g : inst_.program->entry_args()) args.push_back(by_global[g]);
    // The sizes in the order the entry task's tensors name them (C [M,N], A [M,K]: M, N, K).
    for (int a : args) {
      for (const Expr& e : p_.tensors[a].shape)
        if (!e.is_constant() &&
            std::find(p_.sizes.begin(), p_.sizes.end(), e.name()) == p_.sizes.end())
          p_.sizes.push_back(e.name());
    }
    State state;
    lower_node(*inst_.root, args, p_.body, state);
    return std::move(p_);
  }

 private:
  // Records the op's accesses: (tensor, writes?) — dependences first, then the state.
  void access(Op& op, const std::vector<std::pair<int, bool>>& accesses, State& state) {
    for (const auto& [id, write] : accesses) {
      Access& a = state[p_.root(id)];
      add_unique(op.after, a.writers);
      if (write) add_unique(op.after, a.readers);
    }
    EventRef self{op.id, {}};
    for (const auto& [id, write] : accesses) {
      Access& a = state[p_.root(id)];
      if (write) {
        a.writers = {self};
        a.readers.clear();
      } else {
        a.readers.push_back(self);
      }
    }
  }

  std::string unique_var(const std::string& v) {
    std::string name = v;
    for (int n = 1; used_vars_.count(name); ++n) name = v + std::to_string(n);
    used_vars_.insert(name);
    return name;
  }

  Expr in_frame(const Frame& f, const Expr& e) {
    return simplify(f.node->resolve(e), [&](const Expr& leaf) -> Expr {
      if (leaf.kind() != Expr::Kind::var) return leaf;
      auto it = f.renames.find(leaf.name());
      return it == f.renames.end() ? leaf : Expr::var(it->second);
    });
  }

  int tensor(Frame& f, int id) {
    if (f.tensors[id] >= 0) return f.tensors[id];
    const TensorDef& def = f.node->variant->tensors[id];
    TESSEL_ASSERT(def.kind == TensorDef::Kind::piece, "a tensor of the body was not made");
    const PartitionDef& part = f.node->variant->partitions[def.partition];
    Tensor t;
    t.kind = Tensor::Kind::piece;
    t.parent = tensor(f, part.source);
    t.element = p_.tensors[t.parent].element;
    t.memory = p_.tensors[t.parent].memory;
    for (const Expr& b : part.block) t.block.push_back(in_frame(f, b));
    for (const Expr& c : def.coords) t.coords.push_back(in_frame(f, c));
    t.shape = t.block;
    t.loc = def.loc;
    // The piece at 0 of a partition into one piece (B of an mma partition) is the tensor itself.
    bool whole = true;
    for (size_t d = 0; d < t.block.size(); ++d) {
      whole &= t.coords[d].is_constant() && t.coords[d].value() == 0 &&
               t.block[d].str() == p_.tensors[t.parent].shape.at(d).str();
    }
    if (whole) return f.tensors[id] = t.parent;
    f.tensors[id] = p_.add_tensor(t);
    return f.tensors[id];
  }

  // `renames`: the caller's loop variables, which the extents of its pieces may name.
  void lower_node(const Node& n, const std::vector<int>& args,
                  std::vector<std::unique_ptr<Op>>& ops, State& state,
                  const std::map<std::string, std::string>& renames = {}) {
    if (n.variant->kind == VariantKind::leaf) {
      auto op = p_.make_op(Op::Kind::call);
      op->leaf = n.variant;
      op->task = n.task;
      op->args = args;
      op->level = n.proc;
      op->loc = n.variant->loc;
      std::vector<std::pair<int, bool>> acc;
      for (size_t i = 0; i < args.size(); ++i) {
        Privilege priv = n.task->params[i].privilege;
        if (reads(priv)) acc.push_back({args[i], false});
        if (writes(priv)) acc.push_back({args[i], true});
      }
      access(*op, acc, state);
      ops.push_back(std::move(op));
      return;
    }
    Frame f;
    f.node = &n;
    f.renames = renames;
    f.tensors.assign(n.variant->tensors.size(), -1);
    for (size_t i = 0; i < args.size(); ++i) f.tensors[i] = args[i];
    // Locals first, so that they are in scope of every statement of the body.
    for (size_t id = 0; id < n.variant->tensors.size(); ++id) {
      const TensorDef& def = n.variant->tensors[id];
      if (def.kind != TensorDef::Kind::local) continue;
      Tensor t;
      t.kind = Tensor::Kind::allocation;
      t.name = "local" + std::to_string(locals_++);
      t.element = def.element;
      for (const Expr& e : def.shape) t.shape.push_back(in_frame(f, e));
      t.memory = Memory::none;
      t.loc = def.loc;
      f.tensors[id] = p_.add_tensor(t);
      auto op = p_.make_op(Op::Kind::alloc);
      op->tensor = f.tensors[id];
      op->loc = def.loc;
      ops.push_back(std::move(op));
    }
    statements(f, n.variant->body, ops, state);
  }

  // The processor level a loop's launches run on (the first launch's callee).
  const Node* first_callee(const Frame& f, const std::vector<Stmt>& body) {
    for (const Stmt& s : body) {
      if (s.kind == Stmt::Kind::launch) return &f.node->callee(s);
      if (const Node* c = first_callee(f, s.body)) return c;
    }
    return nullptr;
  }

  void statements(Frame& f, const std::vector<Stmt>& body, std::vector<std::unique_ptr<Op>>& ops,
                  State& state) {
    for (const Stmt& s : body) {
      if (s.kind == Stmt::Kind::launch) {
        launch(f, s, ops, state);
        continue;
      }
      bool parallel = s.kind == Stmt::Kind::prange;
      auto op = p_.make_op(parallel ? Op::Kind::pfor : Op::Kind::for_loop);
      op->loc = s.loc;
      const Node* callee = first_callee(f, s.body);
      op->level = parallel && callee ? callee->proc : f.node->proc;
      for (size_t v = 0; v < s.vars.size(); ++v) {
        op->extents.push_back(in_frame(f, s.extents[v]));
        std::string name = unique_var(s.vars[v]);
        f.renames[s.vars[v]] = name;
        op->vars.push_back(name);
        if (parallel) op->event_shape.push_back({op->extents.back(), op->level});
      }
      const MappingInstance& inst = *f.node->instance;
      if (!parallel) {
        op->mapping_loc = inst.loc;
        if (inst.pipeline) {
          op->pipeline = inst.pipeline->value;
          op->mapping_loc = inst.pipeline->loc;
        }
        if (inst.warp_specialize) op->warp_specialize = inst.warp_specialize->value ? 1 : 0;
        if (inst.shared_limit) op->shared_limit = inst.shared_limit->value;
      } else if (f.node->proc == Processor::grid && inst.order) {
        if (inst.order->raster_group) op->raster_group = inst.order->raster_group->value;
        if (inst.order->alternate_ends)
          op->alternate_ends = static_cast<int>(inst.order->alternate_ends->value);
        op->mapping_loc = inst.order->loc;
      }
      State inner;
      statements(f, s.body, op->body, inner);
      for (const std::string& v : s.vars) f.renames.erase(v);
      // What the loop needs from outside: the tensors its body touches that it did not allocate.
      std::set<int> local;
      events::walk(op->body, [&](Op& o) {
        if (o.kind == Op::Kind::alloc) local.insert(o.tensor);
      });
      std::vector<std::pair<int, bool>> acc;
      for (const auto& [root, a] : inner) {
        if (local.count(root)) continue;
        acc.push_back({root, !a.writers.empty()});
      }
      access(*op, acc, state);
      if (parallel) {
        // Later ops wait for every iteration.
        for (auto& [root, a] : state) {
          for (EventRef& e : a.writers)
            if (e.op == op->id) e.index.assign(op->vars.size(), ":");
          for (EventRef& e : a.readers)
            if (e.op == op->id) e.index.assign(op->vars.size(), ":");
        }
      }
      ops.push_back(std::move(op));
    }
  }

  void launch(Frame& f, const Stmt& s, std::vector<std::unique_ptr<Op>>& ops, State& state) {
    const Node& callee = f.node->callee(s);
    std::vector<int> args, fresh;
    for (int a : s.args) args.push_back(tensor(f, a));
    for (size_t i = 0; i < args.size(); ++i) {
      Tensor t;
      t.kind = Tensor::Kind::allocation;
      t.name = "t" + std::to_string(fresh_++);
      t.element = callee.args[i].element;
      t.shape.clear();
      for (const Expr& e : p_.tensors[args[i]].shape) t.shape.push_back(e);
      t.memory = callee.mems[i];
      // Where the mapping put it: problems with a fresh tensor are the mapping's to fix.
      const SourceLocation& mapped = callee.instance->mems[i].loc;
      t.loc = mapped.is_known() ? mapped : s.loc;
      int id = p_.add_tensor(t);
      fresh.push_back(id);
      auto alloc = p_.make_op(Op::Kind::alloc);
      alloc->tensor = id;
      alloc->loc = s.loc;
      ops.push_back(std::move(alloc));
    }
    for (size_t i = 0; i < args.size(); ++i) {
      if (!reads(callee.task->params[i].privilege)) continue;
      auto copy = p_.make_op(Op::Kind::copy);
      copy->src = args[i];
      copy->dst = fresh[i];
      copy->loc = s.loc;
      access(*copy, {{args[i], false}, {fresh[i], true}}, state);
      ops.push_back(std::move(copy));
    }
    lower_node(callee, fresh, ops, state, f.renames);
    for (size_t i = 0; i < args.size(); ++i) {
      if (!writes(callee.task->params[i].privilege)) continue;
      auto copy = p_.make_op(Op::Kind::copy);
      copy->src = fresh[i];
      copy->dst = args[i];
      copy->loc = s.loc;
      access(*copy, {{fresh[i], false}, {args[i], true}}, state);
      ops.push_back(std::move(copy));
    }
  }

  const Instantiation& inst_;
  Program p_;
  std::set<std::string> used_vars_;
  int fresh_ = 0, locals_ = 0;
};

}  // namespace

events::Program analyze_dependences(const Instantiation& inst) {
  return Analysis(inst).run();
}

}  // namespace tessel::task
