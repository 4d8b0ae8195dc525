// SpecializeMasks: selects on index-arithmetic masks skipped where they keep everything (the
// rules are in the header).
#include "transforms/schedule/specialize_masks.h"

#include <algorithm>
#include <optional>
#include <set>
#include <string>
#include <unordered_map>
#include <vector>

#include "ir/canonicalize.h"
#include "support/diagnostics.h"
#include "transforms/pins.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::Block;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::ScalarKind;
using ir::Type;
using ir::Value;

const Type kIndex = Type::scalar(ScalarKind::index);

// One side of the comparison: a scalar, or an iota along `dim` (extent `extent`) plus a scalar.
struct Side {
  Value* offset = nullptr;        // the scalar (null: 0, a bare iota)
  int64_t extent = 1;             // 1 for a scalar side
  std::vector<Operation*> chain;  // the iota and add ops (empty for a scalar)
};

bool is_index_scalar(const Value* v) {
  return v->type() == kIndex;
}

std::optional<Side> side_of(Value* v, const std::vector<int64_t>& shape) {
  if (is_index_scalar(v)) return Side{v, 1, {}};
  Operation* def = v->def();
  if (!def || !v->type().is_tensor() || v->type().element() != ScalarKind::index)
    return std::nullopt;
  auto iota_extent = [&](Operation* op) -> std::optional<int64_t> {
    if (op->kind() != OpKind::iota || op->result()->type().static_shape() != shape)
      return std::nullopt;
    return shape[static_cast<size_t>(op->int_attr("dim"))];
  };
  if (auto e = iota_extent(def)) return Side{nullptr, *e, {def}};
  if (def->kind() != OpKind::add) return std::nullopt;
  for (int i = 0; i < 2; ++i) {
    Operation* iota = def->operand(i)->def();
    Value* scalar = def->operand(1 - i);
    if (!iota || !is_index_scalar(scalar)) continue;
    if (auto e = iota_extent(iota)) return Side{scalar, *e, {iota, def}};
  }
  return std::nullopt;
}

class Specializer {
 public:
  explicit Specializer(Operation* kernel) : kernel_(kernel) {}

  void run() {
    // `specialize_masks = false` on the block_grid keeps every mask a select: no branch. A branch
    // between an mma's issue and its wait is a join where ptxas drains every wgmma in flight
    // (WARPGROUP.DEPBAR.LE gsb0, 0x0 at the join): in the coarse-pipelined attention loop the
    // per-tile `if` retires P·V before the next tile's softmax, which then overlaps nothing;
    // without the branch the softmax's MUFU.EX2 run under P·V (SASS of flash_attention.tir,
    // 2026-11-27), for ~92 more instructions a thread a tile (the compares and selects).
    if (grid_flag(*kernel_, "specialize_masks") == false) return;
    std::vector<Operation*> selects;
    ir::walk(kernel_, [&](Operation* op) {
      if (op->kind() == OpKind::select && op->result()->type().is_tensor() &&
          op->result()->type().space() == MemorySpace::reg)
        selects.push_back(op);
    });
    for (Operation* op : selects) specialize(op);
  }

 private:
  void specialize(Operation* select) {
    Operation* cmp = select->operand(0)->def();
    if (!cmp || cmp->kind() != OpKind::cmp || !select->result()->type().is_tensor()) return;
    const std::string pred = cmp->str_attr("pred");
    if (pred != "lt" && pred != "le" && pred != "gt" && pred != "ge") return;
    const std::vector<int64_t> shape = select->result()->type().static_shape();
    std::optional<Side> x = side_of(cmp->operand(0), shape), y = side_of(cmp->operand(1), shape);
    if (!x || !y || (x->chain.empty() && y->chain.empty())) return;
    Block* block = select->parent_block();
    ir::OpBuilder b(block);
    b.set_insertion_point_before(select);
    const SourceLocation loc = select->loc();
    // lt/le: the largest x against the smallest y; gt/ge: the smallest x against the largest y.
    const bool below = pred == "lt" || pred == "le";
    Value* lhs = extreme(b, *x, below, loc);
    Value* rhs = extreme(b, *y, !below, loc);
    Value* all = b.compare(pred, lhs, rhs, "all_kept", loc);
    Operation* branch = b.create(OpKind::if_, {all}, {select->result()->type()}, loc);
    Block* then_block = branch->add_region();
    Block* else_block = branch->add_region();
    ir::OpBuilder tb(then_block);
    tb.create(OpKind::yield, {select->operand(1)}, {}, loc);
    // The chain the mask alone uses, in program order, moves into the else branch.
    std::vector<Operation*> chain;
    for (Operation* op : x->chain) chain.push_back(op);
    for (Operation* op : y->chain) chain.push_back(op);
    chain.push_back(cmp);
    // An op moves when every user is the select or another op that moves (a cmp that also feeds
    // a second select stays, and so does the chain it reads): shrink the chain to that fixpoint.
    std::vector<Operation*> moved;
    for (const auto& op : block->ops())
      if (std::find(chain.begin(), chain.end(), op.get()) != chain.end()) moved.push_back(op.get());
    for (bool changed = true; changed;) {
      changed = false;
      for (auto it = moved.begin(); it != moved.end(); ++it) {
        if (only_feeds(*it, moved, select)) continue;
        moved.erase(it);
        changed = true;
        break;
      }
    }
    ir::OpBuilder eb(else_block);
    std::unordered_map<const Value*, Value*> map;
    for (Operation* op : moved) eb.insert(ir::clone(*op, map));
    Operation* inner = eb.insert(ir::clone(*select, map));
    eb.create(OpKind::yield, {inner->result()}, {}, loc);
    branch->result()->set_name(select->result()->name());
    inner->result()->set_name(select->result()->name() + "_masked");
    ir::replace_all_uses(*kernel_, select->result(), branch->result());
    block->remove(select);
    for (auto it = moved.rbegin(); it != moved.rend(); ++it) block->remove(*it);
  }

  // Whether every use of `op`'s result is by an op of `chain` or by `select`.
  bool only_feeds(const Operation* op, const std::vector<Operation*>& chain,
                  const Operation* select) const {
    bool only = true;
    ir::walk(kernel_, [&](Operation* user) {
      for (const Value* v : user->operands()) {
        if (v != op->result()) continue;
        only =
            only && (user == select || std::find(chain.begin(), chain.end(), user) != chain.end());
      }
    });
    return only;
  }

  // The smallest (or largest) value of `s`: its offset, plus extent - 1 for the largest.
  static Value* extreme(ir::OpBuilder& b, const Side& s, bool largest, const SourceLocation& loc) {
    Value* base = s.offset;
    if (!base) base = b.index_constant(0, loc);
    if (!largest || s.extent == 1) return base;
    Value* last = b.index_constant(s.extent - 1, loc);
    Operation* add = b.create(OpKind::add, {base, last}, {kIndex}, loc);
    add->result()->set_name("last_index");
    return add->result();
  }

  Operation* kernel_;
};

}  // namespace

void specialize_masks(ir::Module& module) {
  for (const auto& kernel : module.kernels) Specializer(kernel.get()).run();
}

}  // namespace tessel::transforms
