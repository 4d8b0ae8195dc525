// The task interpreter (task_interpreter.h).
#include "frontend/task/task_interpreter.h"

#include <cmath>
#include <deque>
#include <functional>

#include "support/float_formats.h"

namespace tessel::task {

double round_element(ScalarKind element, double value) {
  switch (element) {
    case ScalarKind::f32:
      return static_cast<double>(static_cast<float>(value));
    case ScalarKind::f16:
      return decode_narrow_float(NarrowFloat::f16, encode_narrow_float(NarrowFloat::f16, value));
    case ScalarKind::bf16:
      return decode_narrow_float(NarrowFloat::bf16, encode_narrow_float(NarrowFloat::bf16, value));
    default:
      return value;
  }
}

namespace {

// A window of a host array: `shape` elements from `offset`; outside the array reads give 0 and
// writes are dropped. `declared` is the extent the program gave the tensor (a piece's block),
// of which `shape` is the part inside its parent (less at a ragged edge).
struct View {
  HostArray* array = nullptr;
  std::vector<int64_t> offset, shape, declared;

  bool locate(const std::vector<int64_t>& c, int64_t& index) const {
    index = 0;
    for (size_t d = 0; d < c.size(); ++d) {
      int64_t x = offset[d] + c[d];
      if (x < 0 || x >= array->shape[d]) return false;
      index = index * array->shape[d] + x;
    }
    return true;
  }
  double get(const std::vector<int64_t>& c) const {
    int64_t i = 0;
    for (size_t d = 0; d < c.size(); ++d)
      if (c[d] >= shape[d]) return 0.0;  // beyond this view's own extent
    return locate(c, i) ? array->data[i] : 0.0;
  }
  void set(const std::vector<int64_t>& c, double v) const {
    int64_t i = 0;
    if (locate(c, i)) array->data[i] = round_element(array->element, v);
  }
};

void for_each(const std::vector<int64_t>& shape,
              const std::function<void(std::vector<int64_t>&)>& f) {
  for (int64_t s : shape)
    if (s <= 0) return;
  std::vector<int64_t> c(shape.size(), 0);
  while (true) {
    f(c);
    int d = static_cast<int>(shape.size()) - 1;
    while (d >= 0 && ++c[d] == shape[d]) c[d--] = 0;
    if (d < 0) return;
  }
}

// Computed in double; the destination rounds the result to its element type when it is stored
// (f32 for the attention's scores and row vectors). exp2 takes its argument rounded to f32 first,
// as the tile program's exp2 of an f32 fma does.
double apply_elementwise(const std::string& op, const std::vector<double>& x) {
  auto f = [](double v) { return static_cast<double>(static_cast<float>(v)); };
  if (op == "add") return x[0] + x[1];
  if (op == "sub") return x[0] - x[1];
  if (op == "mul") return x[0] * x[1];
  if (op == "div") return x[0] / x[1];
  if (op == "max") return std::max(x[0], x[1]);
  if (op == "min") return std::min(x[0], x[1]);
  if (op == "fma") return std::fma(x[0], x[1], x[2]);
  if (op == "neg") return -x[0];
  if (op == "exp") return std::exp(x[0]);
  if (op == "exp2") return std::exp2(f(x[0]));
  if (op == "relu") return std::max(x[0], 0.0);
  if (op == "sigmoid") return 1.0 / (1.0 + std::exp(-x[0]));
  if (op == "silu") return x[0] / (1.0 + std::exp(-x[0]));
  TESSEL_ASSERT(false, "unknown elementwise op ", op);
}

class Interpreter {
 public:
  explicit Interpreter(const std::map<std::string, int64_t>& sizes) : sizes_(sizes) {}

  // `outer`: the caller's loop indices, which the extents of the pieces it passed may name (a
  // key range that grows with the query tile's index).
  void run(const Node& n, const std::vector<View>& args,
           const std::map<std::string, int64_t>& outer = {}) {
    std::map<std::string, int64_t> vars = outer;
    if (n.variant->kind == VariantKind::leaf) {
      leaf(*n.variant, args);
      return;
    }
    std::vector<View> tensors(n.variant->tensors.size());
    for (size_t i = 0; i < args.size(); ++i) tensors[i] = args[i];
    body(n, n.variant->body, tensors, vars);
  }

 private:
  int64_t eval(const Node& n, const Expr& e, const std::map<std::string, int64_t>& vars) {
    int64_t out = 0;
    bool ok = evaluate(
        n.resolve(e),
        [&](const Expr& leaf, int64_t& v) {
          if (leaf.kind() == Expr::Kind::size) {
            auto it = sizes_.find(leaf.name());
            if (it == sizes_.end()) return false;
            v = it->second;
            return true;
          }
          if (leaf.kind() == Expr::Kind::var) {
            auto it = vars.find(leaf.name());
            if (it == vars.end()) return false;
            v = it->second;
            return true;
          }
          return false;
        },
        out);
    if (!ok)
      user_error(n.variant->loc, "variant '", n.variant->name, "': cannot evaluate ", e.str());
    return out;
  }

  // The view of tensor `id` at the current loop indices (locals are made once, when first met).
  View view(const Node& n, int id, std::vector<View>& tensors,
            const std::map<std::string, int64_t>& vars) {
    const TensorDef& t = n.variant->tensors[id];
    if (t.kind == TensorDef::Kind::param) return tensors[id];
    if (t.kind == TensorDef::Kind::local) {
      if (!tensors[id].array) {
        HostArray& a = locals_.emplace_back();
        a.element = t.element;
        for (const Expr& e : t.shape) a.shape.push_back(eval(n, e, vars));
        int64_t count = 1;
        for (int64_t s : a.shape) count *= s;
        a.data.assign(count, 0.0);
        tensors[id] = {&a, std::vector<int64_t>(a.shape.size(), 0), a.shape, a.shape};
      }
      return tensors[id];
    }
    const PartitionDef& p = n.variant->partitions[t.partition];
    View src = view(n, p.source, tensors, vars);
    View out = src;
    for (size_t d = 0; d < p.block.size(); ++d) {
      int64_t b = eval(n, p.block[d], vars), c = eval(n, t.coords[d], vars);
      out.offset[d] += c * b;
      // A piece never reaches past its source's own extent (a local's or a parent piece's).
      out.shape[d] = std::max<int64_t>(0, std::min(b, src.shape[d] - c * b));
      out.declared[d] = b;
    }
    return out;
  }

  void body(const Node& n, const std::vector<Stmt>& stmts, std::vector<View>& tensors,
            std::map<std::string, int64_t>& vars) {
    for (const Stmt& s : stmts) {
      if (s.kind == Stmt::Kind::launch) {
        std::vector<View> args;
        for (int a : s.args) args.push_back(view(n, a, tensors, vars));
        run(n.callee(s), args, vars);
        continue;
      }
      // srange and prange run in order: a prange's launches write disjoint pieces (checked at
      // instantiation), so any order gives the same result.
      std::vector<int64_t> extents;
      for (const Expr& e : s.extents) extents.push_back(eval(n, e, vars));
      for_each(extents, [&](std::vector<int64_t>& idx) {
        for (size_t v = 0; v < s.vars.size(); ++v) vars[s.vars[v]] = idx[v];
        body(n, s.body, tensors, vars);
      });
      for (const std::string& v : s.vars) vars.erase(v);
    }
  }

  // Element `c` of dst's index space read from `src`: where src's declared extent is 1 and
  // dst's is not, src is broadcast along that dimension.
  static double get_broadcast(const View& src, const View& dst, const std::vector<int64_t>& c,
                              std::vector<int64_t>& sc) {
    sc = c;
    for (size_t d = 0; d < sc.size(); ++d)
      if (src.declared[d] == 1 && dst.declared[d] != 1) sc[d] = 0;
    return src.get(sc);
  }

  // c += a·bᵀ (b [n, k]) or a·b (b [k, n]) over the last two dimensions (leading extents 1).
  static void mma(const View& dst, const View& a, const View& b, bool b_kn) {
    const size_t r = dst.shape.size();
    int64_t K = a.declared.at(r - 1);
    std::vector<int64_t> ac(r, 0), bc(r, 0);
    for_each(dst.shape, [&](std::vector<int64_t>& c) {
      double sum = 0;
      for (int64_t k = 0; k < K; ++k) {
        ac[r - 2] = c[r - 2];
        ac[r - 1] = k;
        bc[r - 2] = b_kn ? k : c[r - 1];
        bc[r - 1] = b_kn ? c[r - 1] : k;
        sum += a.get(ac) * b.get(bc);
      }
      dst.set(c, dst.get(c) + sum);
    });
  }

  // dst = fold(dst, fold over dimension `dim` of src), fold a sum or a max.
  static void reduce(const View& dst, const View& src, int dim, bool max) {
    std::vector<int64_t> sc;
    for_each(dst.shape, [&](std::vector<int64_t>& c) {
      double acc = max ? -INFINITY : 0.0;
      for (int64_t k = 0; k < src.shape.at(dim); ++k) {
        sc = c;
        // dst has src's other dimensions, or all of them with `dim` of extent 1.
        if (dst.shape.size() == src.shape.size()) {
          sc[dim] = k;
        } else {
          sc.insert(sc.begin() + dim, k);
        }
        acc = max ? std::max(acc, src.get(sc)) : acc + src.get(sc);
      }
      dst.set(c, max ? std::max(dst.get(c), acc) : dst.get(c) + acc);
    });
  }

  void leaf(const Variant& v, const std::vector<View>& args) {
    for (const LeafOp& op : v.ops) {
      const View& dst = args[op.operands[0]];
      switch (op.kind) {
        case LeafOp::Kind::fill:
          for_each(dst.shape, [&](std::vector<int64_t>& c) { dst.set(c, op.value); });
          break;
        case LeafOp::Kind::copy: {
          const View& src = args[op.operands[1]];
          for_each(dst.shape, [&](std::vector<int64_t>& c) { dst.set(c, src.get(c)); });
          break;
        }
        case LeafOp::Kind::elementwise: {
          // Sources read before dst is written, element by element (dst may be a source).
          std::vector<double> x(op.operands.size() - 1);
          std::vector<int64_t> sc;
          for_each(dst.shape, [&](std::vector<int64_t>& c) {
            for (size_t i = 1; i < op.operands.size(); ++i) {
              int p = op.operands[i];
              x[i - 1] = p < 0 ? static_cast<double>(static_cast<float>(op.scalars.at(-1 - p)))
                               : get_broadcast(args[p], dst, c, sc);
            }
            dst.set(c, apply_elementwise(op.op, x));
          });
          break;
        }
        case LeafOp::Kind::mma:
          mma(dst, args[op.operands[1]], args[op.operands[2]], op.b_kn);
          break;
        case LeafOp::Kind::reduce_sum:
        case LeafOp::Kind::reduce_max:
          reduce(dst, args[op.operands[1]], op.dim, op.kind == LeafOp::Kind::reduce_max);
          break;
        case LeafOp::Kind::mask_causal: {
          // Positions in the refs' tensors: the row's in rows_ref, the column's in cols_ref.
          const View &rows = args[op.operands[1]], &cols = args[op.operands[2]];
          const size_t r = dst.shape.size();
          int64_t row0 = rows.offset.at(op.ref_dim), col0 = cols.offset.at(op.ref_dim);
          for_each(dst.shape, [&](std::vector<int64_t>& c) {
            if (col0 + c[r - 1] > row0 + c[r - 2]) dst.set(c, op.value);
          });
          break;
        }
        case LeafOp::Kind::mask: {
          // The elements of ref along ref_dim inside the tensor it is a piece of (its root
          // array; a parent piece's own end does not count).
          const View& ref = args[op.operands[1]];
          int64_t inside = ref.array->shape.at(op.ref_dim) - ref.offset.at(op.ref_dim);
          for_each(dst.shape, [&](std::vector<int64_t>& c) {
            if (c[op.dim] >= inside) dst.set(c, op.value);
          });
          break;
        }
      }
    }
  }

  const std::map<std::string, int64_t>& sizes_;
  std::deque<HostArray> locals_;
};

}  // namespace

void interpret(const Instantiation& inst, const std::map<std::string, int64_t>& sizes,
               std::map<std::string, HostArray>& globals) {
  std::vector<View> args;
  for (int g : inst.program->entry_args()) {
    const GlobalTensor& t = inst.program->globals()[g];
    auto it = globals.find(t.name);
    if (it == globals.end())
      user_error(SourceLocation::unknown(), "no data for tensor '", t.name, "'");
    std::vector<int64_t> shape;
    for (const std::string& s : t.shape) shape.push_back(global_extent(s, sizes));
    if (it->second.shape != shape)
      user_error(SourceLocation::unknown(), "tensor '", t.name, "' has the wrong shape");
    args.push_back({&it->second, std::vector<int64_t>(shape.size(), 0), shape, shape});
  }
  Interpreter(sizes).run(*inst.root, args);
}

}  // namespace tessel::task
