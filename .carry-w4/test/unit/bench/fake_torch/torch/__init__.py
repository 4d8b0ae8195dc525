# A pure-Python stand-in for the torch calls bench/torch_baselines.py makes, on tiny tensors (lists),
# so that its measuring code runs end to end without PyTorch or a GPU (test/unit/bench/CMakeLists.txt).
# Events tick a fake clock: the figures mean nothing; the control flow, the checks and the records do.
import math, random
__version__ = "fake"
float16, bfloat16, float32, float64 = "f16", "bf16", "f32", "f64"
class T:
    def __init__(s, data, shape, dtype="f32"):
        s.data, s.shape, s.dtype = list(data), tuple(shape), dtype
    def numel(s): return len(s.data)
    def element_size(s): return 4 if s.dtype == "f32" else 8 if s.dtype == "f64" else 2
    def mul_(s, v): s.data = [x * v for x in s.data]; return s
    def sub_(s, v): s.data = [x - v for x in s.data]; return s
    def fill_(s, v): s.data = [v] * len(s.data); return s
    def copy_(s, o): s.data = list(o.data); return s
    def to(s, d): return T(s.data, s.shape, d)
    def float(s): return s.to("f32")
    def double(s): return s.to("f64")
    def norm(s): return T([math.sqrt(sum(x * x for x in s.data))], ())
    def item(s): return s.data[0]
    def __sub__(s, o): return T([a - b for a, b in zip(s.data, o.data)], s.shape, s.dtype)
    def __add__(s, o):
        if o.shape == s.shape: return T([a + b for a, b in zip(s.data, o.data)], s.shape, s.dtype)
        n = o.shape[0]; return T([x + o.data[i % n] for i, x in enumerate(s.data)], s.shape, s.dtype)
    @property
    def T(s):
        m, n = s.shape; return T([s.data[i * n + j] for j in range(n) for i in range(m)], (n, m), s.dtype)
    def __matmul__(s, o):
        if len(o.shape) == 1:
            m, n = s.shape; return T([sum(s.data[i*n+j]*o.data[j] for j in range(n)) for i in range(m)], (m,), s.dtype)
        m, k = s.shape; k2, n = o.shape; assert k == k2
        return T([sum(s.data[i*k+q]*o.data[q*n+j] for q in range(k)) for i in range(m) for j in range(n)], (m, n), s.dtype)
    def __getitem__(s, rows):
        m, n = s.shape; return T([s.data[r*n+j] for r in rows.data for j in range(n)], (len(rows.data), n), s.dtype)
def rand(*shape, device=None, dtype="f32"):
    return T([random.random() for _ in range(math.prod(shape))], shape, dtype)
def randint(lo, hi, shape, device=None): return T([random.randrange(lo, hi) for _ in range(shape[0])], shape)
def empty(n, device=None, dtype="f32"): return T([0.0] * n, (n,), dtype)
def empty_like(t): return T(t.data, t.shape, t.dtype)
def matmul(a, b, out=None):
    r = a @ b
    if out is not None: out.data = r.data
    return r
def softmax(x, dim=-1):
    m, n = x.shape; out = []
    for i in range(m):
        row = x.data[i*n:(i+1)*n]; mx = max(row); e = [math.exp(v - mx) for v in row]; s = sum(e)
        out += [v / s for v in e]
    return T(out, x.shape, x.dtype)
def compile(fn): return fn
class cuda:
    @staticmethod
    def is_available(): return True
    @staticmethod
    def get_device_name(i): return "Fake GPU"
    @staticmethod
    def synchronize(): pass
    @staticmethod
    def empty_cache(): pass
    class Event:
        t = 0.0
        def __init__(s, enable_timing=False): pass
        def record(s): cuda.Event.t += 0.01; s.at = cuda.Event.t
        def elapsed_time(s, e): return e.at - s.at
from . import nn
def _mul(s, o): return T([a * b for a, b in zip(s.data, o.data)], s.shape, s.dtype)
T.__mul__ = _mul
def addmm(bias, a, b): return (a @ b) + bias
def relu(x): return T([max(v, 0.0) for v in x.data], x.shape, x.dtype)
def sigmoid(x): return T([1 / (1 + math.exp(-v)) for v in x.data], x.shape, x.dtype)
