// Parser errors: each names the problem at the line:column where the text goes wrong.
#include <gtest/gtest.h>

#include "ir/parser.h"

namespace tessel::ir {
namespace {

void expect_parse_error(const std::string& text, const std::string& message, int line, int column) {
  try {
    parse_module(text, "p.tir");
    ADD_FAILURE() << "expected a parse error: " << message;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    EXPECT_EQ(e.location().line, line) << e.what();
    EXPECT_EQ(e.location().column, column) << e.what();
  }
}

TEST(Parser, Errors) {
  expect_parse_error("kernel @k() {\n  %x = frobnicate : index\n}\n", "unknown op 'frobnicate'", 2,
                     8);
  expect_parse_error("kernel @k() {\n  %x = add %y, %y : index\n}\n", "use of undefined value %y",
                     2, 12);
  expect_parse_error(
      "kernel @k() {\n  %x = const {value = 1} : index\n  %x = const {value = 2} : index\n}\n",
      "value %x is already defined", 3, 3);
  expect_parse_error("kernel @k() {\n  %x = fill {value = 1.0} : register<f17>[4]\n}\n",
                     "unknown element type 'f17'", 2, 38);
  expect_parse_error("kernel @k() {\n  %x = fill {value = 1.0} : texture<f16>[4]\n}\n",
                     "unknown type 'texture'", 2, 29);
  expect_parse_error("kernel @k() {\n  %x, %y = const {value = 1} : index\n}\n",
                     "const names 2 result(s) but gives 1 result type(s)", 2, 3);
  expect_parse_error("kernel @k() {\n  %x = const {value = 1, value = 2} : index\n}\n",
                     "attribute 'value' is given twice", 2, 26);
  expect_parse_error("kernel @k() {\n  %x = const {value = 1} : index\n",
                     "expected '}' to close the region", 3, 1);
  expect_parse_error("kernel @k() {\n  %x = fill {value = 1.0} : shared<f16, (4,4):(1,4>[4]\n}\n",
                     "layout:", 2, 51);
  expect_parse_error("kernel @k(%a global<f16>[4]) {\n}\n", "expected ':' after a parameter name",
                     1, 14);
  expect_parse_error("kernel @k[M]() facts(M % 4 == 1) {\n}\n", "a fact reads SIZE % N == 0", 1,
                     32);
}

TEST(Parser, CommentsAndBlankLinesAreIgnored) {
  auto m = parse_module("// leading\n\nkernel @k() { // trailing\n  // inside\n}\n");
  ASSERT_EQ(m->kernels.size(), 1u);
  EXPECT_EQ(m->kernels[0]->signature().name, "k");
}

}  // namespace
}  // namespace tessel::ir

#include <fstream>
#include <random>
#include <sstream>

#include "ir/verifier.h"

namespace tessel::ir {
namespace {

// Damaged text is a user error, never a crash or an internal error: delete, duplicate or replace
// characters of well-formed files at random and parse and verify what is left.
TEST(Parser, DamagedTextGivesUserErrorsOnly) {
  std::string source;
  for (const char* name : {"memory_ops", "compute_ops", "elementwise_ops", "control_ops"}) {
    std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/test/lit/ir/" + name + ".tir");
    std::stringstream s;
    s << in.rdbuf();
    source += s.str();
  }
  ASSERT_GT(source.size(), 1000u);
  std::mt19937 rng(7);
  const std::string alphabet = "%@{}[]()<>:,=0123456789 \nabcfgiklmnrstux-.\"";
  int user_errors = 0;
  for (int trial = 0; trial < 1500; ++trial) {
    std::string text = source;
    for (int edit = 0; edit < 3; ++edit) {
      size_t pos = rng() % text.size();
      switch (rng() % 3) {
        case 0:
          text.erase(pos, 1 + rng() % 4);
          break;
        case 1:
          text.insert(pos, text.substr(rng() % text.size(), 1 + rng() % 6));
          break;
        default:
          text[pos] = alphabet[rng() % alphabet.size()];
      }
    }
    try {
      auto m = parse_module(text, "fuzz.tir");
      verify(*m);
    } catch (const UserError&) {
      ++user_errors;
    } catch (const std::exception& e) {
      ADD_FAILURE() << "trial " << trial << ": not a user error: " << e.what() << "\n" << text;
      return;
    }
  }
  EXPECT_GT(user_errors, 500);
}

}  // namespace
}  // namespace tessel::ir

namespace tessel::ir {
namespace {

TEST(Parser, EverySyntaxErrorHasItsMessage) {
  struct Case {
    const char* text;
    const char* message;
  };
  const Case cases[] = {
      {"kernel @k() {\n  %x = add % : index\n}\n", "expected a value name after '%'"},
      {"kernel @k() {\n  %c = const {value = 0} : index\n  %x = add %c, 3 : index\n}\n",
       "expected a value such as %x"},
      {"kernel @k() {\n  %x = const {value = 1} : \n}\n", "expected a type"},
      {"kernel @k() {\n  %x = const {value = 1} : f32<4>\n}\n",
       "scalar type f32 takes no parameters"},
      {"kernel @k() {\n  %x = fill {value = 1.0} : register[4]\n}\n",
       "expected '<' after register"},
      {"kernel @k() {\n  %x = fill {value = 1.0} : register<f32>\n}\n",
       "expected '[' with the tensor's shape after the type's '>'"},
      {"kernel @k() {\n  %x = fill {value = 1.0} : register<f32, >[4]\n}\n", "expected a layout"},
      {"kernel @k() {\n  %x = fill {value = 1.0} : register<f32>[-4]\n}\n",
       "an extent cannot be negative"},
      {"kernel @k() {\n  %x = fill {value = 1.0} : register<f32>[,]\n}\n",
       "expected an extent (a number or a size symbol)"},
      {"kernel @k() {\n  %x = call_external {callee = \"abc} : f32\n}\n", "unterminated string"},
      {"kernel @k() {\n  %x = const {value = } : f32\n}\n", "expected an attribute value"},
      {"kernel @k() {\n  %x = const {value = -ix} : f32\n}\n", "expected a number"},
      {"kernel @k() {\n  %x = const {value = 1.2.3} : f32\n}\n", "malformed number '1.2.3'"},
      {"kernel @k() {\n  %x = const {value = 99999999999999999999} : index\n}\n",
       "malformed number"},
      {"kernel @k() {\n  %x = const { = 3} : index\n}\n", "expected an attribute name"},
      {"kernel @() {\n}\n", "expected the kernel's name"},
      {"kernel @k[,]() {\n}\n", "expected a size symbol"},
      {"kernel @k[M]() facts(% 4 == 0) {\n}\n", "expected a size symbol in a fact"},
      {"kernel @k() {\n  %x = : index\n}\n", "expected an op"},
      {"kernel @k() {\n  kernel @j() {\n  }\n}\n", "a kernel cannot be nested in another op"},
  };
  for (const Case& c : cases) {
    try {
      parse_module(c.text, "p.tir");
      ADD_FAILURE() << "expected: " << c.message;
    } catch (const UserError& e) {
      EXPECT_NE(std::string(e.what()).find(c.message), std::string::npos) << e.what();
      EXPECT_EQ(e.location().file, "p.tir");
    }
  }
  try {
    parse_type("f32 x");
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("unexpected text after the type"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessel::ir
