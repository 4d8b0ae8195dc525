// The order of interleaved timings (runtime/timing.h): every round launches each kernel once,
// and across rounds each kernel takes each place in the round equally often, so that no kernel is
// always timed right after the same neighbour (on a card at its power limit that moved a 26 ms
// kernel's time by 10%: bench/results/2026-11-29-attention-pingpong-h200.md).
#include "runtime/timing.h"

#include <gtest/gtest.h>

#include <set>
#include <vector>

namespace tessel::runtime {
namespace {

TEST(InterleavedTiming, EveryRoundLaunchesEachKernelOnce) {
  for (std::size_t n : {1u, 2u, 3u, 5u}) {
    for (std::size_t round = 0; round < 7; ++round) {
      std::set<std::size_t> seen;
      for (std::size_t place = 0; place < n; ++place) {
        const std::size_t k = interleaved_kernel(round * n + place, n);
        EXPECT_LT(k, n);
        seen.insert(k);
      }
      EXPECT_EQ(seen.size(), n) << n << " kernels, round " << round;
    }
  }
}

TEST(InterleavedTiming, EachKernelTakesEachPlaceEquallyOften) {
  const std::size_t n = 3, rounds = 6;
  std::vector<std::vector<int>> count(n, std::vector<int>(n, 0));  // [kernel][place]
  for (std::size_t launch = 0; launch < n * rounds; ++launch) {
    ++count[interleaved_kernel(launch, n)][launch % n];
  }
  for (std::size_t k = 0; k < n; ++k) {
    for (std::size_t place = 0; place < n; ++place) EXPECT_EQ(count[k][place], 2);
  }
  // Round 0 keeps the order given; two kernels alternate which goes first.
  EXPECT_EQ(interleaved_kernel(0, 3), 0u);
  EXPECT_EQ(interleaved_kernel(1, 3), 1u);
  EXPECT_EQ(interleaved_kernel(2, 2), 1u);
  EXPECT_EQ(interleaved_kernel(3, 2), 0u);
}

}  // namespace
}  // namespace tessel::runtime
