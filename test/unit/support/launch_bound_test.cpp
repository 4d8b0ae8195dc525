#include "support/launch_bound.h"

#include <gtest/gtest.h>

namespace tessel {
namespace {

// What ptxas gives a thread under __launch_bounds__(threads, blocks): 65536 over the blocks'
// whole warps, in steps of 8, at most 255 (ptxas -v on the row programs: (288, 7), (288, 6) and
// (320, 6) compile to 32 registers, (1024, 2) to 32, (288, 3) to 72).
TEST(LaunchBound, RegistersComeInStepsOfEight) {
  EXPECT_EQ(launch_bound_registers(1024, 2), 32);
  EXPECT_EQ(launch_bound_registers(288, 7), 32);
  EXPECT_EQ(launch_bound_registers(288, 6), 32);  // 65536 / 1728 = 37
  EXPECT_EQ(launch_bound_registers(320, 6), 32);  // 34
  EXPECT_EQ(launch_bound_registers(288, 3), 72);  // 75
  EXPECT_EQ(launch_bound_registers(384, 1), 168);
  EXPECT_EQ(launch_bound_registers(128, 1), 248);  // 255 is the most, 248 in steps of 8
  EXPECT_EQ(launch_bound_registers(100, 1), 248);  // 100 threads hold four warps' registers
  EXPECT_EQ(launch_bound_registers(256, 0), 248);  // no minimum: one block
}

}  // namespace
}  // namespace tessel
