"""tessel.Variants without a GPU: several GEMM tile programs called as one, interpreted on numpy
arrays against numpy; the cost model's choice; the errors of mismatched variants. (Tuning and the
tuned launch are in test_gpu.py.)"""

import os
import tempfile
import unittest

# The kernel cache (and its tuning folder) of this test, not the user's: set before tessel reads
# it (the C++ side reads $TESSEL_CACHE_DIR whenever it opens the cache).
_cache = tempfile.TemporaryDirectory(prefix="tessel-test-variants-")
os.environ["TESSEL_CACHE_DIR"] = _cache.name

import numpy as np  # noqa: E402

import support  # noqa: E402
import tessel  # noqa: E402

GEMM = os.path.join(support.KERNELS, "gemm.tir")
RMSNORM = os.path.join(support.KERNELS, "rmsnorm.tir")
VARIANTS = os.path.join(support.ROOT, "bench", "kernel-variants")
T128 = os.path.join(VARIANTS, "gemm_t128_s4_r8.tir")
SPLIT_K = os.path.join(VARIANTS, "gemm_t128_split_k.tir")


def gemm_operands(M, N, K, seed):
    rng = np.random.default_rng(seed)
    a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
    b = rng.uniform(-1, 1, (N, K)).astype(np.float16)
    return a, b, a.astype(np.float32) @ b.astype(np.float32).T


class Variants(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.v = tessel.Variants([tessel.load_file(p) for p in (GEMM, T128, SPLIT_K)])

    def test_names_family_kernels(self):
        v = self.v
        # The two variant files keep their original's kernel name (@gemm_t128_s4_r8): where names
        # repeat, the file stems name the variants, as `tessel bench gemm a.tir+b.tir` does.
        self.assertEqual(v.names, ["gemm", "gemm_t128_s4_r8", "gemm_t128_split_k"])
        self.assertEqual(len(v), 3)
        self.assertTrue(v.family.startswith("gemm-"), v.family)
        self.assertEqual([k.name for k in v.kernels],
                         ["gemm", "gemm_t128_s4_r8", "gemm_t128_s4_r8"])
        # Compiled in place; without a GPU only to CUDA text.
        for k in v.kernels:
            self.assertTrue(k.compiled)
            self.assertIn("__global__", k.cuda_source)
            if not tessel.has_gpu():
                self.assertFalse(k.has_cubin)
        self.assertIn("gemm_t128_split_k", repr(v))
        # The same programs under other names are another family (the tuning file is per family).
        other = tessel.Variants(v.kernels, names=["a", "b", "c"])
        self.assertEqual(other.names, ["a", "b", "c"])
        self.assertNotEqual(other.family, v.family)

    def test_compiled_kernels_are_taken_as_they_are(self):
        # A kernel compiled beforehand (here with a cubin for sm_90a: NVRTC needs no GPU) is not
        # compiled again; its Variants still interprets host arrays.
        k = tessel.compile_file(GEMM)
        v = tessel.Variants([k])
        self.assertIs(v.kernels[0], k)
        self.assertTrue(k.has_cubin)
        a, b, want = gemm_operands(40, 72, 48, seed=4)
        c = np.zeros((40, 72), np.float16)
        v(a, b, c)
        np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-3, atol=2e-3)

    def test_each_variant_interpreted_on_ragged_sizes(self):
        # Partial tiles in M and N, a partial last K block; at 100x120x520 split-k (auto, on the
        # interpreter's 3 SMs) has one tile and 9 K blocks to split.
        for M, N, K in [(130, 200, 136), (100, 120, 520)]:
            a, b, want = gemm_operands(M, N, K, seed=M)
            for name in self.v.names:
                with self.subTest(M=M, N=N, K=K, variant=name):
                    c = np.full((M, N), np.nan, np.float16)
                    self.v.interpret(a, b, c, variant=name)
                    self.assertFalse(np.isnan(c).any())
                    np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-3, atol=2e-3)

    def test_call_on_host_interprets_the_cost_models_choice(self):
        M, N, K = 70, 300, 64
        a, b, want = gemm_operands(M, N, K, seed=5)
        c = np.full((M, N), np.nan, np.float16)
        self.v(a, b, c)
        np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-3, atol=2e-3)
        # On host arrays choose() names what the call interpreted: the model's choice at the
        # interpreter's 3 SMs.
        self.assertEqual(self.v.choose(a, b, c), self.v.model_choice({"M": M, "N": N, "K": K}, 3))

    def test_model_choice(self):
        v = self.v
        # Few output tiles and a long K: split-k (bench/results/2026-11-26-split-k-h200.md:
        # 1.6-1.9x at 16x4096x11008); a large square GEMM has tiles for every SM: no split.
        self.assertEqual(v.model_choice({"M": 16, "N": 4096, "K": 11008}, 132), "gemm_t128_split_k")
        self.assertNotEqual(v.model_choice({"M": 8192, "N": 8192, "K": 4096}, 132),
                            "gemm_t128_split_k")
        # Kernels the model does not know (no traits): the first.
        rms = tessel.load_file(RMSNORM)
        self.assertEqual(tessel.Variants([rms]).model_choice({"M": 8, "N": 8192}), "rmsnorm")

    def test_gemm_model_choice_needs_no_compile(self):
        # The same choice as the compiled Variants' at every shape, from the tile programs alone.
        kernels = [tessel.load_file(p) for p in (GEMM, T128, SPLIT_K)]
        self.assertFalse(any(k.compiled for k in kernels))
        for m, n, k in [(16, 4096, 11008), (8192, 8192, 4096), (256, 1024, 256), (3000, 17, 999)]:
            sizes = {"M": m, "N": n, "K": k}
            for sms in (3, 132):
                self.assertEqual(tessel.gemm_model_choice(kernels, sizes, sms, names=self.v.names),
                                 self.v.model_choice(sizes, sms))
        self.assertEqual(tessel.gemm_model_choice(kernels, {"M": 16, "N": 4096, "K": 11008}),
                         "gemm_t128_split_k")
        self.assertFalse(any(k.compiled for k in kernels))
        rms = tessel.load_file(RMSNORM)
        self.assertEqual(tessel.gemm_model_choice([rms], {"M": 8, "N": 8192}), "rmsnorm")
        with self.assertRaisesRegex(tessel.CompileError, "3 kernels but 2 names"):
            tessel.gemm_model_choice(kernels, {"M": 8, "N": 8, "K": 8}, names=["a", "b"])
        with self.assertRaisesRegex(tessel.CompileError, "gemm_model_choice: no kernels"):
            tessel.gemm_model_choice([], {"M": 8})
        with self.assertRaisesRegex(TypeError, "tessel.Kernel"):
            tessel.gemm_model_choice(["gemm.tir"], {"M": 8})

    def test_mismatched_parameters(self):
        gemm, rms = tessel.load_file(GEMM), tessel.load_file(RMSNORM)
        with self.assertRaises(tessel.CompileError) as e:
            tessel.Variants([gemm, rms])
        self.assertIn("@rmsnorm takes other arguments than @gemm", str(e.exception))
        with self.assertRaisesRegex(tessel.CompileError, "3 kernels but 2 names"):
            tessel.Variants(self.v.kernels, names=["a", "b"])
        with self.assertRaisesRegex(tessel.CompileError, "two variants are named gemm"):
            tessel.Variants([gemm, tessel.load_file(GEMM)])
        with self.assertRaisesRegex(tessel.CompileError, "no kernels"):
            tessel.Variants([])
        with self.assertRaisesRegex(TypeError, "tessel.Kernel"):
            tessel.Variants([gemm, "gemm.tir"])

    def test_call_errors(self):
        a, b, _ = gemm_operands(64, 64, 64, seed=9)
        c = np.zeros((64, 64), np.float16)
        with self.assertRaisesRegex(tessel.LaunchError, r"tune\(\) times launches on the GPU"):
            self.v.tune(a, b, c)
        with self.assertRaisesRegex(tessel.LaunchError, "has no variant nope"):
            self.v.interpret(a, b, c, variant="nope")
        with self.assertRaisesRegex(tessel.LaunchError, "variants of @gemm takes 3 arguments"):
            self.v(a, b)
        with self.assertRaisesRegex(tessel.LaunchError, "has element type f32"):
            self.v(a, b, c.astype(np.float32))

    def test_tuning_cache_dir(self):
        self.assertEqual(tessel.tuning_cache_dir(), os.path.join(_cache.name, "tuning"))
        self.assertEqual(tessel.tuning_cache_dir(), os.path.join(tessel.cache_dir(), "tuning"))


if __name__ == "__main__":
    support.main()
