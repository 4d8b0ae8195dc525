// The tile IR interpreter: the kernel's entry (grid, blocks, clusters), element access and the ops
// of tile programs. The roles and asynchrony are in interpreter_async.cpp, workspaces in
// interpreter_workspace.cpp; the machine in machine.h.
#include "interp/interpreter.h"

#include <limits>

#include "interp/machine.h"
#include "interp/numerics.h"

namespace tessel::interp {
namespace detail {

void Machine::run(const Operation& kernel, const std::vector<Argument>& args) {
  const Block& body = *kernel.region(0);
  bind_arguments(kernel, body, args);
  std::vector<int64_t> grid = compute_grid(body);
  scheduler_ = std::make_shared<RoleScheduler>(options_.schedule);
  auto base = env_;
  const int64_t c = cluster_size(body);
  if (c == 1) {
    for_each_coord(grid, [&](const std::vector<int64_t>& block) {
      env_ = base;
      block_index_ = block;
      block_ = std::make_shared<BlockAsync>();
      run_ops(body);
    });
    return;
  }
  // Clusters: each block's ops before its roles, then the roles of all the cluster's blocks
  // interleaved by one scheduler (they wait on each other's arrivals and multicasts).
  if (grid.size() != 1 || grid[0] % c != 0) {
    user_error(kernel.loc(), "the interpreter runs clusters of ", c,
               " blocks over a 1-D grid whose extent they divide, not ", index_str(grid));
  }
  for (int64_t first = 0; first < grid[0]; first += c) {
    std::vector<std::shared_ptr<BlockAsync>> peers;
    for (int64_t r = 0; r < c; ++r) {
      peers.push_back(std::make_shared<BlockAsync>());
      peers.back()->name = "block " + std::to_string(first + r);
    }
    auto collected = std::make_unique<ClusterRoles>();
    for (int64_t r = 0; r < c; ++r) {
      env_ = base;
      block_index_ = {first + r};
      block_ = peers[r];
      cluster_ = peers;
      cluster_rank_ = r;
      collecting_ = collected.get();
      run_ops(body);
    }
    collecting_ = nullptr;
    scheduler_->run(std::move(collected->roles), "cluster of blocks [" + std::to_string(first) +
                                                     ", " + std::to_string(first + c) + ")");
    for (const auto& peer : peers) {
      for (const auto& entry : peer->arefs) entry.second.block_finished();
    }
  }
}

int64_t Machine::cluster_size(const Block& body) {
  const Operation* grid = nullptr;
  bool interacts = false;
  for (const auto& op : body.ops()) {
    if (op->kind() == OpKind::block_grid) grid = op.get();
    ir::walk(op.get(), [&](Operation* o) {
      interacts = interacts || o->kind() == OpKind::cluster_rank ||
                  o->kind() == OpKind::cluster_sync || o->has_attr("multicast") ||
                  (o->kind() == OpKind::mbarrier_arrive && o->has_attr("cluster"));
    });
  }
  const ir::Attribute* c = grid ? grid->attr("cluster") : nullptr;
  if (!interacts || !c || c->kind != ir::Attribute::Kind::int_list) return 1;
  int64_t blocks = 1;
  for (int64_t e : c->list) blocks *= e;
  return blocks;
}

std::vector<int64_t> Machine::grid_only(const Operation& kernel) {
  return compute_grid(*kernel.region(0));
}

void Machine::bind_sizes(const Operation& kernel) {
  for (const std::string& s : kernel.signature().sizes) {
    auto it = options_.sizes.find(s);
    if (it == options_.sizes.end()) {
      user_error(kernel.loc(), "kernel @", kernel.signature().name, ": no value given for size ",
                 s);
    }
    if (it->second <= 0) {
      user_error(kernel.loc(), "kernel @", kernel.signature().name, ": size ", s, " = ", it->second,
                 " must be positive");
    }
  }
  for (const ir::Fact& fact : kernel.signature().facts) {
    int64_t v = options_.sizes.at(fact.symbol);
    if (v % fact.divisor != 0) {
      user_error(kernel.loc(), "kernel @", kernel.signature().name, ": size ", fact.symbol, " = ",
                 v, " violates the fact ", fact.symbol, " % ", fact.divisor, " == 0");
    }
  }
}

View host_view(HostTensor* host, const std::vector<int64_t>& shape, const std::string& name) {
  auto storage = std::make_shared<Storage>();
  storage->element = host->element();
  storage->host = host;
  return whole_view(std::move(storage), shape, name);
}

void Machine::bind_arguments(const Operation& kernel, const Block& body,
                             const std::vector<Argument>& args) {
  if (args.size() != body.arguments().size()) {
    user_error(kernel.loc(), "kernel @", kernel.signature().name, " takes ",
               body.arguments().size(), " argument(s), not ", args.size());
  }
  for (size_t i = 0; i < args.size(); ++i) {
    const Value* param = body.argument(static_cast<int>(i));
    const Type& t = param->type();
    RtValue value;
    if (t.is_tensor()) {
      HostTensor* const* host = std::get_if<HostTensor*>(&args[i]);
      if (!host || !*host) {
        user_error(kernel.loc(), "argument ", i, " (", ir::value_ref(param), ") must be a tensor");
      }
      std::vector<int64_t> shape = concrete_shape(t, options_.sizes);
      if ((*host)->shape() != shape || (*host)->element() != t.element()) {
        user_error(kernel.loc(), "argument ", ir::value_ref(param), " is ",
                   ir::to_string((*host)->element()), index_str((*host)->shape()),
                   " but the kernel expects ", ir::to_string(t.element()), index_str(shape));
      }
      value.is_tensor = true;
      value.tensor = host_view(*host, shape, ir::value_ref(param));
      View& v = value.tensor;
      if (t.has_layout()) {
        // A parameter with a layout (a column-major matrix, say) is addressed through it.
        v.map = std::make_shared<const layout::Layout>(
            layout::parse_layout(t.layout()).bind(options_.sizes));
        if (v.map->rank() != static_cast<int>(shape.size()) && shape.size() != 1) {
          user_error(kernel.loc(), "argument ", ir::value_ref(param),
                     ": the interpreter needs a layout of the tensor's rank");
        }
        v.map_origin.assign(shape.size(), 0);
        for (size_t d = 0; d < shape.size(); ++d) v.map_dim.push_back(static_cast<int>(d));
      }
    } else if (const double* d = std::get_if<double>(&args[i])) {
      value.scalar = element_from_double(t.element(), *d);
    } else if (const int64_t* n = std::get_if<int64_t>(&args[i])) {
      value.scalar = element_from_int(t.element(), *n);
    } else {
      user_error(kernel.loc(), "argument ", i, " (", ir::value_ref(param), ") must be a scalar");
    }
    env_[param] = value;
  }
}

std::vector<int64_t> Machine::compute_grid(const Block& body) {
  for (const auto& op : body.ops()) {
    if (op->kind() == OpKind::block_grid) {
      std::vector<int64_t> grid;
      for (const Value* v : op->operands()) grid.push_back(grid_value(v));
      for (size_t d = 0; d < grid.size(); ++d) {
        if (grid[d] < 0)
          user_error(op->loc(), "block_grid: extent ", d, " is negative (", grid[d], ")");
      }
      return grid;
    }
  }
  return {1};
}

int64_t Machine::grid_value(const Value* v) {
  const Operation* def = v->def();
  TESSEL_ASSERT(def, "grid extent without a defining op");
  if (def->kind() == OpKind::size) return options_.sizes.at(def->str_attr("name"));
  if (def->kind() == OpKind::sm_count) return options_.sm_count;
  if (def->kind() == OpKind::constant) return def->int_attr("value");
  std::vector<int64_t> args;
  for (const Value* a : def->operands()) args.push_back(grid_value(a));
  ScalarKind k = def->operand(0)->type().element();
  if (def->kind() == OpKind::select) return args[0] ? args[1] : args[2];
  auto r = ir::eval_integer(def->kind(), k, args[0], args.size() > 1 ? args[1] : 0,
                            def->has_attr("pred") ? def->str_attr("pred") : "");
  if (!r) user_error(def->loc(), def->name(), ": division by zero computing the grid");
  return *r;
}

RtValue& Machine::get(const Value* v) {
  auto it = env_.find(v);
  TESSEL_ASSERT(it != env_.end(), "interpreting a use of an undefined value ", ir::value_ref(v));
  return it->second;
}

void Machine::set_scalar(const Value* v, Element n) {
  RtValue r;
  r.scalar = n;
  env_[v] = r;
}

void Machine::set_tensor(const Value* v, View t) {
  RtValue r;
  r.is_tensor = true;
  r.tensor = std::move(t);
  env_[v] = std::move(r);
}

std::vector<int64_t> Machine::root_index(const View& v, const std::vector<int64_t>& c) {
  std::vector<int64_t> r = v.origin;
  for (size_t d = 0; d < c.size(); ++d) r[v.dim_map[d]] += c[d];
  return r;
}

bool Machine::inside(const View& v, const std::vector<int64_t>& c) {
  for (size_t d = 0; d < c.size(); ++d) {
    if (c[d] >= v.valid[d]) return false;
  }
  return true;
}

int64_t Machine::address(const Operation& op, const View& v, const std::vector<int64_t>& c) {
  int64_t a = v.offset;
  if (v.map) {
    std::vector<int64_t> m = v.map_origin;
    for (size_t d = 0; d < c.size(); ++d) m[v.map_dim[d]] += c[d];
    std::vector<layout::IntTuple> modes(m.begin(), m.end());
    a += modes.size() == 1 ? (*v.map)(layout::IntTuple(m[0])) : (*v.map)(layout::IntTuple(modes));
    if (a < 0 || a >= v.storage->size()) {
      user_error(op.loc(), op.name(), ": element ", index_str(m), " of a global_view of ",
                 v.root_name, " maps to offset ", a, ", outside its ", v.storage->size(),
                 " elements");
    }
    return a;
  }
  for (size_t d = 0; d < c.size(); ++d) {
    a += static_cast<int>(d) == v.indirect_dim ? (*v.indirect_offsets)[static_cast<size_t>(c[d])]
                                               : c[d] * v.strides[d];
  }
  TESSEL_ASSERT(a >= 0 && a < v.storage->size(), op.name(), ": address ", a, " outside storage of ",
                v.storage->size(), " elements");
  return a;
}

[[noreturn]] void Machine::out_of_bounds(const Operation& op, const View& v,
                                         const std::vector<int64_t>& c, const char* access) {
  user_error(op.loc(), op.name(), ": ", access, " index ", index_str(root_index(v, c)),
             " out of bounds of ", v.root_name, ", whose shape is ", index_str(v.root_shape),
             " (a partial tile needs a masked tile)");
}

void Machine::check_retired(const Operation& op, const View& v) {
  if (const Operation* mma = v.storage->pending_mma) {
    user_error(op.loc(), op.name(), ": reads ", v.root_name, ", the result of the async ",
               ir::op_where(*mma), ", before the mma_wait that retires it");
  }
}

namespace {

// What the interpreter reads past the window of an `over_read = finite` tile (src/ir/grouped.h):
// the largest finite value of a float element type, so that a read that reaches a stored value
// other than through a product with zero shows as a gross error. Integer elements read as 0.
Element largest_finite(ScalarKind kind) {
  switch (kind) {
    case ScalarKind::f16:
      return Element{65504.0, 0};
    case ScalarKind::bf16:
      return Element{decode_float(ScalarKind::bf16, 0x7f7f), 0};
    case ScalarKind::f32:
      return Element{std::numeric_limits<float>::max(), 0};
    case ScalarKind::f64:
      return Element{std::numeric_limits<double>::max(), 0};
    case ScalarKind::f8e4m3:
      return Element{448.0, 0};
    case ScalarKind::f8e5m2:
      return Element{57344.0, 0};
    default:
      return Element{0, 0};
  }
}

}  // namespace

Element Machine::read(const Operation& op, const View& v, const std::vector<int64_t>& c) {
  check_retired(op, v);
  if (!inside(v, c)) {
    if (v.masked) return v.pad;
    out_of_bounds(op, v, c, "reading");
  }
  if (v.over_dim >= 0 && c[v.over_dim] >= v.over_valid) {  // unspecified: grouped.h
    if (v.over_finite) return largest_finite(v.element);
    return Element{std::numeric_limits<double>::quiet_NaN(), 0};
  }
  int64_t a = address(op, v, c);
  const Storage& s = *v.storage;
  if (s.host) {
    Element n;
    if (ir::is_float(s.element)) {
      n.f = s.host->get_float(a);
    } else {
      n.i = s.host->get_int(a);
    }
    return n;
  }
  if (!s.written.empty() && !s.written[a]) {
    user_error(op.loc(), op.name(), ": reads element ", index_str(root_index(v, c)), " of ",
               v.root_name, " before anything wrote it");
  }
  return s.data[a];
}

void Machine::write(const Operation& op, View& v, const std::vector<int64_t>& c, Element n) {
  if (!inside(v, c)) {
    if (v.masked) return;
    out_of_bounds(op, v, c, "writing");
  }
  if (v.over_dim >= 0 && c[v.over_dim] >= v.over_valid) return;  // past a window's end
  int64_t a = address(op, v, c);
  Storage& s = *v.storage;
  if (s.host) {
    if (ir::is_float(s.element)) {
      s.host->set_float(a, n.f);
    } else {
      s.host->set_int(a, n.i);
    }
    return;
  }
  s.data[a] = n;
  if (!s.written.empty()) s.written[a] = 1;
}

std::vector<RtValue> Machine::run_ops(const Block& block) {
  for (size_t i = 0; i < block.ops().size(); ++i) {
    const Operation& op = *block.ops()[i];
    if (op.kind() == OpKind::yield) {
      std::vector<RtValue> out;
      for (const Value* v : op.operands()) out.push_back(get(v));
      return out;
    }
    if (op.kind() == OpKind::warp_group) {
      run_roles(block, i);  // the roles are the kernel's last ops (a verifier rule)
      return {};
    }
    exec(op);
  }
  return {};
}

void Machine::exec(const Operation& op) {
  if (ir::is_elementwise(op.kind())) return elementwise(op);
  switch (op.kind()) {
    case OpKind::size:
      return set_scalar(op.result(), Element{0, options_.sizes.at(op.str_attr("name"))});
    case OpKind::sm_count:
      return set_scalar(op.result(), Element{0, options_.sm_count});
    case OpKind::cluster_rank:
      return set_scalar(op.result(), Element{0, cluster_rank_});
    case OpKind::workspace:
      return workspace(op);
    case OpKind::workspace_part:
      return workspace_part(op);
    case OpKind::counter_arrive:
      return counter_arrive(op);
    case OpKind::constant: {
      return set_scalar(op.result(),
                        element_from_attr(op.result()->type().element(), *op.attr("value")));
    }
    case OpKind::block_grid:
      for (int i = 0; i < op.num_results(); ++i) {
        set_scalar(op.result(i), Element{0, block_index_.at(i)});
      }
      if (op.has_attr("threads")) block_threads_ = op.int_attr("threads");
      return;
    case OpKind::tile:
      return tile(op);
    case OpKind::find_group:
      return find_group(op);
    case OpKind::tile_extent: {
      const View& v = get(op.operand(0)).tensor;
      int64_t d = op.int_attr("dim");
      int64_t valid = v.valid[d];
      if (v.over_dim == d) valid = std::min(valid, v.over_valid);
      return set_scalar(op.result(), Element{0, std::clamp<int64_t>(valid, 0, v.shape[d])});
    }
    case OpKind::transpose:
      return transpose(op);
    case OpKind::alloc:
    case OpKind::fill:
    case OpKind::iota:
      return create(op);
    case OpKind::copy:
      return copy(op);
    case OpKind::mma:
      return mma(op);
    case OpKind::cast:
      return cast(op);
    case OpKind::rearrange:
      return set_tensor(op.result(),
                        materialize(op, get(op.operand(0)).tensor, ir::value_ref(op.result())));
    case OpKind::broadcast:
      return broadcast(op);
    case OpKind::reduce:
      return reduce(op);
    case OpKind::for_:
      return for_op(op);
    case OpKind::if_: {
      const Block& taken = *op.region(scalar(op.operand(0)).i ? 0 : 1);
      std::vector<RtValue> out = run_ops(taken);
      for (int i = 0; i < op.num_results(); ++i) set(op.result(i), out.at(i));
      return;
    }
    case OpKind::call_external:
      return call_external(op);
    case OpKind::global_view:
      return global_view(op);
    case OpKind::slice: {
      View v = get(op.operand(0)).tensor;
      const auto& offsets = op.ints_attr("offsets");
      const auto& shape = op.ints_attr("shape");
      for (size_t d = 0; d < shape.size(); ++d) v.offset += offsets[d] * v.strides[d];
      v.shape.assign(shape.begin(), shape.end());
      v.valid = v.shape;
      return set_tensor(op.result(), materialize(op, v, ir::value_ref(op.result())));
    }
    case OpKind::aref:
      return make_aref(op);
    case OpKind::aref_acquire:
    case OpKind::aref_commit:
    case OpKind::aref_wait:
    case OpKind::aref_release:
      return aref_step(op);
    case OpKind::aref_slot:
      return slot_results(op, index(op.operand(1)));
    case OpKind::mma_commit:
      sync(op);
      mma_groups_.push_back(std::move(open_group_));
      open_group_.clear();
      return;
    case OpKind::mma_wait:
      return mma_wait(op);
    case OpKind::mbarrier_init:
      block_->barriers.emplace(
          op.result(), BarrierArray(op, op.result()->type().count(), op.int_attr("arrivals")));
      return set_scalar(op.result(), Element{});  // a handle: block_ holds the barriers
    case OpKind::mbarrier_wait:
    case OpKind::mbarrier_arrive:
    case OpKind::mbarrier_expect_tx:
      return barrier_step(op);
    case OpKind::copy_async:
      return copy_async(op);
    // What a tile-level run cannot observe: all threads of the block (or of a role) run an op
    // together, and the register budget does not change results. A store through shared
    // memory lands at once, so what orders it (commit, wait, the proxy fence, the role's
    // barrier) has nothing left to order.
    // A cluster's blocks all run their ops before the roles first, then the roles together:
    // the cluster_sync after the barriers' initialization holds by construction, the one
    // ending the kernel is modelled by BlockAsync::exited.
    case OpKind::cluster_sync:
    case OpKind::block_sync:
    case OpKind::setmaxnreg:
    case OpKind::copy_async_commit:
    case OpKind::copy_async_wait:
    case OpKind::fence_proxy_async:
    case OpKind::role_sync:
    // The turns order when each warpgroup of a role issues its wgmmas; the interpreter runs a
    // role's warpgroups as one program, in which every turn is already in order.
    case OpKind::turn_begin:
    case OpKind::turn_wait:
    case OpKind::turn_pass:
    // One launch at a time: nothing runs before it to wait for, nothing after it to let in,
    // and a prefetch into L2 changes no value.
    case OpKind::grid_wait:
    case OpKind::launch_dependents:
    case OpKind::prefetch:
      return;
    default:
      TESSEL_ASSERT(false, "no interpreter rule for ", op.name());
  }
}

void Machine::create(const Operation& op) {
  const Type& t = op.result()->type();
  View v = fresh_tensor(t.element(), t.static_shape(), ir::value_ref(op.result()),
                        op.kind() == OpKind::alloc);
  if (op.kind() == OpKind::fill) {
    Element n = element_from_attr(t.element(), *op.attr("value"));
    std::fill(v.storage->data.begin(), v.storage->data.end(), n);
  } else if (op.kind() == OpKind::iota) {
    int64_t dim = op.int_attr("dim");
    for_each_coord(v.shape, [&](const std::vector<int64_t>& c) {
      write(op, v, c, element_from_int(t.element(), c[dim]));
    });
  }
  set_tensor(op.result(), v);
}

View Machine::materialize(const Operation& op, const View& src, const std::string& name) {
  View out = fresh_tensor(src.element, src.shape, name, false);
  for_each_coord(src.shape,
                 [&](const std::vector<int64_t>& c) { write(op, out, c, read(op, src, c)); });
  return out;
}

void Machine::copy(const Operation& op) {
  const View& src = get(op.operand(0)).tensor;
  if (op.num_operands() == 1) {
    set_tensor(op.result(), materialize(op, src, ir::value_ref(op.result())));
    return;
  }
  View dst = get(op.operand(1)).tensor;
  // Read everything first: a copy between overlapping views behaves as if through a temporary.
  std::vector<Element> values;
  values.reserve(static_cast<size_t>(product(src.shape)));
  for_each_coord(src.shape,
                 [&](const std::vector<int64_t>& c) { values.push_back(read(op, src, c)); });
  size_t k = 0;
  for_each_coord(dst.shape, [&](const std::vector<int64_t>& c) { write(op, dst, c, values[k++]); });
}

void Machine::mma(const Operation& op) {
  const View& a = get(op.operand(0)).tensor;
  const View& b = get(op.operand(1)).tensor;
  const View& c = get(op.operand(2)).tensor;
  View out = fresh_tensor(c.element, c.shape, ir::value_ref(op.result()), false);
  if (!op.has_attr("async")) {
    mma_into(op, a, b, c, out);
    return set_tensor(op.result(), out);
  }
  check_retired(op, a);  // only the accumulator may still be in flight
  check_retired(op, b);
  out.storage->pending_mma = &op;
  open_group_.push_back([this, &op, a, b, c, out]() mutable {
    mma_into(op, a, b, c, out);
    out.storage->pending_mma = nullptr;
  });
  set_tensor(op.result(), out);
}

void Machine::mma_into(const Operation& op, const View& a, const View& b, const View& c,
                       View& out) {
  ScalarKind in = a.element, acc_kind = c.element;
  int64_t m_extent = a.shape[0], k_extent = a.shape[1], n_extent = b.shape[1];
  // Read the operands once (bounds- and initialization-checked) into flat arrays.
  std::vector<Element> av, bv;
  for_each_coord(a.shape, [&](const std::vector<int64_t>& x) { av.push_back(read(op, a, x)); });
  for_each_coord(b.shape, [&](const std::vector<int64_t>& x) { bv.push_back(read(op, b, x)); });
  if (!ir::is_integer(in) && acc_kind == ScalarKind::f32) {
    // The common case (f16/bf16/fp8/f32 inputs, f32 accumulators) as multiply_add computes it —
    // a float product, then a float sum, in k order — over float rows of A and of Bᵀ: the
    // interpreters' innermost loop without a per-element kind dispatch or a strided B.
    std::vector<float> af(av.size()), bt(bv.size());
    for (size_t i = 0; i < av.size(); ++i) af[i] = static_cast<float>(av[i].f);
    for (int64_t k = 0; k < k_extent; ++k) {
      for (int64_t n = 0; n < n_extent; ++n)
        bt[n * k_extent + k] = static_cast<float>(bv[k * n_extent + n].f);
    }
    // Four outputs at a time, each its own sum in k order (independent chains, not a
    // reassociated sum).
    constexpr int64_t kLanes = 4;
    for (int64_t m = 0; m < m_extent; ++m) {
      const float* arow = &af[m * k_extent];
      for (int64_t n0 = 0; n0 < n_extent; n0 += kLanes) {
        const int64_t lanes = std::min(kLanes, n_extent - n0);
        float s[kLanes] = {0, 0, 0, 0};
        const float* bcol[kLanes];
        for (int64_t j = 0; j < kLanes; ++j) {
          bcol[j] = &bt[std::min(n0 + j, n_extent - 1) * k_extent];
          if (j < lanes) s[j] = static_cast<float>(read(op, c, {m, n0 + j}).f);
        }
        for (int64_t k = 0; k < k_extent; ++k) {
          const float x = arow[k];
          for (int64_t j = 0; j < kLanes; ++j) {
            const float p = x * bcol[j][k];
            s[j] = s[j] + p;
          }
        }
        for (int64_t j = 0; j < lanes; ++j) write(op, out, {m, n0 + j}, Element{s[j], 0});
      }
    }
    return;
  }
  for (int64_t m = 0; m < m_extent; ++m) {
    for (int64_t n = 0; n < n_extent; ++n) {
      Element acc = read(op, c, {m, n});
      for (int64_t k = 0; k < k_extent; ++k)
        acc = multiply_add(in, acc_kind, acc, av[m * k_extent + k], bv[k * n_extent + n]);
      write(op, out, {m, n}, acc);
    }
  }
}

void Machine::cast(const Operation& op) {
  const Type& from = op.operand(0)->type();
  ScalarKind to = op.result()->type().element();
  if (from.is_scalar())
    return set_scalar(op.result(), convert(from.element(), to, scalar(op.operand(0))));
  const View& src = get(op.operand(0)).tensor;
  View out = fresh_tensor(to, src.shape, ir::value_ref(op.result()), false);
  for_each_coord(src.shape, [&](const std::vector<int64_t>& c) {
    write(op, out, c, convert(from.element(), to, read(op, src, c)));
  });
  set_tensor(op.result(), out);
}

void Machine::broadcast(const Operation& op) {
  const RtValue& src = get(op.operand(0));
  const Type& t = op.result()->type();
  const auto& dims = op.ints_attr("dims");
  View out = fresh_tensor(t.element(), t.static_shape(), ir::value_ref(op.result()), false);
  for_each_coord(out.shape, [&](const std::vector<int64_t>& c) {
    if (!src.is_tensor) return write(op, out, c, src.scalar);
    std::vector<int64_t> sc;
    for (size_t d = 0; d < c.size(); ++d) {
      if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d)) == dims.end())
        sc.push_back(c[d]);
    }
    write(op, out, c, read(op, src.tensor, sc));
  });
  set_tensor(op.result(), out);
}

void Machine::reduce(const Operation& op) {
  const View& src = get(op.operand(0)).tensor;
  const auto& dims = op.ints_attr("dims");
  const std::string& kind = op.str_attr("kind");
  OpKind combine = kind == "sum" ? OpKind::add : kind == "max" ? OpKind::max : OpKind::min;
  std::vector<int64_t> kept, reduced;
  for (int d = 0; d < static_cast<int>(src.shape.size()); ++d) {
    bool r = std::find(dims.begin(), dims.end(), d) != dims.end();
    (r ? reduced : kept).push_back(d);
  }
  std::vector<int64_t> out_shape, red_shape;
  for (int64_t d : kept) out_shape.push_back(src.shape[d]);
  for (int64_t d : reduced) red_shape.push_back(src.shape[d]);
  auto fold = [&](const std::vector<int64_t>& outer) {
    std::vector<int64_t> c(src.shape.size());
    for (size_t i = 0; i < kept.size(); ++i) c[kept[i]] = outer[i];
    bool first = true;
    Element acc;
    for_each_coord(red_shape, [&](const std::vector<int64_t>& r) {
      for (size_t i = 0; i < reduced.size(); ++i) c[reduced[i]] = r[i];
      Element x = read(op, src, c);
      acc = first ? x : *binary(combine, src.element, acc, x);
      first = false;
    });
    return acc;
  };
  if (out_shape.empty()) return set_scalar(op.result(), fold({}));
  View out = fresh_tensor(src.element, out_shape, ir::value_ref(op.result()), false);
  for_each_coord(out_shape, [&](const std::vector<int64_t>& c) { write(op, out, c, fold(c)); });
  set_tensor(op.result(), out);
}

void Machine::elementwise(const Operation& op) {
  int arity = ir::op_info(op.kind()).arity;
  ScalarKind k = op.operand(op.kind() == OpKind::select ? 1 : 0)->type().element();
  auto apply = [&](const std::vector<Element>& x) { return apply_elementwise(op, k, x.data()); };
  const Type& t = op.result()->type();
  if (t.is_scalar()) {
    std::vector<Element> x;
    for (const Value* v : op.operands()) x.push_back(scalar(v));
    return set_scalar(op.result(), apply(x));
  }
  View out = fresh_tensor(t.element(), t.static_shape(), ir::value_ref(op.result()), false);
  std::vector<const RtValue*> in;
  for (const Value* v : op.operands()) in.push_back(&get(v));
  std::vector<Element> x(arity);
  for_each_coord(out.shape, [&](const std::vector<int64_t>& c) {
    for (int i = 0; i < arity; ++i)
      x[i] = in[i]->is_tensor ? read(op, in[i]->tensor, c) : in[i]->scalar;
    write(op, out, c, apply(x));
  });
  set_tensor(op.result(), out);
}

void Machine::for_op(const Operation& op) {
  int64_t lo = index(op.operand(0)), hi = index(op.operand(1)), step = index(op.operand(2));
  if (step <= 0) user_error(op.loc(), "for: the step must be positive, not ", step);
  std::vector<RtValue> carried;
  for (int i = 3; i < op.num_operands(); ++i) carried.push_back(get(op.operand(i)));
  const Block& body = *op.region(0);
  for (int64_t k = lo; k < hi; k += step) {
    set_scalar(body.argument(0), Element{0, k});
    for (size_t i = 0; i < carried.size(); ++i)
      set(body.argument(static_cast<int>(i) + 1), carried[i]);
    std::vector<RtValue> next = run_ops(body);
    if (!carried.empty()) carried = std::move(next);
  }
  for (int i = 0; i < op.num_results(); ++i) set(op.result(i), carried.at(i));
}

void Machine::call_external(const Operation& op) {
  const std::string& callee = op.str_attr("callee");
  auto it = options_.externals.find(callee);
  if (it == options_.externals.end()) {
    user_error(op.loc(), "call_external: no external function named \"", callee,
               "\" was given to the interpreter");
  }
  std::vector<ExternalArg> args(op.operands().size());
  std::vector<std::unique_ptr<HostTensor>> copies;
  for (size_t i = 0; i < args.size(); ++i) {
    const Value* v = op.operand(static_cast<int>(i));
    if (!v->type().is_tensor()) {
      args[i].scalar = element_as_double(v->type().element(), scalar(v));
      continue;
    }
    const View& view = get(v).tensor;
    copies.push_back(std::make_unique<HostTensor>(view.element, view.shape));
    HostTensor& copy = *copies.back();
    int64_t k = 0;
    for_each_coord(view.shape, [&](const std::vector<int64_t>& c) {
      Element n = read(op, view, c);
      if (ir::is_float(view.element)) {
        copy.set_float(k++, n.f);
      } else {
        copy.set_int(k++, n.i);
      }
    });
    args[i].tensor = &copy;
  }
  std::vector<double> results = it->second(args);
  for (size_t i = 0; i < args.size(); ++i) {
    const Value* v = op.operand(static_cast<int>(i));
    if (!args[i].tensor || v->type().space() == MemorySpace::reg) continue;
    View view = get(v).tensor;
    int64_t k = 0;
    for_each_coord(view.shape, [&](const std::vector<int64_t>& c) {
      Element n;
      if (ir::is_float(view.element)) {
        n.f = args[i].tensor->get_float(k++);
      } else {
        n.i = args[i].tensor->get_int(k++);
      }
      write(op, view, c, n);
    });
  }
  if (static_cast<int>(results.size()) != op.num_results()) {
    user_error(op.loc(), "call_external: \"", callee, "\" returned ", results.size(),
               " value(s) but the op has ", op.num_results(), " result(s)");
  }
  for (int i = 0; i < op.num_results(); ++i) {
    const Type& t = op.result(i)->type();
    if (t.is_tensor()) user_error(op.loc(), "call_external: the interpreter returns scalars only");
    set_scalar(op.result(i), element_from_double(t.element(), results[i]));
  }
}

}  // namespace detail

using detail::Machine;
std::vector<int64_t> concrete_shape(const ir::Type& type,
                                    const std::map<std::string, int64_t>& sizes) {
  std::vector<int64_t> shape;
  for (const ir::Extent& e : type.shape()) {
    if (e.is_static()) {
      shape.push_back(e.value);
    } else {
      auto it = sizes.find(e.symbol);
      if (it == sizes.end())
        user_error(SourceLocation::unknown(), "no value given for size ", e.symbol);
      shape.push_back(it->second);
    }
  }
  return shape;
}

std::vector<int64_t> grid_extents(const ir::Operation& kernel,
                                  const std::map<std::string, int64_t>& sizes, int64_t sm_count) {
  RunOptions options;
  options.sizes = sizes;
  options.sm_count = sm_count;
  Machine machine(options);
  machine.bind_sizes(kernel);
  return machine.grid_only(kernel);
}

void interpret(const ir::Operation& kernel, const std::vector<Argument>& args,
               const RunOptions& options) {
  TESSEL_ASSERT(kernel.kind() == ir::OpKind::kernel, "interpret needs a kernel op");
  Machine machine(options);
  machine.bind_sizes(kernel);
  machine.run(kernel, args);
}

}  // namespace tessel::interp
