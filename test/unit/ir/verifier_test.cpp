// Every verifier error path: the message names the op and the problem, at the op's line:column.
#include <gtest/gtest.h>

#include <functional>

#include "ir/parser.h"
#include "ir/verifier.h"

namespace tessel::ir {
namespace {

// Wraps `body` in a kernel with a few handy values; body lines start on line 8.
std::string kernel(const std::string& body, const std::string& params = "") {
  return "kernel @k[M, N](%A: global<f16>[M,N], %B: global<f16>[64,32]" + params + ") {\n" +  // 1
         "  %c0 = const {value = 0} : index\n" +                                              // 2
         "  %c1 = const {value = 1} : index\n" +                                              // 3
         "  %ta = tile %A, %c0, %c0 {shape = [64,32]} : global<f16>[64,32]\n" +               // 4
         "  %sa = copy %ta : shared<f16>[64,32]\n" +                                          // 5
         "  %ra = copy %ta : register<f16>[64,32]\n" +                                        // 6
         "  %acc = fill {value = 0.0} : register<f32>[64,64]\n" +                             // 7
         body + "}\n";
}

void expect_error(const std::string& text, const std::string& message, int line, int column = 0) {
  try {
    auto module = parse_module(text, "t.tir");
    verify(*module);
    ADD_FAILURE() << "expected an error containing: " << message << "\nin:\n" << text;
  } catch (const UserError& e) {
    EXPECT_NE(std::string(e.what()).find(message), std::string::npos)
        << "message: " << e.what() << "\nexpected: " << message;
    EXPECT_EQ(e.location().file, "t.tir");
    EXPECT_EQ(e.location().line, line) << e.what();
    if (column) {
      EXPECT_EQ(e.location().column, column) << e.what();
    }
  }
}

TEST(Verifier, AcceptsTheBaseKernel) {
  auto m = parse_module(kernel(""), "t.tir");
  EXPECT_NO_THROW(verify(*m));
}

TEST(Verifier, MmaWrongShapes) {
  expect_error(kernel("  %tb = transpose %sa : shared<f16>[32,64]\n"
                      "  %d = mma %sa, %sa, %acc : register<f32>[64,64]\n"),
               "mma: wrong shapes: a is [64,32] and b is [64,32]; the K extents differ (32 vs 64)",
               9, 3);
  expect_error(kernel("  %tb = transpose %sa : shared<f16>[32,64]\n"
                      "  %c = fill {value = 0.0} : register<f32>[64,32]\n"
                      "  %d = mma %sa, %tb, %c : register<f32>[64,32]\n"),
               "mma: wrong shapes: a·b is [64,64] but the accumulator is [64,32]", 10);
}

TEST(Verifier, MmaOperandsAndTypes) {
  expect_error(kernel("  %tb = transpose %ta : global<f16>[32,64]\n"
                      "  %d = mma %sa, %tb, %acc : register<f32>[64,64]\n"),
               "mma: operand %tb is in global memory; mma reads shared or register tensors", 9);
  expect_error(kernel("  %tb = transpose %sa : shared<f16>[32,64]\n"
                      "  %c = fill {value = 0} : register<i32>[64,64]\n"
                      "  %d = mma %sa, %tb, %c : register<i32>[64,64]\n"),
               "mma: no mma takes f16 inputs with a i32 accumulator", 10);
  expect_error(kernel("  %tb = transpose %sa : shared<f16>[32,64]\n"
                      "  %c = fill {value = 0.0} : shared<f32>[64,64]\n"
                      "  %d = mma %sa, %tb, %c : shared<f32>[64,64]\n"),
               "mma: the accumulator %c must be a register tensor", 10);
}

TEST(Verifier, RegisterTensorReadBeforeWritten) {
  expect_error(
      kernel("  %r = alloc : register<f16>[64,32]\n"
             "  %e = exp %r : register<f16>[64,32]\n"),
      "exp: register tensor %r is read before it is written (alloc makes it uninitialized)", 9);
  expect_error(kernel("  %s = alloc : shared<f16>[64,32]\n"
                      "  %r = copy %s : register<f16>[64,32]\n"),
               "copy: shared tensor %s is read before it is written", 9);
  // A write first makes the read fine, also through a tile view.
  auto ok = parse_module(kernel("  %s = alloc : shared<f16>[64,32]\n"
                                "  %v = tile %s, %c0, %c0 {shape = [64,32]} : shared<f16>[64,32]\n"
                                "  copy %ta, %v\n"
                                "  %r = copy %s : register<f16>[64,32]\n"),
                         "t.tir");
  EXPECT_NO_THROW(verify(*ok));
}

TEST(Verifier, CopyMemorySpacesShapesAndTypes) {
  expect_error(kernel("  copy %ta, %B\n"),
               "copy: mismatched memory spaces: %ta and %B are both global; stage the data through "
               "shared or register memory",
               8, 3);
  expect_error(kernel("  %r = copy %ta : global<f16>[64,32]\n"),
               "copy: cannot make a new global tensor", 8);
  expect_error(kernel("  %tb = tile %A, %c0, %c0 {shape = [32,32]} : global<f16>[32,32]\n"
                      "  copy %ra, %tb\n"),
               "copy: shapes differ: %ra is [64,32] but %tb is [32,32]", 9);
  expect_error(kernel("  %f = cast %ra : register<f32>[64,32]\n  copy %f, %ta\n"),
               "copy: element types differ: f32 to f16 (use cast to convert)", 9);
  expect_error(kernel("  %f = fill {value = 0.0} : register<f16>[64,32]\n  copy %ra, %f\n"),
               "copy: the destination %f is a register value; a copy writes only into a register "
               "tensor made by alloc",
               9);
}

TEST(Verifier, LoopCarriedTypeChange) {
  expect_error(
      kernel("  %r = for %k = %c0 to %c1 step %c1 iter(%a = %acc) : register<f32>[64,64] {\n"
             "    %h = cast %a : register<f16>[64,64]\n"
             "    yield %h\n"
             "  }\n"),
      "yield: loop-carried type change: %a enters the loop as register<f32>[64,64] but the "
      "body yields register<f16>[64,64]",
      10);
  expect_error(
      kernel("  %r = for %k = %c0 to %c1 step %c1 iter(%a = %acc) : register<f32>[64,64] {\n"
             "  }\n"),
      "for: its region must end with a yield", 8);
  expect_error(
      kernel("  %r = for %k = %c0 to %c1 step %c1 iter(%a = %acc) : register<f32>[64,64] {\n"
             "    yield\n"
             "  }\n"),
      "yield: the loop body yields 0 value(s) but the loop carries 1", 9);
}

TEST(Verifier, ElementwiseOperands) {
  expect_error(
      kernel("  %e = exp %sa : register<f16>[64,32]\n"),
      "exp: operand %sa is a shared tensor; elementwise ops read register tensors and scalars "
      "(copy it first)",
      8);
  expect_error(kernel("  %e = add %ra, %acc : register<f16>[64,32]\n"),
               "add: operand shapes differ: [64,32] vs [64,64]", 8);
  expect_error(
      kernel("  %f = cast %ra : register<f32>[64,32]\n  %e = add %ra, %f : register<f16>[64,32]\n"),
      "add: element types differ: %ra is f16 but %f is f32", 9);
  expect_error(kernel("  %e = exp %c0 : index\n"), "exp: needs floating-point operands, not index",
               8);
  expect_error(kernel("  %e = cdiv %ra, %ra : register<f16>[64,32]\n"),
               "cdiv: needs integer operands", 8);
  expect_error(kernel("  %e = cmp %c0, %c1 {pred = less} : i1\n"),
               "cmp: pred is lt, le, gt, ge, eq or ne, not less", 8);
  expect_error(kernel("  %e = add %c0, %c1 : f32\n"), "add: the result is index, not f32", 8);
  expect_error(kernel("  %e = select %c0, %c0, %c1 : index\n"),
               "select: the condition %c0 must be i1", 8);
}

TEST(Verifier, Dominance) {
  expect_error(kernel("  for %k = %c0 to %c1 step %c1 {\n"
                      "    %x = add %k, %c1 : index\n"
                      "    yield\n"
                      "  }\n"
                      "  %y = add %x, %c1 : index\n"),
               "use of undefined value %x", 12);
}

TEST(Verifier, Grid) {
  expect_error(kernel("  %g = tile_extent %ta {dim = 0} : index\n  %b = block_grid %g : index\n"),
               "block_grid: grid extent %g must be computed from sizes and constants only", 9);
  expect_error(kernel("  %b = block_grid %c1 : index\n  %b2 = block_grid %c1 : index\n"),
               "block_grid: a kernel declares its grid once", 9);
  expect_error(kernel("  %a, %b = block_grid %c1 : index, index\n"),
               "block_grid: gives one block index per grid extent: 1 extent(s) but 2 result(s)", 8);
  expect_error(kernel("  for %k = %c0 to %c1 step %c1 {\n    %b = block_grid %c1 : index\n  }\n"),
               "block_grid: must be in the kernel's top-level region", 9);
  expect_error(kernel("  %b = block_grid %c1 {blocks_per_sm = 0} : index\n"),
               "block_grid: `blocks_per_sm` is a number of blocks from 1 to 32", 8);
  expect_error(kernel("  %b = block_grid %c1 {blocks_per_sm = auto} : index\n"),
               "block_grid: `blocks_per_sm` is a number of blocks from 1 to 32", 8);
}

TEST(Verifier, Tiles) {
  expect_error(kernel("  %t = tile %A, %c0 {shape = [64,32]} : global<f16>[64,32]\n"),
               "tile: needs 2 tile coordinate(s), one per dimension, not 1", 8);
  expect_error(kernel("  %t = tile %A, %c0, %c0 {shape = [64]} : global<f16>[64]\n"),
               "tile: tile shape has 1 extent(s) but %A has rank 2", 8);
  expect_error(kernel("  %t = tile %ra, %c0, %c0 {shape = [8,8]} : register<f16>[8,8]\n"),
               "tile: tiles a global or shared tensor, not a register one", 8);
  expect_error(kernel("  %t = tile %A, %c0, %c0 {shape = [64,32]} : global<f16>[32,64]\n"),
               "tile: the tile of global<f16>[M,N] with shape [64,32] is a global<f16>[64,32], not "
               "global<f16>[32,64]",
               8);
  expect_error(
      kernel("  %t = tile %A, %c0, %c0 {shape = [4,32], squeeze = [0]} : global<f16>[32]\n"),
      "tile: squeeze names dimension 0, which is not a tile extent of 1", 8);
  expect_error(
      kernel("  %t = tile %A, %c0, %c0 {pad = 1.0, shape = [64,32]} : global<f16>[64,32]\n"),
      "tile: pad is only meaningful on a masked tile", 8);
  expect_error(kernel("  %n = tile_extent %ta {dim = 2} : index\n"),
               "tile_extent: dim 2 is out of range for rank 2", 8);
}

TEST(Verifier, TypesAndKernels) {
  expect_error(
      "kernel @k[M](%A: shared<f16>[M]) {\n}\n",
      "kernel: parameter %A is a shared tensor; kernel parameters are global tensors or scalars",
      1);
  expect_error("kernel @k[M](%A: global<f16>[Q]) {\n}\n",
               "kernel: type global<f16>[Q] uses size Q, which the kernel does not declare", 1);
  expect_error("kernel @k[M](%A: global<f16>[M]) facts(Q % 4 == 0) {\n}\n",
               "kernel: the fact Q % 4 == 0 names an undeclared size", 1);
  expect_error(
      "kernel @k[M](%A: global<f16>[M]) {\n  %r = fill {value = 0.0} : register<f16>[M]\n}\n",
      "fill: a register tensor needs a static shape, not [M]", 2);
  expect_error("kernel @k[M](%A: global<f16>[M]) {\n  %s = size {name = Q} : index\n}\n",
               "size: size Q is not declared by the kernel", 2);
  expect_error("kernel @k() {\n  %c = const {value = 300} : i8\n}\n",
               "const: value 300 does not fit in i8", 2);
  expect_error("kernel @k() {\n  %c = const {value = 3} : f32\n}\n",
               "const: a f32 constant needs a real value such as 1.0", 2);
  expect_error("kernel @k() {\n}\nkernel @k() {\n}\n", "kernel: two kernels are named @k", 3);
}

TEST(Verifier, ControlFlow) {
  expect_error(kernel("  yield\n"), "yield: yield ends the region of a for or an if", 8);
  expect_error(kernel("  %r = if %c0 : index {\n    yield %c0\n  } else {\n    yield %c1\n  }\n"),
               "if: the condition %c0 must be an i1 scalar, not index", 8);
  expect_error(kernel("  %b = cmp %c0, %c1 {pred = lt} : i1\n"
                      "  %r = if %b : index {\n    yield %c0\n  }\n"),
               "if: yields 1 value(s), so the else region must yield them", 9);
  expect_error(kernel("  %b = cmp %c0, %c1 {pred = lt} : i1\n"
                      "  %r = if %b : index {\n    yield %b\n  } else {\n    yield %c1\n  }\n"),
               "yield: yields i1 for result 0 of type index", 10);
  expect_error(
      kernel("  for %k = %c0 to %c1 step %c1 {\n    yield\n    %x = add %k, %k : index\n  }\n"),
      "yield: yield must be the last op of its region", 9);
  expect_error(kernel("  %r = call_external %c0 : index\n"),
               "call_external: needs a callee = \"name\" attribute", 8);
}

TEST(Verifier, ReduceBroadcastCastTranspose) {
  expect_error(kernel("  %m = reduce %acc {dims = [1], kind = max} : register<f32>[64,64]\n"),
               "reduce: reducing register<f32>[64,64] over [1] gives register<f32>[64], not "
               "register<f32>[64,64]",
               8);
  expect_error(kernel("  %m = reduce %acc {dims = [1], kind = mean} : register<f32>[64]\n"),
               "reduce: kind is sum, max or min, not mean", 8);
  expect_error(kernel("  %m = reduce %acc {dims = [1], kind = sum} : register<f32>[64]\n"
                      "  %b = broadcast %m {dims = [0]} : register<f32>[64,32]\n"),
               "broadcast: dimension 1 of the result is 32 but the source's is 64", 9);
  expect_error(kernel("  %h = cast %sa : shared<f32>[64,32]\n"),
               "cast: casts register tensors; %sa is shared<f16>[64,32]", 8);
  expect_error(kernel("  %t = transpose %ra {perm = [0,0]} : register<f16>[64,64]\n"),
               "transpose: perm must be a permutation of the 2 dimensions", 8);
  expect_error(kernel("  %r = rearrange %sa : shared<f16>[64,32]\n"),
               "rearrange: redistributes a register tensor, not shared<f16>[64,32]", 8);
}

TEST(Verifier, Layouts) {
  expect_error(kernel("  %s = alloc : shared<f16, (64,16):(16,1)>[64,32]\n"),
               "alloc: the layout (64,16):(16,1) has 1024 elements but the shape [64,32] has 2048",
               8);
  expect_error(kernel("  %s = alloc : register<f32, (32,4):(1,32)>[8,8]\n"),
               "alloc: the layout (32,4):(1,32) does not fit register<f32, (32,4):(1,32)>[8,8]", 8);
  expect_error(
      kernel("  %s = alloc : shared<f16, (32,64):(64,1)>[64,32]\n"),
      "alloc: mode 0 of the layout (32,64):(64,1) has 32 elements but extent 0 of the shape is 64",
      8);
  expect_error(kernel("  %s = alloc : register<f16, Sw<3,3,3> o (8,64):(64,1)>[8,64]\n"),
               "alloc: a swizzled layout describes shared memory, not a register tensor", 8);
  expect_error(kernel("  %s = alloc : shared<f16, Sw<3,3> o (8,64):(64,1)>[8,64]\n"),
               "layout: a swizzle reads Sw<B,M,S> with three integers", 8, 31);
  expect_error(kernel("  %v = global_view %A : global<f16>[8,4]\n"),
               "global_view: the result type carries the view's layout", 8);
}

}  // namespace
}  // namespace tessel::ir

namespace tessel::ir {
namespace {

// One line of IR (line 8 of the base kernel) per rule, and the message it must produce.
struct Rule {
  const char* body;
  const char* message;
  int line = 8;
};

TEST(Verifier, EveryRuleReportsItsMessage) {
  const Rule rules[] = {
      {"  %x = exp %c0, %c1 : index\n", "exp: takes 1 operand(s), not 2"},
      {"  %a, %b = exp %c0 : index, index\n", "exp: has 1 result(s), not 2"},
      {"  %t = tile %c0, %c0 {shape = [1]} : global<f16>[1]\n",
       "tile: the tiled tensor %c0 must be a tensor, not index"},
      {"  %s = size {name = M} : i32\n", "size: the result is an index"},
      {"  %c = const {value = 1.0} : register<f32>[4]\n",
       "const: makes a scalar; use fill for a tensor"},
      {"  %c = const : index\n", "const: needs a value attribute"},
      {"  %c = const {value = 1.5} : index\n", "const: a index constant needs an integer value"},
      {"  %a, %b, %c, %d = block_grid %c1, %c1, %c1, %c1 : index, index, index, index\n",
       "block_grid: takes 1 to 3 grid extents"},
      {"  %b = block_grid %c1 : i32\n", "block_grid: block indices are index"},
      {"  %v = global_view %sa : shared<f16, (64,32):(32,1)>[64,32]\n",
       "global_view: views a global tensor, not a shared one"},
      {"  %v = global_view %A : global<f32, (8,4):(4,1)>[8,4]\n",
       "global_view: the result is a global tensor of f16"},
      {"  %t = tile : global<f16>[1]\n", "tile: takes a tensor and tile coordinates"},
      {"  %t = tile %A, %c0, %c0 {shape = [-64,32]} : global<f16>[64,32]\n",
       "tile: tile extents must be positive"},
      {"  %t = tile %A, %c0, %c0 {shape = [64,32], squeeze = 1} : global<f16>[64,32]\n",
       "tile: squeeze is a list of dimensions"},
      {"  %t = tile %A, %c0, %c0 {masked, pad = \"x\", shape = [64,32]} : global<f16>[64,32]\n",
       "tile: pad is a number"},
      {"  %n = tile_extent %ta {dim = 0} : i32\n", "tile_extent: the result is an index"},
      {"  %f = fill {value = 0.0} : register<f32>[2,2,2]\n  %t = transpose %f : "
       "register<f32>[2,2,2]\n",
       "transpose: a tensor of rank 3 needs a perm attribute", 9},
      {"  %t = transpose %ra : register<f16>[64,32]\n",
       "transpose: transposing register<f16>[64,32] gives shape [32,64], not register<f16>[64,32]"},
      {"  %f = fill {value = 0.0} : global<f32>[4]\n",
       "fill: makes a register or shared tensor, not global<f32>[4]"},
      {"  %f = fill {value = \"x\"} : register<f32>[4]\n", "fill: needs a numeric value attribute"},
      {"  %f = fill {value = 0} : register<f32>[4]\n",
       "fill: a f32 fill needs a real value such as 0.0"},
      {"  %f = fill {value = 0.5} : register<i32>[4]\n", "fill: a i32 fill needs an integer value"},
      {"  %f = iota {dim = 0} : register<f32>[4]\n",
       "iota: makes a register tensor of integers, not register<f32>[4]"},
      {"  %x = copy %ta : f16\n", "copy: the result is a tensor"},
      {"  copy %ta\n",
       "copy: is either `%dst = copy %src : TYPE` (into a new tensor) or `copy %src, %dst`"},
      {"  %v = fill {value = 0.0} : register<f16>[4]\n  %d = mma %v, %v, %acc : "
       "register<f32>[64,64]\n",
       "mma: multiplies matrices: a, b and c must have rank 2", 9},
      {"  %tb = transpose %sa : shared<f16>[32,64]\n  %bb = fill {value = 0.0} : "
       "shared<bf16>[32,64]\n"
       "  %d = mma %sa, %bb, %acc : register<f32>[64,64]\n",
       "mma: a and b have different element types (f16, bf16)", 10},
      {"  %x = cast %c0 : register<f32>[4]\n",
       "cast: casts a scalar to a scalar or a tensor to a tensor"},
      {"  %x = cast %ra : register<f32>[32,64]\n", "cast: keeps the shape: [64,32] vs [32,64]"},
      {"  %x = rearrange %ra : register<f32>[64,32]\n", "rearrange: keeps element type and shape"},
      {"  %x = rearrange %ra {layout = 3} : register<f16>[64,32]\n",
       "rearrange: layout is a layout<...>"},
      {"  %x = broadcast %c0 {dims = [0]} : index\n", "broadcast: makes a register tensor"},
      {"  %x = broadcast %sa {dims = [0]} : register<f16>[2,64,32]\n",
       "broadcast: broadcasts a register tensor or a scalar"},
      {"  %x = broadcast %ra {dims = [0]} : register<f32>[2,64,32]\n",
       "broadcast: keeps the element type"},
      {"  %x = broadcast %ra {dims = [0,1]} : register<f16>[2,64,32]\n",
       "broadcast: adds 2 dimension(s) to rank 2 but the result has rank 3"},
      {"  %x = broadcast %ra {dims = [5]} : register<f16>[2,64,32]\n",
       "broadcast: dims lists distinct new dimensions of the result (rank 3)"},
      {"  %x = reduce %sa {dims = [1], kind = sum} : register<f16>[64]\n",
       "reduce: reduces a register tensor, not shared<f16>[64,32]"},
      {"  %x = reduce %ra {dims = [], kind = sum} : register<f16>[64,32]\n",
       "reduce: dims lists distinct dimensions"},
      {"  %x = tile %A, %c0, %c0 {shape = [0,32]} : global<f16>[0,32]\n",
       "tile: type global<f16>[0,32] has an empty extent"},
      {"  for %k = %c0 to %c1 step %c1 {\n    %y = yield : index\n  }\n", "yield: has no results",
       9},
  };
  for (const Rule& rule : rules) {
    SCOPED_TRACE(rule.body);
    expect_error(kernel(rule.body), rule.message, rule.line);
  }
  expect_error("kernel @k[M]() facts(M % 0 == 0) {\n}\n",
               "kernel: the divisor of a fact must be positive, not 0", 1);
}

}  // namespace
}  // namespace tessel::ir

namespace tessel::ir {
namespace {

// Structure that only IR built through the C++ API can get wrong (the parser always builds it).
TEST(Verifier, MalformedStructureFromTheApi) {
  auto expect_api_error = [](const std::function<void(Operation&, OpBuilder&)>& build,
                             const std::string& message) {
    Module m;
    auto k = std::make_unique<Operation>(OpKind::kernel, SourceLocation::at("api", 1, 1));
    k->signature().name = "k";
    Block* body = k->add_region();
    OpBuilder b(body);
    build(*k, b);
    m.kernels.push_back(std::move(k));
    try {
      verify(m);
      ADD_FAILURE() << "expected: " << message;
    } catch (const UserError& e) {
      EXPECT_NE(e.message().find(message), std::string::npos) << e.what();
    }
  };
  const Type index = Type::scalar(ScalarKind::index);
  auto constant = [&](OpBuilder& b) {
    Operation* c = b.create(OpKind::constant, {}, {index});
    c->set_attr("value", Attribute::integer(1));
    return c->result();
  };
  expect_api_error([](Operation& k, OpBuilder&) { k.signature().name.clear(); },
                   "kernel: a kernel needs a name");
  expect_api_error(
      [&](Operation&, OpBuilder& b) {
        Value* c = constant(b);
        b.create(OpKind::add, {c, c}, {index})->add_region();
      },
      "add: has no regions");
  expect_api_error(
      [&](Operation&, OpBuilder& b) {
        Value* c = constant(b);
        b.create(OpKind::for_, {c, c}, {});
      },
      "for: needs a lower bound, an upper bound and a step");
  expect_api_error(
      [&](Operation&, OpBuilder& b) {
        Value* c = constant(b);
        b.create(OpKind::for_, {c, c, c}, {});
      },
      "for: has one region");
  expect_api_error(
      [&](Operation&, OpBuilder& b) {
        Value* c = constant(b);
        b.create(OpKind::for_, {c, c, c}, {})->add_region();
      },
      "for: the body takes the loop index and 0 loop-carried value(s)");
  expect_api_error(
      [&](Operation&, OpBuilder& b) {
        Value* c = constant(b);
        b.create(OpKind::for_, {c, c, c}, {})
            ->add_region()
            ->add_argument(Type::scalar(ScalarKind::i32), "k");
      },
      "for: the loop index is an index");
  expect_api_error(
      [&](Operation&, OpBuilder& b) {
        Operation* t =
            b.create(OpKind::cmp, {constant(b), constant(b)}, {Type::scalar(ScalarKind::i1)});
        t->set_attr("pred", Attribute::ident("lt"));
        b.create(OpKind::if_, {t->result()}, {})->add_region();
      },
      "if: has a then region and an else region");
  expect_api_error(
      [&](Operation&, OpBuilder& b) {
        Operation* t =
            b.create(OpKind::cmp, {constant(b), constant(b)}, {Type::scalar(ScalarKind::i1)});
        t->set_attr("pred", Attribute::ident("lt"));
        Operation* op = b.create(OpKind::if_, {t->result()}, {});
        op->add_region()->add_argument(index, "x");
        op->add_region();
      },
      "if: its regions take no arguments");
  Operation lone(OpKind::add, SourceLocation::at("api", 2, 1));
  try {
    verify_kernel(lone);
    ADD_FAILURE();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("add: expected a kernel"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace tessel::ir
