"""Where bench.py's time for ntrans (b = 1) goes. In one process, triton.testing.do_bench (as
bench.py times) of: yirage's C ABI path; a plain cuLaunchKernel of the same generated kernel
(ntrans_gen.cubin); cuLaunchKernelEx with and without programmatic dependent launch (as the
plugin launches); torch.compile's kernel; an 8-element add_. Then each one's CPU time per call.
With ONCE=1 each runs 5 times and nothing is timed (for Nsight Compute's kernel durations).
Not part of the build; benchmarks/gpu/RESULTS.md (twenty-fourth session) has the numbers.

  nvcc -cubin -O3 -arch=sm_90a -o ntrans_gen.cubin ntrans_gen.cu   # the generated source of
      # NTRANS.yrg's kernel (grid 8, 256 threads, 24712 bytes of shared memory), cleaned as
      # attention_variants.cu says
  python3 launch_probe.py LIB PLUGIN NTRANS.yrg

torch.compile's call costs about 67 µs of CPU here, as much as do_bench's flush takes the GPU, so
its do_bench figure holds CPU time (bench.py's torch.compile column moves between 5 and 40 µs
on ntrans for that reason); its kernel's duration is what Nsight Compute reports.
"""
import ctypes as C
import os
import sys
import time

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bench  # noqa: E402
lib, plugin, graph = sys.argv[1:4]
rms = bench.rms_norm
fn = lambda h, x, a: rms(x + a * (rms(h) - x))
ins = [torch.empty(8, 4096, device="cuda", dtype=torch.float16).uniform_(-1, 1) for _ in range(3)]
out = torch.empty(8, 4096, device="cuda", dtype=torch.float16)
y = bench.Yirage(lib, plugin)
kernel = y.compile(graph)
keep = []
cin = (C.POINTER(bench.DLTensor) * 3)(*[C.pointer(bench.dltensor(t, keep)) for t in ins])
cout = (C.POINTER(bench.DLTensor) * 1)(C.pointer(bench.dltensor(out, keep)))
stream = C.c_void_p(torch.cuda.current_stream().cuda_stream)
def run_yirage(): y.check(y.lib.yirage_kernel_run(kernel, cin, 3, cout, 1, stream))
cuda = C.CDLL("libcuda.so.1")
mod, func = C.c_void_p(), C.c_void_p()
assert cuda.cuModuleLoad(C.byref(mod), b"ntrans_gen.cubin") == 0
assert cuda.cuModuleGetFunction(C.byref(func), mod, b"yirage_cuda_kernel") == 0
ptrs = [C.c_void_p(t.data_ptr()) for t in ins + [out]]
args = (C.c_void_p * 4)(*[C.cast(C.pointer(p), C.c_void_p) for p in ptrs])
def run_raw(): assert cuda.cuLaunchKernel(func, 8, 1, 1, 256, 1, 1, 24712, stream, args, None) == 0
class LaunchAttribute(C.Structure):  # CUlaunchAttribute: id, padding, a 64-byte value union
    _fields_ = [("id", C.c_int), ("pad", C.c_char * 4), ("value", C.c_int), ("rest", C.c_char * 60)]
class LaunchConfig(C.Structure):  # CUlaunchConfig
    _fields_ = [("grid", C.c_uint * 3), ("block", C.c_uint * 3), ("shared", C.c_uint), ("stream", C.c_void_p),
                ("attrs", C.POINTER(LaunchAttribute)), ("num_attrs", C.c_uint)]
pdl = LaunchAttribute(5, b"", 1)  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
config_pdl = LaunchConfig((C.c_uint * 3)(8, 1, 1), (C.c_uint * 3)(256, 1, 1), 24712, stream, C.pointer(pdl), 1)
config_plain = LaunchConfig((C.c_uint * 3)(8, 1, 1), (C.c_uint * 3)(256, 1, 1), 24712, stream, None, 0)
def run_ex_pdl(): assert cuda.cuLaunchKernelEx(C.byref(config_pdl), func, args, None) == 0
def run_ex_plain(): assert cuda.cuLaunchKernelEx(C.byref(config_plain), func, args, None) == 0
compiled = torch.compile(fn)
compiled(*ins)
small = torch.zeros(8, device="cuda")
cases = [("torch.compile", lambda: compiled(*ins)), ("yirage C ABI", run_yirage), ("raw cuLaunchKernel", run_raw),
         ("raw Ex PDL", run_ex_pdl), ("raw Ex plain", run_ex_plain), ("add_ of 8", lambda: small.add_(1))]
if os.environ.get("ONCE"):  # for ncu: each case 5 times, no timing
    for n, f in cases:
        for _ in range(5): f()
    torch.cuda.synchronize()
    sys.exit(0)
for rnd in range(5):
    print(" | ".join(f"{n} {triton.testing.do_bench(f, return_mode='median') * 1e3:.2f}" for n, f in cases))
# CPU µs per call
for n, f in cases:
    torch.cuda.synchronize(); t = time.perf_counter()
    for _ in range(2000): f()
    c = (time.perf_counter() - t) / 2000 * 1e6
    torch.cuda.synchronize()
    print(f"{n}: {c:.1f} us of CPU per call")
