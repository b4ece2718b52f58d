"""What a call of a compiled kernel costs from Python, and where the time goes (a benchmark, not
a test; docs/python.md, "Cheap calls", has the figures and the machine).

usage: python3 bindings/python/benchmarks/calls.py [--backend cuda|cpu] [--calls N] [--superoptimize]
       [--save FILE | --graph FILE]

The kernel: a small rms_norm + matmul graph compiled as it is (two kernels), or with
--superoptimize the search's choice (usually one fused kernel; --save FILE writes it), or the
graph of FILE (--graph: the same kernel in runs of two builds). On CUDA the inputs are PyTorch
tensors; on the CPU numpy arrays. Printed, each the median of 5 rounds of N calls, in µs a call:
- kernel alone: the backend's own timing of one run (Kernel.measure);
- call, no wait: k(inputs) in chunks of 50, the synchronize after each chunk not timed (the
  host's cost a call);
- call + synchronize: k(inputs, synchronize=True), each waited for;
- and its parts: the outputs allocated (as the call makes them: on a GPU, torch.empty_like of a
  one-element tensor expanded to the outputs' dims); on a GPU the C path alone with outputs
  given (PyTorch's tensors read in C, then the run: yirage_py_torch_run); DLPack capsules made
  (the host's path; on a GPU for comparison); the stream looked up; the C run alone on capsules
  made before (no wait); a synchronize alone; and on a GPU an empty kernel's launch through the
  driver (ctypes), the floor of any launch from Python, and torch.empty with dtype= and device=
  for comparison with the outputs' allocation;
- PyTorch's own op of the same kind (x @ w), without and with a synchronize, for scale.
"""
import argparse
import statistics
import sys
import time

import numpy as np

import yirage as yr


def per_call(fn, calls, after=None, chunk=50):
    """Median over 5 rounds of the host's µs a call. With `after` (a synchronize), calls run in
    chunks of `chunk`, timed without the synchronize that follows each: the host's cost alone,
    never slowed by a full launch queue (back to back, 1000 launches of a 10 µs kernel fill
    it, and each launch then waits for the GPU)."""
    rounds = []
    for _ in range(5):
        spent = 0.0
        done = 0
        while done < calls:
            n = min(chunk if after is not None else calls, calls - done)
            start = time.perf_counter()
            for _ in range(n):
                fn()
            spent += time.perf_counter() - start
            if after is not None:
                after()
            done += n
        rounds.append(spent / calls * 1e6)
    return statistics.median(rounds)


def empty_launch(torch, stream):
    """A launch of an empty kernel through the CUDA driver (ctypes, which adds about half a µs):
    the floor of any launch from Python on this host."""
    import ctypes
    cuda = ctypes.CDLL("libcuda.so.1")
    ptx = b".version 7.0\n.target sm_50\n.address_size 64\n.visible .entry empty()\n{\n ret;\n}\n"
    module, function = ctypes.c_void_p(), ctypes.c_void_p()
    torch.cuda.synchronize()  # PyTorch's context current on this thread
    assert cuda.cuModuleLoadData(ctypes.byref(module), ptx) == 0, "cuModuleLoadData"
    assert cuda.cuModuleGetFunction(ctypes.byref(function), module, b"empty") == 0, "cuModuleGetFunction"
    launch = cuda.cuLaunchKernel
    launch.argtypes = [ctypes.c_void_p] + [ctypes.c_uint] * 7 + [ctypes.c_void_p] * 3
    on = ctypes.c_void_p(stream)
    return lambda: launch(function, 1, 1, 1, 32, 1, 1, 0, on, None, None)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--backend", default=None)
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--superoptimize", action="store_true")
    parser.add_argument("--save", help="with --superoptimize: write the chosen graph to this file")
    parser.add_argument("--graph", help="compile this graph file (as --save wrote it) instead")
    a = parser.parse_args()
    if a.save and not a.superoptimize:
        parser.error("--save writes the search's choice: it needs --superoptimize")
    if a.graph and a.superoptimize:
        parser.error("--graph runs a saved graph instead of a search: not with --superoptimize")
    backend = a.backend or ("cuda" if yr.devices("cuda") else "cpu")
    device = yr.default_context().device(backend, 0)
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(8, 512), dtype=yr.float16)
    W = g.new_input(dims=(512, 256), dtype=yr.float16)
    g.mark_output(g.matmul(g.rms_norm(X, normalized_shape=(512,)), W))
    if a.graph:
        k = yr.load(a.graph).compile(device=device)
    elif a.superoptimize:
        k = g.superoptimize(device=device, time_budget=20)
        if a.save:
            k.graph.save(a.save)
    else:
        k = g.compile(device=device)
    rng = np.random.default_rng(1)
    x = rng.uniform(-1, 1, (8, 512)).astype(np.float16)
    w = rng.uniform(-1, 1, (512, 256)).astype(np.float16)
    sync = lambda: None  # noqa: E731
    torch_op = None
    if not device.is_host:
        import torch
        x, w = torch.from_numpy(x).cuda(), torch.from_numpy(w).cuda()
        sync = torch.cuda.synchronize
        torch_op = lambda: x @ w  # noqa: E731
    ins = [x, w]
    (out,) = k(ins)
    caps = ([t.__dlpack__() for t in ins], [out.__dlpack__()])  # read by yirage, not consumed
    if device.is_host:
        stream = 0
        read = ("  DLPack capsules (3 tensors)", lambda: ([t.__dlpack__() for t in ins], [out.__dlpack__()]))
        look = ("  stream (none on the host)", lambda: 0)
        c_path = None
        allocate = lambda: yr._numpy_outputs(k._outputs)  # noqa: E731
    else:
        # PyTorch tensors take the C path (Kernel._torch_call): read in C, no DLPack capsules.
        stream = yr._torch_stream(torch, 0)
        spec = k._torch_spec
        read = ("  DLPack capsules instead (3 tensors)", lambda: ([t.__dlpack__() for t in ins], [out.__dlpack__()]))
        look = ("  stream looked up", lambda: yr._torch_stream(torch, 0))
        c_path = ("  the C path alone, outputs given, no wait", lambda: yr._c.yirage_py_torch_run(
            k._handle, spec, ins, [out], stream, k._device_type, 0))
        # The outputs made as the C path makes them: the allocators kept for device 0.
        allocate = lambda: [make() for make in spec[4][0]]  # noqa: E731
    c_run = lambda: yr._c.yirage_py_kernel_run(k._handle, *caps, stream, 0)  # noqa: E731
    rows = [
        ("kernel alone (Kernel.measure, median)", k.measure(warmup=20, repeats=200)["median_seconds"] * 1e6),
        ("call, no wait", per_call(lambda: k(ins), a.calls, sync)),
        ("call, outputs given, no wait", per_call(lambda: k(ins, outputs=[out]), a.calls, sync)),
        ("call + synchronize", per_call(lambda: k(ins, synchronize=True), a.calls)),
        ("  outputs allocated (as the call does)", per_call(allocate, a.calls)),
        (read[0], per_call(read[1], a.calls)),
        (look[0], per_call(look[1], a.calls)),
        ("  C run alone on DLPack capsules made before, no wait", per_call(c_run, a.calls, sync)),
        ("  synchronize alone", per_call(lambda: k.synchronize(stream), a.calls)),
    ]
    if c_path is not None:
        rows.insert(5, (c_path[0], per_call(c_path[1], a.calls, sync)))
        rows.append(("  an empty kernel's cuLaunchKernel (ctypes)", per_call(empty_launch(torch, stream), a.calls, sync)))
        rows.append(("  torch.empty(dims, dtype=, device=), for comparison", per_call(
            lambda: torch.empty(out.shape, dtype=out.dtype, device=out.device), a.calls)))
    if torch_op is not None:
        rows.append(("PyTorch x @ w, no wait", per_call(torch_op, a.calls, sync)))
        rows.append(("PyTorch x @ w + synchronize", per_call(lambda: (torch_op(), sync()), a.calls)))
    what = (f"the graph of {a.graph}" if a.graph else
            k.search.candidates[0][1]["description"] if a.superoptimize else "compiled as it is")
    print(f"{device.name} ({backend}), {a.calls} calls a round, median of 5 rounds; Python "
          f"{sys.version.split()[0]}; the kernel: {what}")
    for label, us in rows:
        print(f"{label:40s} {us:8.2f} us")


if __name__ == "__main__":
    main()
