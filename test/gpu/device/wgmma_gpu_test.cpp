// wgmma through the device library on the GPU: one warpgroup multiplies a 64×K A by an N×K B that
// TMA brought into shared memory, in each operand form (SS f16/bf16, RS, fp8, MN-major operands)
// and each K-major swizzle, and the accumulators, read back through the documented layout, equal
// a float64 host matmul.
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/device/device_test_util.h"
#include "gpu/gpu_test.h"
#include "runtime/buffer.h"
#include "runtime/numerics.h"
#include "runtime/tma.h"
#include "support/float_formats.h"

namespace tessel::runtime {
namespace {

using tessel::testing::compile_and_load;
using WgmmaGpu = tessel::testing::GpuTest;

// mma_tile<...> computes D(64×N) = A(64×K)·B(N×K)ᵀ with one warpgroup.
//   K-major operands: `Swizzle` bytes per smem row (16 = no swizzle), loaded as K/(Swizzle/E)
//     boxes of {Swizzle/E elements, rows}; a k-step (32 bytes of K) sits at box (32s / Swizzle),
//     byte (32s % Swizzle) in the row. Swizzled: SBO = 8 rows × Swizzle bytes, LBO unused. No
//     swizzle: core matrices of 8 rows × 16 B; SBO = 128 (next 8 rows), LBO = one box (next 8
//     K-elements).
//   MN-major operands (Trans = 1, 16-bit, `Swizzle` = 128, 64 or 32 bytes per smem row): global
//     K×rows, boxes of {Swizzle/E rows, K} per atom (64, 32 or 16 rows wide); LBO = K × Swizzle
//     (next atom), SBO = 8 × Swizzle (next 8 K-rows), k16 step = 16 × Swizzle bytes. The narrow
//     swizzles are what synthesis gives a token tile of 16 or 32 (the swapped GEMM's N) and an
//     N of 96 (three 32-wide atoms); N = 64 in 16-wide atoms checks LBO with the 32-byte form.
//   RS: A comes from global straight into the fragment registers (the accumulator formula with
//     16 columns); B as above.
const char* kWgmmaKernels = R"(
#include "tessel_device.cuh"
using namespace tessel::device;

__host__ __device__ constexpr SmemSwizzle swizzle_of(int bytes) {
  return bytes == 128 ? SmemSwizzle::b128 : bytes == 64 ? SmemSwizzle::b64
       : bytes == 32 ? SmemSwizzle::b32 : SmemSwizzle::none;
}

// Issues the TMA boxes of one operand with `rows` rows and returns its smem byte size.
template <int Swizzle, int Trans, int E>
__device__ int load_operand(const TmaDescriptor& desc, unsigned char* smem, unsigned long long* bar,
                            int rows, int k) {
  if (Trans) {  // MN-major: one box per atom column (Swizzle / E rows), all K rows
    const int atom = Swizzle / E;
    for (int j = 0; j < rows / atom; ++j) tma_load_2d(smem + j * k * Swizzle, &desc, bar, atom * j, 0);
    return rows * k * E;
  }
  const int box_k = Swizzle / E;
  for (int b = 0; b < k / box_k; ++b) tma_load_2d(smem + b * rows * Swizzle, &desc, bar, b * box_k, 0);
  return rows * k * E;
}

template <int Swizzle, int Trans>
__device__ unsigned long long operand_descriptor(unsigned base, int rows, int k, int step) {
  if (Trans) {
    return make_smem_descriptor(base + step * 16 * Swizzle, k * Swizzle, 8 * Swizzle,
                                swizzle_of(Swizzle));
  }
  const int box = 32 * step / Swizzle, within = 32 * step % Swizzle;
  const unsigned start = base + box * rows * Swizzle + within;
  if (Swizzle == 16) return make_smem_descriptor(start, rows * 16, 128, SmemSwizzle::none);
  return make_smem_descriptor(start, 16, 8 * Swizzle, swizzle_of(Swizzle));
}

// Form: 0 SS 16-bit, 1 RS 16-bit, 2 SS fp8.
template <int N, MmaType TA, MmaType TB, int Form, int TransA, int TransB, int Swizzle, int E>
__device__ void mma_tile(const TmaDescriptor& tma_a, const TmaDescriptor& tma_b,
                         const unsigned short* a_global, int k, float* d_out) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = raw + (align_up(smem_u32(raw), 1024) - smem_u32(raw));
  __shared__ unsigned long long bar;
  unsigned char* a_smem = smem;
  unsigned char* b_smem = smem + align_up(64 * k * E, 1024);
  if (threadIdx.x == 0) {
    mbarrier_init(&bar, 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    int bytes = load_operand<Swizzle, TransB, E>(tma_b, b_smem, &bar, N, k);
    if (Form != 1) bytes += load_operand<Swizzle, TransA, E>(tma_a, a_smem, &bar, 64, k);
    mbarrier_arrive_expect_tx(&bar, bytes);
  }
  const int t = threadIdx.x;
  constexpr int kSteps = 8;  // the largest k / (32 / E) used by the tests
  unsigned a_frag[kSteps][4];
  const int steps = k * E / 32;
  if (Form == 1) {
#pragma unroll
    for (int s = 0; s < kSteps; ++s) {
#pragma unroll
      for (int j = 0; j < 4; ++j) {
        const int i = 2 * j;
        const int row = wgmma_accumulator_row(t, i), col = 16 * s + wgmma_accumulator_column(t, i);
        a_frag[s][j] = s < steps ? a_global[row * k + col] | (unsigned(a_global[row * k + col + 1]) << 16) : 0u;
      }
    }
  }
  mbarrier_wait(&bar, 0);
  float acc[N / 2];
#pragma unroll
  for (int i = 0; i < N / 2; ++i) acc[i] = 0.0f;
  wgmma_fence_operand(acc);
  wgmma_fence();
  const unsigned a_base = smem_u32(a_smem), b_base = smem_u32(b_smem);
#pragma unroll
  for (int s = 0; s < kSteps; ++s) {
    if (s < steps) {
      const unsigned long long db = operand_descriptor<Swizzle, TransB>(b_base, N, k, s);
      if constexpr (Form == 0) {
        wgmma_ss<N, TA, TransA, TransB>(acc, operand_descriptor<Swizzle, TransA>(a_base, 64, k, s), db);
      } else if constexpr (Form == 1) {
        wgmma_rs<N, TA, TransB>(acc, a_frag[s], db);
      } else {
        wgmma_ss_fp8<N, TA, TB>(acc, operand_descriptor<Swizzle, 0>(a_base, 64, k, s), db);
      }
    }
  }
  wgmma_commit_group();
  wgmma_wait_group<0>();
  wgmma_fence_operand(acc);
#pragma unroll
  for (int i = 0; i < N / 2; ++i) {
    d_out[wgmma_accumulator_row(t, i) * N + wgmma_accumulator_column(t, i)] = acc[i];
  }
}

#define ENTRY(NAME, N, TA, TB, FORM, TRANS_A, TRANS_B, SWIZZLE, E)                              \
  extern "C" __global__ void __launch_bounds__(128, 1) NAME(                                     \
      const __grid_constant__ TmaDescriptor tma_a, const __grid_constant__ TmaDescriptor tma_b, \
      const unsigned short* a_global, int k, float* d_out) {                                     \
    mma_tile<N, MmaType::TA, MmaType::TB, FORM, TRANS_A, TRANS_B, SWIZZLE, E>(tma_a, tma_b,     \
                                                                           a_global, k, d_out); \
  }
ENTRY(ss_f16_n64_sw128, 64, f16, f16, 0, 0, 0, 128, 2)
ENTRY(ss_f16_n128_sw128, 128, f16, f16, 0, 0, 0, 128, 2)
ENTRY(ss_f16_n256_sw128, 256, f16, f16, 0, 0, 0, 128, 2)
ENTRY(ss_f16_n96_sw128, 96, f16, f16, 0, 0, 0, 128, 2)
ENTRY(ss_bf16_n256_sw128, 256, bf16, bf16, 0, 0, 0, 128, 2)
ENTRY(ss_bf16_n128_sw64, 128, bf16, bf16, 0, 0, 0, 64, 2)
ENTRY(ss_bf16_n128_sw32, 128, bf16, bf16, 0, 0, 0, 32, 2)
ENTRY(ss_f16_n128_none, 128, f16, f16, 0, 0, 0, 16, 2)
ENTRY(rs_f16_n128_sw128, 128, f16, f16, 1, 0, 0, 128, 2)
ENTRY(rs_bf16_n256_sw128, 256, bf16, bf16, 1, 0, 0, 128, 2)
ENTRY(ss_e4m3_e4m3_n128_sw128, 128, e4m3, e4m3, 2, 0, 0, 128, 1)
ENTRY(ss_e5m2_e4m3_n64_sw128, 64, e5m2, e4m3, 2, 0, 0, 128, 1)
ENTRY(ss_f16_n128_mn_b, 128, f16, f16, 0, 0, 1, 128, 2)
ENTRY(ss_bf16_n256_mn_b, 256, bf16, bf16, 0, 0, 1, 128, 2)
ENTRY(ss_f16_n64_mn_a_mn_b, 64, f16, f16, 0, 1, 1, 128, 2)
ENTRY(ss_f16_n16_mn_b_sw32, 16, f16, f16, 0, 0, 1, 32, 2)
ENTRY(ss_bf16_n32_mn_b_sw64, 32, bf16, bf16, 0, 0, 1, 64, 2)
ENTRY(ss_f16_n96_mn_b_sw64, 96, f16, f16, 0, 0, 1, 64, 2)
ENTRY(ss_f16_n64_mn_b_sw32, 64, f16, f16, 0, 0, 1, 32, 2)
ENTRY(ss_f16_n32_mn_a_mn_b_sw64, 32, f16, f16, 0, 1, 1, 64, 2)
)";

enum class Elem { f16, bf16, e4m3, e5m2 };

struct Case {
  std::string kernel;
  int n;
  Elem a_type, b_type;
  bool rs;
  bool trans_a, trans_b;
  int swizzle;  // bytes per smem row of a K-major operand (16 = none)
};

int elem_bytes(Elem e) {
  return e == Elem::e4m3 || e == Elem::e5m2 ? 1 : 2;
}

// Random raw values of `e` (as bytes) and their float values.
void random_operand(Elem e, std::size_t count, std::uint64_t seed, std::vector<std::uint8_t>& raw,
                    std::vector<double>& value) {
  value.resize(count);
  if (elem_bytes(e) == 2) {
    auto bits = tessel::testing::random_half_bits(e == Elem::bf16, count, seed);
    raw.resize(count * 2);
    std::memcpy(raw.data(), bits.data(), count * 2);
    for (std::size_t i = 0; i < count; ++i) {
      value[i] = tessel::testing::half_bits_to_float(e == Elem::bf16, bits[i]);
    }
  } else {
    auto floats =
        to_floats(HostFloat::f32, random_values(HostFloat::f32, count, seed, -2.0f, 2.0f));
    raw.resize(count);
    for (std::size_t i = 0; i < count; ++i) {
      raw[i] = e == Elem::e4m3 ? float_to_e4m3_bits(floats[i]) : float_to_e5m2_bits(floats[i]);
      value[i] = e == Elem::e4m3 ? e4m3_bits_to_float(raw[i]) : e5m2_bits_to_float(raw[i]);
    }
  }
}

TmaElement tma_element(Elem e) {
  switch (e) {
    case Elem::f16:
      return TmaElement::f16;
    case Elem::bf16:
      return TmaElement::bf16;
    default:
      return TmaElement::u8;
  }
}

TmaSwizzle tma_swizzle(int bytes) {
  return bytes == 128  ? TmaSwizzle::b128
         : bytes == 64 ? TmaSwizzle::b64
         : bytes == 32 ? TmaSwizzle::b32
                       : TmaSwizzle::none;
}

// The descriptor of an operand with `rows` rows: K-major (global rows×K, box {swizzle/E, rows})
// or MN-major (global K×rows, box {swizzle/E, K}).
CUtensorMap operand_map(const DeviceBuffer& buffer, Elem e, int rows, int k, bool trans,
                        int swizzle) {
  TmaSpec spec;
  spec.element = tma_element(e);
  spec.address = buffer.ptr();
  const int eb = elem_bytes(e);
  if (trans) {
    spec.shape = {static_cast<std::uint64_t>(rows), static_cast<std::uint64_t>(k)};
    spec.strides_bytes = {static_cast<std::uint64_t>(rows) * eb};
    spec.box = {static_cast<std::uint32_t>(swizzle / eb), static_cast<std::uint32_t>(k)};
    spec.swizzle = tma_swizzle(swizzle);
  } else {
    spec.shape = {static_cast<std::uint64_t>(k), static_cast<std::uint64_t>(rows)};
    spec.strides_bytes = {static_cast<std::uint64_t>(k) * eb};
    spec.box = {static_cast<std::uint32_t>(swizzle / eb), static_cast<std::uint32_t>(rows)};
    spec.swizzle = tma_swizzle(swizzle);
  }
  return make_tma_descriptor(spec);
}

// Transposes a rows×k row-major matrix of `eb`-byte elements into k×rows.
std::vector<std::uint8_t> transpose(const std::vector<std::uint8_t>& m, int rows, int k, int eb) {
  std::vector<std::uint8_t> t(m.size());
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < k; ++c) std::memcpy(&t[(c * rows + r) * eb], &m[(r * k + c) * eb], eb);
  }
  return t;
}

void run_case(const Case& c) {
  SCOPED_TRACE(c.kernel);
  const int m = 64, n = c.n;
  const int k = elem_bytes(c.a_type) == 1 ? 128 : 64;  // 128 bytes of K: one 128B swizzle row
  const std::uint64_t seed = fresh_seed();
  std::vector<std::uint8_t> a_raw, b_raw;
  std::vector<double> a, b;
  random_operand(c.a_type, m * k, seed, a_raw, a);
  random_operand(c.b_type, n * k, seed + 1, b_raw, b);
  const int ea = elem_bytes(c.a_type), eb = elem_bytes(c.b_type);
  DeviceBuffer a_device = DeviceBuffer::from_host(c.trans_a ? transpose(a_raw, m, k, ea) : a_raw);
  DeviceBuffer a_plain = DeviceBuffer::from_host(a_raw);  // row-major, for the RS fragments
  DeviceBuffer b_device = DeviceBuffer::from_host(c.trans_b ? transpose(b_raw, n, k, eb) : b_raw);
  CUtensorMap tma_a = operand_map(a_device, c.a_type, m, k, c.trans_a, c.swizzle);
  CUtensorMap tma_b = operand_map(b_device, c.b_type, n, k, c.trans_b, c.swizzle);
  DeviceBuffer d(m * n * 4);
  d.fill_bytes(0xFF);  // NaN poison
  Module module = compile_and_load(kWgmmaKernels);
  Function kernel = module.function(c.kernel);
  CUdeviceptr a_ptr = a_plain.ptr(), d_ptr = d.ptr();
  int k_arg = k;
  void* args[] = {&tma_a, &tma_b, &a_ptr, &k_arg, &d_ptr};
  LaunchConfig config;
  config.block = {128};
  config.dynamic_shared_bytes = 1024 + ((m * k * ea + 1023) / 1024) * 1024 + n * k * eb;
  kernel.launch(config, args);
  context().synchronize();
  auto got = d.to_host<float>();
  std::vector<double> ref(m * n, 0.0);
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      double s = 0;
      for (int p = 0; p < k; ++p) s += a[i * k + p] * b[j * k + p];
      ref[i * n + j] = s;
    }
  }
  // Products of 16-bit (or 8-bit) values are exact in f32; only the f32 sums round (fp8 tensor
  // cores accumulate with fewer bits). A wrong layout or descriptor gives errors of order 1.
  const double tolerance = ea == 1 ? 2e-3 : 1e-5;
  EXPECT_LT(relative_error(std::span<const float>(got), std::span<const double>(ref)), tolerance)
      << "seed " << seed;
}

TEST_F(WgmmaGpu, SsF16EachNEqualsHostMatmul) {
  for (const char* name : {"ss_f16_n64_sw128", "ss_f16_n128_sw128", "ss_f16_n256_sw128"}) {
    int n = std::stoi(std::string(name).substr(std::string(name).find("_n") + 2));
    run_case({name, n, Elem::f16, Elem::f16, false, false, false, 128});
  }
  run_case({"ss_f16_n96_sw128", 96, Elem::f16, Elem::f16, false, false, false, 128});
}

TEST_F(WgmmaGpu, SsBf16EachSwizzleEqualsHostMatmul) {
  run_case({"ss_bf16_n256_sw128", 256, Elem::bf16, Elem::bf16, false, false, false, 128});
  run_case({"ss_bf16_n128_sw64", 128, Elem::bf16, Elem::bf16, false, false, false, 64});
  run_case({"ss_bf16_n128_sw32", 128, Elem::bf16, Elem::bf16, false, false, false, 32});
  run_case({"ss_f16_n128_none", 128, Elem::f16, Elem::f16, false, false, false, 16});
}

TEST_F(WgmmaGpu, RsWithAInRegistersEqualsHostMatmul) {
  run_case({"rs_f16_n128_sw128", 128, Elem::f16, Elem::f16, true, false, false, 128});
  run_case({"rs_bf16_n256_sw128", 256, Elem::bf16, Elem::bf16, true, false, false, 128});
}

TEST_F(WgmmaGpu, Fp8EqualsHostMatmul) {
  run_case({"ss_e4m3_e4m3_n128_sw128", 128, Elem::e4m3, Elem::e4m3, false, false, false, 128});
  run_case({"ss_e5m2_e4m3_n64_sw128", 64, Elem::e5m2, Elem::e4m3, false, false, false, 128});
}

TEST_F(WgmmaGpu, MnMajorOperandsEqualHostMatmul) {
  run_case({"ss_f16_n128_mn_b", 128, Elem::f16, Elem::f16, false, false, true, 128});
  run_case({"ss_bf16_n256_mn_b", 256, Elem::bf16, Elem::bf16, false, false, true, 128});
  run_case({"ss_f16_n64_mn_a_mn_b", 64, Elem::f16, Elem::f16, false, true, true, 128});
}

TEST_F(WgmmaGpu, MnMajorOperandsOf32And64ByteSwizzleEqualHostMatmul) {
  run_case({"ss_f16_n16_mn_b_sw32", 16, Elem::f16, Elem::f16, false, false, true, 32});
  run_case({"ss_bf16_n32_mn_b_sw64", 32, Elem::bf16, Elem::bf16, false, false, true, 64});
  run_case({"ss_f16_n96_mn_b_sw64", 96, Elem::f16, Elem::f16, false, false, true, 64});
  run_case({"ss_f16_n64_mn_b_sw32", 64, Elem::f16, Elem::f16, false, false, true, 32});
  run_case({"ss_f16_n32_mn_a_mn_b_sw64", 32, Elem::f16, Elem::f16, false, true, true, 64});
}

}  // namespace
}  // namespace tessel::runtime
