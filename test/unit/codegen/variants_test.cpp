// The tuning cache and the checks of KernelVariants (src/compile/variants.h); no GPU: choosing and
// tuning need one and run on the device (tessel tune, tessel bench gemm a.tir+b.tir).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "compile/variants.h"
#include "ir/parser.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

std::string fresh_directory(const std::string& name) {
  auto dir = std::filesystem::temp_directory_path() / ("tessel-variants-test-" + name);
  std::filesystem::remove_all(dir);
  return dir.string();
}

TEST(TuningCache, RemembersTheLastChoicePerDeviceAndShape) {
  TuningCache cache(fresh_directory("remember"));
  EXPECT_FALSE(cache.lookup("fam", "H100/132", "M=16,N=4096,K=4096"));
  ASSERT_TRUE(cache.store("fam", "H100/132", "M=16,N=4096,K=4096", "gemm_split_k", 0.05));
  ASSERT_TRUE(cache.store("fam", "H100/132", "M=4096,N=4096,K=4096", "gemm", 0.18));
  ASSERT_TRUE(cache.store("fam", "H200/132", "M=16,N=4096,K=4096", "gemm_t128", 0.04));
  EXPECT_EQ(cache.lookup("fam", "H100/132", "M=16,N=4096,K=4096"), "gemm_split_k");
  EXPECT_EQ(cache.lookup("fam", "H100/132", "M=4096,N=4096,K=4096"), "gemm");
  EXPECT_EQ(cache.lookup("fam", "H200/132", "M=16,N=4096,K=4096"), "gemm_t128");
  EXPECT_FALSE(cache.lookup("other", "H100/132", "M=16,N=4096,K=4096"));
  // A new measurement replaces the old one (one line per device and shape).
  ASSERT_TRUE(cache.store("fam", "H100/132", "M=16,N=4096,K=4096", "gemm_t128", 0.04));
  EXPECT_EQ(cache.lookup("fam", "H100/132", "M=16,N=4096,K=4096"), "gemm_t128");
  std::ifstream in(cache.directory() + "/fam.tsv");
  int lines = 0;
  for (std::string line; std::getline(in, line);) ++lines;
  EXPECT_EQ(lines, 3);
}

TEST(TuningCache, IgnoresLinesThatDoNotParse) {
  TuningCache cache(fresh_directory("corrupt"));
  std::filesystem::create_directories(cache.directory());
  std::ofstream(cache.directory() + "/fam.tsv") << "garbage\nH100\tM=1\n\t\t\t\n"
                                                << "H100/132\tM=1,N=1,K=8\tgemm\t0.01\n";
  EXPECT_EQ(cache.lookup("fam", "H100/132", "M=1,N=1,K=8"), "gemm");
  EXPECT_FALSE(cache.lookup("fam", "H100", "M=1"));
}

CompiledKernel compiled(const std::string& name) {
  auto module = ir::parse_module(examples::lowered_kernels().at(name), name + ".tir");
  CompileOptions options;
  options.compile_cubin = false;
  return compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
}

TEST(KernelVariants, TakeKernelsOfTheSameArgumentsUnderDistinctNames) {
  std::vector<CompiledKernel> two = {compiled("gemm"), compiled("gemm_nn")};
  KernelVariants ok(two, {"gemm", "gemm_nn"}, TuningCache(fresh_directory("ok")));
  EXPECT_EQ(ok.size(), 2u);
  EXPECT_EQ(ok.family().rfind("gemm-", 0), 0u) << ok.family();
  // The family names the variants: another set (or order) is another family.
  KernelVariants swapped({compiled("gemm_nn"), compiled("gemm")}, {"gemm_nn", "gemm"},
                         TuningCache(fresh_directory("swapped")));
  EXPECT_NE(swapped.family(), ok.family());
  // The arguments' shape class is the bound sizes.
  std::vector<KernelArg> args = {TensorArg{0x1000, {16, 64}, ir::ScalarKind::f16},
                                 TensorArg{0x2000, {32, 64}, ir::ScalarKind::f16},
                                 TensorArg{0x3000, {16, 32}, ir::ScalarKind::f16}};
  EXPECT_EQ(ok.shape_class(args), "K=64,M=16,N=32");
  try {
    KernelVariants same(two, {"gemm", "gemm"}, TuningCache(fresh_directory("same")));
    ADD_FAILURE() << "two variants of one name accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("two variants are named gemm"), std::string::npos)
        << e.what();
  }
  try {
    KernelVariants other({compiled("gemm"), compiled("gemm_bias_relu")}, {},
                         TuningCache(fresh_directory("other")));
    ADD_FAILURE() << "variants of other arguments accepted";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("takes other arguments than @gemm"), std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel
