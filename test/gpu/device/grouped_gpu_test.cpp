// find_group (runtime/device/common.cuh) on the GPU against a host walk: every tile of the flat
// list of random groups' tiles and a few past its end, for group counts around its batches of four
// (1, 3, 4, 5, 8, 13, 256, 257), many empty groups, and tiles of 64 and 128 rows.
#include <cstdint>
#include <random>
#include <vector>

#include "gpu/gpu_test.h"
#include "runtime/buffer.h"
#include "runtime/numerics.h"

namespace tessel::runtime {
namespace {

using tessel::testing::compile_and_load;
using GroupedGpu = tessel::testing::GpuTest;

const char* kFindGroupKernel = R"(
#include "tessel_device.cuh"
extern "C" __global__ void find_all(const int* ends, int groups, int tiles, int tile_rows,
                                    int* out) {
  const int t = blockIdx.x * blockDim.x + threadIdx.x;
  if (t >= tiles) return;
  const tessel::device::GroupTile g = tessel::device::find_group(ends, groups, t, tile_rows);
  out[4 * t] = g.group;
  out[4 * t + 1] = g.tile;
  out[4 * t + 2] = g.first;
  out[4 * t + 3] = g.rows;
}
)";

TEST_F(GroupedGpu, FindGroupMatchesAHostWalk) {
  const std::uint64_t seed = fresh_seed();
  std::mt19937_64 rng(seed);
  Module module = compile_and_load(kFindGroupKernel);
  for (int groups : {1, 3, 4, 5, 8, 13, 256, 257}) {
    for (int tile_rows : {64, 128}) {
      std::vector<int> ends;
      std::vector<int> want;  // (group, tile, first, rows) per tile
      int rows = 0;
      for (int g = 0; g < groups; ++g) {
        const int count = rng() % 3 == 0 ? 0 : static_cast<int>(rng() % 300);
        for (int t = 0; t * tile_rows < count; ++t) want.insert(want.end(), {g, t, rows, count});
        ends.push_back(rows += count);
      }
      const int listed = static_cast<int>(want.size() / 4), tiles = listed + 5;
      for (int t = listed; t < tiles; ++t) want.insert(want.end(), {groups, 0, rows, 0});
      DeviceBuffer dends = DeviceBuffer::from_host(ends), out(4 * 4 * tiles);
      out.fill_bytes(0xEE);
      CUdeviceptr p_ends = dends.ptr(), p_out = out.ptr();
      int g_arg = groups, tiles_arg = tiles, rows_arg = tile_rows;
      void* args[] = {&p_ends, &g_arg, &tiles_arg, &rows_arg, &p_out};
      LaunchConfig config;
      config.grid = {static_cast<unsigned>((tiles + 127) / 128)};
      config.block = {128};
      module.function("find_all").launch(config, args);
      context().synchronize();
      EXPECT_EQ(out.to_host<int>(), want)
          << groups << " groups, tiles of " << tile_rows << " rows, seed " << seed;
    }
  }
}

}  // namespace
}  // namespace tessel::runtime
