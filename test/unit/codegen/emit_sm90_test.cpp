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
#include "sm90a_compile.h"
#include "pin_grid.h"

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
  return testing::ptxas_report(kernel.cuda_source());
}

TEST(EmitSm90, GemmWgmmaStaysAsynchronousAndNothingSpills) {
  for (const char* name : {"gemm", "gemm_bf16", "gemm_bias_relu", "dual_gemm"}) {
    SCOPED_TRACE(name);
    if (!examples::lowered_kernels().count(name)) {
      ADD_FAILURE() << "no example kernel " << name;
      continue;
    }
    // As written (no fact on N): each tile loop has a copy whose epilogue copies parts out of
    // shared memory by hand when N % 8 != 0 (unswitch-loops). Nothing spills there either since
    // the epilogue's cast to 16 bits is left to the stores' conversions (emit_elementwise.cpp:
    // 124 to 208 bytes spilled before).
    std::string log = ptxas_log(name);
    EXPECT_NE(log.find("Used"), std::string::npos) << "no ptxas report in the log:\n" << log;
    EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
    EXPECT_EQ(log.find("C7514"), std::string::npos) << log;
    EXPECT_NE(log.find(", 0 bytes spill stores"), std::string::npos) << log;
    // With N % 8 == 0 known, the kernel is the TMA-store path alone: nothing spills (gemm_bf16
    // spilled 68 bytes while its cast rounded each value through a 16-bit shift).
    std::string text = examples::lowered_kernels().at(name);
    size_t at = text.find("facts(K % 8 == 0)");
    ASSERT_NE(at, std::string::npos);
    text.replace(at, 17, "facts(K % 8 == 0, N % 8 == 0)");
    std::string aligned = ptxas_log(name, text);
    EXPECT_EQ(aligned.find("C7515"), std::string::npos) << aligned;
    EXPECT_EQ(aligned.find("C7514"), std::string::npos) << aligned;
    // gemm_bias_relu's two tile loops (overlapped for K >= 1024, plain below) spilled one 8-byte
    // value until wgmma descriptors were held as two 32-bit words (SmemDescriptor, wgmma.cuh).
    EXPECT_NE(aligned.find(", 0 bytes spill stores, 0 bytes spill loads"), std::string::npos)
        << aligned;
  }
}

// The other operand layouts (examples/kernels/gemm_{nn,tn,tt}.tir): an MN-major operand's shared
// tile ([K,256] or [K,128], 64-column 128-byte swizzled atoms 8 KB apart) is filled by one 64x64
// TMA box per atom at the atom's offset, and wgmma reads it through a descriptor with LBO = 8192
// and SBO = 1024 (HOPPER.md §2: the only pair exact on the H100), 2048 bytes per k16 step (+128
// in the descriptor), with the operand's transpose flag set. Every wgmma stays asynchronous and
// nothing spills.
TEST(EmitSm90, EveryOperandLayoutCompilesWithMnMajorDescriptorsAndSeveralBoxes) {
  struct Case {
    const char* name;
    const char* flags;  // wgmma_ss's <N, type, TransA, TransB>
    int a_boxes, b_boxes;
  };
  for (const Case& c :
       {Case{"gemm_nn", "MmaType::f16, 0, 1>", 1, 4}, Case{"gemm_tn", "MmaType::f16, 1, 1>", 2, 4},
        Case{"gemm_tt", "MmaType::f16, 1, 0>", 2, 1}}) {
    SCOPED_TRACE(c.name);
    auto module = ir::parse_module(examples::lowered_kernels().at(c.name), c.name);
    CompileOptions options;
    options.compile_cubin = false;
    CompiledKernel kernel =
        compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
    const std::string& cuda = kernel.cuda_source();
    auto count = [&](const std::string& what) {
      size_t n = 0;
      for (size_t at = cuda.find(what); at != std::string::npos; at = cuda.find(what, at + 1)) ++n;
      return n;
    };
    // The producer's loads: one per box (the mainloop's only TMA loads).
    EXPECT_EQ(count("&tmap_A, &ring_full["), static_cast<size_t>(c.a_boxes)) << cuda;
    EXPECT_EQ(count("&tmap_B, &ring_full["), static_cast<size_t>(c.b_boxes)) << cuda;
    if (c.b_boxes == 4) {
      EXPECT_NE(cuda.find(" + 24576), &tmap_B, &ring_full[slot], bn * 256 + 192, k * 64);"),
                std::string::npos)
          << cuda;
    }
    EXPECT_NE(cuda.find(std::string("tessel::device::wgmma_ss<256, tessel::device::") + c.flags),
              std::string::npos)
        << cuda;
    EXPECT_NE(cuda.find("), 8192, 1024, tessel::device::SmemSwizzle::b128);"), std::string::npos)
        << cuda;
    const bool a_mn = c.flags[std::string(c.flags).size() - 5] == '1';
    EXPECT_NE(cuda.find(a_mn ? "desc_a0 + 128, " : "desc_a0 + 2, "), std::string::npos) << cuda;
    std::string log = ptxas_log(c.name);
    EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
    EXPECT_NE(log.find(", 0 bytes spill stores"), std::string::npos) << log;
  }
}

// gemm_bias_relu's bias row goes through the producer (warp-specialize, "Epilogue operands"): the
// producer's elected thread loads it by a 1-D TMA box into a slot of its own ring, the consumer
// reads it from shared memory, 4 bytes (an accumulator column pair) at a time, keeps the pairs, and
// issues no global load of the bias; with N % 8 == 0 known the wgmma groups stay asynchronous and
// only the bounded spill of the test above remains.
TEST(EmitSm90, GemmBiasReluLoadsItsBiasThroughTheProducer) {
  std::string text = examples::lowered_kernels().at("gemm_bias_relu");
  size_t at = text.find("facts(K % 8 == 0)");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 17, "facts(K % 8 == 0, N % 8 == 0)");
  auto module = ir::parse_module(text, "gemm_bias_relu.tir");
  CompileOptions options;
  options.compile_cubin = false;
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  const std::string& cuda = kernel.cuda_source();
  size_t consumer = cuda.find("// role consumer");
  ASSERT_NE(consumer, std::string::npos) << cuda;
  size_t load = cuda.find("tessel::device::tma_load_1d(");
  ASSERT_NE(load, std::string::npos) << cuda;
  EXPECT_LT(load, consumer) << "the producer issues the bias's TMA load";
  EXPECT_NE(cuda.find("&tmap_bias"), std::string::npos) << cuda;
  size_t read = cuda.find("(ld.shared.b32)", consumer);
  EXPECT_NE(read, std::string::npos) << cuda;
  // Read as 16-bit pairs and kept so (emit_shared_load.cpp): 32 registers, not 64 floats.
  EXPECT_NE(cuda.find("unsigned rbias[32];  // packed pairs", consumer), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("rbias[1] = *reinterpret_cast<const unsigned*>(p + 8);", consumer),
            std::string::npos)
      << cuda;
  // No global load of the bias anywhere: the kernel reads it only through its tensor map.
  EXPECT_EQ(cuda.find(" <- bias tile"), std::string::npos) << cuda;
  std::string log = ptxas_log("gemm_bias_relu", text);
  EXPECT_NE(log.find("Used"), std::string::npos) << "no ptxas report in the log:\n" << log;
  EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7514"), std::string::npos) << log;
  // Nothing spills (the test above: the one 8-byte value two tile loops spilled is gone), and
  // one kernel gives one spill report.
  const std::string none = "0 bytes stack frame, 0 bytes spill stores, 0 bytes spill loads";
  size_t report = log.find(none);
  EXPECT_NE(report, std::string::npos) << log;
  if (report != std::string::npos) {
    EXPECT_EQ(log.find("spill stores", report + none.size()), std::string::npos) << log;
  }
}

// The same examples pinned `warp_specialize = false`: the non-specialized path, its mainloop
// lowered by lower-mainloops to the ring's mbarriers, waits and TMA loads (one thread loading
// stages - 1 iterations ahead) and emitted op by op. Its wgmma groups stay asynchronous too, and
// the generated code is that path's (one role-less block, the ring's barriers from the IR).
TEST(EmitSm90, NonSpecializedGemmStaysAsynchronous) {
  for (const char* name : {"gemm", "gemm_bf16", "gemm_bias_relu", "dual_gemm"}) {
    SCOPED_TRACE(name);
    std::string text = examples::lowered_kernels().at(name);
    size_t at = text.find("block_grid %tiles_m, %tiles_n");
    ASSERT_NE(at, std::string::npos);
    at = text.find(" :", at);
    text.insert(at, " {warp_specialize = false}");
    auto module = ir::parse_module(text, std::string(name) + ".tir");
    CompiledKernel kernel = testing::compile_sm90a_source(*module->kernels.front());
    const std::string& cuda = kernel.cuda_source();
    EXPECT_EQ(cuda.find("role producer"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("if (tid == 0) tessel::device::mbarrier_wait(&ring_empty["),
              std::string::npos)
        << cuda;
    EXPECT_NE(cuda.find("if (tid % 32 == 0) tessel::device::mbarrier_arrive(&ring_empty["),
              std::string::npos)
        << cuda;
    std::string log = testing::ptxas_report(cuda);
    EXPECT_NE(log.find("Used"), std::string::npos) << "no ptxas report in the log:\n" << log;
    EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
    EXPECT_EQ(log.find("C7514"), std::string::npos) << log;
  }
}

// FlashAttention pinned `warp_specialize = false`: the FlashAttention-2 schedule. No producer; Q
// loaded once through a one-slot ring (its full barrier's first phase), K and V by one thread
// through the ring that lower-mainloops writes, each warp releasing a slot after P·V; the wgmmas
// synchronous (the softmax reads S, P is computed in the iteration). ptxas: no spills, no
// serialized wgmma.
TEST(EmitSm90, NonSpecializedAttentionIsTheFlashAttention2Schedule) {
  for (const char* name : {"flash_attention", "flash_attention_causal"}) {
    SCOPED_TRACE(name);
    std::string text = examples::lowered_kernels().at(name);
    // The causal example's turns (pingpong = true) order the warpgroups of a specialized
    // consumer; the FA2 schedule has none, so they go with the roles.
    if (size_t turns = text.find(", pingpong = true"); turns != std::string::npos)
      text.erase(turns, std::string(", pingpong = true").size());
    size_t at = text.find(" : index, index", text.find("block_grid %BH, %tiles_q"));
    ASSERT_NE(at, std::string::npos);
    const bool pinned = text[at - 1] == '}';  // the causal example pins its raster group
    text.insert(pinned ? at - 1 : at,
                pinned ? ", warp_specialize = false" : " {warp_specialize = false}");
    auto module = ir::parse_module(text, std::string(name) + ".tir");
    CompiledKernel kernel = testing::compile_sm90a_source(*module->kernels.front());
    const std::string& cuda = kernel.cuda_source();
    EXPECT_EQ(cuda.find("role producer"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("mbarrier_wait(&q_full[0], 0)"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("if (tid == 0) tessel::device::mbarrier_wait(&ring_empty["),
              std::string::npos)
        << cuda;
    EXPECT_NE(cuda.find("if (tid % 32 == 0) tessel::device::mbarrier_arrive(&ring_empty["),
              std::string::npos)
        << cuda;
    EXPECT_NE(cuda.find("wgmma_rs<"), std::string::npos) << cuda;
    std::string log = testing::ptxas_report(cuda);
    EXPECT_NE(log.find("Used"), std::string::npos) << "no ptxas report in the log:\n" << log;
    EXPECT_NE(log.find(" 0 bytes spill stores"), std::string::npos) << log;
    EXPECT_EQ(log.find("C751"), std::string::npos) << log;
  }
}

// rotate-tiles (pinned): tile t+1's first S issued before tile t's last P·V, that P·V issued in
// both branches of `if has_next` (the emitter's in-place accumulator rule allows the other
// branch's reader), and nothing spills: fed from a loop's results into a key loop after it, as
// first written, ptxas spilled 320 bytes per thread.
TEST(EmitSm90, RotatedAttentionTileLoopStaysAsynchronousAndNothingSpills) {
  std::string text = examples::lowered_kernels().at("flash_attention");
  size_t at = text.find(" : index, index", text.find("block_grid %BH, %tiles_q"));
  ASSERT_NE(at, std::string::npos);
  ASSERT_NE(text[at - 1], '}');
  text.insert(at, " {rotate_tiles = true}");
  auto module = ir::parse_module(text, "flash_attention.tir");
  CompiledKernel kernel = testing::compile_sm90a_source(*module->kernels.front());
  const std::string& cuda = kernel.cuda_source();
  EXPECT_NE(cuda.find("has_next"), std::string::npos) << cuda;
  std::string log = testing::ptxas_report(cuda);
  EXPECT_NE(log.find("Used"), std::string::npos) << "no ptxas report in the log:\n" << log;
  EXPECT_NE(log.find(" 0 bytes spill stores"), std::string::npos) << log;
  EXPECT_EQ(log.find("C751"), std::string::npos) << log;
}

// Non-specialized with an accumulator that starts at 1.0: copied in before the loop, where no
// wgmma group is pending (the old emitter's mainloop copied it where ptxas saw one pending).
TEST(EmitSm90, NonSpecializedNonZeroStartStaysAsynchronous) {
  std::string text = examples::lowered_kernels().at("gemm");
  size_t at = text.find("fill {value = 0.0}");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 18, "fill {value = 1.0}");
  at = text.find(" : index, index", text.find("block_grid %tiles_m, %tiles_n"));
  ASSERT_NE(at, std::string::npos);
  text.insert(at, " {warp_specialize = false}");
  std::string log = ptxas_log("gemm", text);
  EXPECT_NE(log.find("Used"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7514"), std::string::npos) << log;
}

// In a warp-specialized kernel an accumulator that starts at 1.0 costs nothing: it is copied in
// at the start of each tile, when the previous tile's groups are drained (the non-specialized
// mainloop copied it in while a group could be pending, and ptxas serialized every wgmma).
TEST(EmitSm90, NonZeroStartStaysAsynchronousWhenWarpSpecialized) {
  std::string text = examples::lowered_kernels().at("gemm");
  size_t at = text.find("fill {value = 0.0}");
  ASSERT_NE(at, std::string::npos);
  text.replace(at, 18, "fill {value = 1.0}");
  std::string log = ptxas_log("gemm", text);
  EXPECT_NE(log.find("Used"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7514"), std::string::npos) << log;
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
    // C7514: a non-wgmma instruction touches the accumulator while a group may be pending (the
    // zero-start fix-up of a loop of no iterations, before the drain, did that).
    EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
    EXPECT_EQ(log.find("C7514"), std::string::npos) << log;
    EXPECT_NE(log.find(", 0 bytes spill stores"), std::string::npos) << log;
  }
}

// overlap-epilogue's carried output tile is held as packed 16-bit pairs (64 registers for the
// 64x256 part of a consumer warpgroup, not 128 floats), stmatrix takes its words as they are, and
// the split mainloop's second loop continues the first's accumulator in place: its first wgmma
// overwrites only when the first loop ran no iteration, and no array copy stands between them.
TEST(EmitSm90, OverlappedEpilogueCarriesThePackedTileAndSplitsTheMainloopInPlace) {
  auto module = ir::parse_module(examples::lowered_kernels().at("gemm"), "gemm.tir");
  CompileOptions options;
  options.compile_cubin = false;
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  const std::string& cuda = kernel.cuda_source();
  EXPECT_NE(cuda.find("unsigned prev_out[64];  // packed pairs"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("unsigned out[64];  // packed pairs"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("out_part0_1[0], out_part0_1[1], out_part0_1[2], out_part0_1[3]);"),
            std::string::npos)
      << cuda;
  EXPECT_EQ(cuda.find("pack_f16x2(out_part0_1["), std::string::npos) << cuda;
  const size_t first = cuda.find("for (int k_1 = 0; k_1 < parts_end; k_1 += 1) {");
  const size_t second = cuda.find("for (int k_2 = parts_end; k_2 < tiles_k; k_2 += 1) {");
  ASSERT_NE(first, std::string::npos) << cuda;
  ASSERT_NE(second, std::string::npos) << cuda;
  EXPECT_NE(cuda.find("(c + 0), desc_a0 + 0, desc_b0 + 0, (k_2 != parts_end) || (0 < parts_end));",
                      second),
            std::string::npos)
      << cuda;
  const size_t declared = cuda.find("float c_", first);
  EXPECT_TRUE(declared == std::string::npos || declared > second) << cuda;
  EXPECT_LT(second, cuda.find("if (!((0 < parts_end) || (parts_end < tiles_k))) {")) << cuda;
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// A GEMM with split-k (src/transforms/schedule/split_k.h): ptxas takes it, the wgmma stay
// asynchronous, the workspaces are kernel parameters the launch fills (f32 partials, i32
// counters), and each arrival is a fence, the role's barrier, one atomicInc, the barrier again.
// Known and measured (bench/results/2026-11-26-split-k-h200.md): the last part's sum of the
// partial tiles spills (the loaded tile beside the running sum); not asserted either way here.
TEST(EmitSm90, SplitKGemmCompilesWithWorkspacesAndOneAtomicPerArrival) {
  const std::string text =
      testing::pin_block_grid(examples::lowered_kernels().at("gemm"), "split_k = auto");
  auto module = ir::parse_module(text, "gemm_split_k.tir");
  CompileOptions options;
  options.compile_cubin = false;
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  int workspaces = 0;
  for (const auto& p : kernel.emitted().params) {
    workspaces += p.kind == target::cuda::KernelParam::Kind::workspace;
  }
  EXPECT_EQ(workspaces, 2);
  const std::string& src = kernel.cuda_source();
  EXPECT_NE(src.find("float* __restrict__ partials"), std::string::npos);
  EXPECT_NE(src.find("int* __restrict__ counters"), std::string::npos);
  size_t atomics = 0;
  for (size_t p = src.find("atomicInc("); p != std::string::npos; p = src.find("atomicInc(", p + 1))
    ++atomics;
  EXPECT_EQ(atomics, 2u) << "one per copy of the consumer's tile loop (unswitch-loops makes two)";
  std::string log = ptxas_log("gemm_split_k", text);
  EXPECT_NE(log.find("Used"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7514"), std::string::npos) << log;
}

}  // namespace
}  // namespace tessel

namespace tessel {
namespace {

// FP8 (examples/kernels/gemm_e4m3.tir): 1-byte K-major tiles of 128 K values per 128-byte row
// (Sw<3,4,3> in element offsets), TMA boxes of 128x128 and 256x128 bytes, wgmma m64n256k32 e4m3
// through the k-major descriptors, four k32 steps per K tile each +32 bytes (+2 in the
// descriptor's 16-byte units); every wgmma stays asynchronous and nothing spills, also with the
// scale in the epilogue. An MN-major FP8 operand (B stored [K,N]) is refused with an error naming
// its tile: wgmma has no transpose for FP8.
TEST(EmitSm90, Fp8GemmUsesK32WgmmaOverByteTiles) {
  auto module = ir::parse_module(examples::lowered_kernels().at("gemm_e4m3"), "gemm_e4m3.tir");
  CompileOptions options;
  options.compile_cubin = false;
  CompiledKernel kernel = compile(*module->kernels.front(), target::cuda::Target::sm90a(), options);
  const std::string& cuda = kernel.cuda_source();
  EXPECT_NE(cuda.find("&tmap_A, &ring_full[slot], k * 128, bm * 128);"), std::string::npos) << cuda;
  for (const char* step : {"desc_a0 + 0, desc_b0 + 0", "desc_a0 + 2, desc_b0 + 2",
                           "desc_a0 + 4, desc_b0 + 4", "desc_a0 + 6, desc_b0 + 6"}) {
    EXPECT_NE(cuda.find(std::string("tessel::device::wgmma_ss_fp8<256, tessel::device::MmaType::"
                                    "e4m3, tessel::device::MmaType::e4m3>(*reinterpret_cast<float("
                                    "*)[128]>(c + 0), ") +
                        step),
              std::string::npos)
        << step << "\n"
        << cuda;
  }
  EXPECT_EQ(cuda.find("desc_a0 + 8,"), std::string::npos) << cuda;
  const std::string log = ptxas_log("gemm_e4m3");
  EXPECT_EQ(log.find("C7515"), std::string::npos) << log;
  EXPECT_EQ(log.find("C7514"), std::string::npos) << log;
  EXPECT_NE(log.find(", 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log;

  std::string nn = examples::lowered_kernels().at("gemm_nn");
  for (size_t at = nn.find("f16"); at != std::string::npos; at = nn.find("f16", at + 6)) {
    if (at > 0 && nn[at - 1] == '<') nn.replace(at, 3, "f8e4m3");
  }
  auto mn_major = ir::parse_module(nn, "gemm_nn_e4m3.tir");
  try {
    compile(*mn_major->kernels.front(), target::cuda::Target::sm90a(), options);
    ADD_FAILURE() << "an MN-major FP8 operand compiled";
  } catch (const UserError& e) {
    // Synthesis finds no wgmma for it and falls back to the sm_80 instructions, which the
    // emitter refuses for 1-byte tiles, naming the tile.
    EXPECT_NE(std::string(e.what()).find("shared<f8e4m3"), std::string::npos) << e.what();
  }
}

// W4A16 (examples/kernels/gemm_w4a16.tir): the consumer reads the u4 tile a byte (a pair of
// weights) at a time through two address classes of the 32-byte swizzle (one run-time swizzle
// each, immediate offsets for the rest), unpacks each byte into an f16x2 word, subtracts the zero
// point and scales in packed f16 arithmetic, and hands the words to wgmma's RS form unchanged;
// the TMA coordinates of the u4 tile count bytes. Nothing spills, nothing is serialized.
TEST(EmitSm90, W4A16DequantizesPackedIntoTheRsOperand) {
  auto module = ir::parse_module(examples::lowered_kernels().at("gemm_w4a16"), "gemm_w4a16.tir");
  CompileOptions options;
  options.compile_cubin = false;
  const std::string cuda =
      compile(*module->kernels.front(), target::cuda::Target::sm90a(), options).cuda_source();
  EXPECT_NE(cuda.find("2 address class(es), unpacked to f16x2"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("q[1] = tessel::device::u4x2_to_f16x2(p0[256], false);"), std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("tessel::device::sub_x2(q[p], splat, false)"), std::string::npos) << cuda;
  EXPECT_NE(cuda.find("tessel::device::mul_x2(qc[p], "), std::string::npos) << cuda;
  // coarse-pipeline's operand form: the first step of a pair reads the carried A, the second the
  // A the first computed; both keep A live until their drain; no serialization (C7513).
  EXPECT_NE(cuda.find("const unsigned frag0_0[4] = {w_prev[0], w_prev[1], w_prev[2], w_prev[3]};"),
            std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("const unsigned frag0_0[4] = {w_1[0], w_1[1], w_1[2], w_1[3]};"),
            std::string::npos)
      << cuda;
  EXPECT_NE(cuda.find("tessel::device::wgmma_fence_operand(w_prev);"), std::string::npos) << cuda;
  EXPECT_EQ(ptxas_log("gemm_w4a16").find("C7513"), std::string::npos);
  EXPECT_NE(cuda.find("(k * 64) / 2, bn * 128);"), std::string::npos) << cuda;
  const std::string log = ptxas_log("gemm_w4a16");
  EXPECT_NE(log.find(", 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log;
}

// FlashAttention from a tile program: the producer loads Q (once per tile, the %prologue aref),
// K and V (an aref each); the consumer's softmax runs over the first wgmma's accumulator (row max
// and sum by shuffles within the quad, masks from iota), and the second GEMM takes P from
// registers (wgmma's RS form). coarse-pipeline carries P across the back edge packed in pairs
// straight from the f32 values of exp2, and the RS fragments are its words. Nothing spills.
TEST(EmitSm90, FlashAttentionTakesPFromRegistersAndNothingSpills) {
  for (const char* name : {"flash_attention", "flash_attention_d64"}) {
    SCOPED_TRACE(name);
    auto module = ir::parse_module(examples::lowered_kernels().at(name), std::string(name) + ".tir");
    CompileOptions options;
    options.compile_cubin = false;
    const std::string cuda =
        compile(*module->kernels.front(), target::cuda::Target::sm90a(), options).cuda_source();
    EXPECT_NE(cuda.find("role producer"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("prologue_full"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("ring_k_full"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("ring_v_full"), std::string::npos) << cuda;
    EXPECT_NE(cuda.find("tessel::device::wgmma_rs<"), std::string::npos) << cuda;
    // The steady loop waits for S of the next key tile only, P·V of this one still running.
    EXPECT_NE(cuda.find("tessel::device::wgmma_wait_group<1>();"), std::string::npos) << cuda;
    // P packed from the f32 values of exp2 (the cast to f16 adds no rounding of its own) into
    // the carried words the RS fragments are.
    EXPECT_NE(cuda.find("ph_1[p] = tessel::device::pack_f16x2(p_2[2 * p], p_2[2 * p + 1]);"),
              std::string::npos)
        << cuda;
    EXPECT_NE(cuda.find("frag0_0[4] = {ph_prev[0], ph_prev[1], ph_prev[2], ph_prev[3]};"),
              std::string::npos)
        << cuda;
    EXPECT_NE(cuda.find("__shfl_xor_sync"), std::string::npos) << cuda;
    const std::string log = ptxas_log(name);
    EXPECT_NE(log.find(", 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log;
  }
}

}  // namespace
}  // namespace tessel
