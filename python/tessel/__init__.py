"""tessel: a compiler for tensor kernels on NVIDIA Hopper, from Python.

    import tessel
    gemm = tessel.compile_file("examples/kernels/gemm.tir")   # a tessel.Kernel
    gemm(A, B, C)            # torch CUDA tensors: launched on torch's current stream
    gemm(a, b, c)            # numpy arrays / CPU tensors: run in the CPU interpreter, c written

tessel.Variants(kernels) calls several kernels with the same parameters as one: on the GPU the
variant tuned for the arguments' sizes (Variants.tune), else the GEMM cost model's choice.

Kernels come from tile IR text (tessel.load, tessel.compile) or are built in Python with the tile
language (tessel.tile, the C++ language of include/tessel/tile.h bound: @tessel.tile_kernel).

A kernel is called with one argument per kernel parameter: tensors (torch.Tensor, anything with
__cuda_array_interface__, DLPack or the buffer protocol: numpy arrays) and numbers. Sizes come from
the tensors' shapes; nothing is copied on the GPU path. Tensors must be contiguous (row-major).
Device tensors are launched on device 0 (CUDA_VISIBLE_DEVICES picks it); host arrays run in the
interpreter (exact element arithmetic, slow: for tests without a GPU).

Errors: tessel.CompileError (bad text, verifier, compiler) and tessel.LaunchError (arguments that
do not fit, interpreter faults, device errors) carry file, line, column and message.

Compiled kernels are cached on disk by content ($TESSEL_CACHE_DIR or ~/.cache/tessel): a second
process compiling the same kernel reads the cubin back in about a millisecond.

torch is optional. Importing tessel never imports torch; torch tensors are read directly (a fast
path set up the first time a call sees torch imported), tessel.torch_op registers a kernel as a
PyTorch custom op (torch.library) for torch.compile. CI installs numpy, not torch (the PyPI torch
wheel pulls gigabytes of CUDA libraries, and only Debian and PyPI packages may be used): the CI
tests run on numpy arrays through DLPack and the buffer protocol, and the torch tests skip where
torch is not importable; the GPU check script (scripts/gpu/python_check.sh) runs them with torch.
"""

import os as _os

from . import _tessel
from ._errors import CompileError, Error, InternalError, LaunchError

_tessel._set_error_types(CompileError, LaunchError, InternalError)
# Frames of this package are skipped when the tile builder locates an op at its caller.
_tessel._set_package_dir(_os.path.dirname(__file__))

from . import tile  # noqa: E402 (needs the extension set up)
from .tile import tile_kernel  # noqa: E402

Kernel = _tessel.Kernel
Variants = _tessel.Variants

__all__ = [
    "CompileError", "Error", "InternalError", "Kernel", "LaunchError", "Variants", "cache_dir",
    "compile", "compile_file", "gemm_model_choice", "has_gpu", "load", "load_file", "parse", "parse_file", "synchronize",
    "tile", "tile_kernel", "tuning_cache_dir",
]


def parse(text, file="<text>"):
    """Parses and verifies tile IR text; returns the list of its kernels (tessel.Kernel)."""
    return _tessel.parse(text, file)


def parse_file(path):
    """parse() of a file's text; errors name the file."""
    path = _os.fspath(path)
    with open(path, encoding="utf-8") as f:
        return _tessel.parse(f.read(), path)


def _pick(kernels, name, where):
    if name is None:
        if len(kernels) != 1:
            names = ", ".join("@" + k.name for k in kernels)
            raise ValueError(f"{where} holds {len(kernels)} kernels ({names}): pass kernel=NAME")
        return kernels[0]
    for k in kernels:
        if k.name == name.lstrip("@"):
            return k
    names = ", ".join("@" + k.name for k in kernels)
    raise ValueError(f"{where} has no kernel @{name.lstrip('@')} (it has {names})")


def load(text, kernel=None, file="<text>"):
    """One kernel of tile IR text (the only one, or the one named `kernel`), not compiled yet: it
    compiles on its first call on device tensors, and interprets host arrays without compiling."""
    return _pick(parse(text, file), kernel, file)


def load_file(path, kernel=None):
    """load() of a file."""
    return _pick(parse_file(path), kernel, _os.fspath(path))


def compile(source, kernel=None, *, file="<text>", **options):
    """Compiles a kernel of tile IR text (or of a file, when `source` is an os.PathLike; or a
    tessel.Kernel, e.g. one built with tessel.tile_kernel, compiled in place).

    Options: target: "sm_90a" (default, unless the kernel pins one) or "sm_80"; arch: NVRTC's
    architecture (default: the GPU's, else the target's); cubin=False stops after the CUDA source
    (no NVRTC: kernel.cuda_source without a GPU); use_cache, cache_dir (the disk cache); passes
    (instead of the default pipeline); nvrtc_flags; size_hints: the sizes a row program is
    scheduled for, e.g. {"M": 4096, "N": 32768} (its tile, block and where the row is held; it
    stays correct at any size; without them a row program launched first on device tensors is
    scheduled for that launch's sizes). Returns the tessel.Kernel, compiled.
    """
    if isinstance(source, Kernel):
        return _compile(source, **options)
    if isinstance(source, _os.PathLike):
        return compile_file(source, kernel, **options)
    return _compile(load(source, kernel, file), **options)


def compile_file(path, kernel=None, **options):
    """compile() of a file."""
    return _compile(load_file(path, kernel), **options)


def _compile(k, target="", arch="", cubin=True, use_cache=True, cache_dir="", passes=(),
             nvrtc_flags=(), size_hints=None):
    k.compile(target=target, arch=arch, cubin=cubin, use_cache=use_cache, cache_dir=cache_dir,
              passes=list(passes), nvrtc_flags=list(nvrtc_flags),
              size_hints=dict(size_hints or {}))
    return k


def has_gpu():
    """Whether a CUDA device can be used."""
    return _tessel.has_gpu()


def synchronize():
    """Waits for all work on the device (asynchronous kernel faults raise LaunchError)."""
    _tessel.synchronize()


def cache_dir():
    """The folder of the compiled-kernel cache."""
    return _tessel.default_cache_dir()


def gemm_model_choice(kernels, sizes, sm_count=132, names=None):
    """The variant Variants(kernels, names).model_choice(sizes, sm_count) names, from the tile
    programs' GEMM traits alone (nothing is compiled): the cheapest by the GEMM cost model, or the
    first when a kernel is not a GEMM the model knows."""
    return _tessel.gemm_model_choice(kernels, sizes, sm_count, names)


def tuning_cache_dir():
    """The folder where Variants.tune records the fastest variant per shape and GPU
    (<kernel cache>/tuning: $TESSEL_CACHE_DIR/tuning or ~/.cache/tessel/tuning)."""
    return _tessel.tuning_cache_dir()
