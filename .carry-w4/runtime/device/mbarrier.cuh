// mbarrier: the shared-memory barrier object that TMA loads complete on and that producer and
// consumer roles use to pass ring slots (PTX ISA "mbarrier"; CUTLASS arch/barrier.h).
//
// An mbarrier is an 8-byte-aligned u64 in shared memory holding a pending-arrival count, a
// transaction-byte count and a phase bit. A phase completes when both counts reach zero; then the
// phase bit flips and the arrival count reloads from the init count. `wait(bar, parity)` returns
// once the phase with that parity has completed. A freshly initialized barrier reads as if the
// phase of parity 1 had just completed, so a consumer starts waiting on parity 0 and a producer
// waiting for empty slots starts on parity 1 (which passes at once). Flip the parity whenever the
// ring index wraps.
#pragma once

#include "common.cuh"

namespace tessel {
namespace device {

// mbarrier.init.shared::cta.b64: sets the expected arrival count (1 ≤ count < 2^20) and phase 0.
// One thread initializes; follow with mbarrier_init_fence() and a CTA (or cluster) barrier before
// any other thread or the TMA unit touches the barrier.
__device__ __forceinline__ void mbarrier_init(unsigned long long* bar, unsigned count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)), "r"(count)
               : "memory");
}

// fence.mbarrier_init.release.cluster: makes preceding mbarrier.init visible to the other threads
// of the cluster and to the async proxy (TMA complete_tx, remote arrives). Issue once, by the
// initializing thread, before the barrier that publishes the barriers.
__device__ __forceinline__ void mbarrier_init_fence() {
  asm volatile("fence.mbarrier_init.release.cluster;" ::: "memory");
}

// mbarrier.arrive.shared::cta.b64: one arrival on the current phase (release semantics at CTA
// scope: the caller's earlier memory accesses are ordered before the phase completes).
__device__ __forceinline__ void mbarrier_arrive(unsigned long long* bar) {
  asm volatile(
      "{\n"
      "  .reg .b64 state;\n"
      "  mbarrier.arrive.shared::cta.b64 state, [%0];\n"
      "}\n" ::"r"(smem_u32(bar))
      : "memory");
}

// mbarrier.arrive.expect_tx.shared::cta.b64: adds `bytes` to the transaction count, then arrives
// once. The producer of a TMA stage calls this with every byte that will land in this CTA for
// the stage (its own loads and peers' multicasts), before or after issuing the copies.
__device__ __forceinline__ void mbarrier_arrive_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile(
      "{\n"
      "  .reg .b64 state;\n"
      "  mbarrier.arrive.expect_tx.shared::cta.b64 state, [%0], %1;\n"
      "}\n" ::"r"(smem_u32(bar)),
      "r"(bytes)
      : "memory");
}

// mbarrier.expect_tx.relaxed.cta.shared::cta.b64: adds `bytes` to the transaction count without
// arriving.
__device__ __forceinline__ void mbarrier_expect_tx(unsigned long long* bar, unsigned bytes) {
  asm volatile("mbarrier.expect_tx.relaxed.cta.shared::cta.b64 [%0], %1;" ::"r"(smem_u32(bar)),
               "r"(bytes)
               : "memory");
}

// mbarrier.try_wait.parity.shared::cta.b64 in a loop: blocks until the phase with parity
// `parity` (0 or 1) has completed. Acquire semantics at CTA scope: after it returns, the caller
// sees the writes released by the arrivals and the bytes completed by TMA. The suspend-time hint
// lets the hardware park the warp instead of spinning hot.
__device__ __forceinline__ void mbarrier_wait(unsigned long long* bar, unsigned parity) {
  asm volatile(
      "{\n"
      "  .reg .pred done;\n"
      "  WAIT_%=:\n"
      "  mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1, 0x989680;\n"
      "  @!done bra WAIT_%=;\n"
      "}\n" ::"r"(smem_u32(bar)),
      "r"(parity)
      : "memory");
}

// mbarrier.test_wait.parity.shared::cta.b64: non-blocking probe; true when the phase with parity
// `parity` has completed.
__device__ __forceinline__ bool mbarrier_test_wait(unsigned long long* bar, unsigned parity) {
  unsigned done;
  asm volatile(
      "{\n"
      "  .reg .pred p;\n"
      "  mbarrier.test_wait.parity.shared::cta.b64 p, [%1], %2;\n"
      "  selp.u32 %0, 1, 0, p;\n"
      "}\n"
      : "=r"(done)
      : "r"(smem_u32(bar)), "r"(parity)
      : "memory");
  return done != 0;
}

// mbarrier.arrive.shared::cluster.b64 on the barrier at the same offset in CTA `cta_rank` of the
// cluster (mapa maps the local address). Default semantics (release at CTA scope): enough when
// the arrival only says "I finished reading a slot through the async proxy" (wgmma_wait_group
// already ordered the reads), as consumers do when they free a ring slot into which a peer's
// producer multicasts. Do not ask for .release.cluster here without need: ptxas turns it into a
// MEMBAR.ALL.GPU per arrival, which halved the reference GEMM's speed.
__device__ __forceinline__ void mbarrier_arrive_cluster(unsigned long long* bar,
                                                        unsigned cta_rank) {
  asm volatile(
      "{\n"
      "  .reg .b32 remote;\n"
      "  mapa.shared::cluster.u32 remote, %0, %1;\n"
      "  mbarrier.arrive.shared::cluster.b64 _, [remote];\n"
      "}\n" ::"r"(smem_u32(bar)),
      "r"(cta_rank)
      : "memory");
}

// mbarrier.inval.shared::cta.b64: returns the barrier's memory to ordinary use. Only once no
// thread or copy can still touch it.
__device__ __forceinline__ void mbarrier_invalidate(unsigned long long* bar) {
  asm volatile("mbarrier.inval.shared::cta.b64 [%0];" ::"r"(smem_u32(bar)) : "memory");
}

}  // namespace device
}  // namespace tessel
