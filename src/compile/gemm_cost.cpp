#include "compile/gemm_cost.h"

#include <algorithm>
#include <cmath>
#include <set>

#include "target/cuda/target.h"
#include "transforms/async/stage_budget.h"

namespace tessel {
namespace {

using ir::Operation;
using ir::OpKind;

// Fitted on the H100 and the H200 together (see the header); seconds, flops and bytes per second,
// all up to one scale (the rate is held at the previous fit's so the others keep their units).
struct Constants {
  double flops_per_sm = 2.65e12;  // per-SM tensor rate (of 7.5e12 peak)
  double one_warpgroup = 0.874;   // the rate's share with one consumer warpgroup (64-row tiles)
  double bandwidth = 6.82e12;     // what the SMs share (L2 hits included), the same on both
  double bandwidth_per_sm = 1.45e11;
  // A K block waits at least this long over the ring's depth: the load latency, of which a ring
  // of S slots hides all but 1/S. With rings of 4 slots (before 389f557) 64x64 tiles pinned to 8
  // measured up to 1.34x faster at 64x4096x4096 on the H100.
  double latency = 2.37e-6;
  // The weight of an operand's bytes when its rows are not whole 128-byte lines: the fit's 2.0,
  // what a row crossing a line boundary fetches.
  double misaligned_rows = 2.0;
  double per_unit = 3.65e-5;     // a unit's fixed cost
  double split_fixed = 3.08e-6;  // a split tile's reduction: fixed part
  // and per byte of the partials its last part reads: one block reads them all, so the pace is
  // a block's, not the shared bandwidth (the previous fit's 2e-13 let 128-row splits win at
  // 256x4096x11008, 1.17x slower than 64-row tiles without a split on the H200).
  double split_per_byte = 1.87e-10;
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
  const Operation* output = nullptr;  // the tile op of the output
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
      output = tile;
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
  // Each operand's row length: the last extent of the rank-2 argument of M and K (A) and of the
  // one of N and K (B).
  for (const auto& arg : kernel.region(0)->arguments()) {
    const ir::Type& type = arg->type();
    if (!type.is_tensor() || type.rank() != 2) continue;
    auto x = symbol(type.shape()[0]), y = symbol(type.shape()[1]);
    if (!x || !y) continue;
    const std::set<std::string> extents = {*x, *y};
    if (extents == std::set<std::string>{t.m, t.k}) {
      t.a_row = *y;
      t.element_bytes = std::max(1, ir::bit_width(type.element()) / 8);
    }
    if (extents == std::set<std::string>{t.n, t.k}) t.b_row = *y;
  }
  if (const Operation* loop = mmas[0]->parent_op(); loop && loop->kind() == OpKind::for_) {
    if (const ir::Attribute* pin = loop->attr("stages");
        pin && pin->kind == ir::Attribute::Kind::integer) {
      t.stages = pin->i;
    }
  }
  // The cluster's extent along the grid dimension whose index is the output tile's M (N)
  // coordinate: swapped operands put N first.
  if (const ir::Attribute* cluster = grid->attr("cluster");
      cluster && cluster->kind == ir::Attribute::Kind::int_list && output) {
    for (int i = 0; i < grid->num_results() && i < static_cast<int>(cluster->list.size()); ++i) {
      if (grid->result(i) == output->operand(1)) t.cluster_m = cluster->list[i];
      if (grid->result(i) == output->operand(2)) t.cluster_n = cluster->list[i];
    }
  }
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

int64_t gemm_ring_depth(const GemmTraits& t) {
  if (t.stages > 0) return t.stages;
  const int64_t budget =
      target::cuda::Target::sm90a().shared_memory_per_block() - transforms::kTightReserveBytes;
  const int64_t slot = std::max<int64_t>(1, (t.tile_m + t.tile_n) * t.tile_k * t.element_bytes);
  return std::clamp<int64_t>(budget / slot, 1, transforms::kMaxStages);
}

double gemm_cost(const GemmTraits& t, const std::map<std::string, int64_t>& sizes, int64_t sms) {
  const Constants& c = kGemmCost;
  auto size = [&](const std::string& s) {
    auto it = sizes.find(s);
    return it == sizes.end() ? int64_t{1} : std::max<int64_t>(1, it->second);
  };
  auto cdiv = [](int64_t x, int64_t y) { return (x + y - 1) / y; };
  const int64_t m = size(t.m), n = size(t.n), k = size(t.k);
  // A cluster's blocks launch together: the grid is whole clusters, a partial one computes
  // masked tiles.
  const int64_t cluster_m = std::max<int64_t>(1, t.cluster_m);
  const int64_t cluster_n = std::max<int64_t>(1, t.cluster_n);
  const int64_t tiles = cdiv(cdiv(m, t.tile_m), cluster_m) * cluster_m *
                        cdiv(cdiv(n, t.tile_n), cluster_n) * cluster_n;
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
  // A K block's bytes: A's and B's tiles, the one a cluster's blocks share (multicast) divided
  // among them. Rows that are not whole 128-byte lines (TMA fetches lines) weigh more: at
  // 3000x5000x704 the plain tile is 1.29x slower with A and B [K,M], [K,N] than with both [.,K]
  // and the 2x1 cluster wins there, as nowhere else (the header).
  auto weight = [&](const std::string& row) {
    const bool aligned = row.empty() || (size(row) * t.element_bytes) % 128 == 0;
    return aligned ? 1.0 : c.misaligned_rows;
  };
  const double bytes = static_cast<double>(t.tile_k * t.element_bytes) *
                       (t.tile_m * weight(t.a_row) / static_cast<double>(cluster_n) +
                        t.tile_n * weight(t.b_row) / static_cast<double>(cluster_m));
  const double bandwidth = std::min(c.bandwidth / static_cast<double>(blocks), c.bandwidth_per_sm);
  const double load =
      std::max(bytes / bandwidth, c.latency / static_cast<double>(gemm_ring_depth(t)));
  const double unit = k_per_unit * std::max(compute, load) + c.per_unit;
  double reduction = 0;
  if (t.split_k) {
    // The last part to arrive reads every part's f32 partial tile and adds them (split_k.h).
    const double rows = static_cast<double>(std::min(m, t.tile_m));
    reduction = c.split_fixed + c.split_per_byte * parts * rows * t.tile_n * 4.0;
  }
  return per_block * unit + reduction;
}

}  // namespace tessel
