// The CUDA the emitter generates for the GEMM epilogues, run on the CPU: the emitted source is
// compiled by the host compiler against a small stand-in for the device helpers (below: f16 by
// the compiler's _Float16, vector accesses that count misaligned addresses), every thread of every
// block run in turn (these kernels use no shared memory and no barrier, which the test checks),
// and the output compared bit for bit with the interpreter on the same kernel. Ragged shapes
// take the predicated stores, interior tiles with even N the unpredicated vector stores, so both
// versions of the store and the register-local bias broadcast are checked without a GPU.
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "pipeline/pipeline.h"
#include "target/cuda/emit.h"
#include "unit/codegen/gemm_epilogue_kernels.h"

namespace tessel {
namespace {

using interp::HostTensor;
using ir::ScalarKind;

// Force-included before the emitted source (whose #includes then find empty files).
constexpr const char* kHostPrelude = R"(
#include <cmath>
#include <cstdint>
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define __restrict__
// The device's fast division (within 2 ulp there) as the interpreter divides: bit for bit here.
inline float __fdividef(float a, float b) { return a / b; }
// The device's sigmoid (ex2.approx and rcp.approx, __expf's error bound) as the interpreter
// computes it: bit for bit here.
namespace tessel { namespace device {
inline float sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }
} }
struct tsl_dim3 { unsigned x = 0, y = 0, z = 0; };
inline tsl_dim3 threadIdx, blockIdx;
inline int tsl_misaligned = 0;
inline void tsl_check(const void* p, int bytes) {
  if (reinterpret_cast<uintptr_t>(p) % bytes != 0) ++tsl_misaligned;
}
inline float tsl_f16_to_f32(unsigned short h) { _Float16 x; __builtin_memcpy(&x, &h, 2); return x; }
inline unsigned short tsl_f32_to_f16(float f) {
  _Float16 x = static_cast<_Float16>(f);
  unsigned short h;
  __builtin_memcpy(&h, &x, 2);
  return h;
}
inline float tsl_round_f16(float f) { return tsl_f16_to_f32(tsl_f32_to_f16(f)); }
inline float tsl_load(const float* p) { return *p; }
inline float tsl_load(const unsigned short* p, bool) { return tsl_f16_to_f32(*p); }
inline unsigned short tsl_cvt16(float f, bool) { return tsl_f32_to_f16(f); }
template <int W> void tsl_load16(const unsigned short* p, float* o, bool) {
  tsl_check(p, 2 * W);
  for (int i = 0; i < W; ++i) o[i] = tsl_f16_to_f32(p[i]);
}
template <int W> void tsl_store16(unsigned short* p, const float* o, bool) {
  tsl_check(p, 2 * W);
  for (int i = 0; i < W; ++i) p[i] = tsl_f32_to_f16(o[i]);
}
template <int W> void tsl_load32(const float* p, float* o) {
  tsl_check(p, 4 * W);
  for (int i = 0; i < W; ++i) o[i] = p[i];
}
template <int W> void tsl_store32(float* p, const float* o) {
  tsl_check(p, 4 * W);
  for (int i = 0; i < W; ++i) p[i] = o[i];
}
)";

// Compiles `source` (+ `runner`, which defines extern "C" tsl_host_run) into a shared library.
struct Library {
  void* handle = nullptr;
  ~Library() {
    if (handle) dlclose(handle);
  }
  template <typename F>
  F function(const char* name) {
    return handle ? reinterpret_cast<F>(dlsym(handle, name)) : nullptr;
  }
};

std::unique_ptr<Library> build(const std::string& source, const std::string& runner) {
  static int serial = 0;
  auto dir =
      std::filesystem::temp_directory_path() /
      ("tessel-epilogue-host-" + std::to_string(::getpid()) + "-" + std::to_string(serial++));
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "tessel_device.cuh") << "\n";
  std::ofstream(dir / "emitted_support.cuh") << "\n";
  std::ofstream(dir / "prelude.h") << kHostPrelude;
  std::ofstream(dir / "kernel.cpp") << source << "\n" << runner;
  std::string so = (dir / "kernel.so").string();
  std::string cmd = std::string(TESSEL_HOST_CXX) + " -std=c++20 -O1 -w -fPIC -shared -include " +
                    (dir / "prelude.h").string() + " -I" + dir.string() + " " +
                    (dir / "kernel.cpp").string() + " -o " + so + " 2>&1";
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  auto lib = std::make_unique<Library>();
  lib->handle = dlopen(so.c_str(), RTLD_NOW | RTLD_LOCAL);
  EXPECT_NE(lib->handle, nullptr) << dlerror();
  std::filesystem::remove_all(dir);
  return lib;
}

// The runner: every thread of every block in turn; returns the misaligned vector accesses.
std::string runner(const std::string& entry, const std::string& params, const std::string& args) {
  return "extern \"C\" int tsl_host_run(" + params +
         ", int M, int N, int threads) {\n"
         "  tsl_misaligned = 0;\n"
         "  for (unsigned by = 0; by < unsigned((N + TILE_N - 1) / TILE_N); ++by)\n"
         "    for (unsigned bx = 0; bx < unsigned((M + 127) / 128); ++bx)\n"
         "      for (int t = 0; t < threads; ++t) {\n"
         "        blockIdx = {bx, by, 0};\n"
         "        threadIdx = {unsigned(t), 0, 0};\n"
         "        " +
         entry + "(" + args +
         ", M, N);\n"
         "      }\n"
         "  return tsl_misaligned;\n}\n";
}

target::cuda::EmittedKernel emit(const char* text, const std::string& file) {
  auto module = ir::parse_module(text, file);
  pipeline::lower(*module);
  return target::cuda::emit_cuda(*module->kernels.front());
}

HostTensor random_tensor(std::mt19937& rng, ScalarKind k, std::vector<int64_t> shape, double lo,
                         double hi) {
  HostTensor t(k, std::move(shape));
  std::uniform_real_distribution<double> dist(lo, hi);
  for (int64_t i = 0; i < t.size(); ++i) t.set_float(i, dist(rng));
  return t;
}

int64_t count_bit_mismatches(const HostTensor& got, const HostTensor& want,
                             const std::string& what) {
  int64_t bad = 0;
  for (int64_t i = 0; i < got.size(); ++i) {
    if (got.get_bits(i) != want.get_bits(i) && bad++ < 5) {
      ADD_FAILURE() << what << " element " << i << ": emitted " << got.get_float(i)
                    << ", interpreter " << want.get_float(i);
    }
  }
  return bad;
}

// Shapes: one element; one full tile (the unpredicated version only); ragged by one; several full
// tiles and a partial row and column of tiles with N even (both versions); N odd (predicated
// version only).
const std::vector<std::pair<int64_t, int64_t>> kShapes = {
    {1, 1}, {128, 256}, {129, 257}, {300, 520}, {150, 301}};

TEST(GemmEpilogueHost, BiasReluEmittedCodeMatchesTheInterpreterBitForBit) {
  const char* text = testing::kBiasReluEpilogueTir;
  auto k = emit(text, "bias_relu_epilogue.tir");
  ASSERT_EQ(k.dynamic_shared_bytes, 0);  // threads may run one after another
  ASSERT_EQ(k.source.find("__syncthreads"), std::string::npos);
  auto lib = build("#define TILE_N 256\n" + k.source,
                   runner(k.entry, "const float* P, const unsigned short* bias, unsigned short* C",
                          "P, bias, C"));
  using Run = int (*)(const float*, const uint16_t*, uint16_t*, int, int, int);
  auto run = lib->function<Run>("tsl_host_run");
  ASSERT_NE(run, nullptr);
  auto module = ir::parse_module(text, "bias_relu_epilogue.tir");
  std::mt19937 rng(5);
  for (auto [M, N] : kShapes) {
    HostTensor P = random_tensor(rng, ScalarKind::f32, {M, N}, -4, 4);
    HostTensor bias = random_tensor(rng, ScalarKind::f16, {N}, -2, 2);
    HostTensor want(ScalarKind::f16, {M, N}), got(ScalarKind::f16, {M, N});
    for (int64_t i = 0; i < M * N; ++i) got.set_bits(i, 0x7E00);  // NaN: unwritten shows
    interp::interpret(*module->kernels.front(), {&P, &bias, &want}, {{{"M", M}, {"N", N}}, {}});
    int misaligned =
        run(reinterpret_cast<const float*>(P.bytes().data()),
            reinterpret_cast<const uint16_t*>(bias.bytes().data()),
            reinterpret_cast<uint16_t*>(got.bytes().data()), int(M), int(N), k.threads);
    EXPECT_EQ(misaligned, 0) << M << "x" << N;
    EXPECT_EQ(count_bit_mismatches(got, want, "C"), 0) << M << "x" << N;
  }
}

TEST(GemmEpilogueHost, SiluGateEmittedCodeMatchesTheInterpreterBitForBit) {
  const char* text = testing::kSiluGateEpilogueTir;
  auto k = emit(text, "silu_gate_epilogue.tir");
  ASSERT_EQ(k.dynamic_shared_bytes, 0);
  ASSERT_EQ(k.source.find("__syncthreads"), std::string::npos);
  auto lib = build("#define TILE_N 128\n" + k.source,
                   runner(k.entry, "const float* G, const float* U, unsigned short* D", "G, U, D"));
  using Run = int (*)(const float*, const float*, uint16_t*, int, int, int);
  auto run = lib->function<Run>("tsl_host_run");
  ASSERT_NE(run, nullptr);
  auto module = ir::parse_module(text, "silu_gate_epilogue.tir");
  std::mt19937 rng(6);
  for (auto [M, N] : kShapes) {
    HostTensor G = random_tensor(rng, ScalarKind::f32, {M, N}, -8, 8);
    HostTensor U = random_tensor(rng, ScalarKind::f32, {M, N}, -2, 2);
    HostTensor want(ScalarKind::f16, {M, N}), got(ScalarKind::f16, {M, N});
    for (int64_t i = 0; i < M * N; ++i) got.set_bits(i, 0x7E00);
    interp::interpret(*module->kernels.front(), {&G, &U, &want}, {{{"M", M}, {"N", N}}, {}});
    int misaligned =
        run(reinterpret_cast<const float*>(G.bytes().data()),
            reinterpret_cast<const float*>(U.bytes().data()),
            reinterpret_cast<uint16_t*>(got.bytes().data()), int(M), int(N), k.threads);
    EXPECT_EQ(misaligned, 0) << M << "x" << N;
    EXPECT_EQ(count_bit_mismatches(got, want, "D"), 0) << M << "x" << N;
  }
}

}  // namespace
}  // namespace tessel
