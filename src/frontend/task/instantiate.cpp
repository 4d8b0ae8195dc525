// Instantiation of a task program under a mapping, with the mapping checks (instantiate.h).
#include "frontend/task/instantiate.h"

#include <algorithm>
#include <functional>
#include <set>

namespace tessel::task {

Expr Node::resolve(const Expr& e) const {
  return simplify(e, [&](const Expr& leaf) -> Expr {
    if (leaf.kind() == Expr::Kind::tunable) {
      auto it = tunables.find(leaf.name());
      return it == tunables.end() ? leaf : Expr(it->second);
    }
    if (leaf.kind() == Expr::Kind::extent) {
      if (leaf.param() < static_cast<int>(args.size()) &&
          leaf.dim() < static_cast<int>(args[leaf.param()].shape.size()))
        return args[leaf.param()].shape[leaf.dim()];
    }
    return leaf;
  });
}

ScalarKind Node::element(int id) const {
  const TensorDef& t = variant->tensors.at(id);
  switch (t.kind) {
    case TensorDef::Kind::param:
      return args.at(t.param).element;
    case TensorDef::Kind::local:
      return t.element;
    case TensorDef::Kind::piece:
      return element(variant->partitions.at(t.partition).source);
  }
  return ScalarKind::f32;
}

std::vector<Expr> Node::shape(int id) const {
  const TensorDef& t = variant->tensors.at(id);
  std::vector<Expr> out;
  if (t.kind == TensorDef::Kind::param) return args.at(t.param).shape;
  const std::vector<Expr>& src =
      t.kind == TensorDef::Kind::local ? t.shape : variant->partitions.at(t.partition).block;
  for (const Expr& e : src) out.push_back(resolve(e));
  return out;
}

Memory Node::memory(int id) const {
  const TensorDef& t = variant->tensors.at(id);
  switch (t.kind) {
    case TensorDef::Kind::param:
      return mems.at(t.param);
    case TensorDef::Kind::local:
      return Memory::none;
    case TensorDef::Kind::piece:
      return memory(variant->partitions.at(t.partition).source);
  }
  return Memory::none;
}

const Node& Node::callee(const Stmt& launch) const {
  auto it = callees.find(&launch);
  TESSEL_ASSERT(it != callees.end(), "a launch without an instantiated callee");
  return *it->second;
}

int64_t static_bytes(ScalarKind element, const std::vector<Expr>& shape) {
  int64_t n = element_bytes(element);
  for (const Expr& e : shape) {
    if (!e.is_constant()) return -1;
    n *= e.value();
  }
  return n;
}

namespace {

std::string shape_str(const std::vector<Expr>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + shape[i].str();
  return s + "]";
}

class Instantiator {
 public:
  Instantiator(const TaskProgram& p, const Mapping& m, const Machine& machine)
      : program_(p), mapping_(m), machine_(machine) {}

  std::unique_ptr<Node> run() {
    const MappingInstance* entry = mapping_.entrypoint();
    if (!entry) {
      SourceLocation loc = SourceLocation::at(mapping_.file, 0, 0);
      user_error(loc, "the mapping has no entrypoint (mark one instance `entrypoint = true`)");
    }
    std::vector<ArgInfo> args;
    for (int g : program_.entry_args()) {
      const GlobalTensor& t = program_.globals()[g];
      ArgInfo a;
      a.element = t.element;
      for (const std::string& s : t.shape) a.shape.push_back(global_extent(s));
      args.push_back(a);
    }
    auto root = make_node(*entry, program_.entry_task(), std::move(args), nullptr, 0);
    if (root->proc != Processor::grid)
      user_error(entry->proc.loc, "instance '", entry->name,
                 "': the entrypoint runs on the grid (proc = grid), not on a ",
                 processor_name(root->proc));
    return root;
  }

 private:
  std::unique_ptr<Node> make_node(const MappingInstance& inst, const std::string& task_name,
                                  std::vector<ArgInfo> args, const Node* parent, int depth) {
    if (depth > 32)
      user_error(inst.loc, "instance '", inst.name,
                 "': instances call each other more than 32 deep");
    auto node = std::make_unique<Node>();
    node->instance = &inst;
    node->variant = program_.find_variant(inst.variant.value);
    if (!node->variant) {
      std::string known;
      for (const Variant& v : program_.variants())
        if (v.task == task_name) known += (known.empty() ? "" : ", ") + v.name;
      user_error(inst.variant.loc, "instance '", inst.name, "': unknown variant '",
                 inst.variant.value, "' (the variants of task '", task_name, "': ", known, ")");
    }
    if (node->variant->task != task_name)
      user_error(inst.variant.loc, "instance '", inst.name, "': variant '", inst.variant.value,
                 "' is a variant of task '", node->variant->task, "', but it is launched as task '",
                 task_name, "'");
    node->task = program_.find_task(task_name);
    node->proc = inst.proc.value;
    node->args = std::move(args);
    const size_t nparams = node->task->params.size();
    if (inst.mems.size() != nparams)
      user_error(inst.mems.empty() ? inst.loc : inst.mems[0].loc, "instance '", inst.name,
                 "': task '", task_name, "' has ", nparams, " tensor parameters, but mems lists ",
                 inst.mems.size(), " memories");
    for (const auto& m : inst.mems) node->mems.push_back(m.value);
    // Tunables: exactly those the variant reads.
    for (const std::string& t : node->variant->tunables) {
      const Located<int64_t>* v = inst.tunable(t);
      if (!v)
        user_error(inst.loc, "instance '", inst.name, "': variant '", node->variant->name,
                   "' reads tunable '", t, "', which the instance does not give");
      node->tunables[t] = v->value;
    }
    for (const auto& [name, v] : inst.tunables) {
      if (!node->tunables.count(name))
        user_error(v.loc, "instance '", inst.name, "': variant '", node->variant->name,
                   "' has no tunable '", name, "'");
    }
    check_level(*node, parent);
    check_order(*node);
    check_memories(*node);
    if (node->variant->kind == VariantKind::leaf) check_leaf_shapes(*node);
    if (node->variant->kind == VariantKind::inner) {
      check_partitions(*node);
      std::vector<const Stmt*> pranges;
      walk(*node, node->variant->body, pranges, depth);
    }
    return node;
  }

  void check_level(const Node& n, const Node* parent) {
    const MappingInstance& inst = *n.instance;
    if (parent && n.proc < parent->proc)
      user_error(inst.proc.loc, "instance '", inst.name, "' runs on a ", processor_name(n.proc),
                 ", wider than the ", processor_name(parent->proc), " of instance '",
                 parent->instance->name, "' that launches it");
    if (n.variant->kind == VariantKind::leaf) {
      for (const LeafOp& op : n.variant->ops) {
        if (!machine_.can_run(n.proc, op.kind))
          user_error(inst.proc.loc, "instance '", inst.name, "': processor level ",
                     processor_name(n.proc), " cannot run variant '", n.variant->name, "' (its ",
                     leaf_op_name(op.kind), " at ", op.loc.str(), " runs on a ",
                     machine_.levels_for(op.kind), " of ", machine_.name, ")");
      }
    }
  }

  // The `order` item: on the grid, values in range, dimensions its pranges have.
  void check_order(const Node& n) {
    const MappingInstance& inst = *n.instance;
    if (!inst.order) return;
    const MappingOrder& order = *inst.order;
    if (n.proc != Processor::grid)
      user_error(order.loc, "instance '", inst.name, "': order = {...} orders the tiles that a ",
                 "grid's blocks take, but this instance runs on a ", processor_name(n.proc),
                 " (give it to the instance with proc = grid)");
    if (order.raster_group && order.raster_group->value < 1)
      user_error(order.raster_group->loc, "instance '", inst.name,
                 "': raster_group must be at least 1 (blocks taken in groups of that many along "
                 "the grid's first dimension), not ", order.raster_group->value);
    std::vector<const Stmt*> pranges;
    std::function<void(const std::vector<Stmt>&)> find = [&](const std::vector<Stmt>& body) {
      for (const Stmt& s : body) {
        if (s.kind == Stmt::Kind::prange) {
          pranges.push_back(&s);
        } else {
          find(s.body);
        }
      }
    };
    if (n.variant->kind == VariantKind::inner) find(n.variant->body);
    if (pranges.empty())
      user_error(order.loc, "instance '", inst.name, "': order = {...} orders the blocks of a ",
                 "prange, but variant '", n.variant->name, "' has none");
    for (const Stmt* pr : pranges) {
      const int64_t dims = static_cast<int64_t>(pr->vars.size());
      std::string vars;
      for (const std::string& v : pr->vars) vars += (vars.empty() ? "" : ", ") + v;
      const std::string grid = "the prange at " + pr->loc.str() + " has " +
                               std::to_string(dims) + (dims == 1 ? " dimension" : " dimensions") +
                               " (" + vars + ")";
      if (order.raster_group && dims != 2)
        user_error(order.raster_group->loc, "instance '", inst.name,
                   "': raster_group orders the blocks of a 2-D grid, but ", grid);
      if (order.alternate_ends &&
          (order.alternate_ends->value < 0 || order.alternate_ends->value >= dims))
        user_error(order.alternate_ends->loc, "instance '", inst.name,
                   "': alternate_ends names grid dimension ", order.alternate_ends->value,
                   ", which does not exist: ", grid);
    }
  }

  void check_memories(const Node& n) {
    const MappingInstance& inst = *n.instance;
    // mma operands in shared memory: whole rows of the swizzle the tensor cores read.
    if (n.variant->kind == VariantKind::leaf && machine_.mma_shared_row_bytes > 0) {
      for (const LeafOp& op : n.variant->ops) {
        if (op.kind != LeafOp::Kind::mma) continue;
        const ArgInfo& c = n.args[op.operands[0]];
        const Expr rows = c.shape.size() >= 2 ? c.shape[c.shape.size() - 2] : Expr(0);
        if (n.proc == Processor::warpgroup && machine_.mma_warpgroup_rows > 0 && !c.shape.empty() &&
            rows.is_constant() && rows.value() % machine_.mma_warpgroup_rows != 0)
          user_error(inst.proc.loc, "instance '", inst.name, "': a warpgroup's mma covers ",
                     machine_.mma_warpgroup_rows, " rows at a time, but its accumulator '",
                     n.task->params[op.operands[0]].name, "' is ", shape_str(c.shape),
                     " (give each warpgroup a multiple of ", machine_.mma_warpgroup_rows, " rows)");
        for (int i = 1; i <= 2; ++i) {
          int p = op.operands[i];
          const ArgInfo& a = n.args[p];
          if (n.mems[p] != Memory::shared || a.shape.size() < 2 || !a.shape.back().is_constant())
            continue;
          int64_t row = a.shape.back().value() * element_bytes(a.element);
          if (row % machine_.mma_shared_row_bytes != 0)
            user_error(inst.mems[p].loc, "instance '", inst.name, "': mma operand '",
                       n.task->params[p].name, "' ", shape_str(a.shape),
                       " in shared memory has rows of ", row, " bytes; the tensor cores of ",
                       machine_.name, " read rows of a multiple of ", machine_.mma_shared_row_bytes,
                       " bytes (raise the K step)");
        }
      }
    }
    for (size_t p = 0; p < n.mems.size(); ++p) {
      const MemoryInfo& mem = machine_.memory(n.mems[p]);
      const std::string& pname = n.task->params[p].name;
      if (n.proc < mem.widest_user)
        user_error(inst.mems[p].loc, "instance '", inst.name, "': tensor '", pname,
                   "' cannot live in ", mem.name, " memory on the ", processor_name(n.proc), " (a ",
                   processor_name(mem.widest_user), " or narrower names it)");
      int64_t bytes = static_bytes(n.args[p].element, n.args[p].shape);
      if (bytes < 0 || mem.capacity_bytes == 0) continue;
      if (n.mems[p] == Memory::shared) {
        int64_t limit = inst.shared_limit ? inst.shared_limit->value : mem.capacity_bytes;
        if (bytes > limit)
          user_error(inst.mems[p].loc, "instance '", inst.name, "': tensor '", pname, "' ",
                     shape_str(n.args[p].shape), " needs ", bytes,
                     " bytes of shared memory, more than the ", limit, " a block has");
      } else if (n.mems[p] == Memory::reg) {
        int64_t threads = machine_.processor(n.proc).threads;
        int64_t per_thread = (bytes + threads - 1) / threads;
        std::string over = threads == 1
                               ? std::string("its one thread")
                               : "each of the " + std::to_string(threads) + " threads of a " +
                                     std::string(processor_name(n.proc));
        if (per_thread > mem.capacity_bytes)
          user_error(inst.mems[p].loc, "instance '", inst.name, "': tensor '", pname, "' ",
                     shape_str(n.args[p].shape), " needs ", bytes, " bytes of registers, ",
                     per_thread / 4, " registers in ", over, ", more than the ",
                     mem.capacity_bytes / 4, " a thread has");
      }
    }
  }

  // The leaf ops' operands as this instance gives them: ranks and extents that fit each op, the
  // memories the machine's mma reads. Extents that are not constants are not compared.
  void check_leaf_shapes(const Node& n) {
    const MappingInstance& inst = *n.instance;
    for (const LeafOp& op : n.variant->ops) {
      auto name = [&](int i) { return "'" + n.task->params[op.operands[i]].name + "'"; };
      auto shape = [&](int i) { return n.args[op.operands[i]].shape; };
      auto fail = [&](const auto&... what) {
        user_error(inst.loc, "instance '", inst.name, "': the ", leaf_op_name(op.kind), " at ",
                   op.loc.str(), " of variant '", n.variant->name, "' ", what...);
      };
      auto is = [](const Expr& e, int64_t v) { return e.is_constant() && e.value() == v; };
      auto differ = [](const Expr& a, const Expr& b) {
        return a.is_constant() && b.is_constant() && a.value() != b.value();
      };
      const std::vector<Expr> dst = shape(0);
      switch (op.kind) {
        case LeafOp::Kind::fill:
          break;
        case LeafOp::Kind::copy:
        case LeafOp::Kind::elementwise:
          for (size_t i = 1; i < op.operands.size(); ++i) {
            if (op.operands[i] < 0) continue;  // a number
            std::vector<Expr> src = shape(static_cast<int>(i));
            if (src.size() != dst.size())
              fail("reads ", name(static_cast<int>(i)), " ", shape_str(src), " into ", name(0), " ",
                   shape_str(dst), " (operands have the rank of the destination)");
            for (size_t d = 0; d < src.size(); ++d) {
              bool broadcast = op.kind == LeafOp::Kind::elementwise && is(src[d], 1);
              if (!broadcast && differ(src[d], dst[d]))
                fail("reads ", name(static_cast<int>(i)), " ", shape_str(src), " into ", name(0),
                     " ", shape_str(dst), ": extent ", src[d].str(), " of dimension ", d,
                     " is neither ", dst[d].str(), " nor 1",
                     op.kind == LeafOp::Kind::copy ? " (a copy does not broadcast)" : "");
            }
          }
          break;
        case LeafOp::Kind::reduce_sum:
        case LeafOp::Kind::reduce_max: {
          std::vector<Expr> src = shape(1);
          if (op.dim < 0 || op.dim >= static_cast<int>(src.size()))
            fail("reduces dimension ", op.dim, " of ", name(1), " ", shape_str(src));
          std::vector<Expr> want = src;
          if (dst.size() == src.size()) {
            want[op.dim] = Expr(1);
          } else {
            want.erase(want.begin() + op.dim);
          }
          bool ok = want.size() == dst.size();
          for (size_t d = 0; ok && d < want.size(); ++d) ok = !differ(want[d], dst[d]);
          if (!ok)
            fail("reduces ", name(1), " ", shape_str(src), " along dimension ", op.dim, " into ",
                 name(0), " ", shape_str(dst), ", which should be ", shape_str(want));
          break;
        }
        case LeafOp::Kind::mask: {
          std::vector<Expr> ref = shape(1);
          if (op.dim < 0 || op.dim >= static_cast<int>(dst.size()) || op.ref_dim < 0 ||
              op.ref_dim >= static_cast<int>(ref.size()))
            fail("masks dimension ", op.dim, " of ", name(0), " ", shape_str(dst), " by dimension ",
                 op.ref_dim, " of ", name(1), " ", shape_str(ref));
          if (differ(dst[op.dim], ref[op.ref_dim]))
            fail("masks dimension ", op.dim, " of ", name(0), " ", shape_str(dst), " by dimension ",
                 op.ref_dim, " of ", name(1), " ", shape_str(ref), ", whose extents differ");
          break;
        }
        case LeafOp::Kind::mask_causal: {
          std::vector<Expr> rows = shape(1), cols = shape(2);
          const size_t r = dst.size();
          if (r < 2 || op.ref_dim < 0 || op.ref_dim >= static_cast<int>(rows.size()) ||
              op.ref_dim >= static_cast<int>(cols.size()))
            fail("masks ", name(0), " ", shape_str(dst), " by dimension ", op.ref_dim, " of ",
                 name(1), " ", shape_str(rows), " and ", name(2), " ", shape_str(cols));
          if (differ(dst[r - 2], rows[op.ref_dim]) || differ(dst[r - 1], cols[op.ref_dim]))
            fail("masks ", name(0), " ", shape_str(dst), " by dimension ", op.ref_dim, " of ",
                 name(1), " ", shape_str(rows), " (its rows) and ", name(2), " ",
                 shape_str(cols), " (its columns), whose extents differ");
          break;
        }
        case LeafOp::Kind::mma: {
          std::vector<Expr> a = shape(1), b = shape(2);
          if (dst.size() < 2 || a.size() != dst.size() || b.size() != dst.size())
            fail("multiplies ", name(1), " ", shape_str(a), " and ", name(2), " ", shape_str(b),
                 " into ", name(0), " ", shape_str(dst), " (matrices of one rank, at least 2)");
          const size_t r = dst.size();
          for (size_t d = 0; d + 2 < r; ++d)
            if (!is(dst[d], 1) || !is(a[d], 1) || !is(b[d], 1))
              fail("multiplies tensors of rank ", r, " whose leading extents are not 1");
          const Expr &m = dst[r - 2], &nn = dst[r - 1], &k = a[r - 1];
          const Expr& bk = op.b_kn ? b[r - 2] : b[r - 1];
          const Expr& bn = op.b_kn ? b[r - 1] : b[r - 2];
          if (differ(a[r - 2], m) || differ(bn, nn) || differ(bk, k))
            fail("multiplies ", name(1), " ", shape_str(a), " and ", name(2), " ", shape_str(b),
                 op.b_kn ? " ([k, n])" : " ([n, k])", " into ", name(0), " ", shape_str(dst),
                 ": the extents do not agree");
          // Where the tensor cores read and accumulate.
          const std::vector<Memory>* allowed[3] = {
              &machine_.mma_c_memories, &machine_.mma_a_memories, &machine_.mma_b_memories};
          const char* role[3] = {"accumulator", "A operand", "B operand"};
          for (int i = 0; i < 3; ++i) {
            int p = op.operands[i];
            const std::vector<Memory>& ok = *allowed[i];
            if (ok.empty() || std::find(ok.begin(), ok.end(), n.mems[p]) != ok.end()) continue;
            std::string where;
            for (size_t j = 0; j < ok.size(); ++j)
              where += std::string(j ? (j + 1 == ok.size() ? " or " : ", ") : "") +
                       std::string(memory_name(ok[j]));
            if (i == 0)
              user_error(inst.mems[p].loc, "instance '", inst.name, "': the mma at ",
                         op.loc.str(), " accumulates into '", n.task->params[p].name, "' in ",
                         memory_name(n.mems[p]), " memory, but the tensor cores of ", machine_.name,
                         " accumulate in ", where, " memory");
            user_error(inst.mems[p].loc, "instance '", inst.name, "': the mma at ", op.loc.str(),
                       " reads its ", role[i], " '", n.task->params[p].name, "' from ",
                       memory_name(n.mems[p]), " memory, but the tensor cores of ", machine_.name,
                       " read it from ", where, " memory");
          }
          break;
        }
      }
    }
  }

  // Where a problem caused by a tunable's value is reported: that tunable, else the instance.
  SourceLocation tunable_loc(const Node& n, const std::vector<Expr>& exprs) {
    std::set<std::string> names;
    std::function<void(const Expr&)> collect = [&](const Expr& e) {
      if (e.kind() == Expr::Kind::tunable) names.insert(e.name());
      if (e.kind() >= Expr::Kind::add) {
        collect(e.lhs());
        collect(e.rhs());
      }
    };
    for (const Expr& e : exprs) collect(e);
    for (const std::string& name : names)
      if (const Located<int64_t>* v = n.instance->tunable(name)) return v->loc;
    return n.instance->loc;
  }

  void check_partitions(const Node& n) {
    for (const PartitionDef& p : n.variant->partitions) {
      std::vector<Expr> src = n.shape(p.source);
      if (src.size() != p.block.size())
        user_error(p.loc, "blocks: a rank-", src.size(), " tensor cut into rank-", p.block.size(),
                   " blocks");
      for (size_t d = 0; d < src.size(); ++d) {
        Expr b = n.resolve(p.block[d]);
        if (b.is_constant() && b.value() <= 0)
          user_error(tunable_loc(n, p.block), "instance '", n.instance->name, "': the ",
                     p.kind == PartitionKind::mma ? "mma" : "blocks", " partition at ", p.loc.str(),
                     " has a block extent of ", b.value(), " in dimension ", d);
        if (b.is_constant() && src[d].is_constant() && src[d].value() % b.value() != 0)
          user_error(tunable_loc(n, p.block), "instance '", n.instance->name, "': the ",
                     p.kind == PartitionKind::mma ? "mma" : "blocks", " partition at ", p.loc.str(),
                     " cuts extent ", src[d].value(), " of dimension ", d, " into blocks of ",
                     b.value(), ", which do not divide it");
      }
    }
  }

  // Whether piece `id` of the body changes with prange variable `var` in a way that no two
  // iterations share (the variable is one of its coordinates, alone).
  bool distinct_per(const Node& n, int id, const std::string& var) {
    const TensorDef& t = n.variant->tensors.at(id);
    if (t.kind != TensorDef::Kind::piece) return false;
    for (const Expr& c : t.coords) {
      Expr r = n.resolve(c);
      if (r.kind() == Expr::Kind::var && r.name() == var) return true;
    }
    return false;
  }

  void walk(Node& n, const std::vector<Stmt>& body, std::vector<const Stmt*>& pranges, int depth) {
    for (const Stmt& s : body) {
      if (s.kind != Stmt::Kind::launch) {
        if (s.kind == Stmt::Kind::prange) pranges.push_back(&s);
        walk(n, s.body, pranges, depth);
        if (s.kind == Stmt::Kind::prange) pranges.pop_back();
        continue;
      }
      const TaskDecl* task = program_.find_task(s.task);
      if (!task) user_error(s.loc, "launch of an undeclared task '", s.task, "'");
      if (task->params.size() != s.args.size())
        user_error(s.loc, "launch ", s.task, ": the task takes ", task->params.size(),
                   " tensors, given ", s.args.size());
      // The callee instance.
      const MappingInstance* callee = nullptr;
      for (const auto& c : n.instance->calls) {
        const MappingInstance* i = mapping_.find(c.value);
        if (!i)
          user_error(c.loc, "instance '", n.instance->name, "' calls '", c.value,
                     "', which is not an instance of the mapping");
        const Variant* v = program_.find_variant(i->variant.value);
        if (!v) {
          std::string known;
          for (const Variant& other : program_.variants())
            known += (known.empty() ? "" : ", ") + other.name;
          user_error(i->variant.loc, "instance '", i->name, "': unknown variant '",
                     i->variant.value, "' (the program's variants: ", known, ")");
        }
        if (v->task == s.task) {
          callee = i;
          break;
        }
      }
      if (!callee)
        user_error(n.instance->loc, "instance '", n.instance->name, "' launches task '", s.task,
                   "' (at ", s.loc.str(), ") but none of the instances it calls is one of it");
      // Aliasing writes under the enclosing pranges.
      for (const Stmt* pr : pranges) {
        for (size_t v = 0; v < pr->vars.size(); ++v) {
          Expr extent = n.resolve(pr->extents[v]);
          if (extent.is_constant() && extent.value() <= 1) continue;
          for (size_t a = 0; a < s.args.size(); ++a) {
            Privilege priv = task->params[a].privilege;
            if (!writes(priv) || priv == Privilege::reduce) continue;
            if (!distinct_per(n, s.args[a], pr->vars[v]))
              user_error(tunable_loc(n, pr->extents), "instance '", n.instance->name,
                         "': aliasing writes under the prange at ", pr->loc.str(), ": every ",
                         pr->vars[v], " launches '", s.task, "' (at ", s.loc.str(),
                         ") writing the same part of '", task->params[a].name,
                         "' (pass a piece indexed by ", pr->vars[v], ")");
          }
        }
      }
      if (!pranges.empty()) {
        Processor child = callee->proc.value;
        if (child <= n.proc)
          user_error(callee->proc.loc, "instance '", callee->name, "' is launched by a prange of ",
                     "instance '", n.instance->name, "' (a ", processor_name(n.proc),
                     "), so it must run on a narrower processor than a ", processor_name(n.proc));
      }
      std::vector<ArgInfo> args;
      for (int a : s.args) args.push_back({n.element(a), n.shape(a)});
      n.callees[&s] = make_node(*callee, s.task, std::move(args), &n, depth + 1);
    }
  }

  const TaskProgram& program_;
  const Mapping& mapping_;
  const Machine& machine_;
};

}  // namespace

Instantiation instantiate(const TaskProgram& program, const Mapping& mapping,
                          const Machine& machine) {
  Instantiation out;
  out.program = &program;
  out.mapping = &mapping;
  out.machine = &machine;
  out.root = Instantiator(program, mapping, machine).run();
  return out;
}

}  // namespace tessel::task
