"""The tile language from Python: the C++ tile language (include/tessel/tile.h), bound.

    import tessel
    from tessel.tile import f16, f32, Shared, cdiv, divisible_by, masked, transpose

    @tessel.tile_kernel
    def gemm(b):                                  # C = A B^T; `gemm` is now a tessel.Kernel
        M, N, K = b.size("M"), b.size("N"), b.size("K", divisible_by(8))
        A, B = b.global_("A", f16, [M, K]), b.global_("B", f16, [N, K])
        C = b.global_("C", f16, [M, N])
        i, j = b.block_grid(cdiv(M, 128), cdiv(N, 256))

        def step(k, acc):
            a = b.copy(A.tile([128, 64], [i, k], masked()), Shared)
            w = b.copy(B.tile([256, 64], [j, k], masked()), Shared)
            return b.mma(a, transpose(w), acc)

        acc = b.loop(cdiv(K, 64), b.fill(f32, [128, 256], 0.0), step)
        b.copy(b.cast(acc, f16), C.tile([128, 256], [i, j], masked()))

Every call appends one op of tile IR through the C++ TileBuilder, located at the line of the
script that made it; the kernel is verified when its body returns, and a mistake raises
tessel.CompileError at that line. The names follow the C++ language, except `b.global_` (`global`
is a Python keyword), `//` for index division, and min/max/abs shadowing Python's builtins when
imported by name (use `tile.max(...)` to keep them).

Values: Index (sizes, block and loop indices; + - * // % with ints, cdiv/min/max) and Tensor
(parameters, tiles, results; + - * / and < <= > >= with tensors and numbers, exp, rsqrt, ...).
They live while the kernel's body runs; using one after is an error.
"""

from . import _tessel

_t = _tessel.tile

Builder = _t.Builder
Tensor = _t.Tensor
Index = _t.Index
ScalarKind = _t.ScalarKind
MemorySpace = _t.MemorySpace
TileOptions = _t.TileOptions
Divisibility = _t.Divisibility

# Element types and memory spaces, as the C++ language names them.
i1, i4, u4, i8, u8, i16, i32, i64 = (ScalarKind.i1, ScalarKind.i4, ScalarKind.u4, ScalarKind.i8,
                                     ScalarKind.u8, ScalarKind.i16, ScalarKind.i32, ScalarKind.i64)
f8e4m3, f8e5m2, f16, bf16, f32, f64 = (ScalarKind.f8e4m3, ScalarKind.f8e5m2, ScalarKind.f16,
                                       ScalarKind.bf16, ScalarKind.f32, ScalarKind.f64)
index = ScalarKind.index
Global, Shared, Register = MemorySpace.Global, MemorySpace.Shared, MemorySpace.Register

divisible_by = _t.divisible_by
masked = _t.masked

cdiv, min, max = _t.cdiv, _t.min, _t.max
exp, exp2, log, log2, sqrt, rsqrt = _t.exp, _t.exp2, _t.log, _t.log2, _t.sqrt, _t.rsqrt
tanh, sigmoid, abs, floor = _t.tanh, _t.sigmoid, _t.abs, _t.floor
# The hardware's tanh approximation on the GPU (`tanh {approx}`); exact in the interpreter.
approx_tanh, approx_sigmoid = _t.approx_tanh, _t.approx_sigmoid
select, fma, compare, transpose = _t.select, _t.fma, _t.compare, _t.transpose

__all__ = [
    "Builder", "Divisibility", "Global", "Index", "MemorySpace", "Register", "ScalarKind",
    "Shared", "Tensor", "TileOptions", "abs", "approx_sigmoid", "approx_tanh", "bf16", "cdiv",
    "compare", "divisible_by", "exp", "exp2", "f16", "f32", "f64", "f8e4m3", "f8e5m2", "floor",
    "fma", "i1", "i16", "i32", "i4", "i64", "i8", "index", "log", "log2", "masked", "max", "min",
    "rsqrt", "select", "sigmoid", "sqrt", "tanh", "tile_kernel", "transpose", "u4", "u8",
]


def tile_kernel(name=None, body=None):
    """Builds a kernel from a Python function of a Builder; returns a tessel.Kernel (verified, not
    compiled: call it, or pass it to tessel.compile).

        @tile_kernel                  # the kernel is named after the function
        def rmsnorm(b): ...

        @tile_kernel("gemm_128x256")  # named explicitly
        def gemm(b): ...

        gemm = tile_kernel("gemm", lambda b: gemm_body(b, bm=128, bn=256, bk=64))
    """
    if callable(name) and body is None:
        return _build(name.__name__, name)
    if body is None:
        return lambda fn: _build(name if name is not None else fn.__name__, fn)
    return _build(name, body)


def _build(name, body):
    # The kernel is located at its function's `def` (its first decorator); a body without code
    # (a functools.partial) at the caller.
    code = getattr(body, "__code__", None)
    if code is None:
        return _t.build(name, body)
    return _t.build(name, body, code.co_filename, code.co_firstlineno)
