#include "runtime/compiler.h"

#include <gtest/gtest.h>

#include <filesystem>

#include "runtime/device_headers.h"
#include "support/diagnostics.h"
#include "support/hash.h"

namespace tessel::runtime {
namespace {

CompileOptions options_in(const std::string& name) {
  CompileOptions options;
  options.cache_directory = ::testing::TempDir() + "tessel_compile_" + name + "_" +
                            std::to_string(::testing::UnitTest::GetInstance()->random_seed());
  std::filesystem::remove_all(options.cache_directory);
  return options;
}

const char* kScaleKernel = R"(
extern "C" __global__ void scale(float* data, float factor, int n) {
  int i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i < n) data[i] *= factor;
}
)";

TEST(Compiler, CompilesToCubinThenHitsCache) {
  CompileOptions options = options_in("hit");
  CompileResult cold = compile_cuda(kScaleKernel, options);
  EXPECT_FALSE(cold.cache_hit);
  ASSERT_GE(cold.cubin.size(), 4u);
  EXPECT_EQ(cold.cubin.substr(0, 4), std::string("\x7f" "ELF")) << "a cubin is an ELF image";
  CompileResult warm = compile_cuda(kScaleKernel, options);
  EXPECT_TRUE(warm.cache_hit);
  EXPECT_EQ(warm.cubin, cold.cubin);
  EXPECT_EQ(warm.cache_key, cold.cache_key);
  EXPECT_LT(warm.milliseconds, cold.milliseconds);
}

TEST(Compiler, KeyCoversSourceOptionsAndArch) {
  CompileOptions options = options_in("key");
  std::string base = compile_cache_key(kScaleKernel, options);
  EXPECT_NE(compile_cache_key(std::string(kScaleKernel) + " ", options), base);
  CompileOptions with_flag = options;
  with_flag.flags.push_back("-DX=1");
  EXPECT_NE(compile_cache_key(kScaleKernel, with_flag), base);
  CompileOptions other_arch = options;
  other_arch.arch = "sm_80";
  EXPECT_NE(compile_cache_key(kScaleKernel, other_arch), base);
  EXPECT_EQ(compile_cache_key(kScaleKernel, options), base);
}

// The key hashes the headers by the digest computed at build time: it must be the hash of what is
// embedded (a stale digest would reuse cubins built against other headers), and the environment
// key must move with it.
TEST(Compiler, HeaderDigestMatchesTheEmbeddedHeaders) {
  std::string input = "tessel-device-headers-v1\n";
  for (const EmbeddedHeader& header : device_headers()) {
    input += std::string(header.name) + ":" + sha256_hex(header.content) + "\n";
  }
  EXPECT_EQ(device_headers_digest(), sha256_hex(input));
  CompileOptions options = options_in("env");
  std::string env = compile_environment_key(options);
  EXPECT_EQ(compile_environment_key(options), env);
  CompileOptions other_arch = options;
  other_arch.arch = "sm_80";
  EXPECT_NE(compile_environment_key(other_arch), env);
  CompileOptions with_flag = options;
  with_flag.flags.push_back("-lineinfo");
  EXPECT_NE(compile_environment_key(with_flag), env);
}

TEST(Compiler, CorruptCacheEntryIsRebuilt) {
  CompileOptions options = options_in("corrupt");
  CompileResult cold = compile_cuda(kScaleKernel, options);
  std::string path = options.cache_directory + "/" + cold.cache_key + ".cubin";
  ASSERT_TRUE(std::filesystem::exists(path));
  std::filesystem::resize_file(path, std::filesystem::file_size(path) / 2);
  CompileResult again = compile_cuda(kScaleKernel, options);
  EXPECT_FALSE(again.cache_hit);
  EXPECT_EQ(again.cubin, cold.cubin);
  EXPECT_TRUE(compile_cuda(kScaleKernel, options).cache_hit);
}

TEST(Compiler, CompileErrorIsUserErrorWithLog) {
  CompileOptions options = options_in("error");
  options.name = "broken.cu";
  try {
    compile_cuda("extern \"C\" __global__ void k() { undeclared_thing(); }", options);
    FAIL() << "expected a UserError";
  } catch (const UserError& error) {
    std::string message = error.what();
    EXPECT_NE(message.find("broken.cu"), std::string::npos) << message;
    EXPECT_NE(message.find("CUDA compilation failed"), std::string::npos) << message;
    EXPECT_NE(message.find("undeclared_thing"), std::string::npos) << message;
  }
}

TEST(Compiler, RejectsVirtualArchitecture) {
  CompileOptions options = options_in("arch");
  options.arch = "compute_90a";
  EXPECT_THROW(compile_cuda(kScaleKernel, options), UserError);
}

// Every header of the device library compiles on its own under NVRTC for sm_90a, with no host
// headers: this is what generated code relies on.
TEST(Compiler, EveryDeviceHeaderCompilesAlone) {
  ASSERT_FALSE(device_headers().empty()) << "the device library was not embedded";
  CompileOptions options = options_in("headers");
  options.use_cache = false;
  for (const EmbeddedHeader& header : device_headers()) {
    std::string source = "#include \"" + std::string(header.name) + "\"\n" +
                         "extern \"C\" __global__ void probe() {}\n";
    options.name = "probe_" + std::string(header.name) + ".cu";
    EXPECT_NO_THROW(compile_cuda(source, options)) << header.name;
  }
}

}  // namespace
}  // namespace tessel::runtime
