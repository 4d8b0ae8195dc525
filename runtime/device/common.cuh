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
// `tile_rows` rows, group g owning rows [ends[g-1], ends[g]). A scalar walk over the ends, four
// at a time: the four loads are issued together before the walk reads them (the walk's early
// exit kept the compiler from hoisting the loads of a plain loop, so each group cost a dependent
// L1 round trip: ~5 us for a walk over 256 experts, paid by every tile of an MoE launch). The
// ends stay in L1 after the first tile (eight at a time made the varlen attention kernels
// spill). Past the last tile: group = groups, rows = 0.
struct GroupTile {
  int group, tile, first, rows;
};
__device__ __forceinline__ GroupTile find_group(const int* ends, int groups, int t, int tile_rows) {
  constexpr int kBatch = 4;
  int before = 0, start = 0, g = 0;
  for (; g + kBatch <= groups; g += kBatch) {
    int stop[kBatch];
#pragma unroll
    for (int i = 0; i < kBatch; ++i) stop[i] = __ldg(ends + g + i);
#pragma unroll
    for (int i = 0; i < kBatch; ++i) {
      const int tiles = (stop[i] - start + tile_rows - 1) / tile_rows;
      if (t < before + tiles) return {g + i, t - before, start, stop[i] - start};
      before += tiles;
      start = stop[i];
    }
  }
  for (; g < groups; ++g) {
    const int stop = __ldg(ends + g);
    const int tiles = (stop - start + tile_rows - 1) / tile_rows;
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
