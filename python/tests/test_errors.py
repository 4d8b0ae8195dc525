"""Every user error reaches Python as a tessel exception with its location and message."""

import unittest

import numpy as np

import support
import tessel

RMSNORM = f"{support.KERNELS}/rmsnorm.tir"


class TextErrors(unittest.TestCase):
    def test_syntax_error_has_location_and_caret(self):
        with self.assertRaises(tessel.CompileError) as caught:
            tessel.parse("kernel @k() {\n  %a = bogus\n}\n", "bad.tir")
        e = caught.exception
        self.assertEqual((e.file, e.line, e.column), ("bad.tir", 2, 8))
        self.assertIn("unknown op 'bogus'", e.message)
        text = str(e).splitlines()
        self.assertEqual(text[0], "bad.tir:2:8: error: unknown op 'bogus'")
        self.assertEqual(text[1].strip(), "%a = bogus")
        self.assertEqual(text[2].index("^"), text[1].index("bogus"))

    def test_verifier_error_shows_the_line(self):
        # A well-formed op the verifier rejects: an add of an index and an f32.
        text = ("kernel @k(%x: f32) {\n  %c = const {value = 1} : index\n"
                "  %y = add %c, %x : index\n}\n")
        with self.assertRaises(tessel.CompileError) as caught:
            tessel.parse(text, "v.tir")
        e = caught.exception
        self.assertEqual((e.file, e.line), ("v.tir", 3))
        self.assertIn("%y = add %c, %x : index", str(e))

    def test_file_errors_name_the_file(self):
        with self.assertRaises(FileNotFoundError):
            tessel.parse_file("/nonexistent/k.tir")

    def test_empty_program(self):
        with self.assertRaises(tessel.CompileError) as caught:
            tessel.parse("// nothing\n", "empty.tir")
        self.assertIn("holds no kernel", str(caught.exception))

    def test_unknown_target(self):
        with self.assertRaises(tessel.CompileError) as caught:
            tessel.compile_file(RMSNORM, target="sm_70", cubin=False)
        self.assertIn("unknown target 'sm_70'", str(caught.exception))

    def test_size_hint_that_names_no_size(self):
        with self.assertRaises(tessel.CompileError) as caught:
            tessel.compile_file(f"{support.KERNELS}/rmsnorm_auto.tir", cubin=False,
                                size_hints={"K": 64})
        self.assertIn("size_hints: no kernel has a size named 'K' (sizes: M, N)",
                      str(caught.exception))

    def test_unknown_kernel_name(self):
        with self.assertRaisesRegex(ValueError, "no kernel @nope"):
            tessel.load_file(RMSNORM, kernel="nope")

    def test_not_compiled(self):
        k = tessel.load_file(RMSNORM)
        with self.assertRaisesRegex(tessel.CompileError, "not compiled yet"):
            k.cuda_source


class ArgumentErrors(unittest.TestCase):
    def setUp(self):
        self.k = tessel.load_file(RMSNORM)
        self.x = np.ones((8, 64), np.float16)
        self.w = np.ones(64, np.float16)
        self.y = np.zeros((8, 64), np.float16)

    def expect(self, message, *args):
        with self.assertRaises(tessel.LaunchError) as caught:
            self.k(*args)
        self.assertIn(message, str(caught.exception))
        return caught.exception

    def test_wrong_dtype(self):
        self.expect("argument 0 (%X) has element type f32 but @rmsnorm declares global<f16>[M,N]",
                    self.x.astype(np.float32), self.w, self.y, 1e-5)

    def test_wrong_rank(self):
        self.expect("argument 1 (%w) has rank 2 but @rmsnorm declares global<f16>[N] (rank 1)",
                    self.x, self.w.reshape(1, 64), self.y, 1e-5)

    def test_wrong_count(self):
        self.expect("@rmsnorm takes 4 arguments (%X, %w, %Y, %eps), got 3", self.x, self.w, self.y)

    def test_not_contiguous(self):
        self.expect("argument 0 (%X) is not contiguous", np.ones((8, 128), np.float16)[:, ::2],
                    self.w, self.y, 1e-5)

    def test_inconsistent_sizes(self):
        e = self.expect("argument %w is f16[32] but the kernel expects f16[64]",
                        self.x, np.ones(32, np.float16), self.y, 1e-5)
        self.assertTrue(e.file.endswith("rmsnorm.tir"))  # located at the kernel

    def test_broken_fact(self):
        self.expect("N % 8", np.ones((8, 12), np.float16), np.ones(12, np.float16),
                    np.zeros((8, 12), np.float16), 1e-5)

    def test_scalar_for_tensor_and_tensor_for_scalar(self):
        self.expect("argument 1 (%w) must be a tensor of type global<f16>[N], got a int",
                    self.x, 3, self.y, 1e-5)
        self.expect("argument 3 (%eps) must be a scalar (f32), not an array", self.x, self.w,
                    self.y, self.x)
        self.expect("argument 3 (%eps) must be a number (f32), got a str", self.x, self.w, self.y,
                    "small")

    def test_unsupported_dtype(self):
        self.expect("is not a tessel element type", self.x, self.w,
                    np.zeros((8, 64), np.complex64), 1e-5)

    def test_unknown_keyword(self):
        with self.assertRaisesRegex(tessel.LaunchError, "unknown keyword argument 'streem'"):
            self.k(self.x, self.w, self.y, 1e-5, streem=0)

    def test_read_only_output(self):
        y = np.zeros((8, 64), np.float16)
        y.setflags(write=False)
        self.expect("writes argument 2 (%Y), which is a read-only array", self.x, self.w, y, 1e-5)

    def test_read_only_input_is_fine(self):
        self.x.setflags(write=False)
        self.k(self.x, self.w, self.y, 1e-5)
        self.assertTrue(np.all(self.y != 0))


if __name__ == "__main__":
    support.main()
