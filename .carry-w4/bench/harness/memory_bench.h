// `tessel bench memory-bound`: the memory-bound example kernels against the device's measured copy
// bandwidth (a 16-byte vectorized device-to-device copy kernel of the same bytes), interleaved.
#pragma once

#include <string>
#include <vector>

namespace tessel::bench {

// Runs the suite; `args` are the bench arguments after the suite name:
// [--shape RxC] [--kernels a,b] [--iterations N] [--warmup N] [--json FILE]. Returns the exit code.
int run_memory_bench(const std::vector<std::string>& args);

}  // namespace tessel::bench
