// Tile shape, ring depth and shared-memory budget of the reference GEMM, shared by the kernel
// (NVRTC) and its host launcher. Plain constants only: no includes, valid in both worlds.
#pragma once

namespace tessel_reference {

constexpr int kBlockM = 128;  // tile rows: two consumer warpgroups × 64
constexpr int kBlockN = 256;  // tile columns: one wgmma m64n256 per consumer per K step
constexpr int kBlockK = 64;   // one 128-byte swizzle row of 16-bit elements
constexpr int kStages = 4;    // depth of the shared-memory ring
constexpr int kConsumers = 2;
constexpr int kThreads = 128 * (1 + kConsumers);
constexpr int kEpilogueN = 64;  // columns per staged output chunk (one 128-byte swizzle row)
constexpr int kGroupM = 8;      // default grouped-raster height, in tile rows

constexpr int kStageBytesA = kBlockM * kBlockK * 2;  // 16 KB
constexpr int kStageBytesB = kBlockN * kBlockK * 2;  // 32 KB
constexpr int kStageBytes = kStageBytesA + kStageBytesB;
constexpr int kEpilogueChunkBytes = 64 * kEpilogueN * 2;  // 8 KB per buffer
constexpr int kEpilogueBytes = kConsumers * 2 * kEpilogueChunkBytes;

// Dynamic shared memory: stages of A, stages of B, epilogue staging, then the barriers; plus 1 KB
// of slack to round the base up to the 1024-byte swizzle repeat.
constexpr int kSharedBytes = 1024 + kStages * kStageBytes + kEpilogueBytes + 2 * kStages * 8;

}  // namespace tessel_reference
