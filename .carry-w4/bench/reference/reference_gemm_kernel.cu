// The reference GEMM kernel: persistent, warp-specialized C = A·Bᵀ for Hopper, written against the
// tessel device library. Compiled at run time by NVRTC (embedded in tessel_reference) and, for
// experiments, by nvcc (scripts/gpu/gemm_harness.cu includes this file).
//
// Shape of the computation. A is M×K and B is N×K, both row-major (K contiguous), f16 or bf16;
// C is M×N row-major in the same type, accumulated in f32. The output is cut into 128×256 tiles,
// visited in a grouped order (kGroupM tile rows at a time, so a wave of CTAs shares A and B
// panels in L2). One CTA per SM walks the tile sequence (a persistent grid); with a 2×1 cluster
// the two CTAs of a cluster take vertically adjacent tiles and share the B panel by multicast.
//
// Roles (384 threads = three warpgroups):
//   warpgroup 0, the producer: one elected thread of warp 0 streams 128×64 A and 256×64 B blocks
//     with TMA (128-byte swizzle) into a kStages-deep ring of shared-memory stages. Each stage has
//     a `full` mbarrier (TMA bytes landed) and an `empty` mbarrier (consumers done reading). It
//     gives most of its registers away (setmaxnreg.dec 40).
//   warpgroups 1 and 2, the consumers: each owns 64 rows of the tile and keeps its 64×256 f32
//     accumulator in registers (128 per thread; setmaxnreg.inc 232). Per K block: wait `full`,
//     issue four wgmma m64n256k16 (one per 16-wide K step) as one group, keep that group in flight
//     while waiting for the previous one (wait_group 1), then release the previous stage.
//   epilogue (consumers): each warpgroup converts its accumulator to 16-bit, writes 64×64 chunks
//     with stmatrix into a double-buffered, 128B-swizzled staging area, and one thread sends each
//     chunk to global memory with a TMA store. Stores are not waited for (only before the
//     staging buffer is reused), so the next tile's math starts at once; the producer has
//     already filled the ring for it.
//
// Edges: TMA fills out-of-bounds elements of a load with zeros and clips stores at the tensor's
// bounds, so any M, N, K works (K blocks past the end contribute zeros). TMA needs 16-byte row
// strides: the host requires K % 8 == 0 (A and B are read only through TMA), and when N % 8 != 0
// it passes the raw pointer `c` (else nullptr) and the epilogue stores with bounds-checked plain
// stores instead of the TMA store.
#include "reference_gemm_config.h"
#include "tessel_device.cuh"

namespace tessel_reference {

using namespace tessel::device;

// Maps a linear tile number (in units of one tile per cluster) to tile coordinates. Tiles are
// visited in groups of kGroupM tile rows: down a group's rows first, then across its columns, so
// that the CTAs running at once touch few A rows and few B columns.
struct TileOrder {
  int tiles_m;  // tile rows, counted in clusters (cluster_m tiles each)
  int tiles_n;
  int group_m;  // group height, same units as tiles_m
  __device__ int count() const { return tiles_m * tiles_n; }
  __device__ void coordinates(int tile, int& tile_m, int& tile_n) const {
    int per_group = group_m * tiles_n;
    int group = tile / per_group;
    int first_m = group * group_m;
    int height = min(tiles_m - first_m, group_m);
    int within = tile - group * per_group;
    tile_m = first_m + within % height;
    tile_n = within / height;
  }
};

// One pipeline position: the ring slot and the parity of its current phase.
struct PipelineState {
  int stage = 0;
  unsigned phase = 0;
  __device__ void advance() {
    if (++stage == kStages) {
      stage = 0;
      phase ^= 1;
    }
  }
};

template <MmaType kType>
__device__ __forceinline__ unsigned pack_out(float lo, float hi) {
  if constexpr (kType == MmaType::f16) {
    return pack_f16x2(lo, hi);
  } else {
    return pack_bf16x2(lo, hi);
  }
}

// Frees ring slot `stage` for the producer of every CTA of the cluster that writes into it.
template <int kClusterM>
__device__ __forceinline__ void release_stage(unsigned long long* empty, int stage) {
  if constexpr (kClusterM == 1) {
    mbarrier_arrive(&empty[stage]);
  } else {
#pragma unroll
    for (int r = 0; r < kClusterM; ++r) mbarrier_arrive_cluster(&empty[stage], r);
  }
}

// What one consumer warpgroup needs to write its 64×256 part of a tile.
struct Epilogue {
  unsigned char* staging;  // two 8 KB buffers, 128B-swizzled 64×64 16-bit tiles
  unsigned barrier_id;     // this warpgroup's named barrier
  int t;                   // thread index in the warpgroup
  const TmaDescriptor* tma_c;
  unsigned short* c;  // non-null when rows of C are not 16-byte aligned: plain stores
  int m, n;
};

// Writes columns [64·chunk, 64·chunk + 64) of this warpgroup's output, whose 16-bit values are
// `packed` (packed[p] = columns of accumulator registers 2p and 2p+1), at (row_c, column_c).
// stmatrix puts them into a staging buffer in the 128B-swizzled layout, and one thread hands the
// buffer to a TMA store that is not waited for, only before the buffer is written again.
__device__ __forceinline__ void store_chunk(const Epilogue& e,
                                            const unsigned (&packed)[kBlockN / 4], int chunk,
                                            int row_c, int column_c) {
  const int warp = e.t / 32, lane = e.t % 32;
  const bool leader = e.t == 0;
  unsigned char* buffer = e.staging + (chunk % 2) * kEpilogueChunkBytes;
  if (leader) tma_store_wait_read<1>();  // the store that last read `buffer` is done
  named_barrier_sync(e.barrier_id, 128);
#pragma unroll
  for (int q = 0; q < kEpilogueN / 16; ++q) {
    // packed[p0 .. p0+3] hold this thread's part of a 16×16 block (columns 16q.. of the chunk);
    // stmatrix.x4 writes it as four 8×8 matrices, lane l addressing row l%8 of matrix l/8.
    const int p0 = chunk * (kEpilogueN / 4) + q * 4;
    const int matrix = lane / 8;
    const int row = warp * 16 + (matrix & 1) * 8 + lane % 8;
    const int chunk16 = 2 * q + (matrix >> 1);  // 16-byte column chunk within the row
    stmatrix_x4(buffer + row * 128 + ((chunk16 ^ (row % 8)) * 16), packed[p0], packed[p0 + 1],
                packed[p0 + 2], packed[p0 + 3]);
  }
  if (e.c == nullptr) {
    fence_proxy_async_shared();
    named_barrier_sync(e.barrier_id, 128);
    if (leader) {
      tma_store_2d(e.tma_c, buffer, column_c + chunk * kEpilogueN, row_c);
      tma_store_commit_group();
    }
    return;
  }
  // Rows of C are not 16-byte aligned (N % 8 != 0), so TMA cannot store them: each thread copies
  // half a staged row (32 elements) with bounds-checked 2-byte stores.
  named_barrier_sync(e.barrier_id, 128);
  const int row = e.t / 2;
  const int global_row = row_c + row;
  const int first_column = column_c + chunk * kEpilogueN + (e.t % 2) * 32;
  if (global_row >= e.m) return;
#pragma unroll
  for (int v = 0; v < 4; ++v) {
    const int chunk16 = (e.t % 2) * 4 + v;
    const uint4 words4 =
        *reinterpret_cast<const uint4*>(buffer + row * 128 + ((chunk16 ^ (row % 8)) * 16));
    const unsigned words[4] = {words4.x, words4.y, words4.z, words4.w};
#pragma unroll
    for (int i = 0; i < 8; ++i) {
      const int column = first_column + v * 8 + i;
      if (column < e.n) {
        e.c[static_cast<long long>(global_row) * e.n + column] =
            static_cast<unsigned short>(words[i / 2] >> (16 * (i % 2)));
      }
    }
  }
}

// Consumer, first half of a K block: waits for the stage's bytes and issues its four wgmmas
// (one per 16-wide K step) as one group, which then runs asynchronously.
template <MmaType kType>
__device__ __forceinline__ void issue_k_block(float (&acc)[kBlockN / 2], unsigned long long* full,
                                              unsigned char* stage_a, unsigned char* stage_b,
                                              int consumer, const PipelineState& state) {
  mbarrier_wait(&full[state.stage], state.phase);
  // This warpgroup's 64 rows of A start 64 rows (8 swizzle atoms of 1 KB) into the stage.
  const unsigned a = smem_u32(stage_a + state.stage * kStageBytesA + consumer * 64 * 128);
  const unsigned b = smem_u32(stage_b + state.stage * kStageBytesB);
  const unsigned long long desc_a = make_smem_descriptor_k_major(a, SmemSwizzle::b128);
  const unsigned long long desc_b = make_smem_descriptor_k_major(b, SmemSwizzle::b128);
  wgmma_fence_operand(acc);
  wgmma_fence();
#pragma unroll
  for (int kk = 0; kk < kBlockK / 16; ++kk) {
    // A k16 step is 32 bytes along the swizzled 128-byte row.
    wgmma_ss<kBlockN, kType>(acc, smem_descriptor_advance(desc_a, kk * 32),
                             smem_descriptor_advance(desc_b, kk * 32));
  }
  wgmma_commit_group();
}

// Consumer, second half: lets the previous K block's group finish (one group stays in flight)
// and frees the stage it read.
template <int kClusterM>
__device__ __forceinline__ void retire_k_block(float (&acc)[kBlockN / 2], unsigned long long* empty,
                                               bool leader, PipelineState& state,
                                               int& previous_stage) {
  wgmma_wait_group<1>();
  wgmma_fence_operand(acc);
  if (previous_stage >= 0 && leader) release_stage<kClusterM>(empty, previous_stage);
  previous_stage = state.stage;
  state.advance();
}

// kClusterM = 1: every CTA loads its own B block. kClusterM = 2: the tensor map for B has a
// 128-row box and each CTA of the pair multicasts its half of the 256-row B block to both.
template <MmaType kType, int kClusterM, bool kOverlapEpilogue>
__device__ __forceinline__ void gemm(const TmaDescriptor& tma_a, const TmaDescriptor& tma_b,
                                     const TmaDescriptor& tma_c, unsigned short* c, int m, int n,
                                     int k, int group_m) {
  extern __shared__ unsigned char shared_raw[];
  unsigned char* shared =
      shared_raw + (align_up(smem_u32(shared_raw), 1024) - smem_u32(shared_raw));
  unsigned char* stage_a = shared;
  unsigned char* stage_b = stage_a + kStages * kStageBytesA;
  unsigned char* epilogue = stage_b + kStages * kStageBytesB;
  unsigned long long* full = reinterpret_cast<unsigned long long*>(epilogue + kEpilogueBytes);
  unsigned long long* empty = full + kStages;

  const int warpgroup = warpgroup_index();
  const unsigned cta_rank = kClusterM == 1 ? 0 : cluster_cta_rank();
  const int cluster = blockIdx.x / kClusterM;
  const int clusters = gridDim.x / kClusterM;

  if (threadIdx.x == 0) {
    for (int s = 0; s < kStages; ++s) {
      mbarrier_init(&full[s], 1);  // the producer's arrive.expect_tx
      // Every consumer warpgroup of every CTA that receives this CTA's multicast releases the slot.
      mbarrier_init(&empty[s], kConsumers * kClusterM);
    }
    mbarrier_init_fence();
  }
  if constexpr (kClusterM > 1) {
    cluster_sync();  // peers multicast into, and arrive on, this CTA's barriers
  } else {
    __syncthreads();
  }

  const TileOrder order{(m + kBlockM * kClusterM - 1) / (kBlockM * kClusterM),
                        (n + kBlockN - 1) / kBlockN, group_m};
  const int k_blocks = (k + kBlockK - 1) / kBlockK;

  if (warpgroup == 0) {
    // ---------------------------------------------------------------- producer
    setmaxnreg_dec<40>();
    if (warp_index_in_warpgroup() == 0 && elect_one_sync()) {
      tma_prefetch_descriptor(&tma_a);
      tma_prefetch_descriptor(&tma_b);
      if (c == nullptr) tma_prefetch_descriptor(&tma_c);
      PipelineState state;
      for (int tile = cluster; tile < order.count(); tile += clusters) {
        int tile_m, tile_n;
        order.coordinates(tile, tile_m, tile_n);
        const int row_a = (tile_m * kClusterM + cta_rank) * kBlockM;
        const int row_b = tile_n * kBlockN;
        for (int kb = 0; kb < k_blocks; ++kb) {
          mbarrier_wait(&empty[state.stage], state.phase ^ 1);
          unsigned long long* bar = &full[state.stage];
          mbarrier_arrive_expect_tx(bar, kStageBytes);
          tma_load_2d(stage_a + state.stage * kStageBytesA, &tma_a, bar, kb * kBlockK, row_a);
          unsigned char* b = stage_b + state.stage * kStageBytesB;
          if constexpr (kClusterM == 1) {
            tma_load_2d(b, &tma_b, bar, kb * kBlockK, row_b);
          } else {
            constexpr int kRowsPerCta = kBlockN / kClusterM;
            tma_load_2d_multicast(b + cta_rank * kRowsPerCta * kBlockK * 2, &tma_b, bar,
                                  (1u << kClusterM) - 1, kb * kBlockK,
                                  row_b + cta_rank * kRowsPerCta);
          }
          state.advance();
        }
      }
    }
  } else {
    // ---------------------------------------------------------------- consumers
    setmaxnreg_inc<232>();
    const int consumer = warpgroup - 1;
    const Epilogue epilogue_context{epilogue + consumer * 2 * kEpilogueChunkBytes,
                                    kNamedBarrierFirstUserId + consumer,
                                    thread_index_in_warpgroup(),
                                    &tma_c,
                                    c,
                                    m,
                                    n};
    const bool leader = epilogue_context.t == 0;  // signals empty barriers, issues TMA stores
    constexpr int kChunks = kBlockN / kEpilogueN;

    float acc[kBlockN / 2];
    unsigned packed[kBlockN / 4];  // the previous tile's output, converted to 16 bits
    bool pending = false;          // `packed` still has to be stored (overlapped epilogue)
    int pending_row = 0, pending_column = 0;
    PipelineState state;
    int previous_stage = -1;

    for (int tile = cluster; tile < order.count(); tile += clusters) {
      int tile_m, tile_n;
      order.coordinates(tile, tile_m, tile_n);

#pragma unroll
      for (int i = 0; i < kBlockN / 2; ++i) acc[i] = 0.0f;

      previous_stage = -1;
      int kb = 0;
      if constexpr (kOverlapEpilogue) {
        // The first kChunks K blocks each hide one chunk of the previous tile's stores.
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
          if (kb < k_blocks) {
            issue_k_block<kType>(acc, full, stage_a, stage_b, consumer, state);
            // While this K block's wgmmas run, store one chunk of the previous tile.
            if (pending) store_chunk(epilogue_context, packed, chunk, pending_row, pending_column);
            retire_k_block<kClusterM>(acc, empty, leader, state, previous_stage);
            ++kb;
          }
        }
      }
      for (; kb < k_blocks; ++kb) {
        issue_k_block<kType>(acc, full, stage_a, stage_b, consumer, state);
        retire_k_block<kClusterM>(acc, empty, leader, state, previous_stage);
      }
      wgmma_wait_group<0>();
      wgmma_fence_operand(acc);
      if (previous_stage >= 0 && leader) release_stage<kClusterM>(empty, previous_stage);

      // ------------------------------------------------------------ epilogue
      if constexpr (kOverlapEpilogue) {
        // Chunks of the previous tile that a short K loop left over.
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
          if (pending && chunk >= k_blocks) {
            store_chunk(epilogue_context, packed, chunk, pending_row, pending_column);
          }
        }
      }
#pragma unroll
      for (int p = 0; p < kBlockN / 4; ++p) packed[p] = pack_out<kType>(acc[2 * p], acc[2 * p + 1]);
      pending_row = (tile_m * kClusterM + cta_rank) * kBlockM + consumer * 64;
      pending_column = tile_n * kBlockN;
      pending = true;
      if constexpr (!kOverlapEpilogue) {
#pragma unroll
        for (int chunk = 0; chunk < kChunks; ++chunk) {
          store_chunk(epilogue_context, packed, chunk, pending_row, pending_column);
        }
        pending = false;
      }
    }
    if (pending) {
#pragma unroll
      for (int chunk = 0; chunk < kChunks; ++chunk) {
        store_chunk(epilogue_context, packed, chunk, pending_row, pending_column);
      }
    }
    if (leader && c == nullptr) tma_store_wait<0>();
  }

  if constexpr (kClusterM > 1) {
    cluster_sync();  // no CTA leaves while a peer may still arrive on its barriers
  }
}

}  // namespace tessel_reference

#define TESSEL_REFERENCE_GEMM_ENTRY(NAME, TYPE, CLUSTER_M, OVERLAP)                               \
  extern "C" __global__ void __launch_bounds__(tessel_reference::kThreads, 1)                     \
      NAME(const __grid_constant__ tessel::device::TmaDescriptor tma_a,                           \
           const __grid_constant__ tessel::device::TmaDescriptor tma_b,                           \
           const __grid_constant__ tessel::device::TmaDescriptor tma_c, unsigned short* c, int m, \
           int n, int k, int group_m) {                                                           \
    tessel_reference::gemm<TYPE, CLUSTER_M, OVERLAP>(tma_a, tma_b, tma_c, c, m, n, k, group_m);   \
  }

TESSEL_REFERENCE_GEMM_ENTRY(reference_gemm_f16, tessel::device::MmaType::f16, 1, false)
TESSEL_REFERENCE_GEMM_ENTRY(reference_gemm_bf16, tessel::device::MmaType::bf16, 1, false)
TESSEL_REFERENCE_GEMM_ENTRY(reference_gemm_f16_cluster2, tessel::device::MmaType::f16, 2, false)
TESSEL_REFERENCE_GEMM_ENTRY(reference_gemm_bf16_cluster2, tessel::device::MmaType::bf16, 2, false)
TESSEL_REFERENCE_GEMM_ENTRY(reference_gemm_f16_cluster2_overlap, tessel::device::MmaType::f16, 2,
                            true)
TESSEL_REFERENCE_GEMM_ENTRY(reference_gemm_bf16_cluster2_overlap, tessel::device::MmaType::bf16, 2,
                            true)
