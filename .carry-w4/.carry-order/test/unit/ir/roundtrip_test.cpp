// print -> parse -> print is the identity, on files that together use every op and every type.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "ir/parser.h"
#include "ir/printer.h"
#include "ir/verifier.h"

namespace tessel::ir {
namespace {

std::vector<std::filesystem::path> op_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& entry :
       std::filesystem::directory_iterator(std::string(TESSEL_SOURCE_DIR) + "/test/lit/ir")) {
    if (entry.path().extension() == ".tir") files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string read(const std::filesystem::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

TEST(RoundTrip, EveryOpFilePrintsParsesAndPrintsTheSame) {
  auto files = op_files();
  ASSERT_GE(files.size(), 4u);
  std::set<OpKind> seen;
  for (const auto& file : files) {
    SCOPED_TRACE(file.string());
    auto module = parse_module(read(file), file.string());
    verify(*module);
    std::string first = print(*module);
    auto again = parse_module(first, "printed");
    verify(*again);
    EXPECT_EQ(print(*again), first);
    for (auto& k : module->kernels) walk(k.get(), [&](Operation* op) { seen.insert(op->kind()); });
  }
  // Every op kind of the IR appears in these files, so the round trip covers every op.
  for (int k = 0; k <= static_cast<int>(OpKind::fma); ++k) {
    EXPECT_TRUE(seen.count(static_cast<OpKind>(k)))
        << "no round-trip test uses op " << op_name(static_cast<OpKind>(k));
  }
}

TEST(RoundTrip, EveryScalarTypeAndMemorySpace) {
  const char* names[] = {"i1",     "i4",     "u4",  "i8",   "u8",  "i16", "i32",  "i64",
                         "f8e4m3", "f8e5m2", "f16", "bf16", "f32", "f64", "index"};
  for (const char* name : names) {
    EXPECT_EQ(parse_type(name).str(), name);
    for (const char* space : {"global", "shared", "register"}) {
      std::string t = std::string(space) + "<" + name + ">[M,64]";
      EXPECT_EQ(parse_type(t).str(), t);
    }
  }
  EXPECT_EQ(parse_type("shared<f16, (64,8):(1,64)>[64,8]").str(),
            "shared<f16, (64,8):(1,64)>[64,8]");
  // Layout text is canonicalized by the layout library (spaces dropped).
  EXPECT_EQ(parse_type("shared<f16, (64, 8) : (1, 64)>[64,8]").str(),
            "shared<f16, (64,8):(1,64)>[64,8]");
}

TEST(RoundTrip, RealAttributesKeepEveryBit) {
  for (double v : {0.1, -2.5e-300, 1e300, 3.0, -0.0, 65504.0, 1.0 / 3.0}) {
    std::ostringstream text;
    auto a = Attribute::real(v);
    std::string k = "kernel @k() {\n  %f = fill {value = " + a.str() + "} : register<f64>[2]\n}\n";
    auto m = parse_module(k);
    double back = m->kernels[0]->region(0)->ops()[0]->real_attr("value");
    EXPECT_EQ(std::memcmp(&back, &v, sizeof v), 0) << a.str();
    EXPECT_EQ(print(*m), k);
  }
}

TEST(RoundTrip, NamesAreMadeUniqueWhenHintsCollide) {
  auto m = std::make_unique<Module>();
  auto k = std::make_unique<Operation>(OpKind::kernel, SourceLocation{});
  k->signature().name = "k";
  Block* body = k->add_region();
  OpBuilder b(body);
  Operation* c1 = b.create(OpKind::constant, {}, {Type::scalar(ScalarKind::index)});
  c1->set_attr("value", Attribute::integer(1));
  c1->result()->set_name("x");
  Operation* c2 =
      b.create(OpKind::add, {c1->result(), c1->result()}, {Type::scalar(ScalarKind::index)});
  c2->result()->set_name("x");
  m->kernels.push_back(std::move(k));
  verify(*m);
  std::string text = print(*m);
  EXPECT_NE(text.find("%x_1 = add %x, %x : index"), std::string::npos) << text;
  EXPECT_EQ(print(*parse_module(text)), text);
}

}  // namespace
}  // namespace tessel::ir

#include "ir/canonicalize.h"

namespace tessel::ir {
namespace {

// clone copies a whole kernel (print-identical), and the builder inserts before a chosen op.
TEST(IrApi, CloneAndInsertionPoints) {
  for (const auto& file : op_files()) {
    auto module = parse_module(read(file), file.string());
    std::unordered_map<const Value*, Value*> mapping;
    Module copy;
    copy.kernels.push_back(clone(*module->kernels[0], mapping));
    verify(copy);
    EXPECT_EQ(print(copy), print_kernel(*module->kernels[0])) << file;
  }
  auto m = parse_module(
      "kernel @k(%X: global<f32>[4]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %t = tile %X, %c0 {shape = [4]} : global<f32>[4]\n"
      "}\n");
  Operation* tile = m->kernels[0]->region(0)->ops()[1].get();
  OpBuilder b(m->kernels[0]->region(0));
  b.set_insertion_point_before(tile);
  Operation* one = b.create(OpKind::constant, {}, {Type::scalar(ScalarKind::index)});
  one->set_attr("value", Attribute::integer(1));
  one->result()->set_name("c1");
  tile->set_operand(1, one->result());
  verify(*m);
  EXPECT_EQ(position_in_block(*tile), 2u);
  EXPECT_NE(print(*m).find("%c1 = const {value = 1} : index\n  %t = tile %X, %c1"),
            std::string::npos)
      << print(*m);
}

}  // namespace
}  // namespace tessel::ir
