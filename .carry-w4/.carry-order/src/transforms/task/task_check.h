// The task compiler's correctness check without a GPU: the task interpreter (the oracle) and the
// tile-IR interpreter, on the kernel the task compiler made, run on the same random inputs; every
// global tensor is compared afterwards. Used by `tessel task NAME --check` and the unit tests.
#pragma once

#include <cstdint>
#include <map>
#include <string>

#include "frontend/task/instantiate.h"
#include "tessel/tile.h"

namespace tessel::transforms {

struct TaskCheckResult {
  double max_error = 0;      // the largest |tile - task| over every element of every tensor
  double max_reference = 0;  // the largest |task| (for a relative figure)
  std::string worst;         // "C[3, 17]: task 1.25, tile 1.5" for the largest difference
  int64_t elements = 0;      // how many were compared
};

TaskCheckResult check_against_task_interpreter(const task::Instantiation& inst,
                                               const TileKernel& kernel,
                                               const std::map<std::string, int64_t>& sizes,
                                               uint64_t seed);

}  // namespace tessel::transforms
