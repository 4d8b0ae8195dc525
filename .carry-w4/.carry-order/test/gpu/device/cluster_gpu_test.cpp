// Clusters through the device library on the GPU: ranks, distributed shared memory, remote
// mbarrier arrivals, and a TMA multicast that reaches every CTA of the cluster.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "gpu/device/device_test_util.h"
#include "gpu/gpu_test.h"
#include "runtime/buffer.h"
#include "runtime/numerics.h"
#include "runtime/tma.h"

namespace tessel::runtime {
namespace {

using tessel::testing::compile_and_load;
using ClusterGpu = tessel::testing::GpuTest;

const char* kClusterKernels = R"(
#include "tessel_device.cuh"
using namespace tessel::device;

// Each CTA of a cluster of `size` loads rows [rank·R, (rank+1)·R) of the cluster's 64×64 f16 tile
// (R = 64 / size) and multicasts them to every CTA; every CTA's barrier expects the whole tile.
// Then each CTA dumps its copy. The tile of cluster c starts at row 64·c of the source.
extern "C" __global__ void multicast_tile(const __grid_constant__ TmaDescriptor desc,
                                          unsigned short* out) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = raw + (align_up(smem_u32(raw), 1024) - smem_u32(raw));
  __shared__ unsigned long long bar;
  const unsigned rank = cluster_cta_rank(), size = cluster_size();
  const int rows = 64 / size;
  if (threadIdx.x == 0) {
    mbarrier_init(&bar, 1);
    mbarrier_init_fence();
  }
  cluster_sync();  // peers multicast into this CTA's shared memory and barrier
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&bar, 64 * 64 * 2);
    tma_load_2d_multicast(smem + rank * rows * 128, &desc, &bar, (1u << size) - 1, 0,
                          64 * (blockIdx.x / size) + rank * rows);
  }
  mbarrier_wait(&bar, 0);
  const unsigned short* tile = reinterpret_cast<const unsigned short*>(smem);
  for (int i = threadIdx.x; i < 64 * 64; i += blockDim.x) out[blockIdx.x * 64 * 64 + i] = tile[i];
  cluster_sync();  // nobody leaves while a peer's multicast may still target it
}

// Every CTA writes (its rank + 1) · 100 + slot into slot `rank` of every peer's shared array
// through mapa/st.shared::cluster, and arrives on rank 0's barrier remotely; after a cluster
// barrier each CTA dumps its array, and rank 0 records whether its barrier saw all arrivals.
extern "C" __global__ void dsmem_exchange(unsigned* out, unsigned* arrivals_seen) {
  __shared__ unsigned slots[16];
  __shared__ unsigned long long bar;
  const unsigned rank = cluster_cta_rank(), size = cluster_size();
  if (threadIdx.x == 0) {
    mbarrier_init(&bar, size);
    mbarrier_init_fence();
  }
  if (threadIdx.x < 16) slots[threadIdx.x] = 0xFFFFFFFFu;
  cluster_sync();
  if (threadIdx.x < size) {
    const unsigned peer = threadIdx.x;
    st_shared_cluster(cluster_map_shared(smem_u32(&slots[rank]), peer), (rank + 1) * 100 + rank);
  }
  if (threadIdx.x == 0) mbarrier_arrive_cluster(&bar, 0);
  cluster_sync();
  if (threadIdx.x < 16) out[blockIdx.x * 16 + threadIdx.x] = slots[threadIdx.x];
  if (rank == 0 && threadIdx.x == 0) {
    mbarrier_wait(&bar, 0);
    arrivals_seen[blockIdx.x / size] = 1 + ld_shared_cluster(cluster_map_shared(smem_u32(&slots[0]), size - 1));
  }
  cluster_sync();
}
)";

class ClusterSizes : public ClusterGpu, public ::testing::WithParamInterface<unsigned> {};

TEST_P(ClusterSizes, MulticastReachesEveryCta) {
  const unsigned size = GetParam(), clusters = 3;
  const int rows = 64 * clusters, cols = 64;
  const std::uint64_t seed = fresh_seed();
  auto values = tessel::testing::random_half_bits(false, rows * cols, seed);
  DeviceBuffer source = DeviceBuffer::from_host(values);
  TmaSpec spec;
  spec.element = TmaElement::f16;
  spec.address = source.ptr();
  spec.shape = {static_cast<std::uint64_t>(cols), static_cast<std::uint64_t>(rows)};
  spec.strides_bytes = {cols * 2};
  spec.box = {64, 64 / size};
  CUtensorMap desc = make_tma_descriptor(spec);
  DeviceBuffer out(clusters * size * 64 * 64 * 2);
  out.fill_bytes(0xEE);
  Module module = compile_and_load(kClusterKernels);
  Function kernel = module.function("multicast_tile");
  CUdeviceptr out_ptr = out.ptr();
  void* args[] = {&desc, &out_ptr};
  LaunchConfig config;
  config.grid = {clusters * size};
  config.block = {128};
  config.cluster = {size, 1, 1};
  config.dynamic_shared_bytes = 64 * 64 * 2 + 1024;
  kernel.launch(config, args);
  context().synchronize();
  auto got = out.to_host<std::uint16_t>();
  int mismatches = 0;
  for (unsigned cta = 0; cta < clusters * size; ++cta) {
    const unsigned cluster = cta / size;
    for (int i = 0; i < 64 * 64; ++i) {
      mismatches += got[cta * 64 * 64 + i] != values[cluster * 64 * 64 + i];
    }
  }
  EXPECT_EQ(mismatches, 0) << "cluster size " << size << ", seed " << seed;
}

TEST_P(ClusterSizes, DistributedSharedMemoryAndRemoteArrivals) {
  const unsigned size = GetParam(), clusters = 2;
  DeviceBuffer out(clusters * size * 16 * 4), seen(clusters * 4);
  out.fill_bytes(0);
  seen.fill_bytes(0);
  Module module = compile_and_load(kClusterKernels);
  Function kernel = module.function("dsmem_exchange");
  CUdeviceptr out_ptr = out.ptr(), seen_ptr = seen.ptr();
  void* args[] = {&out_ptr, &seen_ptr};
  LaunchConfig config;
  config.grid = {clusters * size};
  config.block = {64};
  config.cluster = {size, 1, 1};
  kernel.launch(config, args);
  context().synchronize();
  auto got = out.to_host<unsigned>();
  for (unsigned cta = 0; cta < clusters * size; ++cta) {
    for (unsigned slot = 0; slot < 16; ++slot) {
      unsigned expected = slot < size ? (slot + 1) * 100 + slot : 0xFFFFFFFFu;
      EXPECT_EQ(got[cta * 16 + slot], expected) << "cta " << cta << " slot " << slot;
    }
  }
  auto arrivals = seen.to_host<unsigned>();
  for (unsigned c = 0; c < clusters; ++c) EXPECT_EQ(arrivals[c], 1u + 100u) << "cluster " << c;
}

INSTANTIATE_TEST_SUITE_P(Sizes, ClusterSizes, ::testing::Values(2u, 4u),
                         [](const ::testing::TestParamInfo<unsigned>& info) {
                           return "cluster_of_" + std::to_string(info.param);
                         });

}  // namespace
}  // namespace tessel::runtime
