// Generators of random shapes and layouts for the contract tests and the fuzzer.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <random>
#include <vector>

#include "layout/layout.h"

namespace tessel::layout::testing {

class LayoutGen {
 public:
  // TESSEL_LAYOUT_SEED shifts every generator's seed (to explore beyond the fixed CI inputs).
  explicit LayoutGen(unsigned seed) : rng_(seed + seed_offset()) {}
  static unsigned seed_offset() {
    const char* env = std::getenv("TESSEL_LAYOUT_SEED");
    return env == nullptr ? 0u : static_cast<unsigned>(std::strtoul(env, nullptr, 10)) * 1000u;
  }

  int uniform(int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng_); }
  bool coin(double p = 0.5) { return std::bernoulli_distribution(p)(rng_); }
  std::mt19937& rng() { return rng_; }

  // A nested shape with `leaves` leaves, each in [1, max_leaf].
  IntTuple shape(int n_leaves, int max_leaf, int max_depth = 2) {
    std::vector<IntTuple> ls;
    for (int i = 0; i < n_leaves; ++i) ls.emplace_back(int64(uniform(1, max_leaf)));
    return nest(ls, max_depth);
  }

  // Groups a flat list of tuples into a random nesting (a leaf stays a leaf if alone and coin).
  IntTuple nest(std::vector<IntTuple> items, int max_depth) {
    if (items.size() == 1 && coin(0.6)) return items[0];
    if (max_depth > 1 && items.size() > 2 && coin(0.5)) {
      // Merge a random contiguous run into a sub-tuple.
      int a = uniform(0, static_cast<int>(items.size()) - 2);
      int b = uniform(a + 1, static_cast<int>(items.size()) - 1);
      std::vector<IntTuple> sub(items.begin() + a, items.begin() + b + 1);
      IntTuple inner = nest(sub, max_depth - 1);
      items.erase(items.begin() + a, items.begin() + b + 1);
      items.insert(items.begin() + a,
                   inner.is_leaf() ? IntTuple(std::vector<IntTuple>{inner}) : inner);
    }
    return IntTuple(std::move(items));
  }

  // Same tree structure as `shape` with the leaves replaced by `values` in order.
  static IntTuple like(const IntTuple& shape, const std::vector<int64>& values, size_t& k) {
    if (shape.is_leaf()) return IntTuple(values[k++]);
    std::vector<IntTuple> out;
    for (const IntTuple& e : shape.elements()) out.push_back(like(e, values, k));
    return IntTuple(std::move(out));
  }

  // Arbitrary strides in [0, max_stride].
  Layout arbitrary(int n_leaves, int max_leaf, int max_stride) {
    IntTuple s = shape(n_leaves, max_leaf);
    std::vector<int64> d;
    for (size_t i = 0; i < leaves(s).size(); ++i) d.push_back(uniform(0, max_stride));
    size_t k = 0;
    return Layout(s, like(s, d, k));
  }

  // An injective layout whose modes, sorted by stride, each start at a multiple of the previous
  // extent (times a random gap): the layouts that have a complement. Modes are then shuffled.
  Layout complementable(int n_leaves, int max_leaf, int max_gap) {
    IntTuple s = shape(n_leaves, max_leaf);
    std::vector<Extent> ls = leaves(s);
    std::vector<size_t> order(ls.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::shuffle(order.begin(), order.end(), rng_);
    std::vector<int64> d(ls.size());
    int64 current = 1;
    for (size_t i : order) {
      current *= uniform(1, max_gap);
      d[i] = current;
      current *= ls[i].constant();
    }
    size_t k = 0;
    return Layout(s, like(s, d, k));
  }

  // A bijection onto [0, size): complementable without gaps.
  Layout permutation(int n_leaves, int max_leaf) { return complementable(n_leaves, max_leaf, 1); }

 private:
  std::mt19937 rng_;
};

// Brute-force helpers.
inline std::vector<int64> offsets(const Layout& l) {
  std::vector<int64> out;
  for (int64 i = 0; i < l.size(); ++i) out.push_back(l(i));
  return out;
}

inline bool injective_bf(const Layout& l) {
  std::vector<int64> o = offsets(l);
  std::sort(o.begin(), o.end());
  return std::adjacent_find(o.begin(), o.end()) == o.end();
}

}  // namespace tessel::layout::testing
