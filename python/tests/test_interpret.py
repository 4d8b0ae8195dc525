"""Kernels from tile IR text, run in the CPU interpreter on numpy arrays, against numpy; and
compiled to CUDA C++ (and a cubin) without a GPU."""

import os
import tempfile
import unittest

import numpy as np

import support
import tessel

GEMM = os.path.join(support.KERNELS, "gemm.tir")
RMSNORM = os.path.join(support.KERNELS, "rmsnorm.tir")
W4A16 = os.path.join(support.KERNELS, "gemm_w4a16.tir")


def rmsnorm_reference(x, w, eps):
    xf = x.astype(np.float32)
    return xf / np.sqrt((xf * xf).mean(axis=1, keepdims=True) + np.float32(eps)) * w.astype(np.float32)


class Interpret(unittest.TestCase):
    def test_gemm_partial_tiles(self):
        # Not tile multiples: 2x2 blocks with masked edges and a partial last K block.
        rng = np.random.default_rng(1)
        M, N, K = 130, 260, 72
        a = rng.uniform(-1, 1, (M, K)).astype(np.float16)
        b = rng.uniform(-1, 1, (N, K)).astype(np.float16)
        c = np.full((M, N), np.nan, np.float16)
        tessel.load_file(GEMM)(a, b, c)
        want = a.astype(np.float32) @ b.astype(np.float32).T
        self.assertFalse(np.isnan(c).any())
        # f32 accumulation in the interpreter, one rounding to f16 at the end.
        np.testing.assert_allclose(c.astype(np.float32), want, rtol=2e-3, atol=2e-3)

    def test_w4a16_takes_packed_bytes(self):
        # A u4 [N, K] parameter takes a uint8 [N, K/2] array: value 2k in the low nibble of byte k.
        rng = np.random.default_rng(3)
        M, N, K, G = 5, 136, 128, 64
        q = rng.integers(0, 16, (N, K), dtype=np.uint8)
        packed = (q[:, 0::2] | (q[:, 1::2] << 4)).astype(np.uint8)
        s = rng.uniform(0.005, 0.02, (K // G, N)).astype(np.float16)
        x = rng.uniform(-1, 1, (M, K)).astype(np.float16)
        y = np.full((M, N), np.nan, np.float16)
        tessel.load_file(W4A16)(x, packed, s, y)
        w = ((q.astype(np.float32) - 8) * np.repeat(s.astype(np.float32), G, axis=0).T)
        w = w.astype(np.float16).astype(np.float32)
        want = x.astype(np.float32) @ w.T
        self.assertFalse(np.isnan(y).any())
        np.testing.assert_allclose(y.astype(np.float32), want, rtol=5e-3, atol=5e-3)
        with self.assertRaisesRegex(tessel.LaunchError, r"argument %Q is u4\[136, 64\] but the kernel expects u4\[136, 128\]"):
            tessel.load_file(W4A16)(x, packed[:, :K // 4].copy(), s, y)

    def test_rmsnorm(self):
        rng = np.random.default_rng(2)
        M, N, eps = 13, 1040, 1e-5
        x = rng.standard_normal((M, N)).astype(np.float16)
        w = rng.standard_normal(N).astype(np.float16)
        y = np.zeros((M, N), np.float16)
        k = tessel.load_file(RMSNORM)
        k(x, w, y, eps)
        np.testing.assert_allclose(y.astype(np.float32), rmsnorm_reference(x, w, eps),
                                   rtol=5e-3, atol=5e-3)
        # An int where a float is declared is taken as that float.
        y2 = np.zeros_like(y)
        k.interpret(x, w, y2, 0)
        np.testing.assert_allclose(y2.astype(np.float32), rmsnorm_reference(x, w, 0.0),
                                   rtol=5e-3, atol=5e-3)

    def test_schedules_agree(self):
        k = tessel.load_file(GEMM)
        rng = np.random.default_rng(3)
        a = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
        b = rng.uniform(-1, 1, (64, 64)).astype(np.float16)
        c1, c2 = np.zeros((64, 64), np.float16), np.zeros((64, 64), np.float16)
        k.interpret(a, b, c1)
        k.interpret(a, b, c2, schedule="random:7", sm_count=1)
        np.testing.assert_array_equal(c1, c2)
        with self.assertRaisesRegex(tessel.LaunchError, "schedule"):
            k.interpret(a, b, c1, schedule="sideways")

    def test_signature(self):
        k = tessel.load_file(GEMM)
        self.assertEqual(k.name, "gemm")
        self.assertEqual(k.sizes, ["M", "N", "K"])
        self.assertEqual(k.facts, [("K", 8)])
        self.assertEqual([p["name"] for p in k.params], ["A", "B", "C"])
        self.assertEqual(k.params[0]["shape"], ["M", "K"])
        self.assertEqual(k.params[0]["dtype"], "f16")
        self.assertEqual(k.grid({"M": 256, "N": 512, "K": 64}, sm_count=132), [2, 2])
        self.assertIn("kernel @gemm", k.source_ir)

    def test_two_kernels_need_a_name(self):
        text = "".join(open(path, encoding="utf-8").read() for path in (RMSNORM, GEMM))
        with self.assertRaisesRegex(ValueError, "2 kernels .*pass kernel=NAME"):
            tessel.load(text)
        self.assertEqual(tessel.load(text, kernel="gemm").name, "gemm")


class CompileWithoutGpu(unittest.TestCase):
    def test_cuda_source(self):
        k = tessel.compile_file(GEMM, cubin=False, use_cache=False)
        self.assertIn('extern "C"', k.cuda_source)
        self.assertIn("wgmma", k.cuda_source)  # the sm_90a warp-specialized mainloop
        self.assertEqual(k.launch_info["entry"], "gemm")
        self.assertFalse(k.has_cubin)
        self.assertIn("warp_group", k.lowered_ir)

    def test_sm80_target(self):
        k = tessel.compile_file(GEMM, target="sm_80", cubin=False, use_cache=False)
        self.assertIn("mma.sync", k.cuda_source)
        self.assertNotIn("wgmma", k.cuda_source)

    def test_cubin_and_disk_cache(self):
        # NVRTC runs without a GPU; the second compile of the same kernel is a cache hit.
        with tempfile.TemporaryDirectory() as cache:
            k = tessel.compile_file(RMSNORM, arch="sm_90a", cache_dir=cache)
            self.assertTrue(k.has_cubin)
            self.assertEqual(k.arch, "sm_90a")
            self.assertFalse(k.compile_times["cache_hit"])
            self.assertTrue(os.listdir(cache))
            again = tessel.compile_file(RMSNORM, arch="sm_90a", cache_dir=cache)
            self.assertTrue(again.compile_times["cache_hit"])
            self.assertEqual(again.cache_key, k.cache_key)

    def test_compiled_kernel_still_interprets_host_arrays(self):
        k = tessel.compile_file(RMSNORM, cubin=False)
        x = np.ones((8, 64), np.float16)
        y = np.zeros((8, 64), np.float16)
        k(x, np.ones(64, np.float16), y, 0.0)
        np.testing.assert_allclose(y.astype(np.float32), 1.0, rtol=1e-3)

    def test_size_hints_schedule_a_row_program(self):
        # size_hints: RMSNorm scheduled for N = 32768 holds its row in the registers of two
        # 1024-thread blocks a SM; for the default N = 8192 over 256 threads. Either computes the
        # same.
        path = os.path.join(support.KERNELS, "rmsnorm_auto.tir")
        wide = tessel.compile_file(path, cubin=False, use_cache=False,
                                   size_hints={"M": 2048, "N": 32768})
        plain = tessel.compile_file(path, cubin=False, use_cache=False)
        self.assertIn("blocks_per_sm = 2", wide.lowered_ir)
        self.assertIn("threads = 1024", wide.lowered_ir)
        self.assertNotIn("threads = 1024", plain.lowered_ir)
        rng = np.random.default_rng(5)
        x = rng.uniform(-1, 1, (3, 1000)).astype(np.float16)
        w = rng.uniform(-1, 1, 1000).astype(np.float16)
        y = np.full((3, 1000), np.nan, np.float16)
        wide(x, w, y, 1e-6)
        np.testing.assert_allclose(y.astype(np.float32), rmsnorm_reference(x, w, 1e-6),
                                   rtol=2e-3, atol=2e-3)


if __name__ == "__main__":
    support.main()
