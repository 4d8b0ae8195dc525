// Warp-level primitives of the device library on the GPU: ldmatrix/stmatrix fragments, cp.async
// with zero fill, named barriers between warpgroups, elect.sync, f16/bf16 packing, and setmaxnreg
// in a warp-specialized kernel.
#include <cstdint>
#include <vector>

#include "gpu/device/device_test_util.h"
#include "gpu/gpu_test.h"
#include "runtime/buffer.h"
#include "runtime/numerics.h"
#include "support/float_formats.h"

namespace tessel::runtime {
namespace {

using tessel::testing::compile_and_load;
using WarpGpu = tessel::testing::GpuTest;

const char* kWarpKernels = R"(
#include "tessel_device.cuh"
using namespace tessel::device;

// One warp: ldmatrix.x4 of a row-major 16×16 u16 tile (lane l addresses row l%16, column 8·(l/16)),
// dump the fragment registers, then stmatrix.x4 them back to a second tile and dump it; the same
// with .trans.
extern "C" __global__ void ldst_matrix(const unsigned short* in, unsigned* fragments,
                                       unsigned short* roundtrip, unsigned* fragments_trans) {
  __shared__ alignas(16) unsigned short tile[16 * 16], copy[16 * 16];
  const int lane = threadIdx.x;
  for (int i = lane; i < 256; i += 32) tile[i] = in[i];
  __syncwarp();
  unsigned r[4];
  const unsigned short* row = &tile[(lane % 16) * 16 + 8 * (lane / 16)];
  ldmatrix_x4(r[0], r[1], r[2], r[3], row);
  for (int j = 0; j < 4; ++j) fragments[lane * 4 + j] = r[j];
  stmatrix_x4(&copy[(lane % 16) * 16 + 8 * (lane / 16)], r[0], r[1], r[2], r[3]);
  __syncwarp();
  for (int i = lane; i < 256; i += 32) roundtrip[i] = copy[i];
  ldmatrix_x4_trans(r[0], r[1], r[2], r[3], row);
  for (int j = 0; j < 4; ++j) fragments_trans[lane * 4 + j] = r[j];
}

// cp.async: thread t copies 16 bytes of chunk t, with only (t % 17) source bytes (the rest zero
// filled) for odd t and a full .ca 16-byte copy for even t; then the CTA dumps shared memory.
extern "C" __global__ void cp_async_copy(const unsigned char* in, unsigned char* out) {
  __shared__ alignas(16) unsigned char buffer[128 * 16];
  const int t = threadIdx.x;
  if (t % 2 == 0) cp_async_ca<16>(&buffer[t * 16], &in[t * 16]);
  else cp_async_cg16_zfill(&buffer[t * 16], &in[t * 16], t % 17);
  cp_async_commit_group();
  cp_async_wait_group<0>();
  __syncthreads();
  for (int i = t; i < 128 * 16; i += blockDim.x) out[i] = buffer[i];
}

// Warp-specialized handoff in the GEMM's register split: warpgroups 1 and 2 (setmaxnreg.inc 232)
// write values, then bar.arrive on named barrier 8; warpgroup 0 (setmaxnreg.dec 40) bar.syncs on
// it (384 threads in all) and reads them. elect_one_sync picks one lane per warp.
extern "C" __global__ void __launch_bounds__(384, 1) handoff(unsigned* out, unsigned* elected) {
  __shared__ unsigned values[256];
  const int wg = warpgroup_index();
  if (elect_one_sync()) atomicAdd(elected, 1u);
  if (wg > 0) {
    setmaxnreg_inc<232>();
    const int i = (wg - 1) * 128 + thread_index_in_warpgroup();
    values[i] = pack_f16x2(1.5f, -2.0f) ^ i;
    named_barrier_arrive(kNamedBarrierFirstUserId, 384);
  } else {
    setmaxnreg_dec<40>();
    named_barrier_sync(kNamedBarrierFirstUserId, 384);
    out[threadIdx.x] = values[255 - threadIdx.x];
    out[128 + threadIdx.x] = values[127 - threadIdx.x];
    out[256 + threadIdx.x] = pack_bf16x2(0.5f, 3.0f) + warp_index_in_warpgroup();
  }
}
)";

TEST_F(WarpGpu, LdmatrixFragmentsFollowTheLayoutAndStmatrixInvertsThem) {
  const std::uint64_t seed = fresh_seed();
  auto values = tessel::testing::random_half_bits(false, 256, seed);
  DeviceBuffer in = DeviceBuffer::from_host(values), fragments(32 * 4 * 4), roundtrip(256 * 2),
               fragments_trans(32 * 4 * 4);
  fragments.fill_bytes(0xEE);
  roundtrip.fill_bytes(0xEE);
  fragments_trans.fill_bytes(0xEE);
  Module module = compile_and_load(kWarpKernels);
  CUdeviceptr p0 = in.ptr(), p1 = fragments.ptr(), p2 = roundtrip.ptr(), p3 = fragments_trans.ptr();
  void* args[] = {&p0, &p1, &p2, &p3};
  LaunchConfig config;
  config.block = {32};
  module.function("ldst_matrix").launch(config, args);
  context().synchronize();
  auto frag = fragments.to_host<unsigned>();
  auto frag_t = fragments_trans.to_host<unsigned>();
  // Matrix j of the x4 load is the 8×8 block at rows 8·(j%2), columns 8·(j/2).
  for (int lane = 0; lane < 32; ++lane) {
    for (int j = 0; j < 4; ++j) {
      const int r0 = 8 * (j % 2), c0 = 8 * (j / 2);
      const int row = r0 + lane / 4, col = c0 + 2 * (lane % 4);
      const unsigned expected =
          values[row * 16 + col] | (unsigned(values[row * 16 + col + 1]) << 16);
      EXPECT_EQ(frag[lane * 4 + j], expected) << "lane " << lane << " matrix " << j;
      const int trow = r0 + 2 * (lane % 4), tcol = c0 + lane / 4;
      const unsigned expected_t =
          values[trow * 16 + tcol] | (unsigned(values[(trow + 1) * 16 + tcol]) << 16);
      EXPECT_EQ(frag_t[lane * 4 + j], expected_t) << "trans lane " << lane << " matrix " << j;
    }
  }
  EXPECT_EQ(roundtrip.to_host<std::uint16_t>(), values) << "seed " << seed;
}

TEST_F(WarpGpu, CpAsyncCopiesAndZeroFills) {
  const std::uint64_t seed = fresh_seed();
  auto bytes = random_values(HostFloat::f32, 128 * 4, seed);  // 2048 random bytes
  DeviceBuffer in = DeviceBuffer::from_host(bytes), out(2048);
  out.fill_bytes(0xEE);
  Module module = compile_and_load(kWarpKernels);
  CUdeviceptr p0 = in.ptr(), p1 = out.ptr();
  void* args[] = {&p0, &p1};
  LaunchConfig config;
  config.block = {128};
  module.function("cp_async_copy").launch(config, args);
  context().synchronize();
  auto got = out.to_host<std::uint8_t>();
  for (int t = 0; t < 128; ++t) {
    const int valid = t % 2 == 0 ? 16 : t % 17;
    for (int b = 0; b < 16; ++b) {
      EXPECT_EQ(got[t * 16 + b], b < valid ? bytes[t * 16 + b] : 0)
          << "chunk " << t << " byte " << b;
    }
  }
}

TEST_F(WarpGpu, NamedBarrierHandoffAcrossWarpgroupsWithSetmaxnreg) {
  DeviceBuffer out(384 * 4), elected(4);
  out.fill_bytes(0xEE);
  elected.fill_bytes(0);
  Module module = compile_and_load(kWarpKernels);
  CUdeviceptr p0 = out.ptr(), p1 = elected.ptr();
  void* args[] = {&p0, &p1};
  LaunchConfig config;
  config.block = {384};
  module.function("handoff").launch(config, args);
  context().synchronize();
  auto got = out.to_host<unsigned>();
  const unsigned f16x2 = float_to_f16_bits(1.5f) | (unsigned(float_to_f16_bits(-2.0f)) << 16);
  const unsigned bf16x2 = float_to_bf16_bits(0.5f) | (unsigned(float_to_bf16_bits(3.0f)) << 16);
  for (unsigned t = 0; t < 128; ++t) {
    EXPECT_EQ(got[t], f16x2 ^ (255 - t)) << "thread " << t;
    EXPECT_EQ(got[128 + t], f16x2 ^ (127 - t)) << "thread " << t;
    EXPECT_EQ(got[256 + t], bf16x2 + t / 32) << "thread " << t;
  }
  EXPECT_EQ(elected.to_host<unsigned>()[0], 12u);  // one lane per warp
}

}  // namespace
}  // namespace tessel::runtime
