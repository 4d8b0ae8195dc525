// The operands warp-specialize's producer loads for the consumer outside the mainloops: address
// arithmetic (what the producer may compute) and the epilogue operands' TMA loads (the rules are
// in warp_specialize.h, "Epilogue operands"). Split from warp_specialize.cpp.
#include "transforms/async/warp_specialize_operands.h"

#include <algorithm>

#include "ir/async.h"
#include "ir/layout_text.h"
#include "layout/tv_layout.h"
#include "target/cuda/atoms.h"

namespace tessel::transforms {
namespace {

using ir::Attribute;
using ir::MemorySpace;
using ir::Operation;
using ir::OpKind;
using ir::Type;
using ir::Value;

// The largest epilogue operand (bytes of one slot) that goes through the producer (header,
// "Epilogue operands"): what a 128x256 GEMM's 4-slot ring of 48 KiB and staged epilogue of
// 2 x 16 KiB leave of the 227 KiB (1 KiB under stage_budget.h's reserve). A larger one would cost
// the mainloop's ring a slot, which costs more than the load it hides (3 slots: 0.71x cuBLAS,
// bench/results/2026-11-24-warp-specialization-h100.md), so it stays in the consumer.
constexpr int64_t kMaxEpilogueOperandBytes = 1024;

// The widest vector (elements, at most 16 bytes) in which every thread of `reg`'s layout can
// read its values from a row-major buffer: runs of w consecutive values at w-aligned offsets.
int64_t read_width(const Type& reg, const std::vector<int64_t>& shape) {
  const int bits = ir::bit_width(reg.element());
  layout::TVLayout tv = ir::register_tv_layout(reg);  // over `shape`: a copy keeps shapes
  const int64_t T = tv.num_threads(), V = tv.num_values();
  const int64_t rows = shape.size() == 2 ? shape[0] : 1, cols = shape.back();
  std::vector<int64_t> offset(static_cast<size_t>(T * V));
  for (int64_t t = 0; t < T; ++t) {
    for (int64_t v = 0; v < V; ++v) {
      int64_t i = tv.index(t, v);  // colexicographic: row i % rows, column i / rows
      offset[static_cast<size_t>(t + T * v)] = (i % rows) * cols + i / rows;
    }
  }
  for (int64_t w = 128 / bits; w >= 2; w /= 2) {
    if (V % w != 0) continue;
    bool ok = true;
    for (int64_t t = 0; ok && t < T; ++t) {
      for (int64_t v = 0; ok && v < V; v += w) {
        int64_t base = offset[static_cast<size_t>(t + T * v)];
        ok = base % w == 0;
        for (int64_t u = 1; ok && u < w; ++u)
          ok = offset[static_cast<size_t>(t + T * (v + u))] == base + u;
      }
    }
    if (ok) return w;
  }
  return 1;
}

bool divisible(const Operation& kernel, const ir::Extent& e, int64_t d) {
  if (e.is_static()) return e.value % d == 0;
  for (const ir::Fact& f : kernel.signature().facts)
    if (f.symbol == e.symbol && f.divisor % d == 0) return true;
  return false;
}

}  // namespace

// Address arithmetic: what the producer may compute and what may stay at the top level. Sizes,
// constants, scalar arithmetic and global views — ops without regions or effects whose results
// are scalars or global tensors.
bool is_address_op(const Operation& op) {
  if (!op.regions().empty() || op.num_results() == 0 || ir::is_async_op(op.kind())) return false;
  switch (op.kind()) {
    case OpKind::size:
    case OpKind::constant:
    case OpKind::tile:
    case OpKind::tile_extent:
    case OpKind::find_group:  // reads the groups' row ends: an address, computed by each role
    case OpKind::global_view:
    case OpKind::transpose:
    case OpKind::cast:
      break;
    default:
      if (!ir::is_elementwise(op.kind())) return false;
  }
  return std::all_of(op.results().begin(), op.results().end(), [](const auto& r) {
    const Type& t = r->type();
    return t.is_scalar() || (t.is_tensor() && t.space() == MemorySpace::global);
  });
}

std::string made_by(const Value* v) {
  return v->def() ? "made by " + ir::op_where(*v->def()) : std::string("a block argument");
}

// `copy` as an epilogue operand the producer can load, or null with the reason in `why`;
// `closure` gets the top-level ops its tile's address needs.
std::optional<EpilogueLoad> epilogue_load(const Operation& kernel, Operation* copy,
                                          const std::function<bool(const Value*)>& available,
                                          std::set<const Operation*>& closure, std::string& why) {
  const ir::Block* top = kernel.region(0);
  auto refuse = [&](std::string reason) -> std::optional<EpilogueLoad> {
    why = std::move(reason);
    return std::nullopt;
  };
  Operation* tile = copy->operand(0)->def();
  if (!tile || tile->kind() != OpKind::tile)
    return refuse("it does not read a tile op (" + made_by(copy->operand(0)) + ")");
  const Value* tensor = tile->operand(0);
  if (tensor->def() || tensor->owner_block() != top || tensor->type().has_layout()) {
    return refuse("its tile views " + ir::value_ref(tensor) +
                  ", not a kernel argument (a TMA descriptor describes an argument)");
  }
  const Type& t = tile->result()->type();
  if (!ir::is_static(t.shape()) || t.rank() < 1 || t.rank() > 2)
    return refuse("the tile " + t.str() + " is not of rank 1 or 2 with static extents");
  const ir::ScalarKind e = t.element();
  if (e != ir::ScalarKind::f16 && e != ir::ScalarKind::bf16 && e != ir::ScalarKind::f32)
    return refuse("TMA descriptors are made for f16, bf16 and f32 tensors, not " + t.str());
  if (tile->has_attr("masked")) {
    const Attribute* pad = tile->attr("pad");
    bool zero = !pad || (pad->kind == Attribute::Kind::real && pad->f == 0.0) ||
                (pad->kind == Attribute::Kind::integer && pad->i == 0);
    if (!zero) return refuse("its tile pads with " + pad->str() + "; TMA fills zeros");
  }
  // TMA needs the box's innermost start 16-byte aligned: a 1-D f32 box at a window's first
  // element (an MoE row's routing weight) raised an illegal instruction on the H100 when that
  // element was not a multiple of 4 (bench/results/2026-11-28-moe-combine-h100.md).
  if (ir::tile_window_dim(*tile) == tensor->type().rank() - 1) {
    return refuse("its innermost dimension starts at a window's first element, which TMA needs "
                  "16-byte aligned");
  }
  const std::vector<int64_t> shape = t.static_shape();
  const int bits = ir::bit_width(e);
  for (int64_t x : shape) {
    if (x < 1 || x > 256) return refuse("a TMA box extent is 1..256, the tile is " + t.str());
  }
  if (shape.back() * bits % 128 != 0) {
    return refuse("a TMA box's inner extent is a multiple of 16 bytes, the tile's is " +
                  std::to_string(shape.back() * bits / 8));
  }
  if (shape.size() == 2) {
    const ir::Extent& row = tensor->type().shape().back();
    if (!divisible(kernel, row, 128 / bits)) {
      return refuse("the rows of " + ir::value_ref(tensor) +
                    " are not known to be multiples of 16 bytes (TMA's stride rule; a fact " +
                    row.str() + " % " + std::to_string(128 / bits) + " == 0 would say so)");
    }
  }
  if (t.static_bytes() > kMaxEpilogueOperandBytes) {
    return refuse(std::to_string(t.static_bytes()) + " bytes, more than the " +
                  std::to_string(kMaxEpilogueOperandBytes) +
                  " a slot may take without costing the mainloop's ring a slot");
  }
  const Type& reg = copy->result()->type();
  if (!reg.has_layout()) return refuse("its register tensor has no layout yet");
  // The tile's address: index math over sizes, constants and block indices, as the producer's
  // loop tiles (never the accumulator, which the producer does not have).
  std::vector<const Value*> work(tile->operands().begin(), tile->operands().end());
  closure.insert(tile);
  while (!work.empty()) {
    const Value* v = work.back();
    work.pop_back();
    if (available(v)) continue;
    Operation* def = v->def();
    if (!def || v->owner_block() != top || !is_address_op(*def)) {
      return refuse("its tile's address depends on " + ir::value_ref(v) + ", " + made_by(v) +
                    ", which is not address arithmetic");
    }
    if (closure.insert(def).second)
      for (const Value* u : def->operands()) work.push_back(u);
  }
  EpilogueLoad load{copy, tile, Type(), "", ""};
  std::string layout = shape.size() == 1
                           ? std::to_string(shape[0]) + ":1"
                           : "(" + std::to_string(shape[0]) + "," + std::to_string(shape[1]) +
                                 "):(" + std::to_string(shape[1]) + ",1)";
  load.buffer = Type::tensor(e, t.shape(), MemorySpace::shared, layout);
  load.tma_atom = shape.size() == 1
                      ? target::cuda::tma_copy_1d(true, shape[0], bits).name
                      : target::cuda::tma_copy(true, shape[0], shape[1], bits, 0).name;
  const int64_t width = read_width(reg, shape);
  load.read_atom = target::cuda::vector_copy(MemorySpace::shared, MemorySpace::reg,
                                             static_cast<int>(width * bits / 8), bits)
                       .name;
  return load;
}

}  // namespace tessel::transforms
