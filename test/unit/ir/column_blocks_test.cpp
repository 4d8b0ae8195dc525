// Recognizing global tensors stored in permuted column blocks (src/ir/column_blocks.h): the W4A16
// weights' rank-2 form, the MoE experts' rank-3 form (leading dimensions row-major), and the
// layouts that are not of that form.
#include <gtest/gtest.h>

#include "ir/column_blocks.h"
#include "ir/parser.h"

namespace tessel::ir {
namespace {

TEST(ColumnBlocks, PackedWeightsOfOneMatrix) {
  auto blocks =
      column_blocks(parse_type("global<u4, (N,((2,4,2,2,2),K/64)):(K,((4,16,1,2,8),64))>[N,K]"));
  ASSERT_TRUE(blocks.has_value());
  EXPECT_EQ(blocks->block, 64);
  EXPECT_EQ(blocks->position(1), 4);  // column 1 at nibble 4
  EXPECT_EQ(blocks->position(8), 1);  // column 8 at nibble 1
  EXPECT_EQ(blocks->position(63), 63);
  EXPECT_NE(blocks->permutation.find("(4,16,1,2,8)"), std::string::npos) << blocks->permutation;
}

TEST(ColumnBlocks, ExpertsOneMatrixAfterAnother) {
  auto blocks = column_blocks(
      parse_type("global<u4, (E,N,((2,4,2,2,2),K/64)):(N*K,K,((4,16,1,2,8),64))>[E,N,K]"));
  ASSERT_TRUE(blocks.has_value());
  EXPECT_EQ(blocks->block, 64);
  // The product's order does not matter, static extents mix with symbols.
  EXPECT_TRUE(column_blocks(
      parse_type("global<u4, (E,N,((2,4,2,2,2),K/64)):(K*N,K,((4,16,1,2,8),64))>[E,N,K]")));
  EXPECT_TRUE(column_blocks(
      parse_type("global<u4, (8,N,((2,4,2,2,2),2)):(128*N,128,((4,16,1,2,8),64))>[8,N,128]")));
}

TEST(ColumnBlocks, OtherLayoutsAreNot) {
  // Leading stride of the wrong matrix size, rows not one row apart, a repeated position, a
  // plain row-major layout, and no layout at all.
  EXPECT_FALSE(column_blocks(
      parse_type("global<u4, (E,N,((2,4,2,2,2),K/64)):(E*K,K,((4,16,1,2,8),64))>[E,N,K]")));
  EXPECT_FALSE(
      column_blocks(parse_type("global<u4, (N,((2,4,2,2,2),K/64)):(64,((4,16,1,2,8),64))>[N,K]")));
  EXPECT_FALSE(
      column_blocks(parse_type("global<u4, (N,((2,4,2,2,2),K/64)):(K,((4,16,1,2,0),64))>[N,K]")));
  EXPECT_FALSE(column_blocks(parse_type("global<u4, (N,K):(K,1)>[N,K]")));
  EXPECT_FALSE(column_blocks(parse_type("global<u4>[N,K]")));
}

}  // namespace
}  // namespace tessel::ir
