// The sm_90a GEMM examples (TMA + mbarrier ring + wgmma) as ptxas sees them: every wgmma stays
// asynchronous (ptxas warns C7515 "wgmma.mma_async instructions are serialized" when a non-wgmma
// instruction defines accumulator registers while a group is in flight: a zeroed accumulator or
// an accumulator fence between commit and wait did that, and cost ~20% of the GEMM's speed), and
// nothing spills. Needs no GPU (NVRTC with ptxas's verbose output in the log).
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "compile/compile.h"
#include "ir/parser.h"
#include "runtime/compiler.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

std::string ptxas_log(const std::string& name, const std::string& text = "",
                      std::vector<std::string> passes = {}) {
  auto module =
      ir::parse_module(text.empty() ? examples::lowered_kernels().at(name) : text, name + ".tir");
  CompileOptions options;
  options.passes = std::move(passes);
  options.compile_cubin = false;  // the source only; compiled below with ptxas's report
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  runtime::CompileOptions nvrtc;
  nvrtc.arch = "sm_90a";
  nvrtc.use_cache = false;  // the log exists only for a real compile
  nvrtc.flags = {"--ptxas-options=-v"};
  return runtime::compile_cuda(kernel.cuda_source(), nvrtc).log;
}

TEST(EmitSm90, GemmWgmmaStaysAsynchronousAndNothingSpills) {
  for (const char* name : {"gemm", "gemm_bf16", "gemm_bias_relu", "dual_gemm"}) {
    SCOPED_TRACE(name);
    if (!examples::lowered_kernels().count(name)) {
      ADD_FAILURE() << "no example kernel " << name;
      continue;
    }
    std::string log = ptxas_log(name);
    EXPECT_NE(log.find("Used"), std::string::npos) << "no ptxas report in the log:\n" << log;
    EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
    EXPECT_NE(log.find("0 bytes spill stores"), std::string::npos) << log;
  }
}

// The watch above can fire: an accumulator that starts at 1.0 is copied in before the loop (the
// scale-d = 0 start applies to zeros only), and ptxas reports the serialization. A known cost of
// non-zero starts, kept visible here.
TEST(EmitSm90, NonZeroStartSerializesAndPtxasSaysSo) {
  std::string text = examples::lowered_kernels().at("gemm");
  size_t at = text.find("fill {value = 0.0}");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 18, "fill {value = 1.0}");
  EXPECT_NE(ptxas_log("gemm", text).find("C7515"), std::string::npos);
}

// The warp-specialized GEMM as lower-arefs leaves it (test/lit/async/gemm_barriers.tir, emitted
// op by op): the consumer's wgmma groups stay asynchronous, the 232 registers that setmaxnreg
// gives the consumer are enough (nothing spills), and the producer's 40 too.
// The same for the persistent variant and the one whose epilogue is staged for TMA stores.
TEST(EmitSm90, WarpSpecializedGemmStaysAsynchronousAndNothingSpills) {
  for (const char* name :
       {"gemm_barriers", "gemm_persistent_barriers", "gemm_persistent_tma_store"}) {
    SCOPED_TRACE(name);
    std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/test/lit/async/" + name + ".tir");
    ASSERT_TRUE(in) << "cannot read " << name;
    std::stringstream text;
    text << in.rdbuf();
    std::string log = ptxas_log(name, text.str(), {"verify"});
    EXPECT_NE(log.find("Used"), std::string::npos) << "no ptxas report in the log:\n" << log;
    EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
    EXPECT_NE(log.find("0 bytes spill stores"), std::string::npos) << log;
  }
}

}  // namespace
}  // namespace tessel
