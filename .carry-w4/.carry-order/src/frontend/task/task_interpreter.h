// The task interpreter: runs an instantiated task program sequentially on the CPU, launch by
// launch, each leaf operation with its tile-language meaning (tessel/task.h, LeafOp) on views of
// the tensors. It is the oracle of the task compiler: whatever the mapping, a lowered kernel must
// compute what this computes. It reads no memory placement and runs no copy-in/copy-out (the
// sequential semantics make them invisible); pieces at the edge of a ragged tensor read zeros
// outside it and drop writes there, as the tile IR's masked tiles do.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "frontend/task/instantiate.h"

namespace tessel::task {

// A tensor in host memory: row-major values, rounded to `element` on every store.
struct HostArray {
  ScalarKind element = ScalarKind::f32;
  std::vector<int64_t> shape;
  std::vector<double> data;
};

// `value` rounded to the nearest value of `element` (f16, bf16, f32; others unchanged).
double round_element(ScalarKind element, double value);

// Runs `inst` on the global tensors (by name, each of the program's declared shape at `sizes`).
void interpret(const Instantiation& inst, const std::map<std::string, int64_t>& sizes,
               std::map<std::string, HostArray>& globals);

}  // namespace tessel::task
