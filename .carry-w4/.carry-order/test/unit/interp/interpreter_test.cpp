// The interpreter's semantics and its errors: bounds, partial tiles, uninitialized reads, facts,
// arguments, integer and float arithmetic, casts.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/interpreter.h"
#include "ir/parser.h"
#include "ir/verifier.h"

namespace tessel::interp {
namespace {

std::unique_ptr<ir::Module> parse(const std::string& text) {
  auto m = ir::parse_module(text, "i.tir");
  ir::verify(*m);
  return m;
}

void expect_error(const ir::Module& m, const std::vector<Argument>& args, const RunOptions& options,
                  const std::string& message, int line) {
  try {
    interpret(*m.kernels[0], args, options);
    ADD_FAILURE() << "expected: " << message;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos) << e.what();
    if (line) {
      EXPECT_EQ(e.location().line, line) << e.what();
    }
  }
}

const char* kCopy =
    "kernel @copy[N](%X: global<f32>[N], %Y: global<f32>[N]) {\n"              // 1
    "  %N = size {name = N} : index\n"                                         // 2
    "  %c4 = const {value = 4} : index\n"                                      // 3
    "  %g = cdiv %N, %c4 : index\n"                                            // 4
    "  %b = block_grid %g : index\n"                                           // 5
    "  %x = tile %X, %b {masked, pad = -7.0, shape = [4]} : global<f32>[4]\n"  // 6
    "  %y = tile %Y, %b {shape = [4]} : global<f32>[4]\n"                      // 7
    "  %r = copy %x : register<f32>[4]\n"                                      // 8
    "  copy %r, %y\n"                                                          // 9
    "}\n";

TEST(Interpreter, MaskedTilesPadReadsAndUnmaskedTilesAreBoundsChecked) {
  auto m = parse(kCopy);
  HostTensor X(ScalarKind::f32, {6}), Y(ScalarKind::f32, {8});
  for (int i = 0; i < 6; ++i) X.set_float(i, i + 0.5);
  // Y is longer than X: the masked read pads with -7, the unmasked write fits.
  RunOptions options{{{"N", 6}}, {}};
  HostTensor Y6(ScalarKind::f32, {6});
  expect_error(
      *m, {&X, &Y6}, options,
      "copy: writing index [6] out of bounds of %Y, whose shape is [6] (a partial tile needs a "
      "masked tile)",
      9);
  // Rows 0..3 were written before the error, in order: the interpreter is sequential.
  EXPECT_EQ(Y6.get_float(3), 3.5);
}

TEST(Interpreter, MaskedWritesAreDropped) {
  auto m = parse(
      "kernel @k[N](%Y: global<i8>[N]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %c1 = const {value = 1} : index\n"
      "  %y = tile %Y, %c1 {masked, shape = [4]} : global<i8>[4]\n"
      "  %n = tile_extent %y {dim = 0} : index\n"
      "  %f = iota {dim = 0} : register<i8>[4]\n"
      "  %nn = cast %n : i8\n"
      "  %g = add %f, %nn : register<i8>[4]\n"
      "  copy %g, %y\n"
      "}\n");
  HostTensor Y(ScalarKind::i8, {6});
  for (int i = 0; i < 6; ++i) Y.set_int(i, -1);
  interpret(*m->kernels[0], {&Y}, {{{"N", 6}}, {}});
  // The tile covers [4,8); only 4 and 5 exist, so tile_extent is 2 and writes past 5 vanish.
  std::vector<int64_t> want = {-1, -1, -1, -1, 2, 3};
  for (int i = 0; i < 6; ++i) EXPECT_EQ(Y.get_int(i), want[i]) << i;
}

TEST(Interpreter, ReadingAnUnwrittenElementIsAnError) {
  auto m = parse(
      "kernel @k(%X: global<f32>[8]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %s = alloc : shared<f32>[8]\n"
      "  %half = tile %s, %c0 {shape = [4]} : shared<f32>[4]\n"
      "  %x = tile %X, %c0 {shape = [4]} : global<f32>[4]\n"
      "  copy %x, %half\n"
      "  %r = copy %s : register<f32>[8]\n"
      "}\n");
  HostTensor X(ScalarKind::f32, {8});
  expect_error(*m, {&X}, {}, "copy: reads element [4] of %s before anything wrote it", 7);
}

TEST(Interpreter, SizesFactsAndArguments) {
  auto m = parse(
      "kernel @k[N](%X: global<f16>[N], %s: f32) facts(N % 4 == 0) {\n"
      "}\n");
  HostTensor X(ScalarKind::f16, {6}), X8(ScalarKind::f16, {8}), Xf(ScalarKind::f32, {8});
  expect_error(*m, {&X, 1.0}, {{{"N", 6}}, {}},
               "kernel @k: size N = 6 violates the fact N % 4 == 0", 1);
  expect_error(*m, {&X8, 1.0}, {}, "kernel @k: no value given for size N", 1);
  expect_error(*m, {&X8, 1.0}, {{{"N", 0}}, {}}, "kernel @k: size N = 0 must be positive", 1);
  expect_error(*m, {&X8}, {{{"N", 8}}, {}}, "kernel @k takes 2 argument(s), not 1", 1);
  expect_error(*m, {&Xf, 1.0}, {{{"N", 8}}, {}},
               "argument %X is f32[8] but the kernel expects f16[8]", 1);
  expect_error(*m, {1.0, 1.0}, {{{"N", 8}}, {}}, "argument 0 (%X) must be a tensor", 1);
  expect_error(*m, {&X8, &X8}, {{{"N", 8}}, {}}, "argument 1 (%s) must be a scalar", 1);
  EXPECT_NO_THROW(interpret(*m->kernels[0], {&X8, 1.0}, {{{"N", 8}}, {}}));
}

TEST(Interpreter, ArithmeticFollowsTheElementType) {
  auto m = parse(
      "kernel @k(%Y: global<f16>[4], %Z: global<i8>[4], %F: global<f8e4m3>[4]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %a = fill {value = 1.0} : register<f16>[4]\n"
      "  %e = const {value = 0.0004883} : f16\n"
      "  %s = add %a, %e : register<f16>[4]\n"  // 1 + 2^-11 ties to even: 1.0 in f16
      "  %y = tile %Y, %c0 {shape = [4]} : global<f16>[4]\n"
      "  copy %s, %y\n"
      "  %i = fill {value = 100} : register<i8>[4]\n"
      "  %w = add %i, %i : register<i8>[4]\n"  // wraps: -56
      "  %z = tile %Z, %c0 {shape = [4]} : global<i8>[4]\n"
      "  copy %w, %z\n"
      "  %big = fill {value = 1000.0} : register<f32>[4]\n"
      "  %sat = cast %big : register<f8e4m3>[4]\n"  // saturates to 448
      "  %f = tile %F, %c0 {shape = [4]} : global<f8e4m3>[4]\n"
      "  copy %sat, %f\n"
      "}\n");
  HostTensor Y(ScalarKind::f16, {4}), Z(ScalarKind::i8, {4}), F(ScalarKind::f8e4m3, {4});
  interpret(*m->kernels[0], {&Y, &Z, &F}, {});
  EXPECT_EQ(Y.get_float(0), 1.0);
  EXPECT_EQ(Z.get_int(0), -56);
  EXPECT_EQ(F.get_float(0), 448.0);
}

TEST(Interpreter, IntegerDivisionByZeroAndBadLoopSteps) {
  auto m = parse(
      "kernel @k(%X: global<i32>[4]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %x = tile %X, %c0 {shape = [4]} : global<i32>[4]\n"
      "  %r = copy %x : register<i32>[4]\n"
      "  %q = div %r, %r : register<i32>[4]\n"
      "}\n");
  HostTensor X(ScalarKind::i32, {4});
  expect_error(*m, {&X}, {}, "div: integer division by zero", 5);
  auto loop = parse(
      "kernel @k() {\n"
      "  %c0 = const {value = 0} : index\n"
      "  for %k = %c0 to %c0 step %c0 {\n"
      "    yield\n"
      "  }\n"
      "}\n");
  expect_error(*loop, {}, {}, "for: the step must be positive, not 0", 3);
}

TEST(Interpreter, ReduceFoldsInRowMajorOrderAndMmaAccumulatesInF32) {
  auto m = parse(
      "kernel @k(%A: global<f16>[2,3], %B: global<f16>[3,2], %S: global<f32>[2], %C: "
      "global<f32>[2,2]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %a = copy %A : shared<f16>[2,3]\n"
      "  %b = copy %B : register<f16>[3,2]\n"
      "  %z = fill {value = 0.5} : register<f32>[2,2]\n"
      "  %c = mma %a, %b, %z : register<f32>[2,2]\n"
      "  copy %c, %C\n"
      "  %ra = copy %A : register<f16>[2,3]\n"
      "  %fa = cast %ra : register<f32>[2,3]\n"
      "  %s = reduce %fa {dims = [1], kind = sum} : register<f32>[2]\n"
      "  copy %s, %S\n"
      "}\n");
  HostTensor A(ScalarKind::f16, {2, 3}), B(ScalarKind::f16, {3, 2}), S(ScalarKind::f32, {2}),
      C(ScalarKind::f32, {2, 2});
  const double av[] = {1e4, 1.0, -1e4, 2, 3, 4}, bv[] = {1, 2, 3, 4, 5, 6};
  for (int i = 0; i < 6; ++i) {
    A.set_float(i, av[i]);
    B.set_float(i, bv[i]);
  }
  interpret(*m->kernels[0], {&A, &B, &S, &C}, {});
  float r0 = 0.5f;
  for (int k = 0; k < 3; ++k)
    r0 = r0 + static_cast<float>(A.get_float(k)) * static_cast<float>(B.get_float(2 * k));
  EXPECT_EQ(C.get_float(0), r0);
  EXPECT_EQ(S.get_float(0),
            (static_cast<float>(A.get_float(0)) + 1.0f) + static_cast<float>(A.get_float(2)));
  EXPECT_EQ(S.get_float(1), 9.0);
}

TEST(Interpreter, LayoutViewsGiveNonContiguousTiles) {
  auto m = parse(
      "kernel @k(%X: global<f32>[8,4], %Y: global<f32>[2,8], %V: global<f32>[16], %W: "
      "global<f32>[4]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %c1 = const {value = 1} : index\n"
      "  %xt = global_view %X : global<f32, (4,8):(1,4)>[4,8]\n"        // the transpose of X
      "  %t = tile %xt, %c1, %c0 {shape = [2,8]} : global<f32>[2,8]\n"  // columns 2 and 3 of X
      "  %r = copy %t : register<f32>[2,8]\n"
      "  copy %r, %Y\n"
      "  %even = global_view %V : global<f32, 8:2>[8]\n"         // V[0], V[2], ...
      "  %e = tile %even, %c1 {shape = [4]} : global<f32>[4]\n"  // V[8], V[10], V[12], V[14]
      "  %s = copy %e : shared<f32>[4]\n"
      "  copy %s, %W\n"
      "}\n");
  HostTensor X(ScalarKind::f32, {8, 4}), Y(ScalarKind::f32, {2, 8}), V(ScalarKind::f32, {16}),
      W(ScalarKind::f32, {4});
  for (int i = 0; i < 32; ++i) X.set_float(i, i);
  for (int i = 0; i < 16; ++i) V.set_float(i, 100 + i);
  interpret(*m->kernels[0], {&X, &Y, &V, &W}, {});
  for (int a = 0; a < 2; ++a) {
    for (int b = 0; b < 8; ++b)
      EXPECT_EQ(Y.get_float(a * 8 + b), X.get_float(b * 4 + 2 + a)) << a << "," << b;
  }
  for (int i = 0; i < 4; ++i) EXPECT_EQ(W.get_float(i), 108 + 2 * i);
}

TEST(Interpreter, ALayoutViewThatLeavesItsTensorIsAnError) {
  auto m = parse(
      "kernel @k(%V: global<f32>[16]) {\n"
      "  %wide = global_view %V : global<f32, 8:3>[8]\n"
      "  %r = copy %wide : register<f32>[8]\n"
      "}\n");
  HostTensor V(ScalarKind::f32, {16});
  expect_error(
      *m, {&V}, {},
      "copy: element [6] of a global_view of %wide maps to offset 18, outside its 16 elements", 3);
}

TEST(Interpreter, ExternalCallsGetTensorsByReferenceInMemoryAndByValueInRegisters) {
  auto m = parse(
      "kernel @k(%X: global<f32>[4], %Y: global<f32>[4]) {\n"
      "  %r = copy %X : register<f32>[4]\n"
      "  %n = call_external %X, %r {callee = \"leaf\"} : f32\n"
      "  %s = add %r, %n : register<f32>[4]\n"
      "  copy %s, %Y\n"
      "}\n");
  HostTensor X(ScalarKind::f32, {4}), Y(ScalarKind::f32, {4});
  for (int i = 0; i < 4; ++i) X.set_float(i, i);
  RunOptions options;
  options.externals["leaf"] = [](std::vector<ExternalArg>& a) {
    EXPECT_EQ(a[0].tensor->get_float(3), 3.0);
    for (int i = 0; i < 4; ++i) {
      a[0].tensor->set_float(i, 10 * i);  // written back: X is in global memory
      a[1].tensor->set_float(i, -1);      // dropped: %r is a register value
    }
    return std::vector<double>{0.5};
  };
  interpret(*m->kernels[0], {&X, &Y}, options);
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(X.get_float(i), 10 * i);
    EXPECT_EQ(Y.get_float(i), i + 0.5);
  }
}

TEST(Interpreter, EveryRunTimeErrorHasItsMessage) {
  auto grid = parse(
      "kernel @k() {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %c1 = const {value = 1} : index\n"
      "  %n = sub %c0, %c1 : index\n"
      "  %b = block_grid %n : index\n"
      "}\n");
  expect_error(*grid, {}, {}, "block_grid: extent 0 is negative (-1)", 5);
  auto zero = parse(
      "kernel @k[M]() {\n"
      "  %M = size {name = M} : index\n"
      "  %c0 = const {value = 0} : index\n"
      "  %n = cdiv %M, %c0 : index\n"
      "  %b = block_grid %n : index\n"
      "}\n");
  expect_error(*zero, {}, {{{"M", 4}}, {}}, "cdiv: division by zero computing the grid", 4);
  auto negative = parse(
      "kernel @k(%X: global<f32>[8]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %c1 = const {value = 1} : index\n"
      "  %n = sub %c0, %c1 : index\n"
      "  %t = tile %X, %n {shape = [4]} : global<f32>[4]\n"
      "}\n");
  HostTensor X(ScalarKind::f32, {8});
  expect_error(*negative, {&X}, {}, "tile: tile coordinate -1 in dimension 0 is negative", 5);
  auto views = parse(
      "kernel @k(%X: global<f32>[8]) {\n"
      "  %v = global_view %X : global<f32, 8:1>[8]\n"
      "  %w = global_view %v : global<f32, 4:2>[4]\n"
      "}\n");
  expect_error(*views, {&X}, {},
               "global_view: the interpreter views a plain tensor, not another view", 3);
  auto rank = parse(
      "kernel @k(%X: global<f32>[8]) {\n"
      "  %v = global_view %X : global<f32, 8:1>[2,4]\n"
      "}\n");
  expect_error(*rank, {&X}, {}, "global_view: the interpreter needs a layout of the view's rank",
               2);
  auto ext = parse(
      "kernel @k() {\n"
      "  %a = call_external {callee = \"f\"} : f32\n"
      "  %t = call_external {callee = \"g\"} : register<f32>[4]\n"
      "}\n");
  RunOptions options;
  options.externals["f"] = [](std::vector<ExternalArg>&) { return std::vector<double>{1, 2}; };
  expect_error(*ext, {}, options,
               "call_external: \"f\" returned 2 value(s) but the op has 1 result(s)", 2);
  options.externals["f"] = [](std::vector<ExternalArg>&) { return std::vector<double>{1}; };
  options.externals["g"] = [](std::vector<ExternalArg>&) { return std::vector<double>{1}; };
  expect_error(*ext, {}, options, "call_external: the interpreter returns scalars only", 3);
}

TEST(Interpreter, ParametersWithLayoutsAreAddressedThroughThem) {
  // B is stored column-major: B[n,k] lives at n + N*k.
  auto m = parse(
      "kernel @k[N, K](%B: global<f32, (N,K):(1,N)>[N,K], %Y: global<f32>[N,K]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %t = tile %B, %c0, %c0 {shape = [3,2]} : global<f32>[3,2]\n"
      "  %y = tile %Y, %c0, %c0 {shape = [3,2]} : global<f32>[3,2]\n"
      "  %r = copy %t : register<f32>[3,2]\n"
      "  copy %r, %y\n"
      "}\n");
  HostTensor B(ScalarKind::f32, {3, 2}), Y(ScalarKind::f32, {3, 2});
  for (int i = 0; i < 6; ++i) B.set_float(i, i);
  interpret(*m->kernels[0], {&B, &Y}, {{{"N", 3}, {"K", 2}}, {}});
  for (int n = 0; n < 3; ++n) {
    for (int k = 0; k < 2; ++k) EXPECT_EQ(Y.get_float(n * 2 + k), n + 3 * k) << n << "," << k;
  }
}

// Graphene Fig. 4c/4d: tiles that are non-contiguous in one or both dimensions, as contiguous tiles
// of a view whose modes are hierarchical layouts.
TEST(Interpreter, GrapheneNonContiguousTiles) {
  auto m = parse(
      "kernel @k(%A: global<f32>[4,8], %C: global<f32>[2,4], %D: global<f32>[2,4]) {\n"
      "  %c0 = const {value = 0} : index\n"
      "  %c1 = const {value = 1} : index\n"
      // rows in the order 0,2,1,3: a [2,4] tile holds every other row (Fig. 4c)
      "  %rows = global_view %A : global<f32, ((2,2),8):((16,8),1)>[4,8]\n"
      "  %c = tile %rows, %c1, %c1 {shape = [2,4]} : global<f32>[2,4]\n"
      "  %rc = copy %c : register<f32>[2,4]\n"
      "  copy %rc, %C\n"
      // and columns in the order 0,1,4,5,2,3,6,7: two adjacent columns twice, 4 apart (Fig. 4d)
      "  %both = global_view %A : global<f32, ((2,2),(2,2,2)):((16,8),(1,4,2))>[4,8]\n"
      "  %d = tile %both, %c0, %c1 {shape = [2,4]} : global<f32>[2,4]\n"
      "  %rd = copy %d : register<f32>[2,4]\n"
      "  copy %rd, %D\n"
      "}\n");
  HostTensor A(ScalarKind::f32, {4, 8}), C(ScalarKind::f32, {2, 4}), D(ScalarKind::f32, {2, 4});
  for (int i = 0; i < 32; ++i) A.set_float(i, i);
  interpret(*m->kernels[0], {&A, &C, &D}, {});
  const int rows_c[] = {1, 3}, cols_c[] = {4, 5, 6, 7};
  const int rows_d[] = {0, 2}, cols_d[] = {2, 3, 6, 7};
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 4; ++c) {
      EXPECT_EQ(C.get_float(r * 4 + c), rows_c[r] * 8 + cols_c[c]) << r << "," << c;
      EXPECT_EQ(D.get_float(r * 4 + c), rows_d[r] * 8 + cols_d[c]) << r << "," << c;
    }
  }
}

TEST(Interpreter, GridExtents) {
  auto m = parse(
      "kernel @k[M, N]() {\n"
      "  %M = size {name = M} : index\n"
      "  %N = size {name = N} : index\n"
      "  %c8 = const {value = 8} : index\n"
      "  %gm = cdiv %M, %c8 : index\n"
      "  %gn = cdiv %N, %c8 : index\n"
      "  %i, %j = block_grid %gm, %gn : index, index\n"
      "}\n");
  EXPECT_EQ(grid_extents(*m->kernels[0], {{"M", 17}, {"N", 8}}), (std::vector<int64_t>{3, 1}));
}

}  // namespace
}  // namespace tessel::interp
