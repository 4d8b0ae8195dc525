"""torch integration where torch is importable (skipped otherwise; CI has numpy, not torch): CPU
tensors through the fast path in the interpreter, and the torch.library custom op traced by
torch.compile (fake implementation) and run."""

import os
import unittest

import support
import tessel

RMSNORM = os.path.join(support.KERNELS, "rmsnorm.tir")


class TorchOnCpu(unittest.TestCase):
    def setUp(self):
        import torch

        self.torch = torch
        torch.manual_seed(0)
        self.x = torch.randn(9, 64, dtype=torch.float16)
        self.w = torch.randn(64, dtype=torch.float16)

    def reference(self, x, w, eps):
        xf = x.float()
        return (xf * self.torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + eps) * w.float())

    def test_cpu_tensors_are_interpreted_in_place(self):
        y = self.torch.zeros(9, 64, dtype=self.torch.float16)
        tessel.load_file(RMSNORM)(self.x, self.w, y, 1e-5)
        self.torch.testing.assert_close(y.float(), self.reference(self.x, self.w, 1e-5),
                                        rtol=5e-3, atol=5e-3)

    def test_torch_errors(self):
        k = tessel.load_file(RMSNORM)
        y = self.torch.zeros(9, 64, dtype=self.torch.float16)
        with self.assertRaisesRegex(tessel.LaunchError, "has element type bf16"):
            k(self.x.bfloat16(), self.w, y, 1e-5)
        with self.assertRaisesRegex(tessel.LaunchError, "is not contiguous"):
            k(self.torch.zeros(64, 9, dtype=self.torch.float16).t(), self.w, y, 1e-5)
        with self.assertRaisesRegex(tessel.LaunchError, "dtype torch.complex64"):
            k(self.x, self.w, self.torch.zeros(9, 64, dtype=self.torch.complex64), 1e-5)

    def test_custom_op_under_torch_compile(self):
        from tessel import torch_op

        op = torch_op.register(tessel.load_file(RMSNORM), "tessel_test::rmsnorm")
        eager = op(self.x, self.w, 1e-5)
        self.assertEqual(eager.shape, (9, 64))
        self.torch.testing.assert_close(eager.float(), self.reference(self.x, self.w, 1e-5),
                                        rtol=5e-3, atol=5e-3)
        compiled = self.torch.compile(lambda x, w: op(x, w, 1e-5) * 2, backend="aot_eager",
                                      fullgraph=True)
        self.torch.testing.assert_close(compiled(self.x, self.w), eager * 2)
        with self.assertRaisesRegex(ValueError, "no tensor parameter %Z"):
            torch_op.register(tessel.load_file(RMSNORM), "tessel_test::bad", outputs=["Z"])


if __name__ == "__main__":
    support.main(requires=("torch",))
