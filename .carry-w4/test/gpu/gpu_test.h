// Shared by GPU tests: a fixture that skips when no GPU is present, and small launch helpers.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "runtime/compiler.h"
#include "runtime/context.h"
#include "runtime/driver.h"
#include "runtime/module.h"

namespace tessel::testing {

// Every GPU test derives from this: without a GPU (no driver, no device, or TESSEL_DISABLE_GPU=1)
// the test is reported as skipped, with the reason.
class GpuTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string reason;
    if (!runtime::gpu_available(&reason)) GTEST_SKIP() << "no GPU: " << reason;
    runtime::context();
  }
};

// Compiles `source` (through the cache) and loads it.
inline runtime::Module compile_and_load(const std::string& source,
                                        runtime::CompileOptions options = {}) {
  return runtime::Module::load(runtime::compile_cuda(source, options).cubin);
}

}  // namespace tessel::testing
