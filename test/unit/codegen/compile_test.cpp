// tessel::compile without a GPU: the pipeline, the emitter and NVRTC, the content cache, and the
// launch-time checks of arguments against the kernel's declaration (user errors, before any GPU
// work).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "compile/compile.h"
#include "ir/parser.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

std::unique_ptr<ir::Module> parse(const std::string& name) {
  return ir::parse_module(examples::lowered_kernels().at(name), name + ".tir");
}

std::string expect_user_error(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected a UserError";
  return {};
}

// CompileOptions::size_hints: a row program is scheduled for the sizes hinted (RMSNorm at N =
// 32768: the row in the registers of two 1024-thread blocks a SM, its runs chunked; at the
// default 8192 256 threads;
// the hints are in the kernel's text, which the cache key hashes), and a hint that names no size
// of the kernel is a user error (as is a size under 1).
TEST(Compile, SizeHintsScheduleRowPrograms) {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/examples/kernels/rmsnorm_auto.tir");
  std::stringstream text;
  text << in.rdbuf();
  auto module = ir::parse_module(text.str(), "rmsnorm_auto.tir");
  const ir::Operation& kernel = *module->kernels.front();
  CompileOptions options;
  options.compile_cubin = false;
  options.use_cache = false;
  CompiledKernel plain = compile(kernel, target::cuda::Target::sm90a(), options);
  options.size_hints = {{"M", 2048}, {"N", 32768}};
  CompiledKernel wide = compile(kernel, target::cuda::Target::sm90a(), options);
  EXPECT_EQ(plain.lowered_ir().find("threads = 1024"), std::string::npos) << plain.lowered_ir();
  EXPECT_NE(wide.lowered_ir().find("{blocks_per_sm = 2, target = \"sm_90a\", threads = 1024}"),
            std::string::npos)
      << wide.lowered_ir();
  EXPECT_NE(wide.cuda_source().find("// values in chunks of 8"), std::string::npos);
  EXPECT_EQ(plain.cuda_source().find("// values in chunks"), std::string::npos);
  options.size_hints = {{"K", 64}};
  EXPECT_NE(expect_user_error([&] { compile(kernel, target::cuda::Target::sm90a(), options); })
                .find("compile: size_hints: no kernel has a size named 'K' (sizes: M, N)"),
            std::string::npos);
  options.size_hints = {{"N", 0}};
  EXPECT_NE(expect_user_error([&] {
              compile(kernel, target::cuda::Target::sm90a(), options);
            }).find("compile: size_hints: N = 0 is not a size (hints are 1 or more)"),
            std::string::npos);
}

TEST(Compile, ColdThenCached) {
  auto dir = std::filesystem::temp_directory_path() /
             ("tessel-compile-test-" + std::to_string(::getpid()));
  CompileOptions options;
  options.cache_directory = dir.string();
  auto module = parse("layernorm");
  CompiledKernel cold = compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  EXPECT_FALSE(cold.times().cache_hit);
  EXPECT_FALSE(cold.cubin().empty());
  CompiledKernel hit = compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  EXPECT_TRUE(hit.times().cache_hit);
  // In-process hit: the passes, the emitter and NVRTC are all skipped (goal < 5 ms; the bound here
  // is loose because CI machines are busy).
  std::cout << "cold " << cold.times().total_ms << " ms, in-process hit " << hit.times().total_ms
            << " ms\n";
  EXPECT_LT(hit.times().total_ms, 50.0);
  EXPECT_EQ(hit.cuda_source(), cold.cuda_source());
  EXPECT_EQ(hit.cubin(), cold.cubin());
  EXPECT_EQ(hit.cache_key(), cold.cache_key());
  // Another target is another entry.
  CompiledKernel sm80 = compile(*module->kernels.front(), target::cuda::Target::sm80(), options);
  EXPECT_NE(sm80.cache_key(), cold.cache_key());
  std::filesystem::remove_all(dir);
}

TEST(Compile, DumpIrShowsEveryPass) {
  auto module = parse("gemv");
  std::ostringstream dump, timing;
  CompileOptions options;
  options.print_after_all = true;
  options.dump = &dump;
  options.timing = &timing;
  options.compile_cubin = false;
  CompiledKernel k = compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  EXPECT_NE(dump.str().find("// -----// IR after verify //----- //"), std::string::npos);
  EXPECT_NE(dump.str().find("// -----// IR after canonicalize //----- //"), std::string::npos);
  EXPECT_NE(timing.str().find("pass canonicalize: "), std::string::npos);
  EXPECT_TRUE(k.cubin().empty());
  EXPECT_NE(k.lowered_ir().find("kernel @gemv"), std::string::npos);
}

class LaunchChecks : public ::testing::Test {
 protected:
  void SetUp() override {
    auto module = parse("rmsnorm");
    CompileOptions options;
    options.compile_cubin = false;
    kernel = std::make_unique<CompiledKernel>(
        compile(*module->kernels.front(), target::cuda::Target::sm90a(), options));
  }
  static TensorArg f16(std::vector<int64_t> shape) {
    return TensorArg{0x10000, std::move(shape), ir::ScalarKind::f16};
  }
  std::unique_ptr<CompiledKernel> kernel;
};

TEST_F(LaunchChecks, BindsSizesAndComputesTheGrid) {
  auto sizes = kernel->bind({f16({100, 1000}), f16({1000}), f16({100, 1000}), 1e-5});
  EXPECT_EQ(sizes.at("M"), 100);
  EXPECT_EQ(sizes.at("N"), 1000);
  runtime::LaunchConfig config = kernel->launch_config(sizes);
  EXPECT_EQ(config.grid.x, 13u);  // cdiv(100, 8)
  EXPECT_EQ(config.block.x, 256u);
}

TEST_F(LaunchChecks, MismatchesAreUserErrors) {
  EXPECT_NE(expect_user_error([&] {
              kernel->bind({f16({100, 1000}), f16({1000})});
            }).find("launch of @rmsnorm: expected 4 arguments, got 2"),
            std::string::npos);
  EXPECT_NE(expect_user_error([&] {
              kernel->bind({f16({100, 1000}), f16({999}), f16({100, 1000}), 1e-5});
            })
                .find("argument 1 (%w) has shape [999], which sets N = 999, but an earlier "
                      "argument set N = 1000"),
            std::string::npos);
  EXPECT_NE(expect_user_error([&] {
              kernel->bind({f16({100}), f16({1000}), f16({100, 1000}), 1e-5});
            })
                .find("argument 0 (%X) has shape [100] of rank 1 but the kernel declares "
                      "global<f16>[M,N]"),
            std::string::npos);
  TensorArg f32 = f16({100, 1000});
  f32.element = ir::ScalarKind::f32;
  EXPECT_NE(expect_user_error([&] {
              kernel->bind({f32, f16({1000}), f16({100, 1000}), 1e-5});
            }).find("argument 0 (%X) has element type f32 but the kernel declares"),
            std::string::npos);
  EXPECT_NE(expect_user_error([&] {
              kernel->bind({f16({100, 1000}), f16({1000}), f16({100, 1000}), int64_t{1}});
            }).find("argument 3 (%eps) must be a floating-point scalar (f32)"),
            std::string::npos);
  EXPECT_NE(expect_user_error([&] {
              kernel->bind({f16({100, 1001}), f16({1001}), f16({100, 1001}), 1e-5});
            }).find("the kernel requires N % 8 == 0, but N = 1001"),
            std::string::npos);
  TensorArg misaligned = f16({100, 1000});
  misaligned.data += 2;
  EXPECT_NE(expect_user_error([&] {
              kernel->bind({misaligned, f16({1000}), f16({100, 1000}), 1e-5});
            }).find("is not 16-byte aligned"),
            std::string::npos);
  EXPECT_NE(expect_user_error([&] {
              kernel->launch({f16({100, 1000}), f16({1000}), f16({100, 1000}), 1e-5});
            }).find("compiled without a cubin"),
            std::string::npos);
}

}  // namespace
}  // namespace tessel
