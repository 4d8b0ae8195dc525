#include "support/command_line.h"

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "support/diagnostics.h"

namespace tessel {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.message();
  }
  return "no error";
}

TEST(OptionParser, SpellingsOfValuesAndPositionalArguments) {
  bool check = false;
  std::string output, size;
  int64_t seed = 1;
  std::vector<std::string> passes, assumed;
  OptionParser parser("run");
  parser.flag("--check", check)
      .value("--output -o", output)
      .value("--size", size)
      .integer("--seed", seed, 0)
      .list("--passes", passes)
      .value("--assume", [&](const std::string& fact) { assumed.push_back(fact); });
  std::vector<std::string> positional =
      parser.parse({"a.tir", "--check", "-o", "out", "--size=M=8,N=4", "--seed", "7", "-",
                    "--passes=x,,y", "--assume", "K%8==0", "--assume=M%4==0", "-1"});
  EXPECT_EQ(positional, (std::vector<std::string>{"a.tir", "-", "-1"}));
  EXPECT_TRUE(check);
  EXPECT_EQ(output, "out");
  EXPECT_EQ(size, "M=8,N=4");  // only the first '=' separates the value
  EXPECT_EQ(seed, 7);
  EXPECT_EQ(passes, (std::vector<std::string>{"x", "y"}));
  EXPECT_EQ(assumed, (std::vector<std::string>{"K%8==0", "M%4==0"}));
}

TEST(OptionParser, MisuseIsAUserErrorNamingTheOption) {
  bool flag = false;
  std::string text;
  int count = 0;
  OptionParser parser("opt");
  parser.flag("--flag", flag).value("--text -t", text).integer("--count", count, 1);
  auto parse = [&](std::vector<std::string> args) { return error_of([&] { parser.parse(args); }); };
  EXPECT_EQ(parse({"--frob"}), "unknown option '--frob' (see `tessel help opt`)");
  EXPECT_EQ(parse({"--frob=1"}), "unknown option '--frob' (see `tessel help opt`)");
  EXPECT_EQ(parse({"-x"}), "unknown option '-x' (see `tessel help opt`)");
  EXPECT_EQ(parse({"--flag=yes"}), "--flag takes no value");
  EXPECT_EQ(parse({"--text"}), "--text needs a value");
  EXPECT_EQ(parse({"-t"}), "-t needs a value");
  EXPECT_EQ(parse({"--count", "0"}), "--count expects a positive integer, got '0'");
  EXPECT_EQ(parse({"--count=3x"}), "--count expects a positive integer, got '3x'");
  EXPECT_EQ(parse({"--count="}), "--count expects a positive integer, got ''");
  EXPECT_EQ(parse({"--count", "-99999999999999999999"}),
            "--count expects a positive integer, got '-99999999999999999999'");
  EXPECT_EQ(parse({"--count", "3000000000"}),
            "--count expects at most 2147483647, got '3000000000'");
}

TEST(CommandLine, SplitListDropsEmptyItems) {
  EXPECT_EQ(split_list("a,,b,"), (std::vector<std::string>{"a", "b"}));
  EXPECT_TRUE(split_list("").empty());
}

TEST(CommandLine, SingleInputFile) {
  EXPECT_EQ(single_input_file({"a.tir"}, "run"), "a.tir");
  EXPECT_EQ(error_of([] { single_input_file({}, "run"); }),
            "run needs an input file (or - for stdin)");
  EXPECT_EQ(error_of([] {
              single_input_file({"a", "b"}, "opt");
            }),
            "opt takes one input file, got 'a' and 'b'");
}

TEST(CommandLine, ReadInputFileRefusesDirectoriesAndMissingFiles) {
  EXPECT_EQ(error_of([] { read_input_file("/"); }), "cannot read '/': it is a directory");
  EXPECT_EQ(error_of([] { read_input_file("/nonexistent/k.tir"); }),
            "cannot read '/nonexistent/k.tir': no such file");
  EXPECT_NE(read_input_file(__FILE__).find("ReadInputFileRefuses"), std::string::npos);
}

}  // namespace
}  // namespace tessel
