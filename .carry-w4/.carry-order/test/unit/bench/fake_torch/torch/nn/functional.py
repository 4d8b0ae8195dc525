# Functional operators of the fake torch (see ../__init__.py).
import math
from torch import T
def gelu(x, approximate="none"):
    return T([0.5*h*(1+math.tanh(0.7978845608*(h+0.044715*h**3))) for h in x.data], x.shape, x.dtype)
def rms_norm(x, shape, w, eps):
    m, n = x.shape; out = []
    for i in range(m):
        row = x.data[i*n:(i+1)*n]; r = 1/math.sqrt(sum(v*v for v in row)/n + eps)
        out += [v*r*w.data[j] for j, v in enumerate(row)]
    return T(out, x.shape, x.dtype)
def layer_norm(x, shape, w, b, eps):
    m, n = x.shape; out = []
    for i in range(m):
        row = x.data[i*n:(i+1)*n]; mu = sum(row)/n; var = sum((v-mu)**2 for v in row)/n
        out += [(v-mu)/math.sqrt(var+eps)*w.data[j]+b.data[j] for j, v in enumerate(row)]
    return T(out, x.shape, x.dtype)
def silu(x):
    import torch
    return x * torch.sigmoid(x)
