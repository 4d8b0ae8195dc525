// The FileCheck-style checker must pass what matches and fail what does not.
#include "filecheck.h"

#include <gtest/gtest.h>

namespace tessel::lit {
namespace {

const char* kOutput =
    "kernel @a {\n"
    "  %x = add %y, %z : index\n"
    "  %w = mul %x, %x : index\n"
    "}\n"
    "kernel @b {\n"
    "  %q = exp %p : f32\n"
    "}\n";

bool passes(const std::string& checks, const std::string& prefix = "CHECK") {
  return file_check(checks, "t.tir", kOutput, prefix).ok;
}

TEST(FileCheck, PlainMatchesInOrder) {
  EXPECT_TRUE(passes("// CHECK: add\n// CHECK: mul\n"));
  EXPECT_FALSE(passes("// CHECK: mul\n// CHECK: add\n"));
  EXPECT_FALSE(passes("// CHECK: sub\n"));
}

TEST(FileCheck, NextAndSame) {
  EXPECT_TRUE(passes("// CHECK: add\n// CHECK-NEXT: mul\n"));
  EXPECT_FALSE(passes("// CHECK: kernel @a\n// CHECK-NEXT: mul\n"));
  EXPECT_TRUE(passes("// CHECK: %x =\n// CHECK-SAME: add %y\n"));
  EXPECT_FALSE(passes("// CHECK: %x =\n// CHECK-SAME: mul\n"));
}

TEST(FileCheck, NotBetweenMatches) {
  EXPECT_TRUE(passes("// CHECK: add\n// CHECK-NOT: exp\n// CHECK: mul\n"));
  EXPECT_FALSE(passes("// CHECK: kernel @a\n// CHECK-NOT: mul\n// CHECK: kernel @b\n"));
  EXPECT_FALSE(passes("// CHECK: kernel @b\n// CHECK-NOT: exp\n"));  // NOT up to the end
}

TEST(FileCheck, LabelsCutSections) {
  EXPECT_TRUE(passes("// CHECK-LABEL: @a\n// CHECK: add\n// CHECK-LABEL: @b\n// CHECK: exp\n"));
  // "exp" exists only after @b, so it cannot be found in the section of @a.
  EXPECT_FALSE(passes("// CHECK-LABEL: @a\n// CHECK: exp\n// CHECK-LABEL: @b\n"));
  EXPECT_FALSE(passes("// CHECK-LABEL: @c\n"));
}

TEST(FileCheck, RegexAndBlanks) {
  EXPECT_TRUE(passes("// CHECK: %{{[a-z]+}} = add\n"));
  EXPECT_TRUE(passes("// CHECK: %x   =   add\n"));
  EXPECT_FALSE(passes("// CHECK: %{{[0-9]+}} = add\n"));
  EXPECT_TRUE(passes("// CHECK: (x) [y]\n") == false);  // special characters are literal
}

TEST(FileCheck, PrefixesAndEmptyChecks) {
  EXPECT_TRUE(passes("// ERR: exp\n// CHECK: nothing\n", "ERR"));
  EXPECT_FALSE(passes("// nothing to check\n"));
  EXPECT_FALSE(passes("// XCHECK: add\n"));  // not a directive: the file checks nothing
}

TEST(FileCheck, MessageNamesTheDirective) {
  CheckResult r = file_check("// CHECK: add\n// CHECK-NEXT: exp\n", "t.tir", kOutput);
  ASSERT_FALSE(r.ok);
  EXPECT_NE(r.message.find("t.tir:2: error: CHECK-NEXT"), std::string::npos) << r.message;
}

}  // namespace
}  // namespace tessel::lit
