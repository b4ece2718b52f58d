"""Times yirage's kernels against PyTorch eager and torch.compile on the same CUDA tensors.

usage: bench.py LIBYIRAGE CUDA_PLUGIN BEST_GRAPH_DIR

For each benchmark graph (../shared/benchmarks/README.md, b = 1) it loads the superoptimized graph
BEST_GRAPH_DIR/<name>.yrg, compiles it for CUDA device 0 through the C ABI (ctypes: any Python
works, no binding to build), runs it on PyTorch's tensors without copies (DLPack DLTensors over
their memory, on PyTorch's current stream), checks its output against PyTorch in float32, and
times all three with triton.testing.do_bench (median, L2 flushed between calls). Prints one
Markdown table.
"""

import ctypes as C
import os
import sys

import torch
import triton

# The floors from ../shared/benchmarks/README.md (µs, b = 1), and PyTorch's own numbers there for
# reference; this script measures PyTorch again in the same run.
FLOOR_US = {"gqa": 0.8, "qknorm": 0.8, "rmsnorm_linear": 16.7, "lora": 0.8, "gated_mlp": 22.3,
            "ntrans": 0.1}


def rms_norm(x):
    return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True)).to(x.dtype)


def gqa(q, k, v):
    e = torch.exp(q @ k)
    return (e / e.sum(2, keepdim=True)) @ v


BENCHMARKS = {
    "gqa": ([(2, 256, 64), (2, 64, 4096), (2, 4096, 64)], gqa),
    "qknorm": ([(2, 256, 64), (2, 64, 4096), (2, 4096, 64)], lambda q, k, v: gqa(rms_norm(q), k, v)),
    "rmsnorm_linear": ([(2, 4096), (4096, 6144)], lambda x, w: rms_norm(x) @ w),
    "lora": ([(16, 256), (256, 4096), (256, 16), (16, 4096)], lambda x, w, a, b: x @ w + (x @ a) @ b),
    "gated_mlp": ([(8, 4096), (4096, 4096), (4096, 4096)],
                  lambda x, w1, w2: torch.nn.functional.silu(x @ w1) * (x @ w2)),
    "ntrans": ([(8, 4096)] * 3, lambda h, x, a: rms_norm(x + a * (rms_norm(h) - x))),
}


class DLDevice(C.Structure):
    _fields_ = [("device_type", C.c_int32), ("device_id", C.c_int32)]


class DLDataType(C.Structure):
    _fields_ = [("code", C.c_uint8), ("bits", C.c_uint8), ("lanes", C.c_uint16)]


class DLTensor(C.Structure):
    _fields_ = [("data", C.c_void_p), ("device", DLDevice), ("ndim", C.c_int32),
                ("dtype", DLDataType), ("shape", C.POINTER(C.c_int64)),
                ("strides", C.POINTER(C.c_int64)), ("byte_offset", C.c_uint64)]


class ContextOptions(C.Structure):
    _fields_ = [("struct_size", C.c_size_t), ("plugin_paths", C.POINTER(C.c_char_p)),
                ("num_plugin_paths", C.c_size_t), ("search_default_paths", C.c_int32),
                ("cache_dir", C.c_char_p)]


class Yirage:
    def __init__(self, library, plugin):
        self.lib = C.CDLL(library)
        self.lib.yirage_last_error_message.restype = C.c_char_p
        paths = (C.c_char_p * 1)(plugin.encode())
        options = ContextOptions(C.sizeof(ContextOptions), paths, 1, 0, None)
        self.context = C.c_void_p()
        self.check(self.lib.yirage_context_create(C.byref(options), C.byref(self.context)))
        self.device = C.c_void_p()
        self.check(self.lib.yirage_context_get_device(self.context, b"cuda", 0, C.byref(self.device)))

    def check(self, status):
        if status != 0:
            raise RuntimeError(self.lib.yirage_last_error_message().decode())

    def compile(self, path):
        graph, kernel = C.c_void_p(), C.c_void_p()
        self.check(self.lib.yirage_graph_load(path.encode(), C.byref(graph)))
        self.check(self.lib.yirage_compile(graph, self.device, None, C.byref(kernel)))
        self.lib.yirage_graph_release(graph)
        return kernel


def dltensor(t, keep):
    shape = (C.c_int64 * t.dim())(*t.shape)
    keep.append(shape)
    return DLTensor(t.data_ptr(), DLDevice(2, t.device.index or 0), t.dim(), DLDataType(2, 16, 1),
                    shape, None, 0)


def main():
    library, plugin, best_dir = sys.argv[1:4]
    y = Yirage(library, plugin)
    torch.manual_seed(0)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, "
          f"triton {triton.__version__}\n")
    print("| bench | b | yirage (µs) | PyTorch eager (µs) | torch.compile (µs) | floor (µs) | "
          "goal (µs) | vs eager | vs compile | rel. error vs fp32 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for name, (shapes, fn) in BENCHMARKS.items():
        path = os.path.join(best_dir, name + ".yrg")
        if not os.path.exists(path):
            print(f"| {name} | 1 | (no superoptimized graph: {path}) |||||||")
            continue
        inputs = [torch.empty(s, device="cuda", dtype=torch.float16).uniform_(-1, 1) for s in shapes]
        expected = fn(*[t.float() for t in inputs])
        out = torch.empty(expected.shape, device="cuda", dtype=torch.float16)
        try:
            kernel = y.compile(path)
        except RuntimeError as e:
            print(f"| {name} | 1 | compile failed: {e} |||||||")
            continue
        keep = []
        ins = (C.POINTER(DLTensor) * len(inputs))(*[C.pointer(dltensor(t, keep)) for t in inputs])
        outs = (C.POINTER(DLTensor) * 1)(C.pointer(dltensor(out, keep)))
        stream = C.c_void_p(torch.cuda.current_stream().cuda_stream)

        def run_yirage():
            y.check(y.lib.yirage_kernel_run(kernel, ins, len(inputs), outs, 1, stream))

        run_yirage()
        torch.cuda.synchronize()
        error = ((out.float() - expected).norm() / expected.norm()).item()
        t_yirage = triton.testing.do_bench(run_yirage, return_mode="median") * 1e3
        t_eager = triton.testing.do_bench(lambda: fn(*inputs), return_mode="median") * 1e3
        compiled = torch.compile(fn)
        compiled(*inputs)
        t_compile = triton.testing.do_bench(lambda: compiled(*inputs), return_mode="median") * 1e3
        floor = FLOOR_US[name]
        goal = max(2 * floor, floor + 5)
        print(f"| {name} | 1 | {t_yirage:.1f} | {t_eager:.1f} | {t_compile:.1f} | {floor} | {goal:.1f} | "
              f"{t_eager / t_yirage:.2f}x | {t_compile / t_yirage:.2f}x | {error:.2e} |")
        y.lib.yirage_kernel_release(kernel)


if __name__ == "__main__":
    main()
