// TMA through the device library on the GPU: tiled loads of 1 to 5 dimensions equal the source
// (out-of-bounds parts zero), the 128B swizzle lands where the swizzle rule says (also for rows
// gathered one 1-row box at a time), stores write
// exactly the in-bounds part of a box, and a multicast-free L2-hinted load behaves like a plain
// one.
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
using TmaGpu = tessel::testing::GpuTest;

// One CTA loads one box (coordinates in `c`) into shared memory on an mbarrier, then copies the
// shared bytes out verbatim, so the host sees exactly what TMA wrote. `hint` selects the
// L2-cache-hinted form.
const char* kTmaKernels = R"(
#include "tessel_device.cuh"
using namespace tessel::device;

template <int Rank>
__device__ void load_box(const TmaDescriptor& desc, unsigned char* smem, unsigned long long* bar,
                         const int* c, int hint) {
  if constexpr (Rank == 1) {
    if (hint) tma_load_1d_hint(smem, &desc, bar, kCacheEvictFirst, c[0]);
    else tma_load_1d(smem, &desc, bar, c[0]);
  } else if constexpr (Rank == 2) {
    if (hint) tma_load_2d_hint(smem, &desc, bar, kCacheEvictLast, c[0], c[1]);
    else tma_load_2d(smem, &desc, bar, c[0], c[1]);
  } else if constexpr (Rank == 3) {
    if (hint) tma_load_3d_hint(smem, &desc, bar, kCacheEvictNormal, c[0], c[1], c[2]);
    else tma_load_3d(smem, &desc, bar, c[0], c[1], c[2]);
  } else if constexpr (Rank == 4) {
    if (hint) tma_load_4d_hint(smem, &desc, bar, kCacheEvictNormal, c[0], c[1], c[2], c[3]);
    else tma_load_4d(smem, &desc, bar, c[0], c[1], c[2], c[3]);
  } else {
    if (hint) tma_load_5d_hint(smem, &desc, bar, kCacheEvictNormal, c[0], c[1], c[2], c[3], c[4]);
    else tma_load_5d(smem, &desc, bar, c[0], c[1], c[2], c[3], c[4]);
  }
}

// Thread 0 issues `load(smem, &bar)`, TMA loads of `bytes` in all into a 1024-aligned tile on
// one mbarrier; then every thread waits and the block dumps the tile to `out`.
template <typename Load>
__device__ void load_then_dump(const TmaDescriptor& desc, int bytes, unsigned char* out,
                               Load load) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = raw + (align_up(smem_u32(raw), 1024) - smem_u32(raw));
  __shared__ unsigned long long bar;
  if (threadIdx.x == 0) {
    tma_prefetch_descriptor(&desc);
    mbarrier_init(&bar, 1);
    mbarrier_init_fence();
  }
  __syncthreads();
  if (threadIdx.x == 0) {
    mbarrier_arrive_expect_tx(&bar, bytes);
    load(smem, &bar);
  }
  mbarrier_wait(&bar, 0);
  for (int i = threadIdx.x; i < bytes; i += blockDim.x) out[i] = smem[i];
}

template <int Rank>
__device__ void load_and_dump(const TmaDescriptor& desc, const int* coords, int box_bytes,
                              int hint, unsigned char* out) {
  load_then_dump(desc, box_bytes, out, [&](unsigned char* smem, unsigned long long* bar) {
    load_box<Rank>(desc, smem, bar, coords, hint);
  });
}

#define LOAD_ENTRY(R)                                                                          \
  extern "C" __global__ void tma_load_##R##d_test(const __grid_constant__ TmaDescriptor desc, \
                                                  const int* coords, int box_bytes, int hint, \
                                                  unsigned char* out) {                       \
    load_and_dump<R>(desc, coords, box_bytes, hint, out);                                      \
  }
LOAD_ENTRY(1)
LOAD_ENTRY(2)
LOAD_ENTRY(3)
LOAD_ENTRY(4)
LOAD_ENTRY(5)

// Fills shared memory with `box_bytes` bytes from `in`, publishes them to the async proxy, stores
// the box at (c0, c1) with TMA and waits for the store to finish.
extern "C" __global__ void tma_store_2d_test(const __grid_constant__ TmaDescriptor desc,
                                             const unsigned char* in, int box_bytes, int c0, int c1) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = raw + (align_up(smem_u32(raw), 1024) - smem_u32(raw));
  for (int i = threadIdx.x; i < box_bytes; i += blockDim.x) smem[i] = in[i];
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    tma_store_2d(&desc, smem, c0, c1);
    tma_store_commit_group();
    tma_store_wait_read<0>();
    tma_store_wait<0>();
  }
}
// Gathers `rows` rows of a 2-D tensor with one 1-row box each (box {cols, 1}): destination row i
// (at smem + i * row_bytes of a 1024-aligned tile) from source row `source_rows[i]`, all on one
// mbarrier, then dumps the tile as load_and_dump does. The question it answers (a MoE token
// gather by TMA): does a swizzled 1-row box land where the whole box's row would?
extern "C" __global__ void tma_gather_rows_test(const __grid_constant__ TmaDescriptor desc,
                                                const int* source_rows, int rows, int row_bytes,
                                                unsigned char* out) {
  load_then_dump(desc, rows * row_bytes, out, [&](unsigned char* smem, unsigned long long* bar) {
    for (int i = 0; i < rows; ++i) tma_load_2d(smem + i * row_bytes, &desc, bar, 0, source_rows[i]);
  });
}
// Stores a 3-D box {8, 4, 2} from shared memory at (c0, c1, c2), as tma_store_2d_test does.
extern "C" __global__ void tma_store_3d_test(const __grid_constant__ TmaDescriptor desc,
                                             const unsigned char* in, int box_bytes, int c0, int c1,
                                             int c2) {
  extern __shared__ unsigned char raw[];
  unsigned char* smem = raw + (align_up(smem_u32(raw), 1024) - smem_u32(raw));
  for (int i = threadIdx.x; i < box_bytes; i += blockDim.x) smem[i] = in[i];
  fence_proxy_async_shared();
  __syncthreads();
  if (threadIdx.x == 0) {
    tma_store_3d(&desc, smem, c0, c1, c2);
    tma_store_commit_group();
    tma_store_wait<0>();
  }
}
)";

// Row-major dense tensor of u16 values, dims innermost first.
struct Tensor {
  std::vector<std::uint64_t> dims;
  std::vector<std::uint16_t> values;
  std::uint64_t index(const std::vector<std::int64_t>& at) const {
    std::uint64_t i = 0;
    for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) i = i * dims[d] + at[d];
    return i;
  }
};

// Loads the box at `coords` of a random tensor with `dims` and checks every element of shared
// memory: the source where in bounds, zero outside.
void check_load(const std::vector<std::uint64_t>& dims, const std::vector<std::uint32_t>& box,
                const std::vector<int>& coords, int hint) {
  const int rank = static_cast<int>(dims.size());
  Tensor t{dims, {}};
  std::uint64_t count = 1;
  for (auto d : dims) count *= d;
  const std::uint64_t seed = fresh_seed();
  t.values = tessel::testing::random_half_bits(false, count, seed);
  DeviceBuffer source = DeviceBuffer::from_host(t.values);
  TmaSpec spec;
  spec.element = TmaElement::f16;
  spec.address = source.ptr();
  spec.shape = dims;
  std::uint64_t stride = dims[0] * 2;
  for (int d = 1; d < rank; ++d) {
    spec.strides_bytes.push_back(stride);
    stride *= dims[d];
  }
  spec.box = box;
  CUtensorMap desc = make_tma_descriptor(spec);
  std::uint64_t box_elements = 1;
  for (auto b : box) box_elements *= b;
  int box_bytes = static_cast<int>(box_elements * 2);
  DeviceBuffer coords_device = DeviceBuffer::from_host(coords);
  DeviceBuffer out(box_bytes);
  out.fill_bytes(0xAB);
  Module module = compile_and_load(kTmaKernels);
  Function kernel = module.function("tma_load_" + std::to_string(rank) + "d_test");
  CUdeviceptr coords_ptr = coords_device.ptr(), out_ptr = out.ptr();
  void* args[] = {&desc, &coords_ptr, &box_bytes, &hint, &out_ptr};
  LaunchConfig config;
  config.block = {128};
  config.dynamic_shared_bytes = box_bytes + 1024;
  kernel.launch(config, args);
  context().synchronize();
  auto got = out.to_host<std::uint16_t>();
  int mismatches = 0;
  for (std::uint64_t e = 0; e < box_elements; ++e) {
    std::vector<std::int64_t> at(rank);
    std::uint64_t rest = e;
    bool inside = true;
    for (int d = 0; d < rank; ++d) {
      at[d] = coords[d] + static_cast<std::int64_t>(rest % box[d]);
      rest /= box[d];
      inside = inside && at[d] >= 0 && at[d] < static_cast<std::int64_t>(dims[d]);
    }
    std::uint16_t expected = inside ? t.values[t.index(at)] : 0;
    if (got[e] != expected && ++mismatches <= 5) {
      ADD_FAILURE() << "rank " << rank << " element " << e << ": got 0x" << std::hex << got[e]
                    << " expected 0x" << expected << std::dec << " (seed " << seed << ")";
    }
  }
  EXPECT_EQ(mismatches, 0) << "rank " << rank;
}

TEST_F(TmaGpu, Load1dEqualsSourceWithZeroFillPastTheEnd) {
  check_load({1000}, {256}, {0}, 0);
  check_load({1000}, {256}, {872}, 1);  // 128 past the end
}

TEST_F(TmaGpu, Load2dTileEqualsSource) {
  check_load({200, 300}, {64, 32}, {64, 96}, 0);    // interior
  check_load({200, 300}, {64, 32}, {160, 280}, 1);  // past both ends
  check_load({200, 300}, {64, 32}, {-16, -8}, 0);   // before both starts
}

TEST_F(TmaGpu, Load3dTo5dEqualSource) {
  check_load({40, 7, 9}, {16, 4, 4}, {8, 5, 6}, 0);
  check_load({24, 5, 3, 6}, {8, 4, 2, 4}, {16, 2, 2, 3}, 1);
  check_load({16, 3, 4, 2, 5}, {8, 2, 2, 2, 4}, {8, 2, 3, 1, 2}, 0);
}

// A TMA descriptor of `rows` rows of 64 16-bit values (128 bytes, one swizzle row each), boxes of
// `box_rows` rows, SWIZZLE_128B.
CUtensorMap swizzle128_rows(const DeviceBuffer& source, int rows, int box_rows) {
  TmaSpec spec;
  spec.element = TmaElement::bf16;
  spec.address = source.ptr();
  spec.shape = {64, static_cast<std::uint64_t>(rows)};
  spec.strides_bytes = {128};
  spec.box = {64, static_cast<std::uint32_t>(box_rows)};
  spec.swizzle = TmaSwizzle::b128;
  return make_tma_descriptor(spec);
}

// Launches `name` of kTmaKernels (one block of 128 threads, `tile_bytes` of shared memory on a
// 1024-byte boundary) with `args`, whose last is `out`; returns the tile it dumped.
std::vector<std::uint16_t> run_dump(const char* name, std::vector<void*> args, int tile_bytes,
                                    DeviceBuffer& out) {
  out.fill_bytes(0xAB);
  Module module = compile_and_load(kTmaKernels);
  Function kernel = module.function(name);
  LaunchConfig config;
  config.block = {128};
  config.dynamic_shared_bytes = tile_bytes + 1024;
  kernel.launch(config, args.data());
  context().synchronize();
  return out.to_host<std::uint16_t>();
}

// Elements of a dumped 64-row tile not where SWIZZLE_128B puts them: row i holding source row
// source_row(i) of `values` (64 per row), its 16-byte chunk j at chunk j ^ (i % 8).
template <class SourceRow>
int swizzle128_mismatches(const std::vector<std::uint16_t>& got,
                          const std::vector<std::uint16_t>& values, SourceRow source_row) {
  int mismatches = 0;
  for (int i = 0; i < 64; ++i) {
    for (int c = 0; c < 64; ++c) {
      const int offset = i * 64 + ((c / 8) ^ (i % 8)) * 8 + c % 8;  // in elements
      if (got[offset] != values[source_row(i) * 64 + c]) ++mismatches;
    }
  }
  return mismatches;
}

// With SWIZZLE_128B and a 128-byte inner box on a 1024-aligned destination, the 16-byte chunk j
// of row r lands at chunk j ^ (r % 8): the layout the wgmma descriptors assume.
TEST_F(TmaGpu, Swizzle128PlacesChunksByTheXorRule) {
  const int rows = 64;  // f16: one 128-byte row per tile row
  const std::uint64_t seed = fresh_seed();
  auto values = tessel::testing::random_half_bits(true, rows * 64, seed);
  DeviceBuffer source = DeviceBuffer::from_host(values);
  CUtensorMap desc = swizzle128_rows(source, rows, 64);
  DeviceBuffer coords_device = DeviceBuffer::from_host(std::vector<int>{0, 0});
  int box_bytes = rows * 128, hint = 0;
  DeviceBuffer out(box_bytes);
  CUdeviceptr coords_ptr = coords_device.ptr(), out_ptr = out.ptr();
  auto got = run_dump("tma_load_2d_test", {&desc, &coords_ptr, &box_bytes, &hint, &out_ptr},
                      box_bytes, out);
  EXPECT_EQ(swizzle128_mismatches(got, values, [](int i) { return i; }), 0) << "seed " << seed;
}

// Rows gathered one 1-row box at a time into a 128B-swizzled tile (64 rows of 64 f16, random
// source rows, repeats allowed): destination row i holds source row source_rows[i] with its 16-byte
// chunk j at chunk j ^ (i % 8), as a whole-box load places its row i: TMA swizzles by the shared
// address. Passed on the H100 (2026-11-28,
// bench/results/2026-11-28-w4a16-zero-points-pad-m-h100.md); a MoE routing gather by TMA would
// depend on it (README).
TEST_F(TmaGpu, Swizzle128RowBoxesLandAsTheWholeBoxWould) {
  const int source_rows_count = 300, rows = 64;
  const std::uint64_t seed = fresh_seed();
  auto values = tessel::testing::random_half_bits(true, source_rows_count * 64, seed);
  DeviceBuffer source = DeviceBuffer::from_host(values);
  CUtensorMap desc = swizzle128_rows(source, source_rows_count, 1);
  std::vector<int> source_rows(rows);
  std::uint64_t state = seed;
  for (int& r : source_rows) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    r = static_cast<int>((state >> 33) % source_rows_count);
  }
  DeviceBuffer rows_device = DeviceBuffer::from_host(source_rows);
  int row_bytes = 128, rows_arg = rows;
  DeviceBuffer out(rows * row_bytes);
  CUdeviceptr rows_ptr = rows_device.ptr(), out_ptr = out.ptr();
  auto got = run_dump("tma_gather_rows_test", {&desc, &rows_ptr, &rows_arg, &row_bytes, &out_ptr},
                      rows * row_bytes, out);
  EXPECT_EQ(swizzle128_mismatches(got, values, [&](int i) { return source_rows[i]; }), 0)
      << "seed " << seed;
}

// A 64×32 box stored at the bottom-right corner of a 100×70 matrix writes exactly the in-bounds
// 36×6 part; every other element keeps its poison.
TEST_F(TmaGpu, Store2dWritesOnlyInBoundsElements) {
  const int rows = 70, cols = 104;
  const std::uint64_t seed = fresh_seed();
  DeviceBuffer target(rows * cols * 2);
  target.fill_bytes(0xEE);
  auto box_values = tessel::testing::random_half_bits(false, 64 * 32, seed);
  DeviceBuffer in = DeviceBuffer::from_host(box_values);
  TmaSpec spec;
  spec.element = TmaElement::f16;
  spec.address = target.ptr();
  spec.shape = {cols, rows};
  spec.strides_bytes = {cols * 2};
  spec.box = {64, 32};
  CUtensorMap desc = make_tma_descriptor(spec);
  Module module = compile_and_load(kTmaKernels);
  Function kernel = module.function("tma_store_2d_test");
  CUdeviceptr in_ptr = in.ptr();
  int box_bytes = 64 * 32 * 2, c0 = cols - 40, c1 = rows - 6;
  void* args[] = {&desc, &in_ptr, &box_bytes, &c0, &c1};
  LaunchConfig config;
  config.block = {128};
  config.dynamic_shared_bytes = box_bytes + 1024;
  kernel.launch(config, args);
  context().synchronize();
  auto got = target.to_host<std::uint16_t>();
  int mismatches = 0;
  for (int r = 0; r < rows; ++r) {
    for (int c = 0; c < cols; ++c) {
      bool inside = r >= c1 && c >= c0;
      std::uint16_t expected = inside ? box_values[(r - c1) * 64 + (c - c0)] : 0xEEEE;
      if (got[r * cols + c] != expected) ++mismatches;
    }
  }
  EXPECT_EQ(mismatches, 0) << "seed " << seed;
}

// A {8, 4, 2} box stored at (8, 3, 1) of a 16×5×3 tensor writes its in-bounds 8×2×2 part only.
TEST_F(TmaGpu, Store3dWritesOnlyInBoundsElements) {
  const std::uint64_t d0 = 16, d1 = 5, d2 = 3;
  const std::uint64_t seed = fresh_seed();
  DeviceBuffer target(d0 * d1 * d2 * 2);
  target.fill_bytes(0xEE);
  auto box_values = tessel::testing::random_half_bits(false, 8 * 4 * 2, seed);
  DeviceBuffer in = DeviceBuffer::from_host(box_values);
  TmaSpec spec;
  spec.element = TmaElement::f16;
  spec.address = target.ptr();
  spec.shape = {d0, d1, d2};
  spec.strides_bytes = {d0 * 2, d0 * d1 * 2};
  spec.box = {8, 4, 2};
  CUtensorMap desc = make_tma_descriptor(spec);
  Module module = compile_and_load(kTmaKernels);
  CUdeviceptr in_ptr = in.ptr();
  int box_bytes = 8 * 4 * 2 * 2, c0 = 8, c1 = 3, c2 = 1;
  void* args[] = {&desc, &in_ptr, &box_bytes, &c0, &c1, &c2};
  LaunchConfig config;
  config.block = {64};
  config.dynamic_shared_bytes = box_bytes + 1024;
  module.function("tma_store_3d_test").launch(config, args);
  context().synchronize();
  auto got = target.to_host<std::uint16_t>();
  int mismatches = 0;
  for (std::uint64_t z = 0; z < d2; ++z) {
    for (std::uint64_t y = 0; y < d1; ++y) {
      for (std::uint64_t x = 0; x < d0; ++x) {
        bool inside = x >= 8 && y >= 3 && z >= 1;  // the box runs past the last y (4)
        std::uint16_t expected =
            inside ? box_values[((z - 1) * 4 + (y - 3)) * 8 + (x - 8)] : std::uint16_t{0xEEEE};
        mismatches += got[(z * d1 + y) * d0 + x] != expected;
      }
    }
  }
  EXPECT_EQ(mismatches, 0) << "seed " << seed;
}

}  // namespace
}  // namespace tessel::runtime
