// The sm_80 GEMM path (src/target/cuda/emit_cp_async_mma.cpp) without a GPU: the example GEMMs
// and a 128x128x32 GEMM in f16 and bf16, over 4 or 8 warps and 1 to 3 stages, compile through
// tessel::compile for sm_80 and NVRTC/ptxas accept the same source for sm_90a; the text has the
// pipeline's shape (cp.async groups waited on S-2 at a time, ldmatrix, mma.sync, the ring of S
// slots); and what the path refuses is a user error naming the op.
#include <gtest/gtest.h>

#include <dlfcn.h>
#include <unistd.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <regex>
#include <set>
#include <sstream>

#include "compile/compile.h"
#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/pass.h"
#include "ir/printer.h"
#include "pipeline/pipeline.h"
#include "runtime/compiler.h"
#include "target/cuda/emit.h"
#include "tessel/example_kernels.h"

namespace tessel {
namespace {

using target::cuda::Target;

int count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

void replace_all(std::string& text, const std::string& from, const std::string& to) {
  for (size_t at = text.find(from); at != std::string::npos; at = text.find(from, at + to.size()))
    text.replace(at, from.size(), to);
}

// B given as [K,N] (row-major, "NN"): copied as a [32,128] tile and used as the mma's b with no
// transpose (synthesis reads it with ldmatrix.trans).
void make_nn(std::string& text) {
  replace_all(text, "facts(K % 8 == 0)", "facts(K % 8 == 0, N % 8 == 0)");
  for (const char* e : {"f16", "bf16"}) {
    std::string t = std::string("<") + e + ">";
    replace_all(text, "%B: global" + t + "[N,K]", "%B: global" + t + "[K,N]");
    replace_all(text,
                "    %B_tile = tile %B, %bn, %k {masked, pad = 0.0, shape = [128,32]} : global" +
                    t + "[128,32]\n    %sB = copy %B_tile : shared" + t +
                    "[128,32]\n    %sBt = transpose %sB : shared" + t + "[32,128]\n",
                "    %B_tile = tile %B, %k, %bn {masked, pad = 0.0, shape = [32,128]} : global" +
                    t + "[32,128]\n    %sBt = copy %B_tile : shared" + t + "[32,128]\n");
  }
}

// examples/kernels/gemm_sm80.tir (8 warps, 3 stages, f16) with another element type, block size
// and stage count.
std::string gemm_variant(const std::string& element, int threads, int stages) {
  std::string text = examples::lowered_kernels().at("gemm_sm80");
  replace_all(text, "<f16>", "<" + element + ">");
  replace_all(text, "threads = 256", "threads = " + std::to_string(threads));
  replace_all(text, "stages = 3", "stages = " + std::to_string(stages));
  return text;
}

CompiledKernel compile_sm80(const std::string& text, const std::string& file) {
  auto module = ir::parse_module(text, file);
  CompileOptions options;
  options.use_cache = false;
  options.compile_cubin = true;
  return compile(*module->kernels.front(), Target::sm80(), options);
}

// ptxas accepts the source for sm_90a as well (mma.sync and cp.async run there too).
void expect_compiles_for_sm90a(const std::string& source, const std::string& what) {
  runtime::CompileOptions options;
  options.arch = "sm_90a";
  options.use_cache = false;
  EXPECT_GT(runtime::compile_cuda(source, options).cubin.size(), 1000u) << what;
}

std::string read_source_file(const std::string& rel) {
  std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/" + rel);
  EXPECT_TRUE(in) << rel;
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
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

// One test per (element, threads, stages): 12 kernels compiled for sm_80 and sm_90a, 31 s as one
// test.
class GemmVariantSm80 : public testing::TestWithParam<std::tuple<const char*, int, int>> {};

TEST_P(GemmVariantSm80, CompilesForSm80AndSm90a) {
  const auto [element, threads, stages] = GetParam();
  std::string what = std::string(element) + ", " + std::to_string(threads) + " threads, " +
                     std::to_string(stages) + " stages";
  CompiledKernel k = compile_sm80(gemm_variant(element, threads, stages), "gemm_sm80.tir");
  const std::string& src = k.cuda_source();
  EXPECT_GT(k.cubin().size(), 1000u) << what;
  EXPECT_EQ(k.emitted().threads, threads) << what;
  // 16-byte cp.async with zero fill at the edges (M, N, K ragged), ldmatrix.x4 fragments
  // and in-place mma.sync of the element type.
  EXPECT_NE(src.find("cp_async_cg16_zfill("), std::string::npos) << what;
  EXPECT_NE(src.find("ldmatrix_x4("), std::string::npos) << what;
  EXPECT_NE(src.find(std::string("mma_m16n8k16_f32_") + element + "(c[0], c[1], c[2], c[3]"),
            std::string::npos)
      << what << "\n"
      << src;
  EXPECT_EQ(count(src, "ld.shared"), 0) << what;
  // Both operands: 128x32 tiles of 8192 bytes, S slots each.
  EXPECT_EQ(count(src, "// " + std::to_string(stages) + " x 8192 bytes: shared<"), 2) << what;
  EXPECT_EQ(k.emitted().dynamic_shared_bytes, stages * 2 * 8192 + 112) << what;
  // The pipeline: S-1 groups in the prologue, then wait until S-2 are pending; one stage
  // waits for everything and synchronizes after the compute as well.
  if (stages == 1) {
    EXPECT_EQ(count(src, "cp_async_wait_group"), 0) << what;
    EXPECT_EQ(count(src, "cp_async_wait_all();"), 1) << what;
    EXPECT_EQ(count(src, "__syncthreads();"), 2) << what;
    EXPECT_EQ(count(src, "cp_async_commit_group"), 0) << what;
  } else {
    EXPECT_EQ(count(src, "cp_async_wait_group<" + std::to_string(stages - 2) + ">();"), 1)
        << what;
    EXPECT_NE(src.find("for (int stage = 0; stage < " + std::to_string(stages - 1) +
                       "; ++stage) {"),
              std::string::npos)
        << what;
    EXPECT_EQ(count(src, "cp_async_commit_group();"), 2) << what;
    EXPECT_EQ(count(src, "__syncthreads();"), 1) << what;
    EXPECT_NE(src.find("const int k_load = k + " + std::to_string(stages - 1) + ";"),
              std::string::npos)
        << what;
  }
  // Per warp 64x32 (8 warps) or 64x64 (4 warps) of C: 2 k-steps of 4 x (4 or 8) atoms.
  int per_thread = 2 * 4 * (threads == 256 ? 4 : 8);
  EXPECT_EQ(count(src, "tessel::device::mma_m16n8k16_f32_"), per_thread) << what;
  expect_compiles_for_sm90a(src, what);
}

INSTANTIATE_TEST_SUITE_P(EmitSm80, GemmVariantSm80,
                         testing::Combine(testing::Values("f16", "bf16"), testing::Values(128, 256),
                                          testing::Values(1, 2, 3)),
                         [](const testing::TestParamInfo<std::tuple<const char*, int, int>>& info) {
                           return std::string(std::get<0>(info.param)) + "_" +
                                  std::to_string(std::get<1>(info.param)) + "threads_" +
                                  std::to_string(std::get<2>(info.param)) + "stages";
                         });

TEST(EmitSm80, ExampleGemmWithoutAlignmentFactsCopiesElementByElement) {
  // examples/tile/gemm.tir has no facts about K: rows may be misaligned, so the copies into
  // shared memory are predicated ld.global + st.shared of single elements, still pipelined.
  CompiledKernel k = compile_sm80(read_source_file("examples/tile/gemm.tir"), "gemm.tir");
  const std::string& src = k.cuda_source();
  EXPECT_GT(k.cubin().size(), 1000u);
  EXPECT_EQ(count(src, "cp_async"), 0) << src;
  EXPECT_NE(src.find("(ld.global + st.shared)"), std::string::npos) << src;
  EXPECT_NE(src.find("*reinterpret_cast<unsigned short*>(dst + "), std::string::npos) << src;
  EXPECT_NE(src.find("ldmatrix_x4("), std::string::npos) << src;
  EXPECT_NE(src.find("mma_m16n8k16_f32_f16("), std::string::npos) << src;
  expect_compiles_for_sm90a(src, "examples/tile/gemm.tir");
}

TEST(EmitSm80, ExampleKernelFileCompiles) {
  CompiledKernel k = compile_sm80(examples::lowered_kernels().at("gemm_sm80"), "gemm_sm80.tir");
  EXPECT_EQ(k.emitted().entry, "gemm_sm80");
  EXPECT_EQ(k.emitted().threads, 256);
  EXPECT_NE(k.cuda_source().find("cp_async_wait_group<1>();"), std::string::npos);
  expect_compiles_for_sm90a(k.cuda_source(), "gemm_sm80");
}

TEST(EmitSm80, SwizzledSharedAddressesGoThroughTheLayout) {
  // The tiles get a swizzled layout; every shared address the kernel computes goes through it.
  CompiledKernel k = compile_sm80(gemm_variant("f16", 256, 3), "gemm_sm80.tir");
  std::smatch m;
  std::regex swizzled("shared<f16, Sw<(\\d),(\\d),(\\d)> o 0 o");
  ASSERT_TRUE(std::regex_search(k.cuda_source(), m, swizzled)) << k.cuda_source();
  std::string call =
      "tessel::device::swizzle_offset<" + m[1].str() + ", " + m[2].str() + ", " + m[3].str() + ">(";
  EXPECT_GE(count(k.cuda_source(), call), 3) << k.cuda_source();
}

// The loop after layout synthesis but before pipeline-loops, with `stages` set by hand.
std::string emit_with_stages(const std::string& stages_attr) {
  std::string text = gemm_variant("f16", 256, 3);
  replace_all(text, " {stages = 3}", stages_attr);
  auto module = ir::parse_module(text, "gemm_sm80.tir");
  (void)pipeline::lowering_passes();  // registers the passes
  ir::run_passes(*module, {"canonicalize", "synthesize-layouts", "synthesize-shared-layouts"});
  return target::cuda::emit_cuda(*module->kernels.front()).source;
}

TEST(EmitSm80, StagesAttributeAbsentMeansOneAndBadValuesAreRefused) {
  std::string one = emit_with_stages("");
  EXPECT_NE(one.find("pipelined loop over %k: 1 stage"), std::string::npos) << one;
  EXPECT_EQ(count(one, "cp_async_wait_all();"), 1);
  std::string four = emit_with_stages(" {stages = 4}");
  EXPECT_EQ(count(four, "cp_async_wait_group<2>();"), 1) << four;
  std::string msg = expect_user_error([] { emit_with_stages(" {stages = 0}"); });
  EXPECT_NE(msg.find("gemm_sm80.tir:20:3: error: emit: for has stages = 0; the sm_80 path takes "
                     "1 to 16 stages"),
            std::string::npos)
      << msg;
}

TEST(EmitSm80, NonZeroPadWithCpAsyncIsRefused) {
  std::string text = gemm_variant("f16", 256, 2);
  replace_all(text, "%A, %bm, %k {masked, pad = 0.0", "%A, %bm, %k {masked, pad = 1.0");
  std::string msg = expect_user_error([&] { compile_sm80(text, "gemm_sm80.tir"); });
  EXPECT_NE(msg.find("gemm_sm80.tir:22:5: error: emit: copy pads with 1.0f; cp.async fills "
                     "out-of-bounds elements with zeros only (pad = 0.0)"),
            std::string::npos)
      << msg;
}

// ---- The emitted GEMM run on the CPU
// ------------------------------------------------------------- sm80_host_mock.h stands in for the
// device library (threads as std::threads, warp instructions as exchanges between a warp's threads,
// cp.async queued per commit group); the emitted source is compiled by the host compiler and run on
// ragged shapes against a float64 reference. This checks the index arithmetic, the swizzled
// addressing, the fragment maps and the pipeline's waits and barriers here, before the GPU test
// does on the device.

namespace host_sim {

using Gemm = int (*)(const uint16_t*, const uint16_t*, uint16_t*, int, int, int, int, int, int,
                     int);

struct Library {
  void* handle = nullptr;
  Gemm gemm = nullptr;
  ~Library() {
    if (handle) dlclose(handle);
  }
};

std::unique_ptr<Library> build(const std::string& source, const std::string& entry) {
  // A distinct file per kernel: a library with thread_local state stays loaded after dlclose,
  // and dlopen of the same path would return it.
  static int serial = 0;
  std::string tag = std::to_string(serial++);
  auto dir = std::filesystem::temp_directory_path() /
             ("tessel-sm80-sim-" + std::to_string(::getpid()) + "-" + tag);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tessel_device.cuh") << "\n";
  std::ofstream(dir / "emitted_support.cuh") << "\n";
  {
    std::ofstream src(dir / "kernel.cpp");
    src << source << "\n";
    if (!entry.empty())  // the GEMM launcher (A, B, C, M, N, K)
      src << "extern \"C\" int tsl_sim_gemm(const unsigned short* A, const unsigned short* B, "
             "unsigned short* C, int M, int N, int K, int gx, int gy, int threads, int eager) {\n"
          << "  tsl_sim::eager = eager != 0;\n  tsl_sim::errors = 0;\n"
          << "  tsl_sim::run_grid(gx, gy, threads, [&] { " << entry
          << "(A, B, C, M, N, K); });\n  return tsl_sim::errors;\n}\n";
  }
  std::string so = (dir / "kernel.so").string();
  std::string cmd = std::string(TESSEL_HOST_CXX) + " -std=c++20 -O1 -w -fPIC -shared -pthread" +
                    " -include " + TESSEL_SOURCE_DIR + "/test/unit/codegen/sm80_host_mock.h -I" +
                    dir.string() + " " + (dir / "kernel.cpp").string() + " -o " + so + " 2>&1";
  int rc = std::system(cmd.c_str());
  EXPECT_EQ(rc, 0) << cmd;
  auto lib = std::make_unique<Library>();
  lib->handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(lib->handle, nullptr) << dlerror();
  if (lib->handle) lib->gemm = reinterpret_cast<Gemm>(dlsym(lib->handle, "tsl_sim_gemm"));
  std::filesystem::remove_all(dir);
  return lib;
}

uint16_t to_bits(float f, bool bf) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  if (bf) return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
  // Values here are small integers over 8: exact in f16.
  int sign = f < 0, v = static_cast<int>(std::fabs(f) * 8);
  if (v == 0) return static_cast<uint16_t>(sign << 15);
  int e = 0;
  while ((v >> e) > 1) ++e;  // v = 1.m * 2^e, value = v / 8
  uint32_t man = (static_cast<uint32_t>(v) << (10 - e)) & 1023u;
  return static_cast<uint16_t>((sign << 15) | ((e - 3 + 15) << 10) | man);
}
double from_bits(uint16_t h, bool bf) {
  if (bf) {
    uint32_t u = uint32_t(h) << 16;
    float f;
    std::memcpy(&f, &u, 4);
    return f;
  }
  int sign = h >> 15, e = (h >> 10) & 31, man = h & 1023;
  if (e == 31) return std::nan("");
  double v = e == 0 ? std::ldexp(man, -24) : std::ldexp(man + 1024, e - 25);
  return sign ? -v : v;
}

// Relative error of C = A B^T (B [N,K]; with b_kn, C = A B for B [K,N]) from the simulated kernel;
// -1 when the simulation flagged errors.
double run(const Library& lib, bool bf, int m, int n, int k, int threads, bool eager, bool b_kn) {
  std::mt19937 rng(static_cast<uint32_t>(m * 131 + n * 7 + k));
  std::uniform_int_distribution<int> dist(-16, 16);
  std::vector<uint16_t> a(size_t(m) * k), b(size_t(n) * k), c(size_t(m) * n, 0xFFFF);
  std::vector<double> av(a.size()), bv(b.size());
  for (size_t i = 0; i < a.size(); ++i) av[i] = from_bits(a[i] = to_bits(dist(rng) / 8.0f, bf), bf);
  for (size_t i = 0; i < b.size(); ++i) bv[i] = from_bits(b[i] = to_bits(dist(rng) / 8.0f, bf), bf);
  int errors = lib.gemm(a.data(), b.data(), c.data(), m, n, k, (m + 127) / 128, (n + 127) / 128,
                        threads, eager ? 1 : 0);
  if (errors != 0) return -1;
  double num = 0, den = 0;
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double want = 0;
      for (int x = 0; x < k; ++x)
        want += av[size_t(i) * k + x] * (b_kn ? bv[size_t(x) * n + j] : bv[size_t(j) * k + x]);
      double got = from_bits(c[size_t(i) * n + j], bf);
      if (std::isnan(got)) return 1e9;  // an element the kernel never wrote
      num += (got - want) * (got - want);
      den += want * want;
    }
  }
  return std::sqrt(num / std::max(den, 1e-30));
}

}  // namespace host_sim

struct HostGemmCase {
  const char* element;
  int threads, stages;
  bool aligned;
  int m, n, k;
  bool nn = false;
  bool per_element = false;  // operands by ld.shared per element instead of ldmatrix
  int k_divisor = 8;         // the fact K % k_divisor == 0 (4: 8-byte cp.async)
};

// One test per case (each compiles and simulates a kernel for several seconds: as one test they
// made the suite's longest, 51 s, which CTest could not spread over the cores).
class EmittedGemmOnTheHost : public testing::TestWithParam<HostGemmCase> {};

TEST_P(EmittedGemmOnTheHost, RunsCorrectly) {
  const HostGemmCase& c = GetParam();
  std::string text = gemm_variant(c.element, c.threads, c.stages);
  if (!c.aligned) replace_all(text, " facts(K % 8 == 0)", "");
  if (c.nn) make_nn(text);
  replace_all(text, "K % 8 == 0", "K % " + std::to_string(c.k_divisor) + " == 0");
  auto module = ir::parse_module(text, "gemm_sm80.tir");
  pipeline::lower(*module);
  if (c.per_element) {  // what the emitter does when synthesis picks no ldmatrix form
    ir::walk(module->kernels.front().get(), [](ir::Operation* op) {
      if (op->kind() != ir::OpKind::mma) return;
      op->set_attr("a_load", ir::Attribute::string("ld.shared.b16"));
      op->set_attr("b_load", ir::Attribute::string("ld.shared.b16"));
    });
  }
  target::cuda::EmittedKernel k = target::cuda::emit_cuda(*module->kernels.front());
  EXPECT_EQ(count(k.source, "cp_async_cg16_zfill(") > 0, c.aligned && c.k_divisor == 8);
  EXPECT_EQ(count(k.source, "cp_async_ca_zfill<8>(") > 0, c.aligned && c.k_divisor == 4);
  EXPECT_EQ(count(k.source, "ldmatrix_x4_trans(") > 0, c.nn && !c.per_element) << k.source;
  EXPECT_EQ(count(k.source, "ld_shared_b16(") > 0, c.per_element) << k.source;
  auto lib = host_sim::build(k.source, k.entry);
  ASSERT_NE(lib->gemm, nullptr);
  bool bf = std::string(c.element) == "bf16";
  for (bool eager : {false, true}) {
    if (c.per_element && eager) continue;  // one mode is enough for this slow one
    double err = host_sim::run(*lib, bf, c.m, c.n, c.k, c.threads, eager, c.nn);
    EXPECT_GE(err, 0) << "the simulation flagged a misaligned or pending copy";
    EXPECT_LT(err, bf ? 1e-2 : 1e-3) << (eager ? "eager" : "lazy") << " copies";
  }
}

// Ragged in M, N and K (a partial last K step), more K steps than stages; one with no K % 8
// fact (element copies, odd K); B as [K,N] (ldmatrix.trans); operands loaded per element.
INSTANTIATE_TEST_SUITE_P(
    EmitSm80, EmittedGemmOnTheHost,
    testing::Values(HostGemmCase{"f16", 256, 3, true, 150, 136, 136},
                    HostGemmCase{"bf16", 128, 1, true, 130, 129, 72},
                    HostGemmCase{"bf16", 256, 3, false, 131, 72, 75},
                    HostGemmCase{"f16", 256, 2, true, 131, 72, 76, false, false, 4},
                    HostGemmCase{"f16", 256, 2, true, 140, 136, 104, true},
                    HostGemmCase{"bf16", 128, 3, true, 130, 136, 72, true, true}),
    [](const testing::TestParamInfo<HostGemmCase>& info) {
      const HostGemmCase& c = info.param;
      return std::string(c.element) + "_" + std::to_string(c.threads) + "threads_" +
             std::to_string(c.stages) + "stages" + (c.aligned ? "" : "_unaligned") +
             (c.nn ? "_BKN" : "") + (c.per_element ? "_per_element" : "") + "_K" +
             std::to_string(c.k_divisor);
    });

// The lowered IR of the 8-warp, 3-stage f16 GEMM as text, edited, re-parsed and emitted: what the
// emitter says about lowered IR that synthesis would not produce.
std::string emit_edited_lowering(const std::vector<std::pair<std::string, std::string>>& edits) {
  auto module = ir::parse_module(gemm_variant("f16", 256, 3), "gemm_sm80.tir");
  pipeline::lower(*module);
  std::string text = ir::print(*module);
  for (const auto& [from, to] : edits) {
    size_t at = text.find(from);
    EXPECT_NE(at, std::string::npos) << from << " in\n" << text;
    if (at != std::string::npos) text.replace(at, from.size(), to);
  }
  auto edited = ir::parse_module(text, "lowered.tir");
  return target::cuda::emit_cuda(*edited->kernels.front()).source;
}

TEST(EmitSm80, LoweredIrTheMainloopCannotEmitIsRefusedByName) {
  // Sanity: the unedited lowering emits.
  EXPECT_NE(emit_edited_lowering({}).find("mma_m16n8k16_f32_f16("), std::string::npos);
  struct Case {
    std::vector<std::pair<std::string, std::string>> edits;
    std::string message;
  };
  const std::vector<Case> cases = {
      // The atom that the path does not emit.
      {{{"atom = \"mma.sync.m16n8k16.f32.f16\"", "atom = \"mma.sync.m16n8k32.f32.e4m3\""}},
       "error: emit: mma has atom \"mma.sync.m16n8k32.f32.e4m3\"; the sm_80 path emits "
       "mma.sync.m16n8k16.f32.{f16,bf16}"},
      // ldmatrix without .trans cannot deliver the fragment with .trans.
      {{{"a_load = \"ldmatrix.x4.b16\"", "a_load = \"ldmatrix.x4.trans.b16\""}},
       "error: emit: mma operand a: ldmatrix.x4.trans.b16 does not deliver the fragment"},
      // A fragment whose second warp starts 8 rows down and whose values step 16 rows (loaded per
      // element): no thread holds rows g and g + 8 of one 16-row block, as the atom needs.
      {{{"a_fragment = layout<(((4,8),2,4),((2,2,2),4,2)):(((256,1),16,0),((128,8,1024),32,2048))>",
         "a_fragment = "
         "layout<(((4,8),2,4),((2,2,2),4,2)):(((256,1),8,0),((128,16,1024),32,2048))>"},
        {"a_load = \"ldmatrix.x4.b16\"", "a_load = \"ld.shared.b16\""}},
       "error: emit: mma cannot map mma.sync's A half"},
      // Copies whose rows the facts no longer prove 16-byte aligned.
      {{{" facts(K % 8 == 0)", ""}},
       "error: emit: copy has atom cp.async.cg.shared.global.b128 but the facts do not prove "
       "16-byte aligned rows of A"},
  };
  for (const Case& c : cases) {
    std::string msg = expect_user_error([&] { emit_edited_lowering(c.edits); });
    EXPECT_NE(msg.find(c.message), std::string::npos) << msg;
  }
}

// ---- Any emitted kernel on the CPU, against the interpreter
// --------------------------------------

namespace host_sim {

using AnyKernel = int (*)(void**, int, int, int, int);

// Builds `k` with a launcher that takes its arguments as an array of pointers.
void* build_any(const target::cuda::EmittedKernel& k, AnyKernel* entry) {
  std::ostringstream call;
  for (size_t i = 0; i < k.params.size(); ++i) {
    const target::cuda::KernelParam& p = k.params[i];
    std::string arg = "args[" + std::to_string(i) + "]";
    call << (i ? ", " : "");
    if (p.kind == target::cuda::KernelParam::Kind::tensor) {
      call << "static_cast<"
           << (p.type.element() == ir::ScalarKind::f32 ? "float" : "unsigned short") << "*>(" << arg
           << ")";
    } else if (p.kind == target::cuda::KernelParam::Kind::scalar &&
               p.type.element() == ir::ScalarKind::f32) {
      call << "*static_cast<const float*>(" << arg << ")";
    } else {
      call << "*static_cast<const int*>(" << arg << ")";
    }
  }
  std::string launcher =
      "extern \"C\" int tsl_sim_any(void** args, int gx, int gy, int threads, int eager) {\n"
      "  tsl_sim::eager = eager != 0;\n  tsl_sim::errors = 0;\n"
      "  tsl_sim::run_grid(gx, gy, threads, [&] { " +
      k.entry + "(" + call.str() + "); });\n  return tsl_sim::errors;\n}\n";
  std::unique_ptr<Library> lib = build(k.source + "\n" + launcher, "");
  if (!lib->handle) return nullptr;
  *entry = reinterpret_cast<AnyKernel>(dlsym(lib->handle, "tsl_sim_any"));
  void* handle = lib->handle;
  lib->handle = nullptr;  // kept loaded for the caller
  return handle;
}

// Runs `text` lowered for sm_80 on the CPU and in the interpreter with the same random inputs;
// returns the largest relative error over the tensors the kernel writes.
double versus_interpreter(const std::string& text, const std::map<std::string, int64_t>& sizes,
                          bool eager) {
  auto reference = ir::parse_module(text, "kernel.tir");
  auto module = ir::parse_module(text, "kernel.tir");
  ir::walk(module->kernels.front().get(), [](ir::Operation* op) {
    if (op->kind() == ir::OpKind::block_grid)
      op->set_attr("target", ir::Attribute::string("sm_80"));
  });
  pipeline::lower(*module);
  const ir::Operation& kernel = *module->kernels.front();
  target::cuda::EmittedKernel k = target::cuda::emit_cuda(kernel);
  EXPECT_NE(k.source.find("mma_m16n8k16_f32_"), std::string::npos) << k.source;
  AnyKernel entry = nullptr;
  void* handle = build_any(k, &entry);
  if (!handle || !entry) return 1e9;
  // Inputs: small multiples of 1/8 (exact in f16 and bf16); the sim's outputs start as NaN.
  std::mt19937 rng(7);
  std::uniform_int_distribution<int> dist(-16, 16);
  std::vector<std::unique_ptr<interp::HostTensor>> ref_tensors, sim_tensors;
  std::vector<interp::Argument> ref_args;
  std::vector<void*> sim_args;
  std::vector<int> ints;
  ints.reserve(k.params.size());
  std::vector<bool> written;
  for (const auto& arg : reference->kernels.front()->region(0)->arguments()) {
    const ir::Type& t = arg->type();
    if (!t.is_tensor()) {
      ADD_FAILURE() << "scalar parameters are not simulated here";
      return 1e9;
    }
    auto r = std::make_unique<interp::HostTensor>(t.element(), interp::concrete_shape(t, sizes));
    for (int64_t i = 0; i < r->size(); ++i) r->set_float(i, dist(rng) / 8.0);
    auto sim = std::make_unique<interp::HostTensor>(*r);
    ref_args.push_back(r.get());
    ref_tensors.push_back(std::move(r));
    sim_tensors.push_back(std::move(sim));
  }
  // The tensors the kernel stores into (through tiles of them).
  std::set<const ir::Value*> stored;
  ir::walk(reference->kernels.front().get(), [&](ir::Operation* op) {
    if (op->kind() != ir::OpKind::copy || op->num_operands() != 2) return;
    const ir::Value* v = op->operand(1);
    while (v->def() && v->def()->kind() == ir::OpKind::tile) v = v->def()->operand(0);
    stored.insert(v);
  });
  size_t tensor = 0;
  for (const target::cuda::KernelParam& p : k.params) {
    if (p.kind == target::cuda::KernelParam::Kind::tensor) {
      bool out = stored.count(reference->kernels.front()->region(0)->argument(tensor)) > 0;
      written.push_back(out);
      if (out) {
        for (int64_t i = 0; i < sim_tensors[tensor]->size(); ++i)
          sim_tensors[tensor]->set_float(i, std::nan(""));
      }
      sim_args.push_back(sim_tensors[tensor++]->bytes().data());
    } else {
      ints.push_back(static_cast<int>(sizes.at(p.name)));
      sim_args.push_back(&ints.back());
    }
  }
  interp::RunOptions options;
  options.sizes = sizes;
  interp::interpret(*reference->kernels.front(), ref_args, options);
  std::vector<int64_t> grid = interp::grid_extents(kernel, sizes);
  int errors = entry(sim_args.data(), int(grid[0]), grid.size() > 1 ? int(grid[1]) : 1,
                     int(k.threads), eager ? 1 : 0);
  EXPECT_EQ(errors, 0) << "misaligned or pending copies";
  double worst = 0;
  for (size_t t = 0; t < ref_tensors.size(); ++t) {
    if (!written[t]) continue;
    double num = 0, den = 0;
    for (int64_t i = 0; i < ref_tensors[t]->size(); ++i) {
      double want = ref_tensors[t]->get_float(i), got = sim_tensors[t]->get_float(i);
      if (std::isnan(got)) return 1e9;  // an element the kernel never wrote
      num += (got - want) * (got - want);
      den += want * want;
    }
    worst = std::max(worst, std::sqrt(num / std::max(den, 1e-30)));
  }
  return worst;
}

}  // namespace host_sim

TEST(EmitSm80, DualGemmOnTheSm80PathMatchesTheInterpreter) {
  // dual_gemm (silu(A B0^T) * (A B1^T): two mmas on one copy of A, 128x128x64 tiles, an
  // elementwise epilogue) lowered for sm_80, run on the CPU, against the interpreter: two tiles
  // each way, the second ragged in M, N and K (N was 264, three column tiles: 25 s of CI).
  double err = host_sim::versus_interpreter(examples::lowered_kernels().at("dual_gemm"),
                                            {{"M", 130}, {"N", 136}, {"K", 72}}, false);
  std::printf("  dual_gemm on the sm_80 path vs the interpreter: relative error %.3g\n", err);
  EXPECT_LT(err, 2e-3);
}

}  // namespace
}  // namespace tessel
