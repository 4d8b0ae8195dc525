// Damaged kernels that still verify run to completion or stop with a user error: the interpreter
// never crashes and never hits an internal error on verified IR.
#include <gtest/gtest.h>

#include <fstream>
#include <random>
#include <sstream>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace tessel::interp {
namespace {

void run_all(const ir::Module& m, std::mt19937& rng) {
  for (const auto& kernel : m.kernels) {
    RunOptions options;
    for (const std::string& s : kernel->signature().sizes) options.sizes[s] = 8;
    std::vector<std::unique_ptr<HostTensor>> tensors;
    std::vector<Argument> args;
    for (const auto& param : kernel->region(0)->arguments()) {
      const ir::Type& t = param->type();
      if (t.is_tensor()) {
        tensors.push_back(
            std::make_unique<HostTensor>(t.element(), concrete_shape(t, options.sizes)));
        for (int64_t i = 0; i < tensors.back()->size(); ++i)
          tensors.back()->set_float(i, rng() % 7 - 3.0);
        args.emplace_back(tensors.back().get());
      } else {
        args.emplace_back(0.5);
      }
    }
    interpret(*kernel, args, options);
  }
}

TEST(InterpreterFuzz, DamagedKernelsGiveUserErrorsOnly) {
  std::string source;
  for (const char* name : {"memory_ops", "compute_ops", "elementwise_ops", "control_ops"}) {
    std::ifstream in(std::string(TESSEL_SOURCE_DIR) + "/test/lit/ir/" + name + ".tir");
    std::stringstream s;
    s << in.rdbuf();
    source += s.str();
  }
  ASSERT_GT(source.size(), 1000u);
  std::mt19937 rng(11);
  const std::string alphabet = "%{}[],=0123456789 abcfgiklmnrstux-.";
  int ran = 0;
  for (int trial = 0; trial < 600; ++trial) {
    std::string text = source;
    size_t pos = rng() % text.size();
    switch (rng() % 3) {
      case 0:
        text.erase(pos, 1 + rng() % 3);
        break;
      case 1:
        text.insert(pos, text.substr(rng() % text.size(), 1 + rng() % 6));
        break;
      default:
        text[pos] = alphabet[rng() % alphabet.size()];
    }
    try {
      auto m = ir::parse_module(text, "fuzz.tir");
      ir::verify(*m);
      ++ran;
      run_all(*m, rng);
    } catch (const UserError&) {
    } catch (const std::exception& e) {
      ADD_FAILURE() << "trial " << trial << ": not a user error: " << e.what() << "\n" << text;
      return;
    }
  }
  EXPECT_GT(ran, 20);
}

}  // namespace
}  // namespace tessel::interp
