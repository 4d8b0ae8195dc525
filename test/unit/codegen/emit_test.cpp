// The emitter on the hand-lowered example kernels: the CUDA it generates compiles with NVRTC for
// sm_90a and sm_80 (ptxas accepts it), and the index arithmetic follows the facts.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>
#include <tuple>

#include "ir/parser.h"
#include "pipeline/pipeline.h"
#include "runtime/compiler.h"
#include "target/cuda/emit.h"
#include "target/cuda/target.h"
#include "tessel/example_kernels.h"
#include "transforms/layout/schedule_rows.h"
#include "sm90a_compile.h"

namespace tessel::target::cuda {
namespace {

EmittedKernel emit_text(const std::string& text) {
  auto module = ir::parse_module(text, "test.tir");
  pipeline::lower(*module);
  return emit_cuda(*module->kernels.front());
}

// One test per example (47 today), so that CTest spreads their NVRTC compiles over the cores.
class EveryExampleKernel : public ::testing::TestWithParam<std::string> {};

TEST(Emit, ThereAreExampleKernels) { ASSERT_GE(examples::lowered_kernels().size(), 5u); }

TEST_P(EveryExampleKernel, CompilesForSm90aAndSm80) {
  const std::string& name = GetParam();
  auto module = ir::parse_module(examples::lowered_kernels().at(name), name + ".tir");
  pipeline::lower(*module);
  // The block is the one the kernel's grid declares after lowering (pinned by the writer or set
  // by synthesis), and it is a whole number of warps.
  int64_t declared = 0;
  ir::walk(module->kernels.front().get(), [&](ir::Operation* op) {
    if (op->kind() == ir::OpKind::block_grid) declared = op->int_attr("threads");
  });
  EmittedKernel k = emit_cuda(*module->kernels.front());
  EXPECT_EQ(k.entry, name);
  EXPECT_EQ(k.threads, declared) << name;
  EXPECT_EQ(k.threads % 32, 0) << name;
  // Its rings, staged epilogue and barriers fit one block's shared memory.
  EXPECT_LE(k.dynamic_shared_bytes, Target::sm90a().shared_memory_per_block()) << name;
  for (const char* arch : {"sm_90a", "sm_80"}) {
    // GEMMs lowered for sm_90a use TMA and wgmma, which sm_80 does not have.
    if (std::string(arch) == "sm_80" && k.source.find("wgmma") != std::string::npos) continue;
    runtime::CompileOptions options;
    options.arch = arch;
    options.use_cache = false;
    runtime::CompileResult r = runtime::compile_cuda(k.source, options);
    EXPECT_GT(r.cubin.size(), 1000u) << name << " " << arch;
  }
}

std::vector<std::string> example_names() {
  std::vector<std::string> names;
  for (const auto& entry : examples::lowered_kernels()) names.push_back(entry.first);
  return names;
}

INSTANTIATE_TEST_SUITE_P(Emit, EveryExampleKernel, ::testing::ValuesIn(example_names()),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

// The unpinned row programs as schedule-rows schedules them for wide rows and ragged ones: softmax
// at N = 32768 with the row fetched whole into shared memory (every thread's 16-byte cp.async's,
// a pad for the vectors past N, the wait and a barrier before the loops read it), RMSNorm there
// with the row in the registers of two blocks of 1024 threads a SM (chunked runs),
// bias + GELU at N = 8200 over one [1,8448] tile of 352 threads, its GELU as h sigmoid(c u). All
// compile with NVRTC for sm_90a and sm_80 (cp.async is sm_80's).
TEST(Emit, WideAndRaggedRowProgramsCompileForSm90aAndSm80) {
  for (const auto& [file, m, n, expected] :
       std::vector<std::tuple<std::string, int, int, std::vector<std::string>>>{
           {"softmax_exp2_auto",
            2048,
            32768,
            {"tessel::device::cp_async_cg16(d, src);",
             "tessel::device::cp_async_wait_all();\n    __syncthreads();", "(ld.shared.b128)"}},
           {"rmsnorm_auto",
            2048,
            32768,
            {"__launch_bounds__(1024, 2)", "// values in chunks of 8"}},
           {"bias_gelu_auto",
            8191,
            8200,
            {"Block: 352 threads", "tessel::device::sigmoid(", "__launch_bounds__(352, 4)"}}}) {
    std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/examples/kernels/" + file + ".tir");
    std::stringstream text;
    text << in.rdbuf();
    auto module = ir::parse_module(text.str(), file + ".tir");
    transforms::set_size_hints(*module->kernels.front(), {{"M", m}, {"N", n}});
    pipeline::lower(*module);
    EmittedKernel k = emit_cuda(*module->kernels.front());
    for (const std::string& e : expected)
      EXPECT_NE(k.source.find(e), std::string::npos) << file << ": " << e;
    EXPECT_EQ(k.source.find("tanhf("), std::string::npos) << file;
    for (const char* arch : {"sm_90a", "sm_80"}) {
      runtime::CompileOptions options;
      options.arch = arch;
      options.use_cache = false;
      EXPECT_GT(runtime::compile_cuda(k.source, options).cubin.size(), 1000u)
          << file << " " << arch;
    }
  }
}

// Chunked runs (emit_chunked.cpp): where the launch bound leaves 32 registers (schedule-rows'
// chunked one pass: RMSNorm at N = 32768 over two blocks of 1024 threads), the loops' value-wise
// ops are written a 16-byte vector's values at a time, each chunk a C scope, the reductions
// folded chunk by chunk and crossing the block once after the last; ptxas fits the kernel in 32
// registers without spilling. Elsewhere (LayerNorm and bias + GELU at N = 8200) nothing is
// chunked.
TEST(Emit, ChunkedRunsWhereTheLaunchBoundLeaves32Registers) {
  auto lowered = [](const std::string& file, int m, int n) {
    std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/examples/kernels/" + file + ".tir");
    std::stringstream text;
    text << in.rdbuf();
    auto module = ir::parse_module(text.str(), file + ".tir");
    transforms::set_size_hints(*module->kernels.front(), {{"M", m}, {"N", n}});
    pipeline::lower(*module);
    return emit_cuda(*module->kernels.front());
  };
  const EmittedKernel rms = lowered("rmsnorm_auto", 2047, 32760);
  EXPECT_NE(rms.source.find("__launch_bounds__(1024, 2)"), std::string::npos) << rms.source;
  EXPECT_NE(rms.source.find("// values in chunks of 8"), std::string::npos) << rms.source;
  // The sum of squares: its partial starts at 0 and takes each value in turn (a chain: at 32
  // registers a tree's temporaries spill); one exchange through shared memory after the chunks,
  // not one per chunk.
  const size_t first = rms.source.find("// values in chunks of 8");
  const size_t exchange = rms.source.find("__syncthreads();", first);
  ASSERT_NE(exchange, std::string::npos);
  const std::string chunks = rms.source.substr(first, exchange - first);
  size_t folds = 0;
  for (size_t at = chunks.find("_part[0] = "); at != std::string::npos;
       at = chunks.find("_part[0] = ", at + 1))
    ++folds;
  EXPECT_EQ(folds, 32u) << chunks;  // [1,32768] over 1024 threads: 32 values, 4 chunks of 8
  EXPECT_NE(chunks.find("for (int p = 0; p < 1; ++p) "), std::string::npos) << chunks;
  // The weight vector, which every block reads and nothing writes, by the read-only path; the
  // row by the plain one.
  EXPECT_NE(rms.source.find("tsl_fetch16<8, false, true>(p, ok0"), std::string::npos) << rms.source;
  EXPECT_NE(rms.source.find("tsl_fetch16<8>(p + 8192, ok8"), std::string::npos) << rms.source;
  const std::string log = testing::ptxas_report(rms.source);
  EXPECT_NE(log.find(", 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log;
  // LayerNorm at N = 32768 (schedule-rows chooses the chunked form since reductions chain): its
  // two sums cross the block together, their partials stored between one barrier pair (outside
  // loops no barrier before the stores is needed); its weight and bias, read in each chunk beside
  // the held row, 8 bytes at a time under the 16-byte vector's predicate in the first half of
  // the chunks and 16 bytes at a time after, where half the held row has died (the path for rows
  // of several tiles, with no held row, keeps 16-byte fetches); ptxas keeps it at 32 registers
  // without spilling (with 16-byte fetches throughout: 16 bytes of spills; with halves
  // throughout, 2-4% slower on the H200: one more load instruction a fetch).
  {
    const std::string ln = lowered("layernorm_auto", 2048, 32768).source;
    EXPECT_NE(ln.find("tsl_fetch16<4>(p + 8192 + 4, ok8, "), std::string::npos) << ln;
    EXPECT_NE(ln.find("tsl_fetch16<8, false, true>(p + 16384, ok16, "), std::string::npos) << ln;
    EXPECT_EQ(ln.find("tsl_fetch16<4>(p + 16384 + 4, ok16, "), std::string::npos) << ln;
    EXPECT_NE(ln.find("__launch_bounds__(1024, 2)"), std::string::npos) << ln;
    const size_t sums = ln.find("ts_smem[");
    const size_t squares = ln.find("tq_smem[");
    const size_t barrier = ln.find("__syncthreads();", sums);
    ASSERT_NE(squares, std::string::npos) << ln;
    EXPECT_LT(squares, barrier) << ln;
    EXPECT_EQ(ln.rfind("__syncthreads();", sums), std::string::npos) << ln;
    const std::string log = testing::ptxas_report(ln);
    EXPECT_NE(log.find("Used 32 registers"), std::string::npos) << log;
    EXPECT_NE(log.find(", 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log;
  }
  // LayerNorm at 8191 x 8200: six blocks of 320 threads, whose launch bound leaves 32 registers
  // as ptxas allocates them (steps of 8; 65536 / 1920 is 34), chunked (unchunked under that bound
  // it spilled and ran at 0.26 of a copy); bias + GELU, elementwise, keeps its op-by-op form.
  {
    const EmittedKernel k = lowered("layernorm_auto", 8191, 8200);
    EXPECT_NE(k.source.find("__launch_bounds__(320, 6)"), std::string::npos) << k.source;
    EXPECT_NE(k.source.find("values in chunks"), std::string::npos) << k.source;
    const std::string log = testing::ptxas_report(k.source);
    EXPECT_NE(log.find("Used 32 registers"), std::string::npos) << log;
    EXPECT_NE(log.find(", 0 bytes spill stores, 0 bytes spill loads"), std::string::npos) << log;
  }
  EXPECT_EQ(lowered("bias_gelu_auto", 8191, 8200).source.find("values in chunks"),
            std::string::npos);
}

// Rows fetched whole into shared memory (schedule-rows' prefetch, copy_async {from_line}): each
// thread's cp.async's rotated by the line's head (the vectors between the 128-byte line the
// row's tile starts in and its start), so that a warp's 512 bytes are whole lines where rows
// start inside one (N = 32760), into a buffer placed at the row's line phase; the data lands as
// without them, and the kernel compiles.
TEST(Emit, RowsFetchedWholeFromTheirLine) {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/examples/kernels/softmax_exp2_auto.tir");
  std::stringstream text;
  text << in.rdbuf();
  auto module = ir::parse_module(text.str(), "softmax_exp2_auto.tir");
  transforms::set_size_hints(*module->kernels.front(), {{"M", 2047}, {"N", 32760}});
  pipeline::lower(*module);
  const std::string src = emit_cuda(*module->kernels.front()).source;
  EXPECT_NE(src.find("const int head = static_cast<int>((reinterpret_cast<unsigned long long>(row) "
                     "& 127) >> 4);"),
            std::string::npos)
      << src;
  // The buffer placed at the row's line phase (`alloc %X_tile_line`): the cp.async's write whole
  // 128-byte lines of shared memory as well.
  EXPECT_NE(src.find("const int rX_row_line_phase = static_cast<int>(reinterpret_cast<unsigned "
                     "long long>(X + (long long)(bx * 1) * N) & 127);"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("(tsl_smem + 0 + rX_row_line_phase)"), std::string::npos) << src;
  EXPECT_NE(src.find("for (int a = tid; a < 1024; a += 256) {"), std::string::npos) << src;
  EXPECT_NE(src.find("const int c = (a < head ? a + 1024 - head : a - head) * 8;"),
            std::string::npos)
      << src;
  EXPECT_NE(src.find("if ((p_1 * 8192) + c < N) tessel::device::cp_async_cg16(d, src);"),
            std::string::npos)
      << src;
  const std::string log = testing::ptxas_report(src);
  EXPECT_NE(log.find(", 0 bytes spill stores"), std::string::npos) << log;
}

TEST(Emit, Bf16KernelsConvertThroughF32) {
  std::string text = examples::lowered_kernels().at("bias_gelu");
  for (size_t at = text.find("<f16"); at != std::string::npos; at = text.find("<f16", at)) {
    text.replace(at, 4, "<bf16");
  }
  EmittedKernel k = emit_text(text);
  // Masked 16-byte loads: fetched raw first, converted (as bf16) after the tile's last fetch. The
  // pad (0.0) is exact in bf16: out-of-bounds lanes are fetched as its bits and converted without
  // a select.
  size_t fetch = k.source.find("const auto raw0 = tsl_fetch16<8>(p, ok0, 0x00000000u);");
  size_t unpack = k.source.find("tsl_unpack16<8>(raw0, &rX[0], true);");
  EXPECT_NE(fetch, std::string::npos) << k.source;
  EXPECT_NE(unpack, std::string::npos) << k.source;
  EXPECT_LT(k.source.find("tsl_fetch16<8>(p + 256, ok8, 0x00000000u)"), unpack) << k.source;
  // The cast to bf16 feeds only the store, which rounds as it converts (as bf16: `true`).
  EXPECT_NE(k.source.find("// y as bf16 (rounded by the store)"), std::string::npos);
  EXPECT_NE(k.source.find("tsl_store16<8>(p, &y[0], true);"), std::string::npos) << k.source;
  runtime::CompileOptions options;
  options.use_cache = false;
  EXPECT_GT(runtime::compile_cuda(k.source, options).cubin.size(), 0u);
}

// A masked tile's pad reaches out-of-bounds lanes as the element type's bits where it is exact
// there (-inf in f16: 0xfc00; 1.0 in bf16: 0x3f80), so no select follows the conversion; a pad
// that f16 cannot hold (0.1) keeps the select of the f32 pad after it.
TEST(Emit, MaskedLoadsFetchExactPadsAsBits) {
  const std::string text = examples::lowered_kernels().at("bias_gelu");
  auto with_pad = [&](const std::string& pad, bool bf16) {
    std::string t = text;
    for (size_t at = t.find("pad = 0.0"); at != std::string::npos; at = t.find("pad = 0.0", at))
      t.replace(at, 9, "pad = " + pad);
    if (bf16)
      for (size_t at = t.find("<f16"); at != std::string::npos; at = t.find("<f16", at))
        t.replace(at, 4, "<bf16");
    return emit_text(t).source;
  };
  const std::string ninf = with_pad("-inf", false);
  EXPECT_NE(ninf.find("tsl_fetch16<8>(p, ok0, 0xfc00fc00u);"), std::string::npos) << ninf;
  EXPECT_NE(ninf.find("tsl_unpack16<8>(raw0, &rX[0], false);"), std::string::npos) << ninf;
  const std::string one = with_pad("1.0", true);
  EXPECT_NE(one.find("tsl_fetch16<8>(p, ok0, 0x3f803f80u);"), std::string::npos) << one;
  const std::string inexact = with_pad("0.1", false);
  EXPECT_NE(inexact.find("tsl_fetch16<8>(p, ok0);"), std::string::npos) << inexact;
  EXPECT_NE(inexact.find("tsl_unpack16<8>(raw0, &rX[0], false, ok0, 0.1"), std::string::npos)
      << inexact;
  runtime::CompileOptions options;
  options.use_cache = false;
  EXPECT_GT(runtime::compile_cuda(ninf, options).cubin.size(), 0u);
  EXPECT_GT(runtime::compile_cuda(inexact, options).cubin.size(), 0u);
}

// A loaded 16-bit row read by two ops (LayerNorm's row held from its sums to its normalization)
// stays packed as loaded, two values a word, its masked lanes fetched as the pad's bits, and is
// converted where each reader reads it; a tile read once is converted as it lands.
TEST(Emit, HeldRowsStayPacked) {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/examples/kernels/layernorm_auto.tir");
  std::stringstream text;
  text << in.rdbuf();
  auto module = ir::parse_module(text.str(), "layernorm_auto.tir");
  transforms::set_size_hints(*module->kernels.front(), {{"M", 8191}, {"N", 8200}});
  pipeline::lower(*module);
  EmittedKernel k = emit_cuda(*module->kernels.front());
  EXPECT_NE(k.source.find("unsigned rX[16];  // packed pairs"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("tsl_words16<8>(raw0, &rX[0]);"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("float rg[32];"), std::string::npos) << k.source;  // read once
  EXPECT_EQ(k.source.find("ok0, 0.0f);"), std::string::npos) << k.source;   // no select
  runtime::CompileOptions options;
  options.use_cache = false;
  EXPECT_GT(runtime::compile_cuda(k.source, options).cubin.size(), 0u);
}

TEST(Emit, ParametersAreTensorsScalarsThenSizes) {
  EmittedKernel k = emit_text(examples::lowered_kernels().at("rmsnorm"));
  ASSERT_EQ(k.params.size(), 6u);
  EXPECT_EQ(k.params[0].name, "X");
  EXPECT_EQ(k.params[0].kind, KernelParam::Kind::tensor);
  EXPECT_EQ(k.params[3].name, "eps");
  EXPECT_EQ(k.params[3].kind, KernelParam::Kind::scalar);
  EXPECT_EQ(k.params[4].name, "M");
  EXPECT_EQ(k.params[5].kind, KernelParam::Kind::size);
  EXPECT_NE(k.source.find("const unsigned short* __restrict__ X"), std::string::npos);
  EXPECT_NE(k.source.find("unsigned short* __restrict__ Y"), std::string::npos);
  EXPECT_EQ(k.source.find("const unsigned short* __restrict__ Y"), std::string::npos);
  EXPECT_EQ(k.dynamic_shared_bytes, 0);  // warp shuffles only
}

TEST(Emit, FactsDecideVectorWidthAndPredicates) {
  std::string text = examples::lowered_kernels().at("rmsnorm");
  EmittedKernel with = emit_text(text);
  EXPECT_NE(with.source.find("tsl_fetch16<8>"), std::string::npos);
  EXPECT_NE(with.source.find("c1 < N"), std::string::npos);  // 512 does not divide N
  // Without N % 8 the rows are not 16-byte aligned: scalar accesses.
  std::string no_fact = text;
  no_fact.replace(no_fact.find(" facts(N % 8 == 0)"), 18, "");
  EmittedKernel without = emit_text(no_fact);
  EXPECT_EQ(without.source.find("tsl_load16<"), std::string::npos);
  EXPECT_EQ(without.source.find("tsl_fetch16<"), std::string::npos);
  EXPECT_NE(without.source.find("tsl_load(p + 1, false)"), std::string::npos);
  // With N % 512 and M % 8 every tile is full: no predicates at all.
  std::string full = text;
  full.replace(full.find("facts(N % 8 == 0)"), 17, "facts(M % 8 == 0, N % 512 == 0)");
  EmittedKernel unmasked = emit_text(full);
  EXPECT_EQ(unmasked.source.find("if (c"), std::string::npos);
  EXPECT_EQ(unmasked.source.find("< N"), std::string::npos);
  runtime::CompileOptions options;
  options.use_cache = false;
  EXPECT_GT(runtime::compile_cuda(without.source, options).cubin.size(), 0u);
  EXPECT_GT(runtime::compile_cuda(unmasked.source, options).cubin.size(), 0u);
}

TEST(Emit, StaticExtentsDropPredicatesAndCrossWarpReductionsUseSharedMemory) {
  EmittedKernel k = emit_text(examples::lowered_kernels().at("rmsnorm_n8192"));
  // Column tile 0 of a static extent 8192 with tile width 8192 is full: only rows are checked.
  EXPECT_NE(k.source.find("const int c1 = thr0_d1;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("const bool ok8 = c0 < M;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("tsl_fetch16<8>(p + 2048, ok8, 0x00000000u);"), std::string::npos);
  EXPECT_EQ(k.source.find("< 8192"), std::string::npos);
  // 8 warps per row: lanes shuffle, warps meet in shared memory (2 rows x 8 warps floats).
  EXPECT_EQ(k.dynamic_shared_bytes, 64);
  EXPECT_NE(k.source.find("__shfl_xor_sync(0xffffffffu, ss_part[p], 16)"), std::string::npos);
}

TEST(Emit, LayoutArithmeticIsSimplified) {
  EmittedKernel k = emit_text(examples::lowered_kernels().at("softmax"));
  // lane -> 8 columns, warp -> row; no modulo on the last thread leaf.
  EXPECT_NE(k.source.find("const int thr1_d0 = tid / 32;"), std::string::npos) << k.source;
  EXPECT_NE(k.source.find("const int thr1_d1 = (tid % 32) * 8;"), std::string::npos);
}

TEST(Emit, UnloweredInputIsAUserError) {
  // Straight to the emitter, skipping the pipeline: mixed layouts and missing layouts.
  const char* mixed = R"(
kernel @mixed(%X: global<f32>[64]) {
  %c0 = const {value = 0} : index
  %t = tile %X, %c0 {shape = [64]} : global<f32>[64]
  %a = copy %t : register<f32, (64,1):(1,0)>[64]
  %b = fill {value = 1.0} : register<f32, ((2,32),1):((32,1),0)>[64]
  %s = add %a, %b : register<f32, ((2,32),1):((32,1),0)>[64]
  copy %s, %t
}
)";
  auto module = ir::parse_module(mixed, "mixed.tir");
  try {
    emit_cuda(*module->kernels.front());
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(
                  "mixed.tir:7:3: error: emit: add mixes layouts: %a has (64,1):(1,0) : (T,V) -> "
                  "64 but the result has ((2,32),1):((32,1),0); rearrange first"),
              std::string::npos)
        << e.what();
  }
  std::string unlowered = mixed;
  unlowered.replace(unlowered.find("register<f32, (64,1):(1,0)>"), 27, "register<f32>");
  module = ir::parse_module(unlowered, "unlowered.tir");
  try {
    pipeline::check_lowered(*module);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(
        std::string(e.what()).find("unlowered.tir:5:3: error: compile: %a (register<f32>[64], "
                                   "made by copy) has no thread-value layout"),
        std::string::npos)
        << e.what();
  }
}

TEST(Emit, UnsupportedOpsAreUserErrors) {
  const char* text = R"(
kernel @k(%A: global<f16>[16,16], %B: global<f16>[16,8], %C: global<f32>[16,8]) {
  %c0 = const {value = 0} : index
  %a = copy %A : register<f16, ((4,8),(2,2,2)):((32,1),(16,8,128))>[16,16]
  %b = copy %B : register<f16, ((4,8),(2,2)):((16,1),(8,64))>[16,8]
  %c = fill {value = 0.0} : register<f32, ((4,8),(2,2)):((32,1),(16,8))>[16,8]
  %d = mma %a, %b, %c : register<f32, ((4,8),(2,2)):((32,1),(16,8))>[16,8]
  copy %d, %C
}
)";
  try {
    emit_text(text);
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(
        std::string(e.what()).find("test.tir:7:3: error: emit: mma without a wgmma atom is not "
                                   "supported by the CUDA emitter yet"),
        std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel::target::cuda
