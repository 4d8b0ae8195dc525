"""The Python tile builder (tessel.tile): kernels built in Python run in the interpreter and match
numpy, the GEMM is the program of examples/kernels/gemm.tir and compiles for sm_90a, and mistakes
raise tessel.CompileError at the line of this file that made them."""

import re
import tempfile
import unittest

import numpy as np

import support
import tessel
from tessel import tile as T
from tessel.testing import relative_error
from tessel.tile import (Shared, cdiv, divisible_by, exp, f16, f32, i32, masked, rsqrt, select,
                         transpose)

rng = np.random.default_rng(7)


def gemm_body(b, bm=128, bn=256, bk=64):
    """C = A B^T, f16 in, f32 accumulation, f16 out: examples/kernels/gemm.tir, op for op."""
    M, N, K = b.size("M"), b.size("N"), b.size("K", divisible_by(8))
    A, B = b.global_("A", f16, [M, K]), b.global_("B", f16, [N, K])
    C = b.global_("C", f16, [M, N])
    c_bm, c_bn, c_bk, c0, c1 = b.index(bm), b.index(bn), b.index(bk), b.index(0), b.index(1)
    i, j = b.block_grid(cdiv(M, c_bm), cdiv(N, c_bn))
    zero = b.fill(f32, [bm, bn], 0.0)

    def step(k, acc):
        a = b.copy(A.tile([bm, bk], [i, k], masked()), Shared)
        w = b.copy(B.tile([bn, bk], [j, k], masked()), Shared)
        return b.mma(a, transpose(w), acc)

    acc = b.loop(c0, cdiv(K, c_bk), c1, zero, step)
    C_tile = C.tile([bm, bn], [i, j], masked())
    b.copy(b.cast(acc, f16), C_tile)


def rmsnorm_body(b, bm=4, bn=64):
    """Y = X * rsqrt(mean(X^2) + eps) * w, row by row (as examples/tile/rows.cpp)."""
    M, N = b.size("M"), b.size("N")
    X, w, Y = b.global_("X", f16, [M, N]), b.global_("w", f16, [N]), b.global_("Y", f16, [M, N])
    eps = b.scalar("eps", f32)
    (i,) = b.block_grid(cdiv(M, bm))
    tiles = cdiv(N, bn)

    def load(k):
        return b.cast(b.copy(X.tile([bm, bn], [i, k], masked())), f32)

    def sum_squares(k, s):
        x = load(k)
        return s + b.reduce_sum(x * x, [1])

    squares = b.loop(tiles, b.fill(f32, [bm], 0.0), sum_squares)
    r = b.broadcast(rsqrt(squares / b.cast(N, f32) + eps), [bm, bn], [1])

    def normalize(k):
        wv = b.broadcast(b.cast(b.copy(w.tile([bn], [k], masked())), f32), [bm, bn], [0])
        b.copy(b.cast(load(k) * r * wv, f16), Y.tile([bm, bn], [i, k], masked()))

    b.loop(tiles, None, normalize)


def without_names(text):
    """IR text with comments dropped and %names replaced by their order of first appearance."""
    text = "\n".join(line for line in text.splitlines() if not line.lstrip().startswith("//"))
    names = {}
    return re.sub(r"%\w+", lambda m: names.setdefault(m.group(0), f"%v{len(names)}"), text)


def line_of(marker):
    """The line of this file that holds `marker` (a comment at the end of the offending call)."""
    with open(__file__, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if line.rstrip().endswith(marker):
                return n
    raise AssertionError(f"no line ends with {marker}")


class Gemm(unittest.TestCase):
    def run_gemm(self, kernel, M, N, K):
        a = rng.standard_normal((M, K)).astype(np.float16)
        b = rng.standard_normal((N, K)).astype(np.float16)
        c = np.zeros((M, N), np.float16)
        kernel(a, b, c)
        want = a.astype(np.float32) @ b.astype(np.float32).T
        self.assertLess(relative_error(c, want), 1e-2)

    def test_ragged_sizes_in_the_interpreter(self):
        gemm = tessel.tile_kernel("gemm", lambda b: gemm_body(b, 32, 32, 16))
        for M, N, K in [(70, 45, 40), (1, 33, 8), (64, 64, 64)]:
            with self.subTest(M=M, N=N, K=K):
                self.run_gemm(gemm, M, N, K)

    def test_the_gemm_of_gemm_tir(self):
        gemm = tessel.tile_kernel("gemm", gemm_body)
        self.assertEqual(gemm.name, "gemm")
        self.assertEqual(gemm.sizes, ["M", "N", "K"])
        self.assertEqual(gemm.facts, [("K", 8)])
        text = tessel.load_file(f"{support.KERNELS}/gemm.tir").source_ir
        self.assertEqual(without_names(gemm.source_ir), without_names(text))
        self.run_gemm(gemm, 130, 260, 72)

    def test_compiles_for_sm90a(self):
        gemm = tessel.compile(tessel.tile_kernel("gemm", gemm_body), cubin=False)
        self.assertIn("wgmma", gemm.cuda_source)
        self.assertEqual(gemm.arch, "sm_90a")
        # NVRTC is linked into the extension: the cubin needs no GPU.
        with tempfile.TemporaryDirectory() as cache:
            gemm = tessel.compile(tessel.tile_kernel("gemm", gemm_body), cache_dir=cache)
        self.assertTrue(gemm.has_cubin)
        self.assertEqual(gemm.launch_info["threads"], 384)  # producer + two consumer warpgroups


class RmsNorm(unittest.TestCase):
    def test_ragged_sizes_in_the_interpreter(self):
        rmsnorm = tessel.tile_kernel("rmsnorm", rmsnorm_body)
        for M, N in [(9, 200), (4, 64), (1, 7)]:
            with self.subTest(M=M, N=N):
                x = rng.standard_normal((M, N)).astype(np.float16)
                w = rng.uniform(0.5, 1.5, N).astype(np.float16)
                y = np.zeros_like(x)
                rmsnorm(x, w, y, 1e-6)
                xf = x.astype(np.float32)
                want = xf / np.sqrt((xf * xf).mean(1, keepdims=True) + 1e-6) * w
                self.assertLess(relative_error(y, want), 1e-2)


class Language(unittest.TestCase):
    def test_loop_with_carried_values(self):
        # Row sums and row maxima of X in one pass of column tiles, a lo/hi/step loop scaling them.
        @tessel.tile_kernel
        def rows(b):
            M, N = b.size("M"), b.size("N")
            X = b.global_("X", f32, [M, N])
            S, R = b.global_("S", f32, [M]), b.global_("R", f32, [M])
            (i,) = b.block_grid(cdiv(M, 4))

            def step(k, carried):
                s, m = carried
                x = b.copy(X.tile([4, 8], [i, k], masked(-1e30)))
                return [s + b.reduce_sum(select(x > -1e29, x, 0.0), [1]),
                        T.max(m, b.reduce_max(x, [1]))]

            s, m = b.loop(cdiv(N, 8), [b.fill(f32, [4], 0.0), b.fill(f32, [4], -1e30)], step)
            s = b.loop(1, 4, 2, s, lambda k, acc: acc * 2.0)  # k = 1, 3: twice
            b.copy(s, S.tile([4], [i], masked()))
            b.copy(m, R.tile([4], [i], masked()))

        self.assertEqual(rows.name, "rows")
        x = rng.standard_normal((10, 21)).astype(np.float32)
        s, r = np.zeros(10, np.float32), np.zeros(10, np.float32)
        rows(x, s, r)
        np.testing.assert_allclose(s, 4 * x.sum(1), rtol=1e-5, atol=1e-5)
        np.testing.assert_array_equal(r, x.max(1))

    def test_if_then_else(self):
        # Y = X * 2 where a scalar flag > 0, else -X; the first block also writes a marker.
        @tessel.tile_kernel("branch")
        def kernel(b):
            N = b.size("N")
            X, Y, F = b.global_("X", f32, [N]), b.global_("Y", f32, [N]), b.global_("F", f32, [1])
            flag = b.scalar("flag", f32)
            (i,) = b.block_grid(cdiv(N, 16))
            x = b.copy(X.tile([16], [i], masked()))
            y = b.if_then_else(flag > 0.0, lambda: x * 2.0, lambda: -x)
            b.copy(y, Y.tile([16], [i], masked()))

            def mark():
                b.copy(b.fill(f32, [1], 7.0), F.tile([1], [0]))

            b.if_then_else(i < 1, mark)

        self.assertEqual(kernel.name, "branch")
        x = rng.standard_normal(40).astype(np.float32)
        for flag, want in [(1.0, 2 * x), (-1.0, -x)]:
            y, f = np.zeros_like(x), np.zeros(1, np.float32)
            kernel(x, y, f, flag)
            np.testing.assert_array_equal(y, want)
            self.assertEqual(f[0], 7.0)

    def test_index_arithmetic(self):
        @tessel.tile_kernel
        def index_ops(b):
            N = b.size("N")
            O = b.global_("O", i32, [N])
            b.block_grid(1)
            values = [N + 3, N - 2, 2 * N, N // 4, N % 5, cdiv(N, 4), T.min(N, 7), T.max(3, N),
                      10 - N, (N + 1) * (N - 1)]
            for slot, v in enumerate(values):
                b.copy(b.broadcast(b.cast(v, i32), [1], [0]), O.tile([1], [slot]))

        n = 13
        o = np.zeros(n, np.int32)
        index_ops(o)
        want = [n + 3, n - 2, 2 * n, n // 4, n % 5, -(-n // 4), min(n, 7), max(3, n), 10 - n,
                (n + 1) * (n - 1)]
        self.assertEqual(list(o[:10]), want)

    def test_elementwise(self):
        @tessel.tile_kernel
        def ew(b):
            N = b.size("N")
            X, Y = b.global_("X", f32, [N]), b.global_("Y", f32, [N])
            (i,) = b.block_grid(cdiv(N, 8))
            x = b.copy(X.tile([8], [i], masked(1.0)))
            y = select(x < 0.0, exp(x), 1.0 / (2.0 - T.min(x, 1.5)))
            y = T.max(y, 0.25) + T.exp2(x * 0.0) - 1.0 + T.abs(-x) * 0.0
            b.copy(y.name("result"), Y.tile([8], [i], masked()))

        self.assertIn("%result = ", ew.source_ir)
        x = rng.standard_normal(19).astype(np.float32)
        y = np.zeros_like(x)
        ew(x, y)
        want = np.maximum(np.where(x < 0, np.exp(x), 1 / (2 - np.minimum(x, 1.5))), 0.25)
        np.testing.assert_allclose(y, want, rtol=1e-6)

    def test_approx_tanh_and_sigmoid(self):
        # `{approx}` asks the GPU for its tanh approximation; the interpreter stays exact.
        @tessel.tile_kernel
        def gates(b):
            N = b.size("N")
            X, Y = b.global_("X", f32, [N]), b.global_("Y", f32, [N])
            (i,) = b.block_grid(cdiv(N, 8))
            x = b.copy(X.tile([8], [i], masked(0.0)))
            b.copy(T.approx_tanh(x) + T.approx_sigmoid(x), Y.tile([8], [i], masked()))

        self.assertIn("tanh %rX {approx}", gates.source_ir)
        self.assertIn("sigmoid %rX {approx}", gates.source_ir)
        x = rng.standard_normal(19).astype(np.float32)
        y = np.zeros_like(x)
        gates(x, y)
        np.testing.assert_allclose(y, np.tanh(x) + 1 / (1 + np.exp(-x)), rtol=1e-6)

    def test_pins_reach_the_ir(self):
        @tessel.tile_kernel
        def pinned(b):
            X = b.global_("X", f32, [16, 8])
            acc = b.fill(f32, [16, 8], 1.0).pin_layout("((4,8),(2,2)):((32,1),(16,8))")
            b.copy(acc, X.tile([16, 8], [0, 0]))

        self.assertIn("register<f32, ((4,8),(2,2)):((32,1),(16,8))>[16,8]", pinned.source_ir)

    def test_ready_parameters_reach_the_signature(self):
        @tessel.tile_kernel
        def scale(b):
            N = b.size("N")
            X, W, Y = b.global_("X", f32, [N]), b.global_("W", f32, [N]), b.global_("Y", f32, [N])
            b.ready(W)  # weights: an overlapping launch may read them before the one before ends
            (i,) = b.block_grid(cdiv(N, b.index(128)))
            x = b.copy(X.tile([128], [i], masked()), T.Register)
            w = b.copy(W.tile([128], [i], masked()), T.Register)
            b.copy(x * w, Y.tile([128], [i], masked()))

        self.assertIn("%Y: global<f32>[N]) ready(%W) {", scale.source_ir)
        x, w = rng.standard_normal(300).astype(np.float32), rng.standard_normal(300).astype(np.float32)
        y = np.zeros(300, np.float32)
        scale(x, w, y)
        np.testing.assert_allclose(y, x * w, rtol=1e-6)


class Errors(unittest.TestCase):
    def assert_error_here(self, error, marker, message):
        self.assertEqual(error.file, __file__)
        self.assertEqual(error.line, line_of(marker))
        self.assertIn(message, error.message)
        self.assertTrue(str(error).startswith(f"{__file__}:{error.line}:"), str(error))

    def test_mma_with_mismatched_shapes(self):
        def body(b):
            a = b.fill(f16, [64, 32], 0.0, Shared)
            w = b.fill(f16, [64, 32], 0.0, Shared)
            b.mma(a, w, b.fill(f32, [64, 64], 0.0))  # <- mma error

        with self.assertRaises(tessel.CompileError) as caught:
            tessel.tile_kernel("bad_mma", body)
        self.assert_error_here(caught.exception, "# <- mma error",
                               "mma: wrong shapes: a is [64,32] and b is [64,32]")
        # The diagnostic shows the line, a caret under the call.
        lines = str(caught.exception).splitlines()
        self.assertEqual(lines[1].strip(), "b.mma(a, w, b.fill(f32, [64, 64], 0.0))  # <- mma error")
        self.assertEqual(lines[2].index("^"), lines[1].index("b.mma"))

    def test_copy_into_a_tile_of_another_type(self):
        def body(b):
            Y = b.global_("Y", f16, [32])
            x = b.fill(f32, [32], 1.0)
            b.copy(x, Y.tile([32], [0]))  # <- copy error

        with self.assertRaises(tessel.CompileError) as caught:
            tessel.tile_kernel("bad_copy", body)
        self.assert_error_here(caught.exception, "# <- copy error",
                               "copy: element types differ: f32 to f16 (use cast to convert)")

    def test_operators_are_located_too(self):
        def body(b):
            x, y = b.fill(f32, [4, 8], 1.0), b.fill(f32, [8, 4], 1.0)
            b.copy(x + y, b.alloc(f32, [4, 8], Shared))  # <- add error

        with self.assertRaises(tessel.CompileError) as caught:
            tessel.tile_kernel("bad_add", body)
        self.assert_error_here(caught.exception, "# <- add error",
                               "add: operand shapes differ: [4,8] vs [8,4]")

    def test_errors_inside_a_loop_body(self):
        def body(b):
            X = b.global_("X", f32, [64])

            def step(k, acc):
                return acc + b.copy(X.tile([16], [k]))  # <- loop body error

            b.loop(4, b.fill(f32, [8], 0.0), step)

        with self.assertRaises(tessel.CompileError) as caught:
            tessel.tile_kernel("bad_loop", body)
        self.assert_error_here(caught.exception, "# <- loop body error",
                               "add: operand shapes differ: [8] vs [16]")

    def test_values_do_not_outlive_their_kernel(self):
        kept = []
        tessel.tile_kernel("keeps", lambda b: kept.append(b.fill(f32, [4], 0.0)))
        with self.assertRaises(tessel.CompileError) as caught:
            kept[0] * 2.0  # <- closed
        self.assert_error_here(caught.exception, "# <- closed", "is closed")

    def test_values_of_two_kernels_do_not_mix(self):
        def outer(b):
            x = b.fill(f32, [4], 0.0)

            def inner(c):
                x + c.fill(f32, [4], 1.0)  # <- mixed

            tessel.tile_kernel("inner", inner)

        with self.assertRaises(tessel.CompileError) as caught:
            tessel.tile_kernel("outer", outer)
        self.assert_error_here(caught.exception, "# <- mixed",
                               "this op mixes values of kernel 'outer' and of kernel 'inner'")

    def test_python_errors_pass_through(self):
        def body(b):
            b.loop(2, b.fill(f32, [4], 0.0), lambda k, acc: 1 / 0)

        with self.assertRaises(ZeroDivisionError):
            tessel.tile_kernel("raises", body)

    def test_a_value_has_no_truth_value(self):
        def body(b):
            if b.fill(f32, [4], 0.0) < 1.0:
                pass

        with self.assertRaisesRegex(TypeError, "no truth value"):
            tessel.tile_kernel("truth", body)

    def test_bad_arguments_are_type_errors(self):
        with self.assertRaisesRegex(TypeError, "expected a Tensor"):
            tessel.tile_kernel("k", lambda b: b.cast("x", f32))
        with self.assertRaisesRegex(TypeError, "the body must be a function"):
            tessel.tile_kernel("k", lambda b: b.loop(4, None, 3))
        with self.assertRaisesRegex(TypeError, "integer division"):
            tessel.tile_kernel("k", lambda b: b.size("N") / 2)
        with self.assertRaises(tessel.CompileError) as caught:
            tessel.tile_kernel("k", lambda b: b.global_("A", "f17", [4]))
        self.assertIn("unknown element type 'f17'", caught.exception.message)


if __name__ == "__main__":
    support.main()
