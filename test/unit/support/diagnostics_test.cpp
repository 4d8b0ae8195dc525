#include "support/diagnostics.h"

#include <gtest/gtest.h>

namespace tessel {
namespace {

TEST(Diagnostics, UserErrorFormatsLocationAndMessage) {
  try {
    user_error(SourceLocation::at("<expr>", 1, 7), "composition: ", 3, " does not divide ", 8);
    FAIL() << "user_error returned";
  } catch (const UserError& error) {
    EXPECT_EQ(error.message(), "composition: 3 does not divide 8");
    EXPECT_EQ(error.location().column, 7);
    EXPECT_STREQ(error.what(), "<expr>:1:7: error: composition: 3 does not divide 8");
  }
}

TEST(Diagnostics, UnknownLocationPrintsBareError) {
  UserError error(SourceLocation::unknown(), "bad");
  EXPECT_STREQ(error.what(), "error: bad");
  EXPECT_EQ(SourceLocation::at("", 0, 5).str(), "column 5");
  EXPECT_EQ(SourceLocation::at("f.tsl", 3, 0).str(), "f.tsl:3");
}

TEST(Diagnostics, CppCallSiteLocation) {
  SourceLocation here = SourceLocation::from(std::source_location::current());
  EXPECT_NE(here.file.find("diagnostics_test.cpp"), std::string::npos);
  EXPECT_GT(here.line, 0);
}

TEST(Diagnostics, AssertThrowsInternalErrorNotUserError) {
  auto broken = [] { TESSEL_ASSERT(1 + 1 == 3, "arithmetic is ", "broken"); };
  EXPECT_THROW(broken(), InternalError);
  try {
    broken();
  } catch (const InternalError& error) {
    std::string text = error.what();
    EXPECT_NE(text.find("1 + 1 == 3"), std::string::npos) << text;
    EXPECT_NE(text.find("arithmetic is broken"), std::string::npos) << text;
  }
  EXPECT_NO_THROW(TESSEL_ASSERT(true));
}

}  // namespace
}  // namespace tessel
