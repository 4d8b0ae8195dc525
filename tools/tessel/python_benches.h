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

// Single-quoted for the shell.
std::string shell_quote(const std::string& s);

}  // namespace tessel::tool
