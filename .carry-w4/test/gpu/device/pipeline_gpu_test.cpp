// Producer/consumer rings over mbarriers on the GPU: thousands of trips around a ring, with the
// data handed over by ordinary shared-memory stores and by TMA, lose or repeat nothing.
#include <cstdint>
#include <cstring>
#include <vector>

#include "gpu/gpu_test.h"
#include "runtime/buffer.h"
#include "runtime/numerics.h"
#include "runtime/tma.h"

namespace tessel::runtime {
namespace {

using tessel::testing::compile_and_load;
using PipelineGpu = tessel::testing::GpuTest;

// Warp 0 produces, warps 1..4 (a warpgroup) consume; kStages slots of kSlot words each.
//   ring_stores: the producer writes iteration-dependent words with st.shared and arrives on
//     full[s] (release); consumers wait on full[s] (acquire), check every word, arrive on
//     empty[s] (count 128), which the producer waits on before refilling the slot.
//   ring_tma: the producer fills each slot with a 1-D TMA load of the next chunk of `source` and
//     arrive.expect_tx; consumers sum the chunk and record the sum per iteration.
// Errors (a word that is not what the producer wrote in this trip) are counted in `errors`.
const char* kRingKernels = R"(
#include "tessel_device.cuh"
using namespace tessel::device;

constexpr int kStages = 4;
constexpr int kSlot = 256;  // words per slot

extern "C" __global__ void ring_stores(int iterations, unsigned* errors, unsigned long long* sums) {
  __shared__ unsigned slots[kStages][kSlot];
  __shared__ unsigned long long full[kStages], empty[kStages];
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 32);   // every producer lane arrives
      mbarrier_init(&empty[s], 128); // every consumer thread arrives
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  int stage = 0;
  unsigned phase = 0;
  if (threadIdx.x < 32) {
    for (int it = 0; it < iterations; ++it) {
      mbarrier_wait(&empty[stage], phase ^ 1);
      for (int i = threadIdx.x; i < kSlot; i += 32) slots[stage][i] = it * 7919u + i;
      mbarrier_arrive(&full[stage]);
      if (++stage == kStages) { stage = 0; phase ^= 1; }
    }
  } else {
    const int t = threadIdx.x - 32;
    unsigned bad = 0;
    unsigned long long sum = 0;
    for (int it = 0; it < iterations; ++it) {
      mbarrier_wait(&full[stage], phase);
      for (int i = t; i < kSlot; i += 128) {
        unsigned v = slots[stage][i];
        bad += v != it * 7919u + i;
        sum += v;
      }
      mbarrier_arrive(&empty[stage]);
      if (++stage == kStages) { stage = 0; phase ^= 1; }
    }
    atomicAdd(errors, bad);
    atomicAdd(sums, sum);
  }
}

extern "C" __global__ void ring_tma(const __grid_constant__ TmaDescriptor source, int iterations,
                                    unsigned long long* sums) {
  __shared__ alignas(128) unsigned slots[kStages][kSlot];
  __shared__ unsigned long long full[kStages], empty[kStages];
  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 1);
      mbarrier_init(&empty[s], 4);  // one arrival per consumer warp
    }
    mbarrier_init_fence();
  }
  __syncthreads();
  int stage = 0;
  unsigned phase = 0;
  if (threadIdx.x < 32) {
    if (elect_one_sync()) {
      for (int it = 0; it < iterations; ++it) {
        mbarrier_wait(&empty[stage], phase ^ 1);
        mbarrier_arrive_expect_tx(&full[stage], kSlot * 4);
        tma_load_1d(slots[stage], &source, &full[stage], it * kSlot);
        if (++stage == kStages) { stage = 0; phase ^= 1; }
      }
    }
  } else {
    const int t = threadIdx.x - 32;
    const int warp = t / 32, lane = t % 32;
    for (int it = 0; it < iterations; ++it) {
      mbarrier_wait(&full[stage], phase);
      unsigned long long s = 0;
      for (int i = t; i < kSlot; i += 128) s += slots[stage][i];
      for (int o = 16; o > 0; o /= 2) s += __shfl_xor_sync(0xffffffffu, s, o);
      __syncwarp();
      if (lane == 0) {
        atomicAdd(&sums[it], s);
        mbarrier_arrive(&empty[stage]);
      }
      if (++stage == kStages) { stage = 0; phase ^= 1; }
    }
  }
}
// The phase rules the rings rely on, probed with test_wait: a fresh barrier reads as if the phase
// of parity 1 had completed; expect_tx keeps a phase open after the last arrival until that many
// bytes have landed (here by a 16-byte TMA load). Writes one probe result per slot of `out`.
extern "C" __global__ void mbarrier_phases(const __grid_constant__ TmaDescriptor source,
                                           unsigned* out) {
  __shared__ alignas(128) unsigned char landing[16];
  __shared__ unsigned long long bar;
  if (threadIdx.x != 0) return;
  mbarrier_init(&bar, 1);
  mbarrier_init_fence();
  out[0] = mbarrier_test_wait(&bar, 0);  // 0: phase 0 still open
  out[1] = mbarrier_test_wait(&bar, 1);  // 1: "previous" phase reads complete
  mbarrier_expect_tx(&bar, 16);
  mbarrier_arrive(&bar);                 // no arrivals pending, but 16 bytes are
  out[2] = mbarrier_test_wait(&bar, 0);  // 0
  tma_load_1d(landing, &source, &bar, 0);
  mbarrier_wait(&bar, 0);
  out[3] = mbarrier_test_wait(&bar, 0);  // 1: phase 0 complete
  out[4] = mbarrier_test_wait(&bar, 1);  // 0: phase 1 now open
  out[5] = *reinterpret_cast<const unsigned*>(landing);
  mbarrier_arrive_expect_tx(&bar, 0);    // completes phase 1 at once
  mbarrier_wait(&bar, 1);
  out[6] = mbarrier_test_wait(&bar, 1);  // 1
  mbarrier_invalidate(&bar);
}
)";

TEST_F(PipelineGpu, StoreRingRunsThousandsOfTripsWithoutLoss) {
  Module module = compile_and_load(kRingKernels);
  Function ring = module.function("ring_stores");
  DeviceBuffer errors(4), sums(8);
  errors.fill_bytes(0);
  sums.fill_bytes(0);
  int iterations = 20000;
  CUdeviceptr errors_ptr = errors.ptr(), sums_ptr = sums.ptr();
  void* args[] = {&iterations, &errors_ptr, &sums_ptr};
  LaunchConfig config;
  config.grid = {4};  // independent rings in several CTAs
  config.block = {160};
  ring.launch(config, args);
  context().synchronize();
  unsigned long long expected = 0;
  for (unsigned it = 0; it < static_cast<unsigned>(iterations); ++it) {
    for (unsigned i = 0; i < 256; ++i) expected += it * 7919u + i;
  }
  EXPECT_EQ(errors.to_host<unsigned>()[0], 0u);
  EXPECT_EQ(sums.to_host<unsigned long long>()[0], 4 * expected);
}

TEST_F(PipelineGpu, TmaRingDeliversEveryChunkOnce) {
  const int iterations = 4096, slot = 256;
  const std::uint64_t seed = fresh_seed();
  auto bytes = random_values(HostFloat::f32, static_cast<std::size_t>(iterations) * slot, seed);
  std::vector<unsigned> words(static_cast<std::size_t>(iterations) * slot);
  std::memcpy(words.data(), bytes.data(), words.size() * 4);
  DeviceBuffer source = DeviceBuffer::from_host(words);
  TmaSpec spec;
  spec.element = TmaElement::u32;
  spec.address = source.ptr();
  spec.shape = {words.size()};
  spec.box = {static_cast<std::uint32_t>(slot)};
  CUtensorMap desc = make_tma_descriptor(spec);
  DeviceBuffer sums(iterations * 8);
  sums.fill_bytes(0);
  Module module = compile_and_load(kRingKernels);
  Function ring = module.function("ring_tma");
  int count = iterations;
  CUdeviceptr sums_ptr = sums.ptr();
  void* args[] = {&desc, &count, &sums_ptr};
  LaunchConfig config;
  config.block = {160};
  ring.launch(config, args);
  context().synchronize();
  auto got = sums.to_host<unsigned long long>();
  int wrong = 0;
  for (int it = 0; it < iterations; ++it) {
    unsigned long long expected = 0;
    for (int i = 0; i < slot; ++i) expected += words[it * slot + i];
    wrong += got[it] != expected;
  }
  EXPECT_EQ(wrong, 0) << "seed " << seed;
}

TEST_F(PipelineGpu, MbarrierPhasesAndTransactionCounts) {
  std::vector<unsigned> words = {0xC0FFEE01u, 2, 3, 4};
  DeviceBuffer source = DeviceBuffer::from_host(words);
  TmaSpec spec;
  spec.element = TmaElement::u32;
  spec.address = source.ptr();
  spec.shape = {words.size()};
  spec.box = {4};
  CUtensorMap desc = make_tma_descriptor(spec);
  DeviceBuffer out(7 * 4);
  out.fill_bytes(0xEE);
  Module module = compile_and_load(kRingKernels);
  CUdeviceptr out_ptr = out.ptr();
  void* args[] = {&desc, &out_ptr};
  LaunchConfig config;
  config.block = {32};
  module.function("mbarrier_phases").launch(config, args);
  context().synchronize();
  EXPECT_EQ(out.to_host<unsigned>(), (std::vector<unsigned>{0, 1, 0, 1, 0, 0xC0FFEE01u, 1}));
}

}  // namespace
}  // namespace tessel::runtime
