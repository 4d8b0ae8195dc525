// The canonicalizer folds integer arithmetic exactly as the interpreter computes it, simplifies
// identities, merges duplicate constants, and removes dead ops but never effects.
#include <gtest/gtest.h>

#include "ir/canonicalize.h"
#include "ir/int_arith.h"
#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace tessel::ir {
namespace {

std::string canon(const std::string& text) {
  auto m = parse_module(text);
  verify(*m);
  canonicalize(*m);
  verify(*m);
  return print(*m);
}

TEST(Canonicalize, FoldsIndexArithmeticAndKeepsTheGrid) {
  std::string out = canon(
      "kernel @k[M]() {\n"
      "  %M = size {name = M} : index\n"
      "  %a = const {value = 100} : index\n"
      "  %b = const {value = 32} : index\n"
      "  %g = cdiv %a, %b : index\n"
      "  %h = mul %g, %b : index\n"
      "  %x = add %M, %h : index\n"
      "  %i = block_grid %x : index\n"
      "}\n");
  EXPECT_NE(out.find("const {value = 128} : index"), std::string::npos) << out;
  EXPECT_NE(out.find("= add %M, %c128 : index"), std::string::npos) << out;
  EXPECT_EQ(out.find("cdiv"), std::string::npos) << out;
  EXPECT_NE(out.find("block_grid"), std::string::npos) << out;
}

TEST(Canonicalize, RemovesDeadButKeepsStores) {
  std::string out = canon(
      "kernel @k[M](%X: global<f32>[M]) {\n"
      "  %M = size {name = M} : index\n"
      "  %z = const {value = 0} : index\n"
      "  %o = const {value = 1} : index\n"
      "  %a = add %M, %z : index\n"
      "  %b = mul %a, %o : index\n"
      "  %f = fill {value = 1.0} : register<f32>[4]\n"
      "  %dead = exp %f : register<f32>[4]\n"
      "  %g = tile %X, %b {masked, shape = [4]} : global<f32>[4]\n"
      "  copy %f, %g\n"
      "}\n");
  EXPECT_NE(out.find("%g = tile %X, %M {masked, shape = [4]}"), std::string::npos) << out;
  EXPECT_EQ(out.find("exp"), std::string::npos) << out;
  EXPECT_EQ(out.find("add"), std::string::npos) << out;
  EXPECT_NE(out.find("copy %f, %g"), std::string::npos) << out;
}

TEST(Canonicalize, MergesDuplicateConstantsAndFoldsSelects) {
  std::string out = canon(
      "kernel @k(%X: global<i32>[8]) {\n"
      "  %a = const {value = 2} : index\n"
      "  %b = const {value = 2} : index\n"
      "  %t = cmp %a, %b {pred = eq} : i1\n"
      "  %s = select %t, %a, %b : index\n"
      "  %u = add %s, %b : index\n"
      "  %g = tile %X, %u {shape = [2]} : global<i32>[2]\n"
      "  %f = fill {value = 7} : register<i32>[2]\n"
      "  copy %f, %g\n"
      "}\n");
  EXPECT_NE(out.find("%g = tile %X, %c4 {shape = [2]}"), std::string::npos) << out;
  EXPECT_EQ(out.find("select"), std::string::npos) << out;
  EXPECT_EQ(out.find("%b ="), std::string::npos) << out;
}

TEST(Canonicalize, NeverFoldsDivisionByZeroOrFloats) {
  std::string out = canon(
      "kernel @k(%X: global<f32>[8]) {\n"
      "  %a = const {value = 2} : index\n"
      "  %z = const {value = 0} : index\n"
      "  %d = div %a, %z : index\n"
      "  %g = tile %X, %d {shape = [2]} : global<f32>[2]\n"
      "  %one = const {value = 1.0} : f32\n"
      "  %two = add %one, %one : f32\n"
      "  %f = fill {value = 7.0} : register<f32>[2]\n"
      "  %h = mul %f, %two : register<f32>[2]\n"
      "  copy %h, %g\n"
      "}\n");
  EXPECT_NE(out.find("div %a, %z"), std::string::npos) << out;
  EXPECT_NE(out.find("add %one, %one : f32"), std::string::npos) << out;
}

TEST(IntArith, WrapsAndDividesLikeTheInterpreter) {
  EXPECT_EQ(wrap_integer(ScalarKind::i8, 200), -56);
  EXPECT_EQ(wrap_integer(ScalarKind::u8, -1), 255);
  EXPECT_EQ(wrap_integer(ScalarKind::i4, 9), -7);
  EXPECT_EQ(wrap_integer(ScalarKind::u4, 17), 1);
  EXPECT_EQ(*eval_integer(OpKind::div, ScalarKind::i32, -7, 2), -3);
  EXPECT_EQ(*eval_integer(OpKind::rem, ScalarKind::i32, -7, 2), -1);
  EXPECT_EQ(*eval_integer(OpKind::cdiv, ScalarKind::index, 129, 128), 2);
  EXPECT_EQ(*eval_integer(OpKind::cdiv, ScalarKind::index, 128, 128), 1);
  EXPECT_EQ(*eval_integer(OpKind::add, ScalarKind::i8, 127, 1), -128);
  EXPECT_EQ(*eval_integer(OpKind::cmp, ScalarKind::u8, 255, 1, "gt"), 1);
  EXPECT_FALSE(eval_integer(OpKind::div, ScalarKind::i32, 1, 0).has_value());
}

}  // namespace
}  // namespace tessel::ir
