// What the launch bound leaves a thread: one rule shared by the passes that size registers
// (schedule-rows' model, lower-arefs' setmaxnreg pool) and the emitter that decides from it how
// to write a kernel (chunked runs).
#pragma once

#include <algorithm>
#include <cstdint>

namespace tessel {

// The registers ptxas gives each thread under __launch_bounds__(threads, blocks): the SM's 65536
// shared by `blocks` blocks of `threads` threads (whole warps), at most 255, allocated in steps
// of 8 — so 6 blocks of 288 threads get 32, not 65536 / 1728 = 37.
inline int64_t launch_bound_registers(int64_t threads, int64_t blocks) {
  constexpr int64_t kRegistersPerSm = 65536;
  const int64_t warp_threads = (threads + 31) / 32 * 32;
  const int64_t per_thread = kRegistersPerSm / (std::max<int64_t>(blocks, 1) * warp_threads);
  return std::min<int64_t>(255, per_thread) / 8 * 8;
}

}  // namespace tessel
