// LowerToTile (lower_to_tile.h).
#include "transforms/task/lower_to_tile.h"

#include <algorithm>
#include <set>

#include "transforms/task/task_ir_utils.h"

namespace tessel::transforms {

using EvTensor = task::events::Tensor;
using task::Expr;
using task::LeafOp;
using task::Memory;
using task::events::Lane;
using task::events::Op;
using task::events::op_tensors;
using task::events::OpList;
using task::events::Program;
using task::events::walk;

namespace {

class Lowering {
  using TensorValue = tessel::Tensor;

 public:
  explicit Lowering(const Program& p) : p_(p) {}

  TileKernel run() {
    // Facts: tensors that go to shared memory have rows of whole 16-byte units.
    std::map<std::string, int64_t> facts;
    walk(const_cast<OpList&>(p_.body), [&](Op& op) {
      std::vector<std::pair<int, int>> moves;  // src, dst
      if (op.kind == Op::Kind::copy) moves.push_back({op.src, op.dst});
      if (op.kind == Op::Kind::call)
        for (const LeafOp& l : op.leaf->ops)
          if (l.kind == LeafOp::Kind::copy)
            moves.push_back({op.args[l.operands[1]], op.args[l.operands[0]]});
      for (auto [src, dst] : moves) {
        const EvTensor& root = p_.tensors[p_.root(src)];
        if (root.kind != EvTensor::Kind::argument || p_.tensors[dst].memory != Memory::shared)
          continue;
        const Expr& last = root.shape.back();
        if (last.kind() == Expr::Kind::size)
          facts[last.name()] =
              std::max<int64_t>(facts[last.name()], 16 / task::element_bytes(root.element));
      }
    });
    return tile_kernel(p_.name, [&](TileBuilder& b) {
      b_ = &b;
      for (const std::string& s : p_.sizes) {
        auto f = facts.find(s);
        sizes_.emplace(s, b.size(s, divisible_by(f == facts.end() ? 1 : f->second)));
      }
      for (int id : p_.arguments) {
        const EvTensor& t = p_.tensors[id];
        std::vector<Dim> dims;
        for (const Expr& e : t.shape) {
          if (e.kind() == Expr::Kind::size) {
            dims.emplace_back(sizes_.at(e.name()));
          } else {
            dims.emplace_back(e.value());
          }
        }
        globals_[id] = b.global(t.name, t.element, dims);
      }
      lower(p_.body, true);
      if (grid_) {
        if (threads_ > 0) grid_->set_attr("threads", ir::Attribute::integer(threads_));
        if (warp_specialize_ >= 0)
          grid_->set_attr("warp_specialize",
                          ir::Attribute::ident(warp_specialize_ ? "true" : "false"));
      }
    });
  }

 private:
  Index index(const Expr& e) {
    TileBuilder& b = *b_;
    switch (e.kind()) {
      case Expr::Kind::constant:
        return b.index(e.value());
      case Expr::Kind::size:
        return sizes_.at(e.name());
      case Expr::Kind::var: {
        auto it = vars_.find(e.name());
        TESSEL_ASSERT(it != vars_.end(), "lower-to-tile: unbound index %", e.name());
        return it->second;
      }
      case Expr::Kind::add:
        return index(e.lhs()) + IndexOperand(index(e.rhs()));
      case Expr::Kind::sub:
        return index(e.lhs()) - IndexOperand(index(e.rhs()));
      case Expr::Kind::mul:
        return index(e.lhs()) * IndexOperand(index(e.rhs()));
      case Expr::Kind::div:
        return index(e.lhs()) / IndexOperand(index(e.rhs()));
      case Expr::Kind::cdiv:
        if (e.rhs().is_constant()) return cdiv(index(e.lhs()), e.rhs().value());
        return cdiv(index(e.lhs()), index(e.rhs()));
      case Expr::Kind::min:
        return min(index(e.lhs()), index(e.rhs()));
      default:
        break;
    }
    user_error(b.location() ? *b.location() : SourceLocation::unknown(),
               "lower-to-tile: the expression ", e.str(), " is not index arithmetic of the kernel");
  }

  std::vector<int64_t> static_shape(int id, const char* what) {
    std::vector<int64_t> out;
    for (const Expr& e : p_.tensors[id].shape) {
      if (!e.is_constant())
        user_error(p_.tensors[id].loc, "lower-to-tile: ", what, " ", p_.tensor_ref(id),
                   " has extent ", e.str(), ", which is not a constant");
      out.push_back(e.value());
    }
    return out;
  }

  // A register tensor's shape in the tile program: extents of 1 dropped (a [128, 1] column of
  // row sums is a [128] register tensor, as the tile language's reductions make it).
  static std::vector<int64_t> register_shape(const std::vector<int64_t>& shape) {
    std::vector<int64_t> out;
    for (int64_t e : shape)
      if (e != 1) out.push_back(e);
    if (out.empty()) out.push_back(1);
    return out;
  }
  // The dimension of the register tensor that dimension `dim` of a task tensor of `shape` is.
  static int64_t register_dim(const std::vector<int64_t>& shape, int dim) {
    int64_t r = 0;
    for (int d = 0; d < dim; ++d) r += shape[d] != 1;
    return r;
  }
  static std::vector<int64_t> unit_dims(const std::vector<int64_t>& shape) {
    std::vector<int64_t> out;
    for (size_t d = 0; d < shape.size(); ++d)
      if (shape[d] == 1 && out.size() + 1 < shape.size()) out.push_back(static_cast<int64_t>(d));
    return out;
  }

  // The masked tile of a global tensor that piece `id` is.
  TensorValue tile_of(int id) {
    const EvTensor& t = p_.tensors[id];
    if (t.kind != EvTensor::Kind::piece)
      user_error(t.loc, "lower-to-tile: ", p_.tensor_ref(id),
                 " is a whole global tensor; a block works on pieces of it");
    std::vector<int64_t> shape = static_shape(id, "the piece");
    std::vector<Expr> coords(shape.size(), Expr(0));
    for (int cur = id; p_.tensors[cur].kind == EvTensor::Kind::piece;
         cur = p_.tensors[cur].parent) {
      const EvTensor& piece = p_.tensors[cur];
      for (size_t d = 0; d < shape.size(); ++d) {
        const Expr& c = piece.coords[d];
        if (c.is_constant() && c.value() == 0) continue;
        const Expr& block = piece.block[d];
        if (!block.is_constant() || block.value() % shape[d] != 0)
          user_error(piece.loc, "lower-to-tile: the piece ", p_.tensor_ref(cur),
                     " is not a whole number of ", shape[d], "-element tiles along dimension ", d);
        coords[d] = task::simplify(coords[d] + c * Expr(block.value() / shape[d]));
      }
    }
    std::vector<Coord> tile_coords;
    for (const Expr& c : coords) tile_coords.emplace_back(index(c));
    TileOptions options = masked();
    options.squeeze = unit_dims(shape);  // as in registers
    return globals_.at(p_.root(id)).tile(shape, tile_coords, options);
  }
  bool is_global(int id) const { return p_.tensors[p_.root(id)].kind == EvTensor::Kind::argument; }

  // Where a global piece starts along dimension `d` (in elements) and the extent of its tensor
  // there: the piece of a tensor of static shape `id` is, or the piece it was copied from.
  std::pair<Index, Index> edge(int id, int d, const SourceLocation& loc) {
    auto from = origins_.find(id);
    if (!is_global(id) && from != origins_.end()) id = from->second;
    if (!is_global(id) || p_.tensors[id].kind != EvTensor::Kind::piece)
      user_error(loc, "lower-to-tile: mask: ", p_.tensor_ref(id),
                 " is not a piece of a global tensor, nor copied from one");
    Expr offset(0);
    int cur = id;
    for (; p_.tensors[cur].kind == EvTensor::Kind::piece; cur = p_.tensors[cur].parent)
      offset = task::simplify(offset + p_.tensors[cur].coords.at(d) * p_.tensors[cur].block.at(d));
    return {index(offset), index(p_.tensors[cur].shape.at(d))};
  }

  // `v`, the register value of tensor `src`, broadcast to the register shape of tensor `dst`
  // along the dimensions where src has extent 1 and dst has not.
  TensorValue broadcast_to(TensorValue v, int src, int dst) {
    std::vector<int64_t> ss = static_shape(src, "the broadcast tensor"),
                         ds = static_shape(dst, "the destination");
    std::vector<int64_t> new_dims;
    int64_t r = 0;
    for (size_t d = 0; d < ds.size(); ++d) {
      if (ds[d] == 1) continue;
      if (ss[d] == 1) new_dims.push_back(r);
      ++r;
    }
    if (new_dims.empty()) return v;
    return b_->broadcast(v, register_shape(ds), new_dims);
  }

  TensorValue value(int id) {
    if (is_global(id)) return tile_of(id);
    auto it = values_.find(id);
    if (it == values_.end())
      user_error(p_.tensors[id].loc, "lower-to-tile: ", p_.tensor_ref(id),
                 " is read before anything is written into it");
    return it->second;
  }

  // The value of `id` in registers, of element type `element`.
  TensorValue in_registers(int id, ScalarKind element) {
    TensorValue v = value(id);
    if (v.type().is_tensor() && v.type().space() != MemorySpace::reg) v = b_->copy(v, Register);
    if (v.element() != element) v = b_->cast(v, element);
    return v;
  }

  // Writes `v` into tensor `dst` (a global piece: a store; an allocation: its new value).
  void assign(int dst, TensorValue v) {
    const EvTensor& t = p_.tensors[dst];
    if (is_global(dst)) {
      if (v.type().space() != MemorySpace::reg) v = b_->copy(v, Register);
      if (v.element() != t.element) v = b_->cast(v, t.element);
      b_->copy(v, tile_of(dst));
      return;
    }
    if (t.kind == EvTensor::Kind::piece)
      user_error(t.loc, "lower-to-tile: a write into ", p_.tensor_ref(dst),
                 ", a piece of an on-chip tensor, was not vectorized away");
    if (t.memory == Memory::shared) {
      if (v.element() != t.element) v = b_->cast(in_registers_value(v), t.element);
      values_[dst] = b_->copy(v, Shared);
    } else {
      v = in_registers_value(v);
      if (v.element() != t.element) v = b_->cast(v, t.element);
      values_[dst] = v;
    }
  }
  TensorValue in_registers_value(TensorValue v) {
    return v.type().is_tensor() && v.type().space() != MemorySpace::reg ? b_->copy(v, Register) : v;
  }

  void call(const Op& op) {
    TileBuilder& b = *b_;
    auto arg = [&](const LeafOp& l, int i) { return op.args.at(l.operands.at(i)); };
    for (const LeafOp& l : op.leaf->ops) {
      b.set_location(l.loc);
      int dst = arg(l, 0);
      const EvTensor& d = p_.tensors[dst];
      switch (l.kind) {
        case LeafOp::Kind::fill:
          assign(dst, b.fill(d.element, register_shape(static_shape(dst, "the filled tensor")),
                             l.value));
          break;
        case LeafOp::Kind::copy:
          assign(dst, value(arg(l, 1)));
          break;
        case LeafOp::Kind::mma: {
          // C += A·Bᵀ with B [n, k] as wgmma reads it (K-major), or C += A·B with B [k, n].
          TensorValue a = value(arg(l, 1)), w = value(arg(l, 2));
          TensorValue r = b.mma(a, l.b_kn ? w : transpose(w), in_registers(dst, ScalarKind::f32));
          for (const Lane& lane : op.lanes) {
            if (lane.level != task::Processor::warpgroup) continue;
            std::vector<int64_t> tiling = {1, 1};
            // The lane's dimension among the accumulator's matrix dimensions (rows or columns).
            std::vector<int64_t> shape = static_shape(dst, "the accumulator");
            tiling[register_dim(shape, lane.dim) == 0 ? 0 : 1] = lane.count;
            r.value()->def()->set_attr("tiling", ir::Attribute::ints(tiling));
            threads_ = std::max<int64_t>(threads_, 128 * lane.count);
          }
          assign(dst, r);
          break;
        }
        case LeafOp::Kind::elementwise: {
          std::vector<TensorValue> x;
          for (size_t i = 1; i < l.operands.size(); ++i) {
            int o = l.operands[i];
            if (o < 0) {
              x.push_back(b.constant(l.scalars.at(-1 - o), ScalarKind::f32));
            } else {
              int src = op.args.at(o);
              x.push_back(broadcast_to(in_registers(src, ScalarKind::f32), src, dst));
            }
          }
          TensorValue r;
          if (l.op == "add")
            r = x[0] + TensorOperand(x[1]);
          else if (l.op == "sub")
            r = x[0] - TensorOperand(x[1]);
          else if (l.op == "mul")
            r = x[0] * TensorOperand(x[1]);
          else if (l.op == "div")
            r = x[0] / TensorOperand(x[1]);
          else if (l.op == "max")
            r = max(x[0], x[1]);
          else if (l.op == "min")
            r = min(x[0], x[1]);
          else if (l.op == "fma")
            r = fma(x[0], x[1], x[2]);
          else if (l.op == "neg")
            r = -x[0];
          else if (l.op == "exp")
            r = exp(x[0]);
          else if (l.op == "exp2")
            r = exp2(x[0]);
          else if (l.op == "sigmoid")
            r = sigmoid(x[0]);
          else if (l.op == "silu")
            r = x[0] * TensorOperand(sigmoid(x[0]));
          else
            r = max(x[0], 0.0);  // relu
          assign(dst, r);
          break;
        }
        case LeafOp::Kind::reduce_sum:
        case LeafOp::Kind::reduce_max: {
          std::vector<int64_t> src_shape = static_shape(arg(l, 1), "the reduced tensor");
          if (src_shape.at(l.dim) == 1)
            user_error(l.loc, "lower-to-tile: ", task::leaf_op_name(l.kind),
                       " over a dimension of extent 1");
          std::vector<int64_t> dims = {register_dim(src_shape, l.dim)};
          TensorValue x = in_registers(arg(l, 1), ScalarKind::f32);
          TensorValue acc = in_registers(dst, ScalarKind::f32);
          assign(dst, l.kind == LeafOp::Kind::reduce_sum
                          ? acc + TensorOperand(b.reduce_sum(x, dims))
                          : max(acc, b.reduce_max(x, dims)));
          break;
        }
        case LeafOp::Kind::mask_causal: {
          // As the causal tile program masks: rows' and columns' positions (iotas plus the
          // pieces' starts) compared, keys after the query set to `value`.
          std::vector<int64_t> full = static_shape(dst, "the masked tensor");
          std::vector<int64_t> shape = register_shape(full);
          int64_t rd = register_dim(full, static_cast<int>(full.size()) - 2);
          int64_t cd = register_dim(full, static_cast<int>(full.size()) - 1);
          Index row0 = edge(arg(l, 1), l.ref_dim, l.loc).first;
          Index col0 = edge(arg(l, 2), l.ref_dim, l.loc).first;
          TensorValue rows = b.iota(ScalarKind::index, shape, static_cast<int>(rd)) +
                             TensorOperand(b.as_tensor(row0));
          TensorValue cols = b.iota(ScalarKind::index, shape, static_cast<int>(cd)) +
                             TensorOperand(b.as_tensor(col0));
          TensorValue inside = compare(cols, rows, "le");
          TensorValue outside = b.fill(ScalarKind::f32, shape, l.value);
          assign(dst, select(inside, in_registers(dst, ScalarKind::f32), outside));
          break;
        }
        case LeafOp::Kind::mask: {
          // As a tile program masks the keys of a partial tile: the columns' global indices
          // (iota plus the piece's start) compared with the tensor's extent.
          std::vector<int64_t> shape = register_shape(static_shape(dst, "the masked tensor"));
          int64_t rd = register_dim(static_shape(dst, "the masked tensor"), l.dim);
          auto [start, extent] = edge(arg(l, 1), l.ref_dim, l.loc);
          TensorValue cols = b.iota(ScalarKind::index, shape, static_cast<int>(rd));
          TensorValue at = cols + TensorOperand(b.as_tensor(start));
          TensorValue inside = compare(at, b.as_tensor(extent), "lt");
          TensorValue outside = b.fill(ScalarKind::f32, shape, l.value);
          assign(dst, select(inside, in_registers(dst, ScalarKind::f32), outside));
          break;
        }
      }
    }
    b.set_location(std::nullopt);
  }

  void lower(const OpList& ops, bool top) {
    for (const auto& op : ops) {
      b_->set_location(op->loc);
      switch (op->kind) {
        case Op::Kind::alloc:
          if (p_.tensors[op->tensor].memory == Memory::none)
            user_error(p_.tensors[op->tensor].loc, "tensor %", p_.tensors[op->tensor].name,
                       " is mapped to no memory (none), but copy elimination could not remove it; "
                       "map the tasks that use it so that it need not exist");
          break;
        case Op::Kind::copy:
          if (is_global(op->src) && !is_global(op->dst)) origins_[op->dst] = op->src;
          assign(op->dst, value(op->src));
          break;
        case Op::Kind::call:
          call(*op);
          break;
        case Op::Kind::pfor: {
          if (!top || op->level != task::Processor::block)
            user_error(op->loc, "lower-to-tile: a prange over ", task::processor_name(op->level),
                       "s here is not supported (only the grid's prange over blocks, and "
                       "vectorized ones)");
          std::vector<Index> extents;
          for (const Expr& e : op->extents) extents.push_back(index(e));
          if (extents.size() > 3)
            user_error(op->loc, "lower-to-tile: a grid of more than 3 dimensions");
          std::vector<Index> ids = b_->grid(extents);
          grid_ = ids[0].value()->def();
          // The mapping's tile order, by the tile language's own helper (the arithmetic a tile
          // program writes by hand, e.g. examples/kernels/flash_attention_causal.tir).
          if (op->raster_group > 0 || op->alternate_ends >= 0)
            ids = b_->order_grid(ids, extents, {op->raster_group, op->alternate_ends});
          for (size_t i = 0; i < ids.size(); ++i) vars_[op->vars[i]] = ids[i];
          lower(op->body, false);
          break;
        }
        case Op::Kind::for_loop:
          loop(*op);
          break;
      }
    }
  }

  void loop(const Op& op) {
    if (op.warp_specialize >= 0) warp_specialize_ = op.warp_specialize;
    // Carried: register allocations from outside that the body writes.
    std::vector<int> carried;
    walk(const_cast<OpList&>(op.body), [&](Op& o) {
      for (const auto& [t, w] : op_tensors(o)) {
        if (!w || o.kind == Op::Kind::alloc || !values_.count(t)) continue;
        if (std::find(carried.begin(), carried.end(), t) == carried.end()) carried.push_back(t);
      }
    });
    std::vector<TensorValue> init;
    for (int t : carried) init.push_back(values_.at(t));
    Index count = index(op.extents.at(0));
    auto saved = values_;
    std::vector<TensorValue> results =
        b_->loop(count, init, [&](Index k, std::vector<TensorValue> cur) {
          vars_[op.vars[0]] = k;
          for (size_t i = 0; i < carried.size(); ++i) values_[carried[i]] = cur[i];
          lower(op.body, false);
          std::vector<TensorValue> out;
          for (int t : carried) out.push_back(values_.at(t));
          return out;
        });
    values_ = saved;
    for (size_t i = 0; i < carried.size(); ++i) values_[carried[i]] = results[i];
    if (op.pipeline > 0 && !results.empty())
      results[0].value()->def()->set_attr("stages", ir::Attribute::integer(op.pipeline));
  }

  const Program& p_;
  TileBuilder* b_ = nullptr;
  std::map<std::string, Size> sizes_;
  std::map<int, TensorValue> globals_;
  std::map<std::string, Index> vars_;
  std::map<int, TensorValue> values_;
  std::map<int, int> origins_;  // an on-chip tensor -> the global piece it was copied from
  ir::Operation* grid_ = nullptr;
  int64_t threads_ = 0;
  int warp_specialize_ = -1;
};

}  // namespace

TileKernel lower_to_tile(const Program& program) {
  return Lowering(program).run();
}

}  // namespace tessel::transforms
