// The task language's leaf ops for attention (issue 13): reduce_max, elementwise ops with a row
// vector broadcast along columns and with numbers, exp2 / fma / neg / div, the mma whose B is
// [k, n], the mask of keys past a ragged length; their privilege and shape checks; and the
// FlashAttention-2 task program's interpreter against a float64 softmax.
#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "frontend/task/instantiate.h"
#include "frontend/task/mapping.h"
#include "frontend/task/task_interpreter.h"
#include "tasks/programs.h"

namespace tessel::task {
namespace {

std::string error_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const UserError& e) {
    return e.what();
  }
  return "(no error)";
}

HostArray random_array(ScalarKind element, std::vector<int64_t> shape, std::mt19937& rng) {
  std::uniform_real_distribution<double> dist(-1, 1);
  HostArray a;
  a.element = element;
  a.shape = std::move(shape);
  int64_t n = 1;
  for (int64_t s : a.shape) n *= s;
  for (int64_t i = 0; i < n; ++i) a.data.push_back(round_element(element, dist(rng)));
  return a;
}

// The attention program's interpreter against softmax(Q Kᵀ / sqrt(128)) V in float64 (the only
// rounding in the program: P to f16 before the second product, and f32 arithmetic).
void check_attention(int64_t BH, int64_t S, bool causal = false) {
  TaskProgram p = causal ? examples::attention_causal_tasks(ScalarKind::f16)
                         : examples::attention_tasks(ScalarKind::f16);
  const auto* e =
      examples::find_task_example(causal ? "flash_attention_causal" : "flash_attention");
  Mapping m = parse_mapping(e->mapping_text, e->mapping_file);
  Instantiation inst = instantiate(p, m);
  std::mt19937 rng(11);
  std::map<std::string, HostArray> data;
  for (const char* t : {"Q", "K", "V", "O"})
    data[t] = random_array(ScalarKind::f16, {BH, S, 128}, rng);
  std::map<std::string, HostArray> in = data;
  interpret(inst, {{"BH", BH}, {"S", S}}, data);
  const int64_t D = 128;
  double worst = 0;
  for (int64_t h = 0; h < BH; ++h) {
    for (int64_t i = 0; i < S; ++i) {
      const int64_t keys = causal ? i + 1 : S;
      std::vector<double> s(keys);
      double mx = -INFINITY;
      for (int64_t j = 0; j < keys; ++j) {
        double dot = 0;
        for (int64_t d = 0; d < D; ++d)
          dot += in["Q"].data[(h * S + i) * D + d] * in["K"].data[(h * S + j) * D + d];
        s[j] = dot / std::sqrt(double(D));
        mx = std::max(mx, s[j]);
      }
      double sum = 0;
      for (double& x : s) sum += (x = std::exp(x - mx));
      for (int64_t d = 0; d < D; ++d) {
        double o = 0;
        for (int64_t j = 0; j < keys; ++j) o += s[j] * in["V"].data[(h * S + j) * D + d];
        worst = std::max(worst, std::abs(o / sum - data["O"].data[(h * S + i) * D + d]));
      }
    }
  }
  EXPECT_LT(worst, 2e-3) << "BH=" << BH << " S=" << S << (causal ? " causal" : "");
}

TEST(TaskAttention, InterpreterIsSoftmaxAttentionOnRaggedLengths) {
  check_attention(2, 300);  // three key tiles, the last with 44 keys: the mask matters
  check_attention(1, 77);   // one partial tile
  check_attention(1, 256);  // whole tiles
}

// Causal: query tile i reads keys and values up to its last row only (i + 1 key tiles).
TEST(TaskAttention, CausalInterpreterIsMaskedSoftmaxAttention) {
  check_attention(2, 300, true);
  check_attention(1, 77, true);
}

// A small program of the new ops: C = exp2(-(A·B) · 0.5 + r) / r with B [K, N] (mma_kn) and the
// row vector r [M, 1] broadcast along columns; y = max(y, rowmax C).
TEST(TaskInterpreter, MmaKnBroadcastAndNumbers) {
  TaskProgram p("ops");
  p.global("A", ScalarKind::f16, {"M", "8"});
  p.global("B", ScalarKind::f16, {"8", "64"});
  p.global("r", ScalarKind::f32, {"M", "1"});
  p.global("C", ScalarKind::f32, {"M", "64"});
  p.global("y", ScalarKind::f32, {"M", "1"});
  p.task("ops", {{"C", Privilege::write},
                 {"y", Privilege::read_write},
                 {"A", Privilege::read},
                 {"B", Privilege::read},
                 {"r", Privilege::read}});
  p.leaf("ops", "ops_leaf", [](Leaf& b) {
    int C = b.param("C"), y = b.param("y"), A = b.param("A"), B = b.param("B"), r = b.param("r");
    b.fill(C, 0.0);
    b.mma_kn(C, A, B);
    b.elementwise(C, "neg", {C});
    b.elementwise(C, "fma", {C, Leaf::number(0.5), r});
    b.elementwise(C, "exp2", {C});
    b.elementwise(C, "div", {C, r});
    b.reduce_max(y, C, 1);
  });
  p.inner("ops", "ops_grid", [](Inner& b) {
    auto [C, y, A, B, r] = b.params<5>();
    auto Cp = b.blocks(C, {4, C.dim(1)}), yp = b.blocks(y, {4, 1}), Ap = b.blocks(A, {4, A.dim(1)});
    auto rp = b.blocks(r, {4, 1});
    b.prange({"i"}, {cdiv(C.dim(0), 4)}, [&](const Indices& i) {
      b.launch("ops", {Cp({i[0], 0}), yp({i[0], 0}), Ap({i[0], 0}), B, rp({i[0], 0})});
    });
  });
  p.entry("ops", {"C", "y", "A", "B", "r"});
  Mapping m = parse_mapping(
      "instance g { variant = ops_grid proc = grid mems = [global, global, global, global, "
      "global]\n"
      "  entrypoint = true calls = [l] }\n"
      "instance l { variant = ops_leaf proc = block mems = [register, register, register, shared,"
      " register] }\n",
      "ops.tmap");
  Instantiation inst = instantiate(p, m);
  const int64_t M = 6;  // the second block is partial
  std::mt19937 rng(5);
  std::map<std::string, HostArray> data = {{"A", random_array(ScalarKind::f16, {M, 8}, rng)},
                                           {"B", random_array(ScalarKind::f16, {8, 64}, rng)},
                                           {"r", random_array(ScalarKind::f32, {M, 1}, rng)},
                                           {"C", random_array(ScalarKind::f32, {M, 64}, rng)},
                                           {"y", random_array(ScalarKind::f32, {M, 1}, rng)}};
  for (double& v : data["r"].data) v = 1.5 + v;  // no division by ~0
  std::map<std::string, HostArray> in = data;
  interpret(inst, {{"M", M}}, data);
  for (int64_t i = 0; i < M; ++i) {
    double row_max = in["y"].data[i];
    for (int64_t j = 0; j < 64; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < 8; ++k) dot += in["A"].data[i * 8 + k] * in["B"].data[k * 64 + j];
      double want = std::exp2(-dot * 0.5 + in["r"].data[i]) / in["r"].data[i];
      EXPECT_NEAR(data["C"].data[i * 64 + j], want, 1e-5 * std::abs(want)) << i << "," << j;
      row_max = std::max(row_max, want);
    }
    EXPECT_NEAR(data["y"].data[i], row_max, 1e-5 * std::abs(row_max)) << i;
  }
}

// Privileges: a write-only parameter is readable once the leaf has written it (a scratch row
// vector), not before; an op that folds into its destination needs its old value.
TEST(TaskProgram, LeafScratchAndFoldPrivileges) {
  TaskProgram p("bad");
  p.task("t", {{"X", Privilege::read}, {"Y", Privilege::write}, {"Z", Privilege::read_write}});
  std::string msg = error_of([&] {
    p.leaf("t", "a", [](Leaf& b) {
      b.elementwise(b.param("Z"), "add", {b.param("X"), b.param("Y")});
    });
  });
  EXPECT_NE(msg.find("leaf 'a' reads 'Y', which task 't' only writes (and this leaf has not "
                     "written yet)"),
            std::string::npos)
      << msg;
  EXPECT_EQ(error_of([&] {
              p.leaf("t", "b", [](Leaf& b) {
                b.copy(b.param("X"), b.param("Y"));
                b.elementwise(b.param("Z"), "add", {b.param("X"), b.param("Y")});
                b.reduce_max(b.param("Y"), b.param("X"), 1);
              });
            }),
            "(no error)");
  msg = error_of(
      [&] { p.leaf("t", "c", [](Leaf& b) { b.reduce_max(b.param("Y"), b.param("X"), 1); }); });
  EXPECT_NE(msg.find("leaf 'c': reduce_max folds into 'Y', which needs read-write privilege"),
            std::string::npos)
      << msg;
  msg = error_of(
      [&] { p.leaf("t", "d", [](Leaf& b) { b.mask(b.param("Y"), b.param("X"), 1, 1, -1.0); }); });
  EXPECT_NE(msg.find("leaf 'd': mask keeps the other elements of 'Y', which needs read-write"),
            std::string::npos)
      << msg;
  msg = error_of([&] {
    p.leaf("t", "d2",
           [](Leaf& b) { b.mask_causal(b.param("Y"), b.param("X"), b.param("X"), 1, -1.0); });
  });
  EXPECT_NE(msg.find("leaf 'd2': mask_causal keeps the other elements of 'Y', which needs"),
            std::string::npos)
      << msg;
  msg = error_of([&] {
    p.leaf("t", "e", [](Leaf& b) { b.elementwise(b.param("Z"), "exp3", {b.param("X")}); });
  });
  EXPECT_NE(msg.find("leaf elementwise: unknown operation 'exp3'"), std::string::npos) << msg;
  msg = error_of([&] {
    p.leaf("t", "f", [](Leaf& b) {
      b.elementwise(b.param("Z"), "add", {Leaf::number(1), Leaf::number(2)});
    });
  });
  EXPECT_NE(msg.find("leaf elementwise add: every operand is a number (give a tensor)"),
            std::string::npos)
      << msg;
  msg = error_of([&] {
    p.leaf("t", "g", [](Leaf& b) {
      b.elementwise(b.param("Z"), "fma", {b.param("X"), Leaf::number(2.0)});
    });
  });
  EXPECT_NE(msg.find("leaf elementwise fma takes 3 operands"), std::string::npos) << msg;
}

// Shapes the instance gives a leaf's operands are checked at instantiation: Y [64, 128] f32,
// X [64, 64] f16 (pieces of 64 rows), W [128, 64] f16, Z [2, 64, 128] f32 and R [64] f16 whole.
const char* kShapesMapping =
    "instance g { variant = t_grid proc = grid mems = [global, global, global, global, global]\n"
    "  entrypoint = true calls = [l] }\n"
    "instance l { variant = t_leaf proc = block mems = [register, shared, shared, register, "
    "register] }\n";

std::string instantiate_error(const std::function<void(Leaf&)>& leaf,
                              const std::string& mapping = kShapesMapping) {
  TaskProgram p("shapes");
  p.global("X", ScalarKind::f16, {"M", "64"});
  p.global("Y", ScalarKind::f32, {"M", "128"});
  p.global("W", ScalarKind::f16, {"128", "64"});
  p.global("Z", ScalarKind::f32, {"2", "64", "128"});
  p.global("R", ScalarKind::f16, {"64"});
  p.task("t", {{"Y", Privilege::read_write},
               {"X", Privilege::read},
               {"W", Privilege::read},
               {"Z", Privilege::reduce},  // reduce: the same Z for every block
               {"R", Privilege::read}});
  p.leaf("t", "t_leaf", leaf);
  p.inner("t", "t_grid", [](Inner& b) {
    auto [Y, X, W, Z, R] = b.params<5>();
    auto Yp = b.blocks(Y, {64, Y.dim(1)}), Xp = b.blocks(X, {64, X.dim(1)});
    b.prange({"i"}, {cdiv(Y.dim(0), 64)}, [&](const Indices& i) {
      b.launch("t", {Yp({i[0], 0}), Xp({i[0], 0}), W, Z, R});
    });
  });
  p.entry("t", {"Y", "X", "W", "Z", "R"});
  Mapping m = parse_mapping(mapping, "shapes.tmap");
  return error_of([&] { instantiate(p, m); });
}

TEST(Instantiate, LeafOperandShapes) {
  std::string msg = instantiate_error([](Leaf& b) {
    b.elementwise(b.param("Y"), "mul", {b.param("Y"), b.param("X")});
  });
  EXPECT_NE(msg.find("shapes.tmap:3:10: error: instance 'l': the elementwise at"),
            std::string::npos)
      << msg;
  EXPECT_NE(msg.find("reads 'X' [64, 64] into 'Y' [64, 128]: extent 64 of dimension 1 is neither "
                     "128 nor 1"),
            std::string::npos)
      << msg;
  msg = instantiate_error([](Leaf& b) { b.mma_kn(b.param("Y"), b.param("X"), b.param("W")); });
  EXPECT_NE(msg.find("multiplies 'X' [64, 64] and 'W' [128, 64] ([k, n]) into 'Y' [64, 128]: "
                     "the extents do not agree"),
            std::string::npos)
      << msg;
  msg = instantiate_error([](Leaf& b) { b.reduce_max(b.param("Y"), b.param("X"), 1); });
  EXPECT_NE(msg.find("reduces 'X' [64, 64] along dimension 1 into 'Y' [64, 128], which should "
                     "be [64, 1]"),
            std::string::npos)
      << msg;
  msg = instantiate_error([](Leaf& b) { b.mask(b.param("Y"), b.param("X"), 1, 1, 0.0); });
  EXPECT_NE(msg.find("masks dimension 1 of 'Y' [64, 128] by dimension 1 of 'X' [64, 64], whose "
                     "extents differ"),
            std::string::npos)
      << msg;
  msg = instantiate_error(
      [](Leaf& b) { b.mask_causal(b.param("Y"), b.param("X"), b.param("X"), 0, 0.0); });
  EXPECT_NE(msg.find("masks 'Y' [64, 128] by dimension 0 of 'X' [64, 64] (its rows) and 'X' "
                     "[64, 64] (its columns), whose extents differ"),
            std::string::npos)
      << msg;
  msg = instantiate_error([](Leaf& b) { b.copy(b.param("X"), b.param("Y")); });
  EXPECT_NE(msg.find("(a copy does not broadcast)"), std::string::npos) << msg;
  msg = instantiate_error([](Leaf& b) { b.mma(b.param("Y"), b.param("X"), b.param("X")); });
  EXPECT_NE(msg.find("multiplies 'X' [64, 64] and 'X' [64, 64] ([n, k]) into 'Y' [64, 128]"),
            std::string::npos)
      << msg;
  // B [n, k] = [128, 64] with A [64, 64]: the extents agree.
  EXPECT_EQ(instantiate_error([](Leaf& b) { b.mma(b.param("Y"), b.param("X"), b.param("W")); }),
            "(no error)");
  msg = instantiate_error(
      [](Leaf& b) { b.elementwise(b.param("Y"), "add", {b.param("Y"), b.param("R")}); });
  EXPECT_NE(msg.find("reads 'R' [64] into 'Y' [64, 128] (operands have the rank of the "
                     "destination)"),
            std::string::npos)
      << msg;
  msg = instantiate_error([](Leaf& b) { b.reduce_max(b.param("Y"), b.param("X"), 2); });
  EXPECT_NE(msg.find("reduces dimension 2 of 'X' [64, 64]"), std::string::npos) << msg;
  msg = instantiate_error([](Leaf& b) { b.mask(b.param("Y"), b.param("X"), 5, 0, 0.0); });
  EXPECT_NE(msg.find("masks dimension 5 of 'Y' [64, 128] by dimension 0 of 'X' [64, 64]"),
            std::string::npos)
      << msg;
  msg = instantiate_error(
      [](Leaf& b) { b.mask_causal(b.param("Y"), b.param("X"), b.param("X"), 3, 0.0); });
  EXPECT_NE(msg.find("masks 'Y' [64, 128] by dimension 3 of 'X' [64, 64] and 'X' [64, 64]"),
            std::string::npos)
      << msg;
  msg = instantiate_error([](Leaf& b) { b.mma(b.param("Y"), b.param("R"), b.param("X")); });
  EXPECT_NE(msg.find("multiplies 'R' [64] and 'X' [64, 64] into 'Y' [64, 128] (matrices of one "
                     "rank, at least 2)"),
            std::string::npos)
      << msg;
  msg = instantiate_error([](Leaf& b) { b.mma(b.param("Z"), b.param("Z"), b.param("Z")); });
  EXPECT_NE(msg.find("multiplies tensors of rank 3 whose leading extents are not 1"),
            std::string::npos)
      << msg;
  // The machine's operand memories: A from global memory is refused at its `mems` item.
  std::string global_a = kShapesMapping;
  global_a.replace(global_a.find("[register, shared, shared,"), 26, "[register, global, shared,");
  msg = instantiate_error([](Leaf& b) { b.mma(b.param("Y"), b.param("X"), b.param("W")); },
                          global_a);
  EXPECT_NE(msg.find("shapes.tmap:3:"), std::string::npos) << msg;
  EXPECT_NE(msg.find("reads its A operand 'X' from global memory, but the tensor cores of H100 "
                     "(sm_90a) read it from shared or register memory"),
            std::string::npos)
      << msg;
}

}  // namespace
}  // namespace tessel::task
