"""Shared by the Python tests: paths, and a main() that reports a missing requirement (a GPU,
torch) as a skip CTest sees (exit code 77, SKIP_RETURN_CODE in python/tests/CMakeLists.txt)."""

import os
import sys
import unittest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
KERNELS = os.path.join(ROOT, "examples", "kernels")

SKIP = 77


def have_torch():
    try:
        import torch  # noqa: F401
    except ImportError:
        return False
    return True


def have_gpu():
    import tessel

    return tessel.has_gpu()


def main(requires=()):
    """unittest.main(), or exit 77 when a requirement ("gpu", "torch") is missing."""
    checks = {"gpu": have_gpu, "torch": have_torch}
    for r in requires:
        if not checks[r]():
            print(f"SKIPPED: needs {r}")
            sys.exit(SKIP)
    unittest.main(verbosity=2)
