// Basic types and address helpers shared by every header of the tessel device library.
//
// The device library is what generated kernels include under NVRTC. It may not include any host
// header (no <cstdint>, no <cuda.h>, no <cuda_fp16.h>): the runtime passes these files to NVRTC as
// named headers, and they must compile with nothing else on the include path. Every primitive is a
// small __device__ __forceinline__ function around one PTX instruction (or a short fixed sequence),
// and its comment states the PTX contract the caller must keep. Facts: ../../shared/HOPPER.md.
#pragma once

namespace tessel {
namespace device {

// The 128-byte CUtensorMap, as the kernel sees it. The host builds it with cuTensorMapEncodeTiled
// (src/runtime/tma.h) and passes it by value as a `const __grid_constant__ TmaDescriptor` kernel
// parameter; PTX takes the generic address of that parameter. Same bytes as CUtensorMap.
struct alignas(64) TmaDescriptor {
  unsigned long long opaque[16];
};

// The 32-bit shared-window address of a generic pointer into shared memory: the form every
// `.shared` PTX operand below takes. Undefined for a pointer that is not into shared memory.
__device__ __forceinline__ unsigned smem_u32(const void* pointer) {
  return static_cast<unsigned>(__cvta_generic_to_shared(pointer));
}

// Lane of the calling thread within its warp (%laneid).
__device__ __forceinline__ unsigned lane_id() {
  unsigned lane;
  asm volatile("mov.u32 %0, %%laneid;" : "=r"(lane));
  return lane;
}

// Index of the calling thread's warp within a 1-D block, made warp-uniform by a shuffle from lane
// 0 so that the compiler can treat branches on it as uniform (CUTLASS canonical_warp_idx_sync).
__device__ __forceinline__ int warp_index() {
  return __shfl_sync(0xffffffffu, threadIdx.x / 32, 0);
}

// elect.sync (sm_90): elects exactly one active lane of the full warp; returns true in that lane.
// All 32 lanes must execute it (membermask 0xffffffff).
__device__ __forceinline__ bool elect_one_sync() {
  unsigned is_elected = 0;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  .reg .b32 leader;\n"
      "  elect.sync leader|p, 0xffffffff;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(is_elected));
  return is_elected != 0;
}

// find_group (src/ir/grouped.h): tile t of the flat list of `groups` groups' tiles of
// `tile_rows` rows, group g owning rows [ends[g-1], ends[g]) (sorted ends, so every count is
// non-negative and the division is a shift). A scalar walk over the ends, four at a time: the four
// loads issue together, the four tile counts are independent, and a batch that does not hold
// tile t is skipped with one compare. A plain loop's early exit kept the compiler from hoisting
// its loads, and the walk cost ~100 cycles per group: measured on the H100, an MoE launch over 256
// experts at one token spent its 0.5 ms walking past-the-list tiles (ncu: 99.95% L1 hits, 4% of
// DRAM). Eight ends per batch made the varlen attention kernels spill, and loading the next batch
// while walking this one made the MoE kernel spill. The ends stay in L1 after
// the first tile. Past the last tile: group = groups, rows = 0.
struct GroupTile {
  int group, tile, first, rows;
};
__device__ __forceinline__ int group_tiles(int rows, int tile_rows) {
  const unsigned r = static_cast<unsigned>(rows), t = static_cast<unsigned>(tile_rows);
  return static_cast<int>((r + t - 1) / t);
}
__device__ __forceinline__ GroupTile find_group(const int* ends, int groups, int t, int tile_rows) {
  int before = 0, start = 0, g = 0;
  for (; g + 4 <= groups; g += 4) {
    const int s0 = __ldg(ends + g), s1 = __ldg(ends + g + 1), s2 = __ldg(ends + g + 2),
              s3 = __ldg(ends + g + 3);
    const int t0 = group_tiles(s0 - start, tile_rows), t1 = group_tiles(s1 - s0, tile_rows),
              t2 = group_tiles(s2 - s1, tile_rows), t3 = group_tiles(s3 - s2, tile_rows);
    const int batch = (t0 + t1) + (t2 + t3);
    if (t < before + batch) {
      if (t < before + t0) return {g, t - before, start, s0 - start};
      before += t0;
      if (t < before + t1) return {g + 1, t - before, s0, s1 - s0};
      before += t1;
      if (t < before + t2) return {g + 2, t - before, s1, s2 - s1};
      return {g + 3, t - before - t2, s2, s3 - s2};
    }
    before += batch;
    start = s3;
  }
  for (; g < groups; ++g) {
    const int stop = __ldg(ends + g);
    const int tiles = group_tiles(stop - start, tile_rows);
    if (t < before + tiles) return {g, t - before, start, stop - start};
    before += tiles;
    start = stop;
  }
  return {groups, 0, start, 0};
}

// Rounds a byte offset up to a multiple of `alignment` (a power of two).
__device__ __forceinline__ unsigned align_up(unsigned value, unsigned alignment) {
  return (value + alignment - 1) & ~(alignment - 1);
}

}  // namespace device
}  // namespace tessel
