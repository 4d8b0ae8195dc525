#include "compile/gemm_cost.h"

#include <algorithm>
#include <cmath>

namespace tessel {
namespace {

using ir::Operation;
using ir::OpKind;

// Fitted on the H100 (see the header); seconds, flops and bytes per second.
struct Constants {
  double flops_per_sm = 2.65e12;  // per-SM tensor rate the fit settled on (of 7.5e12 peak)
  double one_warpgroup = 0.85;    // the rate's share with one consumer warpgroup (64-row tiles)
  double bandwidth = 5.68e12;     // what the SMs share (L2 hits included)
  double bandwidth_per_sm = 6.0e10;
  double per_unit = 2.08e-5;     // a unit's fixed cost
  double split_fixed = 1.13e-5;  // a split tile's reduction: fixed part
  double split_per_byte = 2.0e-13;
};
constexpr Constants kGemmCost;

std::optional<std::string> symbol(const ir::Extent& e) {
  if (e.is_static()) return std::nullopt;
  return e.symbol;
}

}  // namespace

std::optional<GemmTraits> gemm_traits(const ir::Operation& kernel) {
  std::vector<Operation*> mmas;
  Operation* grid = nullptr;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    if (op->kind() == OpKind::mma) mmas.push_back(op);
    if (op->kind() == OpKind::block_grid) grid = op;
  });
  if (mmas.size() != 1 || !grid) return std::nullopt;
  const ir::Type& acc = mmas[0]->result()->type();
  const ir::Type& a = mmas[0]->operand(0)->type();
  if (acc.rank() != 2 || a.rank() != 2) return std::nullopt;
  GemmTraits t;
  const int64_t rows = acc.static_shape()[0], cols = acc.static_shape()[1];
  t.tile_k = a.static_shape()[1];
  t.mma_rows = rows;
  // The output: a global tile of the accumulator's shape (or of its transpose's, for swapped
  // operands) that a register tensor is copied to.
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    if (op->kind() != OpKind::copy || op->num_operands() != 2 || !t.m.empty()) return;
    const Operation* tile = op->operand(1)->def();
    if (op->operand(0)->type().space() != ir::MemorySpace::reg || !tile ||
        tile->kind() != OpKind::tile) {
      return;
    }
    const std::vector<int64_t>& shape = tile->ints_attr("shape");
    if (shape != std::vector<int64_t>{rows, cols} && shape != std::vector<int64_t>{cols, rows})
      return;
    const ir::Type& root = tile->operand(0)->type();
    if (root.rank() != 2) return;
    auto m = symbol(root.shape()[0]), n = symbol(root.shape()[1]);
    if (m && n) {
      t.m = *m;
      t.n = *n;
      t.tile_m = shape[0];
      t.tile_n = shape[1];
    }
  });
  if (t.m.empty()) return std::nullopt;
  // K: the other extent of a rank-2 tensor argument that has M (A [M,K] or [K,M]).
  for (const auto& arg : kernel.region(0)->arguments()) {
    const ir::Type& type = arg->type();
    if (!type.is_tensor() || type.rank() != 2) continue;
    auto x = symbol(type.shape()[0]), y = symbol(type.shape()[1]);
    if (x && y && *x == t.m && *y != t.n) t.k = *y;
    if (x && y && *y == t.m && *x != t.n) t.k = *x;
  }
  if (t.k.empty()) return std::nullopt;
  if (const ir::Attribute* pin = grid->attr("split_k")) {
    if (pin->kind == ir::Attribute::Kind::ident && pin->s == "auto") {
      t.split_k = true;
    } else if (pin->kind == ir::Attribute::Kind::integer && pin->i > 1) {
      t.split_k = true;
      t.parts = pin->i;
    }
  }
  return t;
}

double gemm_cost(const GemmTraits& t, const std::map<std::string, int64_t>& sizes, int64_t sms) {
  const Constants& c = kGemmCost;
  auto size = [&](const std::string& s) {
    auto it = sizes.find(s);
    return it == sizes.end() ? int64_t{1} : std::max<int64_t>(1, it->second);
  };
  auto cdiv = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
  const int64_t m = size(t.m), n = size(t.n), k = size(t.k);
  const int64_t tiles = cdiv(m, t.tile_m) * cdiv(n, t.tile_n);
  const int64_t blocks_k = cdiv(k, t.tile_k);
  int64_t parts = 1;
  if (t.split_k) {
    parts = t.parts > 0 ? t.parts
                        : std::max<int64_t>(1, std::min({sms / tiles, blocks_k / 4, int64_t{16}}));
  }
  const int64_t units = tiles * parts;
  const int64_t blocks = std::max<int64_t>(1, std::min(units, sms));
  const double per_block = static_cast<double>(cdiv(units, blocks));
  const double k_per_unit = static_cast<double>(cdiv(blocks_k, parts));
  const int64_t mma_rows = t.mma_rows > 0 ? t.mma_rows : t.tile_m;
  const double rate = c.flops_per_sm * (mma_rows >= 128 ? 1.0 : c.one_warpgroup);
  const double compute = 2.0 * t.tile_m * t.tile_n * t.tile_k / rate;
  const double bandwidth = std::min(c.bandwidth / static_cast<double>(blocks), c.bandwidth_per_sm);
  const double load = 2.0 * (t.tile_m + t.tile_n) * t.tile_k / bandwidth;
  const double unit = k_per_unit * std::max(compute, load) + c.per_unit;
  double reduction = 0;
  if (t.split_k) {
    const double rows = static_cast<double>(std::min(m, t.tile_m));
    reduction = c.split_fixed + c.split_per_byte * parts * rows * t.tile_n * 4.0;
  }
  return per_block * unit + reduction;
}

}  // namespace tessel
