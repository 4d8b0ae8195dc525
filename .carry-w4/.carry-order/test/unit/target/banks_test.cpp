// The bank model against cases whose wavefront counts are known.
#include <gtest/gtest.h>

#include "support/diagnostics.h"
#include "target/cuda/banks.h"

namespace tessel::target::cuda {
namespace {

WarpRequest strided(int bytes, int64_t stride, int lanes = 32) {
  WarpRequest r;
  r.bytes = bytes;
  for (int l = 0; l < lanes; ++l) r.address.push_back(l * stride);
  return r;
}

TEST(Banks, FourByteAccesses) {
  EXPECT_EQ(count_wavefronts(strided(4, 4)).wavefronts, 1);     // consecutive words
  EXPECT_EQ(count_wavefronts(strided(4, 8)).wavefronts, 2);     // 2-way
  EXPECT_EQ(count_wavefronts(strided(4, 128)).wavefronts, 32);  // every lane in bank 0
  EXPECT_EQ(count_wavefronts(strided(4, 0)).wavefronts, 1);     // broadcast of one word
  EXPECT_EQ(count_wavefronts(strided(4, 132)).wavefronts, 1);   // odd word stride: no conflict
  EXPECT_EQ(count_wavefronts(strided(4, 128)).degree(), 32.0);
}

TEST(Banks, SubWordAccessesShareWords) {
  EXPECT_EQ(count_wavefronts(strided(1, 1)).wavefronts, 1);
  EXPECT_EQ(count_wavefronts(strided(2, 2)).wavefronts, 1);
  // Two-byte accesses 128 bytes apart: distinct words in one bank.
  EXPECT_EQ(count_wavefronts(strided(2, 128)).wavefronts, 32);
}

TEST(Banks, WideAccessesAreServedInPhases) {
  BankCount b8 = count_wavefronts(strided(8, 8));
  EXPECT_EQ(b8.wavefronts, 2);
  EXPECT_EQ(b8.ideal, 2);
  BankCount b16 = count_wavefronts(strided(16, 16));
  EXPECT_EQ(b16.wavefronts, 4);
  EXPECT_EQ(b16.ideal, 4);
  EXPECT_EQ(b16.degree(), 1.0);
  // A column of a row-major tile with 128-byte rows, 16 bytes per lane: each quarter-warp phase
  // puts 8 rows on the same four banks.
  BankCount column = count_wavefronts(strided(16, 128));
  EXPECT_EQ(column.wavefronts, 32);
  EXPECT_EQ(column.degree(), 8.0);
  // 8 bytes at a 16-byte stride: each half-warp spans 256 bytes, 2-way.
  EXPECT_EQ(count_wavefronts(strided(8, 16)).wavefronts, 4);
  // Inactive lanes cost nothing: ldmatrix.x1 gives 8 addresses.
  WarpRequest x1 = strided(16, 16, 8);
  for (int l = 8; l < 32; ++l) x1.address.push_back(-1);
  EXPECT_EQ(count_wavefronts(x1).wavefronts, 1);
  EXPECT_EQ(count_wavefronts(x1).ideal, 1);
}

TEST(Banks, BadRequestsAreUserErrors) {
  try {
    count_wavefronts(strided(8, 4));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find("lane 1 accesses 8 bytes at address 4, which is not "
                                         "8-byte aligned"),
              std::string::npos);
  }
  EXPECT_THROW(count_wavefronts(strided(3, 3)), UserError);
}

}  // namespace
}  // namespace tessel::target::cuda
