#include "transforms/async/check_protocol.h"

#include <algorithm>
#include <map>
#include <numeric>
#include <set>

#include "transforms/async/protocol_run.h"

namespace tessel::transforms {
namespace {

using ir::Operation;
using ir::OpKind;
using protocol::kSchedules;
using protocol::kSearch;
using protocol::Schedule;
using protocol::ValueIds;

// Runs one block assignment of sizes on 1 and 3 SMs, the first and the last block, under each
// schedule of `schedules`.
void check_sizes(const Operation& kernel, const ValueIds& ids,
                 const std::map<std::string, int64_t>& sizes,
                 const std::vector<Schedule>& schedules, const std::vector<int64_t>& sm_counts,
                 bool first_block_only = false) {
  std::string text;
  for (const std::string& s : kernel.signature().sizes)
    text += (text.empty() ? "" : ", ") + s + " = " + std::to_string(sizes.at(s));
  bool counts = false, reads_sms = false;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    counts = counts || op->kind() == OpKind::counter_arrive;
    reads_sms = reads_sms || op->kind() == OpKind::sm_count;
  });
  for (int64_t sms : sm_counts) {
    // A kernel that never reads the SM count (a grid of one block per tile) runs the same on
    // any number of SMs: its first SM count says all.
    if (!reads_sms && sms != sm_counts.front()) break;
    for (const Schedule& schedule : schedules) {
      std::string instance = text + ", " + std::to_string(sms) + " SM(s)";
      const int64_t blocks = protocol::grid_blocks(kernel, ids, sizes, sms);
      std::vector<int64_t> which = {0};
      if (blocks > 1 && !first_block_only) which.push_back(blocks - 1);
      for (int64_t block : which) {
        for (bool last : {true, false}) {
          if (!last && !counts) continue;
          protocol::run_block(kernel, ids, sizes, sms, schedule,
                              instance + ", block " + std::to_string(block), block, last);
        }
      }
    }
  }
}

// The sizes a symbol takes beyond the base ones: for each tile width c it is divided by
// (`cdiv %S, c` or `div %S, c`) and each trip count t around the ring depths D — 1, 2, D - 1,
// D, D + 1, 2D + 1, 3D + 2, where a ring's slots first wrap, its parity first flips back, and
// past — a full (t * c) and a partial last tile, multiples of the facts' divisor d.
std::vector<int64_t> ring_sizes(const Operation& kernel, const std::string& symbol, int64_t d,
                                const std::set<int64_t>& trips) {
  std::set<int64_t> widths;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    if ((op->kind() != OpKind::cdiv && op->kind() != OpKind::div) || op->num_operands() != 2)
      return;
    const Operation* x = op->operand(0)->def();
    const Operation* c = op->operand(1)->def();
    if (!x || !c || x->kind() != OpKind::size || x->str_attr("name") != symbol) return;
    if (c->kind() != OpKind::constant || c->attr("value")->kind != ir::Attribute::Kind::integer)
      return;
    if (c->int_attr("value") > 1) widths.insert(c->int_attr("value"));
  });
  std::set<int64_t> values;
  for (int64_t c : widths) {
    for (int64_t t : trips) {
      for (int64_t v : {t * c, t * c - c / 2}) {
        v = (v + d - 1) / d * d;
        if (v > 0 && (v + c - 1) / c == t) values.insert(v);
      }
    }
  }
  return {values.begin(), values.end()};
}

void check_kernel(const Operation& kernel) {
  bool has_barriers = false;
  std::set<int64_t> depths;
  ir::walk(const_cast<Operation*>(&kernel), [&](Operation* op) {
    has_barriers = has_barriers || op->kind() == OpKind::mbarrier_init;
    if (op->kind() == OpKind::aref) depths.insert(op->int_attr("slots"));
    if (op->kind() == OpKind::mbarrier_init) depths.insert(op->result()->type().count());
  });
  if (!has_barriers) return;
  const auto& sig = kernel.signature();
  const ValueIds ids(kernel);
  const std::vector<Schedule> linear(std::begin(kSchedules), std::begin(kSchedules) + 4);
  std::set<int64_t> trips = {1, 2};
  std::set<int64_t> search_trips = {2};
  for (int64_t d : depths) {
    for (int64_t t : {d - 1, d, d + 1, 2 * d + 1, 3 * d + 2})
      if (t >= 1) trips.insert(t);
    search_trips.insert(d + 1);
  }
  // Base values per size symbol (multiples of its facts' divisor), all combined: loops of 1, 3,
  // 4, 5 and 9 trips of a 64-wide tile, grids of one tile to several per SM. A symbol no op
  // divides into tiles (a batch extent, one block per index) takes 1 and 3: one problem, and
  // several whose tiles a persistent block walks across (its larger values only multiply the
  // blocks every other choice already has).
  std::vector<std::vector<int64_t>> choices;
  std::vector<int64_t> divisors;
  for (const std::string& s : sig.sizes) {
    int64_t d = 1;
    for (const ir::Fact& f : sig.facts) {
      if (f.symbol == s) d = std::lcm(d, f.divisor);
    }
    divisors.push_back(d);
    std::vector<int64_t> vs;
    const bool tiled = !ring_sizes(kernel, s, 1, {1}).empty();
    for (int64_t base :
         tiled ? std::vector<int64_t>{1, 136, 200, 320, 520} : std::vector<int64_t>{1, 3}) {
      int64_t v = (base + d - 1) / d * d;
      if (std::find(vs.begin(), vs.end(), v) == vs.end()) vs.push_back(v);
    }
    choices.push_back(vs);
  }
  int64_t instances = 1;
  for (const auto& c : choices) instances *= static_cast<int64_t>(c.size());
  for (int64_t i = 0; i < instances; ++i) {
    std::map<std::string, int64_t> sizes;
    int64_t rest = i;
    for (size_t s = 0; s < sig.sizes.size(); ++s) {
      int64_t n = static_cast<int64_t>(choices[s].size());
      sizes[sig.sizes[s]] = choices[s][rest % n];
      rest /= n;
    }
    check_sizes(kernel, ids, sizes, linear, {1, 3});
  }
  // One symbol at a time at the trip counts around the ring depths, the others at their
  // smallest and at their second base value (the first: one tile; the second: a few tiles per
  // SM in a persistent kernel, whose sequence numbers go on across tiles), under the schedules
  // that keep loads late or interleave.
  const std::vector<Schedule> extra = {kSchedules[1], kSchedules[3], kSchedules[4], kSchedules[5]};
  for (size_t s = 0; s < sig.sizes.size(); ++s) {
    for (size_t other : {size_t{0}, size_t{1}}) {
      std::map<std::string, int64_t> sizes;
      for (size_t o = 0; o < sig.sizes.size(); ++o)
        sizes[sig.sizes[o]] = choices[o][std::min(other, choices[o].size() - 1)];
      for (int64_t v : ring_sizes(kernel, sig.sizes[s], divisors[s], trips)) {
        sizes[sig.sizes[s]] = v;
        check_sizes(kernel, ids, sizes, extra, {1, 3});
      }
    }
  }
  // Every interleaving (up to kSearchStates states each) on small instances, one SM, its first
  // block: each symbol in turn at D + 1 trips with a partial last tile (the ring wraps, a
  // parity flips), the others at their smallest; and every symbol at 2 trips at once.
  std::map<std::string, int64_t> small, two;
  for (size_t s = 0; s < sig.sizes.size(); ++s) {
    small[sig.sizes[s]] = choices[s][0];
    auto v = ring_sizes(kernel, sig.sizes[s], divisors[s], {2});
    two[sig.sizes[s]] = v.empty() ? choices[s][0] : v.front();
  }
  for (size_t s = 0; s < sig.sizes.size(); ++s) {
    for (int64_t d : depths) {
      auto v = ring_sizes(kernel, sig.sizes[s], divisors[s], {d + 1});
      if (v.empty()) continue;
      std::map<std::string, int64_t> sizes = small;
      sizes[sig.sizes[s]] = v.front();
      check_sizes(kernel, ids, sizes, {kSearch}, {1}, true);
    }
  }
  check_sizes(kernel, ids, two, {kSearch}, {1}, true);
}

}  // namespace

void check_protocol(ir::Module& module) {
  for (const auto& kernel : module.kernels) check_kernel(*kernel);
}

}  // namespace tessel::transforms
