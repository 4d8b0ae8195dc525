// The C++ tile language: it reads like DESIGN.md's sketch, produces verified IR, reports mistakes
// at the C++ call site, and lets the writer pin layouts and instructions.
#include <gtest/gtest.h>

#include <cmath>

#include "interp/interpreter.h"
#include "tessel/tile.h"

namespace tessel {
namespace {

TEST(TileLanguage, TheDesignSketchGemm) {
  auto gemm = tile_kernel("gemm", [](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N"), K = b.size("K", divisible_by(8));
    auto A = b.global("A", f16, {M, K}), B = b.global("B", f16, {N, K}),
         C = b.global("C", f16, {M, N});
    auto [i, j] = b.block_grid(cdiv(M, 128), cdiv(N, 256));
    auto acc = b.fill(f32, {128, 256}, 0.0f);
    acc = b.loop(cdiv(K, 64), acc, [&](auto k, auto acc) {
      auto a = b.copy(A.tile({128, 64}, {i, k}), Shared);
      auto w = b.copy(B.tile({256, 64}, {j, k}), Shared);
      return b.mma(a, transpose(w), acc);
    });
    b.copy(b.cast(acc, f16), C.tile({128, 256}, {i, j}));
  });
  std::string text = gemm.text();
  EXPECT_NE(text.find("kernel @gemm[M, N, K](%A: global<f16>[M,K], %B: global<f16>[N,K], "
                      "%C: global<f16>[M,N]) facts(K % 8 == 0) {"),
            std::string::npos)
      << text;
  for (const char* piece :
       {"= block_grid %", "fill {value = 0.0} : register<f32>[128,256]",
        "= for %k = ", "copy %A_tile : shared<f16>[128,64]", "transpose %sB : shared<f16>[64,256]",
        "mma %sA, %sB_t, %fill_it", "cast %fill_out : register<f16>[128,256]",
        "copy %fill_out_f16, %C_tile"}) {
    EXPECT_NE(text.find(piece), std::string::npos) << piece << "\n" << text;
  }
  // It runs: sizes that are tile multiples (its tiles are unmasked), against a plain loop.
  const int64_t M = 128, N = 512, K = 128;
  interp::HostTensor A(f16, {M, K}), B(f16, {N, K}), C(f16, {M, N});
  for (int64_t e = 0; e < A.size(); ++e) A.set_float(e, ((e * 37) % 17 - 8) / 8.0);
  for (int64_t e = 0; e < B.size(); ++e) B.set_float(e, ((e * 11) % 13 - 6) / 16.0);
  interp::interpret(gemm.op(), {&A, &B, &C}, {{{"M", M}, {"N", N}, {"K", K}}, {}});
  for (int64_t m = 0; m < M; m += 7) {
    for (int64_t n = 0; n < N; n += 5) {
      float acc = 0.0f;
      for (int64_t k = 0; k < K; ++k) {
        acc = acc + static_cast<float>(A.get_float(m * K + k)) *
                        static_cast<float>(B.get_float(n * K + k));
      }
      ASSERT_EQ(C.get_float(m * N + n), static_cast<float>(static_cast<_Float16>(acc)))
          << m << "," << n;
    }
  }
}

TEST(TileLanguage, MistakesAreReportedAtTheCallSite) {
  int line = 0;
  try {
    tile_kernel("bad", [&](TileBuilder& b) {
      auto a = b.fill(f16, {64, 32}, 0.0, Shared);
      auto w = b.fill(f16, {64, 32}, 0.0, Shared);
      auto c = b.fill(f32, {64, 64}, 0.0);
      line = __LINE__ + 1;
      b.mma(a, w, c);
    });
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("mma: wrong shapes: a is [64,32] and b is [64,32]"),
              std::string::npos)
        << e.what();
    EXPECT_NE(e.location().file.find("tile_test.cpp"), std::string::npos) << e.what();
    EXPECT_EQ(e.location().line, line) << e.what();
  }
}

TEST(TileLanguage, UsingALoopValueAfterTheLoopIsADominanceError) {
  try {
    tile_kernel("escape", [](TileBuilder& b) {
      auto X = b.global("X", f32, {8});
      Tensor leaked;
      b.loop(b.index(2), b.fill(f32, {8}, 0.0), [&](Index, Tensor acc) {
        leaked = exp(acc);
        return leaked;
      });
      b.copy(leaked, X.tile({8}, {0}));
    });
    FAIL() << "expected a UserError";
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("copy: operand 0 (%exp) does not dominate this use"),
              std::string::npos)
        << e.what();
  }
}

TEST(TileLanguage, PinsLayoutsAndAtoms) {
  auto k = tile_kernel("pinned", [](TileBuilder& b) {
    auto X = b.global("X", f32, {16, 8});
    auto acc = b.fill(f32, {16, 8}, 1.0).pin_layout("((4,8),(2,2)):((32,1),(16,8))");
    auto s = b.copy(X.tile({16, 8}, {0, 0}), Shared).pin_layout("(16,8):(8,1)");
    auto y = (b.copy(s) + acc).pin_atom("fadd");
    b.copy(y, X.tile({16, 8}, {0, 0}));
  });
  std::string text = k.text();
  EXPECT_NE(text.find("register<f32, ((4,8),(2,2)):((32,1),(16,8))>[16,8]"), std::string::npos)
      << text;
  EXPECT_NE(text.find("shared<f32, (16,8):(8,1)>[16,8]"), std::string::npos) << text;
  EXPECT_NE(text.find("{atom = \"fadd\"}"), std::string::npos) << text;
  EXPECT_THROW(tile_kernel("bad_pin",
                           [](TileBuilder& b) {
                             b.fill(f32, {16, 8}, 1.0, Shared).pin_layout("(16,4):(4,1)");
                           }),
               UserError);
  try {
    tile_kernel("bad_pin", [](TileBuilder& b) {
      b.fill(f32, {16, 8}, 1.0).pin_layout("(4,8):(1,4");
    });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("layout:"), std::string::npos) << e.what();
    EXPECT_NE(e.location().file.find("tile_test.cpp"), std::string::npos) << e.what();
  }
}

TEST(TileLanguage, EmptyValuesAndBadFactsAreUserErrors) {
  try {
    tile_kernel("empty", [](TileBuilder& b) {
      b.mma(Tensor(), Tensor(), b.fill(f32, {4, 4}, 0.0));
    });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("mma: an operand is an empty (default) value"), std::string::npos)
        << e.what();
  }
  try {
    tile_kernel("fact", [](TileBuilder& b) { b.size("K", divisible_by(0)); });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("size: divisible_by(0) must be positive"), std::string::npos)
        << e.what();
  }
}

// ready(...) parameters: the weights a launch may read before the launch before it has finished.
TEST(TileLanguage, ReadyParametersGoIntoTheSignature) {
  auto scale = tile_kernel("scale", [](TileBuilder& b) {
    auto N = b.size("N");
    auto X = b.global("X", f32, {N}), W = b.global("W", f32, {N}), Y = b.global("Y", f32, {N});
    b.ready(W);
    b.ready(W);  // once is enough; twice is the same
    auto [i] = b.block_grid(cdiv(N, 128));
    auto x = b.copy(X.tile({128}, {i}, masked()), Register);
    auto w = b.copy(W.tile({128}, {i}, masked()), Register);
    b.copy(x * w, Y.tile({128}, {i}, masked()));
  });
  EXPECT_NE(scale.text().find("%Y: global<f32>[N]) ready(%W) {"), std::string::npos)
      << scale.text();
  try {
    tile_kernel("bad", [](TileBuilder& b) {
      auto N = b.size("N");
      auto X = b.global("X", f32, {N});
      auto [i] = b.block_grid(cdiv(N, 128));
      b.ready(b.copy(X.tile({128}, {i}, masked()), Register));
    });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("ready: %rX"), std::string::npos) << e.what();
    EXPECT_NE(e.message().find("is not a global tensor parameter of the kernel"),
              std::string::npos)
        << e.what();
  }
  // A ready tensor the kernel writes is refused by the verifier.
  try {
    tile_kernel("writes", [](TileBuilder& b) {
      auto N = b.size("N");
      auto X = b.global("X", f32, {N}), W = b.global("W", f32, {N});
      b.ready(W);
      auto [i] = b.block_grid(cdiv(N, 128));
      b.copy(b.copy(X.tile({128}, {i}, masked()), Register), W.tile({128}, {i}, masked()));
    });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("writes %W, which the kernel declares ready"), std::string::npos)
        << e.what();
  }
}

TEST(TileLanguage, GridErrorsPointAtTheCall) {
  int line = 0;
  try {
    tile_kernel("grid", [&](TileBuilder& b) {
      auto X = b.global("X", f32, {64});
      auto n = X.tile({16}, {0}).extent(0);
      line = __LINE__ + 1;
      auto [i] = b.block_grid(n);
      (void)i;
    });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("block_grid: grid extent %X_tile_extent0 must be computed from "
                               "sizes and constants only"),
              std::string::npos)
        << e.what();
    EXPECT_EQ(e.location().line, line) << e.what();
  }
}

TEST(TileLanguage, OperatorsAreLocatedToo) {
  int line = 0;
  try {
    tile_kernel("ops", [&](TileBuilder& b) {
      auto x = b.fill(f32, {4, 8}, 1.0);
      auto y = b.fill(f32, {8, 4}, 1.0);
      line = __LINE__ + 1;
      auto z = x + y;
      (void)z;
    });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("add: operand shapes differ: [4,8] vs [8,4]"), std::string::npos)
        << e.what();
    EXPECT_EQ(e.location().line, line) << e.what();
    EXPECT_NE(e.location().file.find("tile_test.cpp"), std::string::npos) << e.what();
  }
}

// A frontend in another language sets the location of its own caller: ops, errors and the kernel
// take it instead of the C++ call site, until it is unset.
TEST(TileLanguage, AnExplicitLocationReplacesTheCallSite) {
  SourceLocation script = SourceLocation::at("script.py", 12, 5);
  try {
    tile_kernel(
        "located",
        [&](TileBuilder& b) {
          auto x = b.fill(f32, {4, 8}, 1.0);
          b.set_location(script);
          auto y = b.fill(f32, {8, 4}, 1.0);
          auto z = x + y;
          b.set_location(std::nullopt);
          EXPECT_EQ(y.value()->def()->loc().file, "script.py");
          EXPECT_NE(x.value()->def()->loc().file.find("tile_test.cpp"), std::string::npos);
          (void)z;
        },
        SourceLocation::at("script.py", 3, 1));
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("add: operand shapes differ"), std::string::npos) << e.what();
    EXPECT_EQ(e.location().file, "script.py") << e.what();
    EXPECT_EQ(e.location().line, 12) << e.what();
    EXPECT_EQ(e.location().column, 5) << e.what();
  }
  try {
    tile_kernel("twice", [&](TileBuilder& b) {
      b.size("M");
      b.set_location(script);
      b.size("M");
    });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_EQ(e.location().file, "script.py") << e.what();
  }
  auto k = tile_kernel(
      "kernel_at", [](TileBuilder& b) { b.size("M"); }, SourceLocation::at("script.py", 3, 1));
  EXPECT_EQ(k.op().loc().str(), "script.py:3:1");
}

TEST(TileLanguage, LayoutViewsGiveNonContiguousTiles) {
  auto k = tile_kernel("view", [](TileBuilder& b) {
    auto A = b.global("A", f32, {4, 8}), C = b.global("C", f32, {2, 4});
    auto rows = b.global_view(A, "((2,2),8):((16,8),1)", {4, 8});  // rows 0,2,1,3
    b.copy(b.copy(rows.tile({2, 4}, {0, 1})), C.tile({2, 4}, {0, 0}));
  });
  EXPECT_NE(k.text().find("global_view %A : global<f32, ((2,2),8):((16,8),1)>[4,8]"),
            std::string::npos)
      << k.text();
  interp::HostTensor A(ScalarKind::f32, {4, 8}), C(ScalarKind::f32, {2, 4});
  for (int i = 0; i < 32; ++i) A.set_float(i, i);
  interp::interpret(k.op(), {&A, &C}, {});
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 4; ++c) EXPECT_EQ(C.get_float(r * 4 + c), (2 * r) * 8 + 4 + c);
  }
}

TEST(TileLanguage, SizesAreDeclaredOnce) {
  try {
    tile_kernel("twice", [](TileBuilder& b) {
      b.size("M");
      b.size("M");
    });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("size: M is declared twice"), std::string::npos) << e.what();
  }
}

TEST(TileLanguage, IfThenElseAndExternalCallsRunInTheInterpreter) {
  auto k = tile_kernel("branch", [](TileBuilder& b) {
    auto N = b.size("N");
    auto X = b.global("X", f32, {N});
    auto t = b.scalar("t", f32);
    auto [i] = b.block_grid(cdiv(N, 4));
    auto even = compare(b.as_tensor(i % 2), b.as_tensor(b.index(0)), "eq");
    auto v = b.if_then_else(
        even,
        [&] {
          return std::vector<Tensor>{b.call_external("twice", {t}, {ir::Type::scalar(f32)})[0]};
        },
        [&] { return std::vector<Tensor>{-t}; });
    b.copy(b.fill(f32, {4}, 0.0) + v[0], X.tile({4}, {i}, masked()));
  });
  interp::HostTensor X(ScalarKind::f32, {10});
  interp::RunOptions options;
  options.sizes = {{"N", 10}};
  options.externals["twice"] = [](std::vector<interp::ExternalArg>& a) {
    return std::vector<double>{2 * a[0].scalar};
  };
  interp::interpret(k.op(), {&X, 1.5}, options);
  for (int64_t e = 0; e < 10; ++e) EXPECT_EQ(X.get_float(e), (e / 4) % 2 == 0 ? 3.0 : -1.5) << e;
  options.externals.clear();
  try {
    interp::interpret(k.op(), {&X, 1.5}, options);
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("call_external: no external function named \"twice\""),
              std::string::npos)
        << e.what();
  }
}

// A grid order: block k of N writes X[k] to Y[alternate_ends(k, N)]; over odd and even N the
// result is the permutation n-1, 0, n-2, 1, ... (so every element is written once).
TEST(TileLanguage, GridOrderAlternatesEnds) {
  auto k = tile_kernel("order", [](TileBuilder& b) {
    auto N = b.size("N");
    auto X = b.global("X", f32, {N}), Y = b.global("Y", f32, {N});
    std::vector<Index> ids = b.grid({N});
    Index i = b.order_grid(ids, {N}, {0, 0})[0];
    b.copy(b.copy(X.tile({1}, {ids[0]})), Y.tile({1}, {i}));
  });
  EXPECT_NE(k.text().find("%alternated = add %light_part, %heavy_part : index"), std::string::npos)
      << k.text();
  for (int64_t n = 1; n <= 6; ++n) {
    interp::HostTensor X(f32, {n}), Y(f32, {n});
    for (int64_t e = 0; e < n; ++e) {
      X.set_float(e, static_cast<double>(e));
      Y.set_float(e, -1.0);
    }
    interp::RunOptions options;
    options.sizes = {{"N", n}};
    interp::interpret(k.op(), {&X, &Y}, options);
    for (int64_t blk = 0; blk < n; ++blk) {
      int64_t want = blk % 2 ? blk / 2 : n - 1 - blk / 2;
      EXPECT_EQ(Y.get_float(want), static_cast<double>(blk)) << "N=" << n << " block " << blk;
    }
  }
  // With a raster group on a 2-D grid: the attribute, and the second index alternated.
  auto two = tile_kernel("order2", [](TileBuilder& b) {
    auto M = b.size("M"), N = b.size("N");
    auto X = b.global("X", f32, {M, N});
    auto ids = b.grid({M, N}, GridOrder{4, 1});
    b.copy(b.fill(f32, {1, 1}, 1.0), X.tile({1, 1}, {ids[0], ids[1]}));
  });
  EXPECT_NE(two.text().find("block_grid %M, %N {raster_group = 4}"), std::string::npos)
      << two.text();
  EXPECT_NE(two.text().find("%half = div %by, %c2"), std::string::npos) << two.text();
}

TEST(TileLanguage, GridOrderErrorsPointAtTheCall) {
  auto error = [](const GridOrder& order, int dims) {
    int line = 0;
    try {
      tile_kernel("bad_order", [&](TileBuilder& b) {
        auto N = b.size("N");
        std::vector<Index> extents(dims, N);
        line = __LINE__ + 1;
        b.grid(extents, order);
      });
    } catch (const UserError& e) {
      EXPECT_EQ(e.location().line, line) << e.what();
      return e.message();
    }
    return std::string("(no error)");
  };
  EXPECT_NE(error({-1, -1}, 2).find("block_grid order: raster_group must be at least 1 (0 leaves "
                                    "it to tessel), not -1"),
            std::string::npos);
  EXPECT_NE(error({4, -1}, 1).find("block_grid order: raster groups order a 2-D grid, not one of "
                                   "1 dimension"),
            std::string::npos);
  EXPECT_NE(error({0, 2}, 2).find("block_grid order: alternate_ends names dimension 2, but the "
                                  "grid has 2 dimensions"),
            std::string::npos);
  // order_grid takes the indices of a block_grid, not any index.
  try {
    tile_kernel("not_grid", [](TileBuilder& b) {
      auto N = b.size("N");
      b.order_grid({N}, {N}, {0, 0});
    });
    FAIL();
  } catch (const UserError& e) {
    EXPECT_NE(e.message().find("block_grid order: the indices are not those of a block_grid of as "
                               "many extents"),
              std::string::npos)
        << e.what();
  }
}

}  // namespace
}  // namespace tessel
