// Every committed kernel variant (bench/kernel-variants/, the tile programs the device scripts
// time and check) still goes through the pass pipeline and the emitter for sm_90a: a variant
// that a later change of the compiler refuses, or that trips an emitter invariant (the TMA boxes
// of a shared tile overlapping, as 4-bit tiles' boxes once did), fails here rather than on the
// device. The CUDA is not compiled by NVRTC here (271 files: minutes); the examples' is
// (Emit.EveryExampleKernelCompilesForSm90aAndSm80).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "compile/compile.h"
#include "ir/parser.h"
#include "target/cuda/target.h"

namespace tessel {
namespace {

namespace fs = std::filesystem;

const fs::path& variants_root() {
  static const fs::path root = fs::path(TESSEL_SOURCE_DIR) / "bench" / "kernel-variants";
  return root;
}

std::vector<std::string> variant_files() {
  std::vector<std::string> files;
  for (const auto& entry : fs::recursive_directory_iterator(variants_root())) {
    if (entry.is_regular_file() && entry.path().extension() == ".tir")
      files.push_back(fs::relative(entry.path(), variants_root()).string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

class KernelVariants : public ::testing::TestWithParam<std::string> {};

TEST_P(KernelVariants, LowerAndEmitForSm90a) {
  const fs::path path = variants_root() / GetParam();
  std::ifstream in(path);
  ASSERT_TRUE(in) << path;
  std::stringstream text;
  text << in.rdbuf();
  auto module = ir::parse_module(text.str(), path.string());
  ASSERT_FALSE(module->kernels.empty()) << path;
  CompileOptions options;
  options.compile_cubin = false;
  options.use_cache = false;
  for (const auto& kernel : module->kernels) {
    CompiledKernel compiled = compile(*kernel, target::cuda::Target::sm90a(), options);
    EXPECT_NE(compiled.cuda_source().find("__global__"), std::string::npos) << path;
    // The rings the pipeline passes sized, the staged epilogue and the barriers fit one block's
    // shared memory (a launch would be refused otherwise; rings deepen to kMaxStages).
    EXPECT_LE(compiled.emitted().dynamic_shared_bytes,
              target::cuda::Target::sm90a().shared_memory_per_block())
        << path;
  }
}

// Test names from the file's path: letters and digits, the rest as '_'.
std::string test_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(0, info.param.size() - 4);
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

INSTANTIATE_TEST_SUITE_P(Committed, KernelVariants, ::testing::ValuesIn(variant_files()),
                         test_name);

TEST(KernelVariantsFiles, TheFolderHoldsVariants) { EXPECT_GE(variant_files().size(), 100u); }

}  // namespace
}  // namespace tessel
