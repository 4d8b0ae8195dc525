// Register layouts as index arithmetic: each TV layout split into per-dimension thread and
// value parts (Plan), and the C expression of a thread part.
#include <algorithm>
#include <cmath>
#include <numeric>

#include "ir/layout_text.h"
#include "layout/table.h"
#include "layout/tv_layout.h"
#include "target/cuda/emit_internal.h"

namespace tessel::target::cuda::detail {

void Emitter::collect_plans(const ir::Block& block) {
  for (const auto& op : block.ops()) {
    for (const auto& r : op->results()) plan_for(*op, r->type());
    for (const auto& region : op->regions()) collect_plans(*region);
  }
}

const Plan* Emitter::plan_for(const Operation& op, const Type& t) {
  if (!t.is_tensor() || t.space() != MemorySpace::reg) return nullptr;
  if (!t.has_layout()) {
    user_error(op.loc(), "emit: the register tensor made by ", op.name(), " (", t.str(),
               ") has no layout; run layout synthesis or pin one");
  }
  auto key = t.layout() + "|" + ir::to_string(t.shape());
  auto it = plan_index_.find(key);
  if (it != plan_index_.end()) {
    if (roles_ && it->second->threads != threads_of(op)) {
      unsupported(op, "result has a layout over " + std::to_string(it->second->threads) +
                          " threads but its role has " + std::to_string(threads_of(op)) + " (" +
                          t.str() + ")");
    }
    return it->second;
  }
  if (!is_static(t.shape()))
    unsupported(op, "needs a register tensor of static shape, not " + t.str());
  std::vector<int64_t> tile = t.static_shape();
  layout::TVLayout tv = ir::register_tv_layout(t);
  auto plan = std::make_unique<Plan>();
  plan->text = tv.str();
  plan->id = static_cast<int>(plans_.size());
  plan->tile = tile;
  plan->threads = tv.num_threads();
  plan->values = tv.num_values();
  if (threads_ == 0) threads_ = plan->threads;
  if (roles_ && plan->threads != threads_of(op)) {
    unsupported(op, "result has a layout over " + std::to_string(plan->threads) +
                        " threads but its role has " + std::to_string(threads_of(op)) + " (" +
                        t.str() + ")");
  }
  if (!roles_ && plan->threads != threads_) {
    unsupported(op, "result has a layout over " + std::to_string(plan->threads) +
                        " threads but the kernel's other register tensors use " +
                        std::to_string(threads_) + " (" + t.str() + ")");
  }
  if (threads_ > 1024) unsupported(op, "needs more than 1024 threads");
  auto decompose = [&](int64_t index) {
    std::vector<int64_t> c(tile.size());
    for (size_t d = 0; d < tile.size(); ++d) {
      c[d] = index % tile[d];
      index /= tile[d];
    }
    return c;
  };
  // Thread leaves: each stride moves along the last dimension whose colexicographic weight
  // divides it.
  const layout::Layout& thr = tv.thread_layout();
  std::vector<layout::Extent> shapes = layout::leaves(thr.shape()),
                              strides = layout::leaves(thr.stride());
  // A leaf that runs past the end of its dimension (e.g. 64 threads of stride 1 over an (8,8)
  // tile) is split where it crosses: (64):(1) -> (8,8):(1,8).
  int64_t prefix = 1;
  for (size_t i = 0; i < shapes.size(); ++i) {
    int64_t extent = shapes[i].constant(), s = strides[i].constant();
    while (extent > 1) {
      Leaf leaf;
      leaf.extent = extent;
      leaf.prefix = prefix;
      leaf.coef.assign(tile.size(), 0);
      int64_t weight = 1;
      size_t dim = 0;
      for (size_t d = 0; d < tile.size(); ++d) {
        if (s != 0 && s % weight == 0) dim = d;
        weight *= tile[d];
      }
      weight = 1;
      for (size_t d = 0; d < dim; ++d) weight *= tile[d];
      int64_t span = weight * tile[dim];  // where dimension `dim` ends
      if (s != 0 && s * extent > span && span % s == 0 && extent % (span / s) == 0 &&
          dim + 1 < tile.size()) {
        leaf.extent = span / s;
      }
      if (s != 0) leaf.coef[dim] = s / weight;
      prefix *= leaf.extent;
      extent /= leaf.extent;
      if (leaf.extent > 1) plan->leaves.push_back(leaf);
      s *= leaf.extent;
    }
  }
  // Integer tables of each mode (the layout library evaluates symbolically one index at a time:
  // too slow for every element of a tile).
  std::vector<int64_t> thread_offset = layout::layout_table(thr),
                       value_offset = layout::layout_table(tv.value_layout());
  for (int64_t v = 0; v < plan->values; ++v) {
    plan->value_coord.push_back(decompose(value_offset[v]));
  }
  // The split must reproduce the layout exactly: coord(t, v) == decompose(offset(t) + offset(v))
  // for every thread and value. Checked without allocating (a 128x256 accumulator over 256 threads
  // is 32768 pairs): each thread's part once, then each pair's coordinates in place.
  const size_t rank = tile.size();
  std::vector<int64_t> thread_coord(static_cast<size_t>(plan->threads) * rank);
  for (int64_t t = 0; t < plan->threads; ++t) {
    std::vector<int64_t> c = plan->thread_part(t);
    std::copy(c.begin(), c.end(), thread_coord.begin() + t * rank);
  }
  for (int64_t t = 0; t < plan->threads; ++t) {
    const int64_t* part = thread_coord.data() + t * rank;
    for (int64_t v = 0; v < plan->values; ++v) {
      const std::vector<int64_t>& value = plan->value_coord[v];
      int64_t index = thread_offset[t] + value_offset[v];
      bool same = true;
      for (size_t d = 0; d < rank; ++d) {
        same = same && part[d] + value[d] == index % tile[d];
        index /= tile[d];
      }
      if (!same) {
        unsupported(op, "result layout " + plan->text +
                            " does not split into per-dimension thread and value parts");
      }
    }
  }
  for (size_t d = 0; d < tile.size(); ++d) {
    bool any = false;
    for (const Leaf& l : plan->leaves) any = any || l.coef[d] != 0;
    plan->var.push_back(any ? "thr" + std::to_string(plan->id) + "_d" + std::to_string(d) : "0");
    if (any) used_.insert(plan->var.back());
  }
  const Plan* p = plan.get();
  plans_.push_back(std::move(plan));
  plan_index_[key] = p;
  return p;
}

std::string Emitter::thread_expr(const Plan& plan, size_t d) {
  // Coalesce leaves that continue each other in this dimension (lane, then warp, with
  // matching strides) so that e.g. `tid % 32 + (tid / 32) * 32` is emitted as `tid`.
  std::vector<Leaf> merged;
  for (const Leaf& l : plan.leaves) {
    if (l.coef[d] == 0) continue;
    if (!merged.empty()) {
      Leaf& m = merged.back();
      if (m.prefix * m.extent == l.prefix && m.coef[d] * m.extent == l.coef[d]) {
        m.extent *= l.extent;
        continue;
      }
    }
    merged.push_back(l);
  }
  std::string e;
  for (const Leaf& l : merged) {
    if (l.coef[d] == 0) continue;
    std::string term = leaf_coord_expr(l, plan.threads);
    if (l.coef[d] != 1) term = "(" + term + ") * " + std::to_string(l.coef[d]);
    e += (e.empty() ? "" : " + ") + term;
  }
  return e.empty() ? "0" : e;
}

}  // namespace tessel::target::cuda::detail
