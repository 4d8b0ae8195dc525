"""A tessel kernel as a PyTorch custom op (torch.library), so that it works inside torch.compile.

    gemm = tessel.load_file("examples/kernels/gemm.tir")
    mm = tessel.torch_op.register(gemm, "mylib::gemm")       # C is the output (the last tensor)
    C = mm(A, B)                                              # also inside a torch.compile'd model

A tessel kernel writes its outputs into tensors it is given; a custom op is functional. register()
makes the op take the kernel's other parameters, in order, allocate the outputs (their shapes
from the size symbols the inputs bind, their dtypes from the kernel's declaration) and return them.
The fake implementation (what torch.compile traces with) computes the same shapes without running
anything. Inputs are made contiguous first (tessel kernels take row-major tensors). CPU tensors run
in the interpreter.
"""

_TORCH_DTYPES = {
    "f16": "float16", "bf16": "bfloat16", "f32": "float32", "f64": "float64", "i8": "int8",
    "u8": "uint8", "i16": "int16", "i32": "int32", "i64": "int64", "i1": "bool",
    "f8e4m3": "float8_e4m3fn", "f8e5m2": "float8_e5m2",
}


def torch_dtype(name):
    """The torch dtype of a tessel element type name ("f16" -> torch.float16)."""
    import torch

    if name not in _TORCH_DTYPES:
        raise ValueError(f"tessel element type {name} has no torch dtype")
    return getattr(torch, _TORCH_DTYPES[name])


def register(kernel, name, outputs=None):
    """Registers `kernel` as the custom op `name` ("namespace::op_name") and returns it.

    outputs: the names of the tensor parameters the kernel writes (default: its last tensor
    parameter). Each output's extents must be numbers or size symbols that an input binds.
    """
    import torch

    params = kernel.params
    tensors = [p["name"] for p in params if p["kind"] == "tensor"]
    if outputs is None:
        if not tensors:
            raise ValueError(f"@{kernel.name} has no tensor parameter to return")
        outputs = [tensors[-1]]
    outputs = list(outputs)
    for o in outputs:
        if o not in tensors:
            raise ValueError(f"@{kernel.name} has no tensor parameter %{o} (its tensors: "
                             + ", ".join("%" + t for t in tensors) + ")")
    inputs = [p for p in params if p["name"] not in outputs]
    out_params = [next(p for p in params if p["name"] == o) for o in outputs]
    if not any(p["kind"] == "tensor" for p in inputs):
        raise ValueError(f"@{kernel.name}: an op needs a tensor input (to take the device from)")

    def schema_type(p):
        if p["kind"] == "tensor":
            return "Tensor"
        return "float" if p["dtype"].startswith(("f", "bf")) else "int"

    result = "Tensor" if len(outputs) == 1 else "(" + ", ".join(["Tensor"] * len(outputs)) + ")"
    schema = "(" + ", ".join(f"{schema_type(p)} {p['name']}" for p in inputs) + ") -> " + result

    def allocate(args):
        sizes = {}
        device = None
        for p, a in zip(inputs, args):
            if p["kind"] != "tensor":
                continue
            device = device if device is not None else a.device
            if a.dim() != len(p["shape"]):
                raise ValueError(f"{name}: %{p['name']} has rank {a.dim()}, @{kernel.name} "
                                 f"declares {p['type']}")
            for extent, n in zip(p["shape"], a.shape):
                if isinstance(extent, str):
                    sizes.setdefault(extent, n)
        outs = []
        for p in out_params:
            shape = []
            for extent in p["shape"]:
                if isinstance(extent, str) and extent not in sizes:
                    raise ValueError(f"{name}: no input tensor binds the size {extent} of the "
                                     f"output %{p['name']}")
                shape.append(sizes[extent] if isinstance(extent, str) else extent)
            outs.append(torch.empty(shape, dtype=torch_dtype(p["dtype"]), device=device))
        return outs

    def run(*args):
        args = [a.contiguous() if p["kind"] == "tensor" else a for p, a in zip(inputs, args)]
        outs = allocate(args)
        given = {p["name"]: a for p, a in zip(inputs, args)}
        given.update(zip(outputs, outs))
        kernel(*[given[p["name"]] for p in params])
        return outs[0] if len(outs) == 1 else tuple(outs)

    def fake(*args):
        outs = allocate(args)
        return outs[0] if len(outs) == 1 else tuple(outs)

    # custom_op reads the parameter names from the function: give it one with the kernel's.
    names = ", ".join(p["name"] for p in inputs)
    scope = {"_run": run, "_fake": fake}
    exec(f"def impl({names}):\n    return _run({names})\n"
         f"def fake_impl({names}):\n    return _fake({names})\n", scope)
    op = torch.library.custom_op(name, scope["impl"], mutates_args=(), schema=schema)
    op.register_fake(scope["fake_impl"])
    return op
