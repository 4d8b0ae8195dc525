#include "runtime/driver.h"

#include <gtest/gtest.h>

#include "support/diagnostics.h"

namespace tessel::runtime {
namespace {

// Runs in a child process so that TESSEL_DISABLE_GPU is read before the driver is first loaded.
TEST(DriverDeathTest, DisabledGpuIsReportedNotCrashed) {
  EXPECT_EXIT(
      {
        setenv("TESSEL_DISABLE_GPU", "1", 1);
        std::string reason;
        bool available = gpu_available(&reason);
        bool threw = false;
        try {
          driver();
        } catch (const UserError& error) {
          threw = std::string(error.what()).find("no GPU available: TESSEL_DISABLE_GPU=1") !=
                  std::string::npos;
        }
        std::exit(!available && reason == "TESSEL_DISABLE_GPU=1" && threw ? 0 : 1);
      },
      ::testing::ExitedWithCode(0), "");
}

TEST(Driver, AvailabilityIsAnsweredWithoutThrowing) {
  std::string reason;
  bool available = false;
  EXPECT_NO_THROW(available = gpu_available(&reason));
  if (!available) {
    EXPECT_FALSE(reason.empty());
  }
}

}  // namespace
}  // namespace tessel::runtime
