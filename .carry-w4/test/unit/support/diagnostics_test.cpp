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

TEST(Diagnostics, SourceExcerptPointsAtTheColumn) {
  std::string_view source = "kernel @k() {\n  %x = add %nope, %c0 : index\r\n}\n";
  EXPECT_EQ(source_excerpt(source, 2, 12), "    %x = add %nope, %c0 : index\n             ^");
  EXPECT_EQ(source_excerpt("\tab", 1, 2), "  \tab\n  \t^");  // tabs kept: the caret lines up
  EXPECT_EQ(source_excerpt("ab", 1, 3), "  ab\n    ^");      // just past the end of the line
  EXPECT_EQ(source_excerpt(source, 9, 1), "");               // no such line
  EXPECT_EQ(source_excerpt(source, 4, 1), "");               // the empty line after the last
  EXPECT_EQ(source_excerpt(source, 2, 0), "");               // column unknown
}

TEST(Diagnostics, WithSourceExcerptKeepsLocationAndAddsLines) {
  UserError error(SourceLocation::at("k.tir", 1, 4), "unexpected character '$'");
  UserError shown = with_source_excerpt(error, "(4,$)");
  EXPECT_EQ(shown.location().column, 4);
  EXPECT_STREQ(shown.what(), "k.tir:1:4: error: unexpected character '$'\n  (4,$)\n     ^");
  EXPECT_STREQ(with_source_excerpt(UserError(SourceLocation::unknown(), "bad"), "x").what(),
               "error: bad");
}

}  // namespace
}  // namespace tessel
