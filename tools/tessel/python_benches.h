// `tessel bench w4a16` and `tessel bench moe`: suites whose baselines live in PyTorch (cuBLAS
// through torch.matmul on dequantized weights, torch._grouped_mm), so each is a Python benchmark
// of the source tree (bench/python/w4a16.py, moe.py); the tool checks the options, so that a
// typo fails before torch starts, and runs it with this build's Python extension.
#pragma once

#include <string>
#include <vector>

namespace tessel::tool {

int run_w4a16_bench(const std::vector<std::string>& args);
int run_moe_bench(const std::vector<std::string>& args);

// Runs bench/python/<script> of the source tree with `args` (already checked) by python3, with
// this build's Python extension first on PYTHONPATH; prints the command line first. 0 when the
// script succeeds. (`tessel bench attention` runs attention.py this way too.)
int run_python_script(const std::string& script, const std::vector<std::string>& args);

}  // namespace tessel::tool
