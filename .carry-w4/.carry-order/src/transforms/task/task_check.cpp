// The two interpreters side by side (task_check.h).
#include "transforms/task/task_check.h"

#include <cmath>
#include <random>

#include "frontend/task/task_interpreter.h"
#include "interp/interpreter.h"

namespace tessel::transforms {

TaskCheckResult check_against_task_interpreter(const task::Instantiation& inst,
                                               const TileKernel& kernel,
                                               const std::map<std::string, int64_t>& sizes,
                                               uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> dist(-1.0, 1.0);
  std::map<std::string, task::HostArray> task_data;
  std::map<std::string, interp::HostTensor> tile_data;
  for (const task::GlobalTensor& g : inst.program->globals()) {
    task::HostArray a;
    a.element = g.element;
    int64_t count = 1;
    for (const std::string& s : g.shape) {
      a.shape.push_back(task::global_extent(s, sizes));
      count *= a.shape.back();
    }
    interp::HostTensor h(g.element, a.shape);
    a.data.resize(count);
    for (int64_t i = 0; i < count; ++i) {
      a.data[i] = task::round_element(g.element, dist(rng));
      h.set_float(i, a.data[i]);
    }
    task_data[g.name] = std::move(a);
    tile_data.emplace(g.name, std::move(h));
  }
  task::interpret(inst, sizes, task_data);
  std::vector<interp::Argument> args;
  for (const auto& v : kernel.op().region(0)->arguments()) {
    auto it = tile_data.find(v->name());
    TESSEL_ASSERT(it != tile_data.end(),
                  "a kernel parameter that is no global tensor: ", v->name());
    args.push_back(&it->second);
  }
  interp::RunOptions options;
  options.sizes = sizes;
  interp::interpret(kernel.op(), args, options);
  TaskCheckResult r;
  for (const auto& [name, a] : task_data) {
    const interp::HostTensor& h = tile_data.at(name);
    for (int64_t i = 0; i < static_cast<int64_t>(a.data.size()); ++i) {
      double want = a.data[i], got = h.get_float(i);
      double err = std::abs(want - got);
      if (std::isnan(got) || std::isnan(want)) err = INFINITY;
      r.max_reference = std::max(r.max_reference, std::abs(want));
      ++r.elements;
      if (err > r.max_error || (r.worst.empty() && err > 0)) {
        r.max_error = err;
        std::string at;
        int64_t rest = i;
        std::vector<int64_t> idx(a.shape.size());
        for (int d = static_cast<int>(a.shape.size()) - 1; d >= 0; --d) {
          idx[d] = rest % a.shape[d];
          rest /= a.shape[d];
        }
        for (size_t d = 0; d < idx.size(); ++d) at += (d ? ", " : "") + std::to_string(idx[d]);
        r.worst =
            name + "[" + at + "]: task " + std::to_string(want) + ", tile " + std::to_string(got);
      }
    }
  }
  return r;
}

}  // namespace tessel::transforms
