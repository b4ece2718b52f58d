"""ntrans against Triton kernels like torch.compile's, timed as bench.py times (do_bench,
median, L2 flushed), in one process with the rounds alternating, so that the machine's state is
the same for all. Candidates: yirage's kernel from each graph file given (compiled through the C
ABI by PLUGIN, and by each plugin of OTHER_PLUGINS); Triton kernels written as Inductor writes
ntrans (`triton_wN`: one program per row, the row in registers, N warps; `phased`, `looped`,
`two_passes`: see each kernel); torch.compile's call and Inductor's own kernel through its
launcher; an 8-element add_ (one launch of almost nothing); and CUBINS' raw launches.

For each it prints its CPU time a call, then the median of each round's median, the range of the
round medians, and how the samples of all rounds spread (10th, 50th and 90th percentiles, mean),
since do_bench's samples fall on two levels (experiments/modes.py splits a SAMPLES file). Not part
of the build; benchmarks/gpu/RESULTS.md (twenty-eighth to thirtieth sessions) has the numbers.

usage: python3 ntrans_triton_probe.py LIB PLUGIN ROWS ROUNDS GRAPH...   (ROWS 8 for b = 1, 64 for b = 8)
       (no GRAPH: libyirage is not loaded at all, for CUBINS and the Triton kernels alone)
environment (each optional):
  OTHER_PLUGINS "label=path,…"           more builds of the CUDA plugin; candidates "graph@label"
  ENV_VARIANTS "label=VAR=value,…"       each graph compiled again by the first plugin with VAR
                                         set to value while it compiles; candidates "graph%label"
  CUBINS "name=path.cubin:SHARED:PDL,…"  yirage_cuda_kernel from each cubin (e.g. the plugin's
                                         cache), launched with cuLaunchKernelEx from ctypes;
                                         ":OTHER" after PDL: into candidate OTHER's output
  NEW_OUTPUTS 1                          also each yirage kernel into an output it allocates
                                         at each call, as torch.compile's call does
  MOVE_FLUSH 1                           before each do_bench, hold a new 256 MB block, so that
                                         do_bench's flush buffer lies somewhere new each time
  FLUSH_EXTRA "0,2,…"                    each candidate timed with that many idle event records
                                         queued after do_bench's flush (outside its span)
  CPU_DELAYS "5,10,…"                    each yirage candidate also after that many µs of CPU
                                         busy-waiting in its call
  CARVEOUTS "name=percent,…"             CUBINS entries' preferred shared memory carveout
  UNCHECKED "name,…"                     candidates whose output is not checked (cut-down
                                         kernels that bound a part's cost)
  PROFILE 1 or a folder                  CUPTI durations and start after the flush (and traces)
  PROFILE_EVENTS 1                       PROFILE's calls between CUDA events, as do_bench's are
  PAIRED 1                               each one's cost in a stream, as bench.py's second table
  ONLY "a,b,…"                           time only candidates whose names hold one of these
  AGAIN 1                                yirage's candidates timed again at the end of each round
  PAD elements                           H, X and α as slices of one buffer, PAD apart
  PTX_DIR folder                         the Triton variants' PTX
  SAMPLES file                           every candidate's do_bench samples, round by round (JSON)
  CROSS 1                                also each yirage kernel writing the next one's output
                                         ("A+out(B)"): whether a copy's speed follows its module
                                         or its output buffer
"""
import ctypes as C
import json
import os
import statistics
import sys
import time

import torch
import triton
import triton.language as tl

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bench  # noqa: E402

COLS = 4096


@triton.jit
def ntrans_rows(h_ptr, x_ptr, a_ptr, o_ptr, N: tl.constexpr):
    offsets = tl.program_id(0).to(tl.int64) * N + tl.arange(0, N)
    h = tl.load(h_ptr + offsets).to(tl.float32)
    x = tl.load(x_ptr + offsets).to(tl.float32)
    a = tl.load(a_ptr + offsets).to(tl.float32)
    hn = (h * tl.rsqrt(tl.sum(h * h, 0) / N)).to(tl.float16).to(tl.float32)
    y = (x + a * (hn - x)).to(tl.float16).to(tl.float32)
    o = y * tl.rsqrt(tl.sum(y * y, 0) / N)
    tl.store(o_ptr + offsets, o.to(tl.float16))


@triton.jit
def ntrans_phased(h_ptr, x_ptr, a_ptr, o_ptr, N: tl.constexpr, EVICT: tl.constexpr):
    """H first and its norm, then X and α: the second loads wait for the first sum."""
    offsets = tl.program_id(0).to(tl.int64) * N + tl.arange(0, N)
    h = tl.load(h_ptr + offsets, eviction_policy=EVICT).to(tl.float32)
    hn = (h * tl.rsqrt(tl.sum(h * h, 0) / N)).to(tl.float16).to(tl.float32)
    x = tl.load(x_ptr + offsets, eviction_policy=EVICT).to(tl.float32)
    a = tl.load(a_ptr + offsets, eviction_policy=EVICT).to(tl.float32)
    y = (x + a * (hn - x)).to(tl.float16).to(tl.float32)
    o = y * tl.rsqrt(tl.sum(y * y, 0) / N)
    tl.store(o_ptr + offsets, o.to(tl.float16))


@triton.jit
def ntrans_looped(h_ptr, x_ptr, a_ptr, o_ptr, N: tl.constexpr, R: tl.constexpr,
                  KEEP: tl.constexpr, DROP: tl.constexpr):
    """Inductor's kernel for ntrans: three passes over the row in pieces of R (H; X, α and H again,
    KEEP their eviction policy; all three again, DROP theirs, and the store)."""
    row = tl.program_id(0).to(tl.int64) * N
    acc = tl.zeros([R], tl.float32)
    for r in tl.range(0, N, R):
        h = tl.load(h_ptr + row + r + tl.arange(0, R), eviction_policy=KEEP).to(tl.float32)
        acc += h * h
    inv_h = tl.rsqrt(tl.sum(acc, 0) / N)
    acc = tl.zeros([R], tl.float32)
    for r in tl.range(0, N, R):
        x = tl.load(x_ptr + row + r + tl.arange(0, R), eviction_policy=KEEP).to(tl.float32)
        a = tl.load(a_ptr + row + r + tl.arange(0, R), eviction_policy=KEEP).to(tl.float32)
        h = tl.load(h_ptr + row + r + tl.arange(0, R), eviction_policy=KEEP).to(tl.float32)
        y = x + a * (h * inv_h - x)
        acc += y * y
    inv_y = tl.rsqrt(tl.sum(acc, 0) / N)
    for r in tl.range(0, N, R):
        x = tl.load(x_ptr + row + r + tl.arange(0, R), eviction_policy=DROP).to(tl.float32)
        a = tl.load(a_ptr + row + r + tl.arange(0, R), eviction_policy=DROP).to(tl.float32)
        h = tl.load(h_ptr + row + r + tl.arange(0, R), eviction_policy=DROP).to(tl.float32)
        y = x + a * (h * inv_h - x)
        tl.store(o_ptr + row + r + tl.arange(0, R), (y * inv_y).to(tl.float16))


@triton.jit
def ntrans_two_passes(h_ptr, x_ptr, a_ptr, o_ptr, N: tl.constexpr, R: tl.constexpr):
    """As ntrans_looped, but y stays in registers after the second pass: no third pass."""
    row = tl.program_id(0).to(tl.int64) * N
    acc = tl.zeros([R], tl.float32)
    for r in tl.range(0, N, R):
        h = tl.load(h_ptr + row + r + tl.arange(0, R)).to(tl.float32)
        acc += h * h
    inv_h = tl.rsqrt(tl.sum(acc, 0) / N)
    offsets = row + tl.arange(0, N)
    x = tl.load(x_ptr + offsets).to(tl.float32)
    a = tl.load(a_ptr + offsets).to(tl.float32)
    h = tl.load(h_ptr + offsets).to(tl.float32)
    y = x + a * (h * inv_h - x)
    tl.store(o_ptr + offsets, (y * tl.rsqrt(tl.sum(y * y, 0) / N)).to(tl.float16))


class LaunchAttribute(C.Structure):  # CUlaunchAttribute: id, padding, a 64-byte value union
    _fields_ = [("id", C.c_int), ("pad", C.c_char * 4), ("value", C.c_int), ("rest", C.c_char * 60)]


class LaunchConfig(C.Structure):  # CUlaunchConfig
    _fields_ = [("grid", C.c_uint * 3), ("block", C.c_uint * 3), ("shared", C.c_uint), ("stream", C.c_void_p),
                ("attrs", C.POINTER(LaunchAttribute)), ("num_attrs", C.c_uint)]


def yirage_call_new_output(y, kernel, inputs, like, keep):
    """A call of yirage's kernel on `inputs` into an output it allocates like `like` (torch.empty,
    from PyTorch's caching allocator), as torch.compile's call allocates its own; returns it."""
    out = bench.dltensor(like, keep)
    ins = (C.POINTER(bench.DLTensor) * len(inputs))(*[C.pointer(bench.dltensor(t, keep)) for t in inputs])
    outs = (C.POINTER(bench.DLTensor) * 1)(C.pointer(out))
    stream = C.c_void_p(torch.cuda.current_stream().cuda_stream)

    def call():
        result = torch.empty_like(like)
        out.data = result.data_ptr()
        y.check(y.lib.yirage_kernel_run(kernel, ins, len(inputs), outs, 1, stream))
        return result
    return call


def main():
    lib, plugin, rows, rounds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
    graphs = sys.argv[5:]
    torch.manual_seed(0)
    # PAD (environment, elements): H, X and α as slices of one buffer, each PAD elements after the
    # last; unset, three tensors of their own, as bench.py allocates them.
    pad = os.environ.get("PAD")
    if pad is None:
        ins = [torch.empty(rows, COLS, device="cuda", dtype=torch.float16).uniform_(-1, 1) for _ in range(3)]
    else:
        stride = rows * COLS + int(pad)
        whole = torch.empty(3 * stride, device="cuda", dtype=torch.float16).uniform_(-1, 1)
        ins = [whole[i * stride:i * stride + rows * COLS].view(rows, COLS) for i in range(3)]
    print("input addresses:", [hex(t.data_ptr()) for t in ins])
    expected = bench.BENCHMARKS["ntrans"][1](*[t.float() for t in ins])

    def poisoned():  # an output filled with NaN, so that a candidate that writes nothing fails
        return torch.full((rows, COLS), float("nan"), device="cuda", dtype=torch.float16)
    # OTHER_PLUGINS (environment): "label=path,…", more builds of the CUDA plugin; each graph is
    # compiled by each, its candidate named "graph@label" (the first plugin's is "graph").
    plugins = [("", plugin)] + [tuple(e.split("=")) for e in filter(None, os.environ.get("OTHER_PLUGINS", "").split(","))]
    keep = []
    stream = C.c_void_p(torch.cuda.current_stream().cuda_stream)
    candidates = {}
    outputs = {}
    compiled_yirage = []  # (name, y, kernel, output) of each yirage candidate, for CROSS

    def add_yirage(name, y, path):  # the graph at path compiled by y, run through the C ABI
        out = poisoned()
        kernel = y.compile(path)
        candidates[name] = bench.yirage_call(y, kernel, ins, out, keep)
        outputs[name] = out
        compiled_yirage.append((name, y, kernel, out))
        if os.environ.get("NEW_OUTPUTS"):
            candidates[name + " (new output a call)"] = yirage_call_new_output(y, kernel, ins, out, keep)
        print(f"{name}: output at {hex(out.data_ptr())}")
    for label, plugin_path in plugins if graphs else []:  # no graph: libyirage is not loaded
        y = bench.Yirage(lib, plugin_path)
        for path in graphs:
            add_yirage(os.path.basename(path) + (f"@{label}" if label else ""), y, path)
        if label:
            continue
        # ENV_VARIANTS (environment): "label=VAR=value,…", each graph compiled again by the first
        # plugin with VAR=value in the environment while it compiles (a plugin's own settings).
        for entry in filter(None, os.environ.get("ENV_VARIANTS", "").split(",")):
            variant, variable, value = entry.split("=")
            os.environ[variable] = value
            for path in graphs:
                add_yirage(f"{os.path.basename(path)}%{variant}", y, path)
            del os.environ[variable]
    # CROSS (environment): each yirage kernel also writes the next yirage candidate's output.
    if os.environ.get("CROSS"):
        for (name, y, kernel, _), (other, _, _, out) in zip(compiled_yirage, compiled_yirage[1:] + compiled_yirage[:1]):
            candidates[f"{name}+out({other})"] = bench.yirage_call(y, kernel, ins, out, keep)
    for warps in (8, 16):
        out = poisoned()
        candidates[f"triton_w{warps}"] = (lambda w=warps, o=out: ntrans_rows[(rows,)](
            *ins, o, N=COLS, num_warps=w))
        outputs[f"triton_w{warps}"] = out
    variants = {
        "phased_w16": lambda o: ntrans_phased[(rows,)](*ins, o, N=COLS, EVICT="", num_warps=16),
        "phased_w16_evict_first": lambda o: ntrans_phased[(rows,)](*ins, o, N=COLS, EVICT="evict_first",
                                                                  num_warps=16),
        "looped_r2048_w16": lambda o: ntrans_looped[(rows,)](*ins, o, N=COLS, R=2048, KEEP="evict_last",
                                                            DROP="evict_first", num_warps=16),
        "looped_r2048_w16_no_policy": lambda o: ntrans_looped[(rows,)](*ins, o, N=COLS, R=2048, KEEP="",
                                                                      DROP="", num_warps=16),
        "looped_r4096_w16": lambda o: ntrans_looped[(rows,)](*ins, o, N=COLS, R=4096, KEEP="evict_last",
                                                            DROP="evict_first", num_warps=16),
        "two_passes_r4096_w16": lambda o: ntrans_two_passes[(rows,)](*ins, o, N=COLS, R=4096, num_warps=16),
        "two_passes_r2048_w16": lambda o: ntrans_two_passes[(rows,)](*ins, o, N=COLS, R=2048, num_warps=16),
    }
    for name, launch in variants.items():
        out = poisoned()
        candidates[name] = (lambda f=launch, o=out: f(o))
        outputs[name] = out
    # CUBINS (environment): "name=path.cubin:SHARED:PDL,…", yirage_cuda_kernel from each (the
    # generated source or hand-edited variants of it, 256 threads), launched on PyTorch's stream
    # with SHARED bytes of dynamic shared memory, as a programmatic dependent where PDL is 1, into
    # an output of its own or, given a fourth field, into that candidate's output.
    cuda = C.CDLL("libcuda.so.1")
    carveouts = {k: int(v) for k, v in
                 (e.split("=") for e in filter(None, os.environ.get("CARVEOUTS", "").split(",")))}
    for entry in filter(None, os.environ.get("CUBINS", "").split(",")):
        name, spec = entry.split("=")
        path, shared, pdl, *other = spec.split(":")
        module, function = C.c_void_p(), C.c_void_p()
        assert cuda.cuModuleLoad(C.byref(module), path.encode()) == 0, path
        assert cuda.cuModuleGetFunction(C.byref(function), module, b"yirage_cuda_kernel") == 0
        assert cuda.cuFuncSetAttribute(function, 8, int(shared)) == 0  # MAX_DYNAMIC_SHARED_SIZE_BYTES
        if name in carveouts:  # PREFERRED_SHARED_MEMORY_CARVEOUT, percent of L1 and shared memory
            assert cuda.cuFuncSetAttribute(function, 9, carveouts[name]) == 0
        out = outputs[other[0]] if other else poisoned()
        pointers = [C.c_void_p(t.data_ptr()) for t in ins + [out]]
        args = (C.c_void_p * 4)(*[C.cast(C.pointer(p), C.c_void_p) for p in pointers])
        attribute = LaunchAttribute(6, b"", 1)  # CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION
        config = LaunchConfig((C.c_uint * 3)(rows, 1, 1), (C.c_uint * 3)(256, 1, 1), int(shared), stream,
                              C.pointer(attribute) if pdl == "1" else None, 1 if pdl == "1" else 0)
        keep += [pointers, args, attribute, config]
        candidates[name] = (lambda f=function, a=args, c=config: cuda.cuLaunchKernelEx(C.byref(c), f, a, None))
        if not other:
            outputs[name] = out
    compiled = torch.compile(bench.BENCHMARKS["ntrans"][1])
    compiled(*ins)
    candidates["torch.compile"] = lambda: compiled(*ins)
    # Inductor's own kernel, called through its launcher without torch.compile's guards and
    # wrapper (whose CPU time can exceed do_bench's flush): the autotuned config it runs.
    from torch._inductor.codecache import PyCodeCache
    modules = PyCodeCache.modules
    for module in list(modules.values() if isinstance(modules, dict) else modules):
        for name in dir(module):
            kernel = getattr(module, name)
            if name.startswith("triton_") and getattr(kernel, "launchers", None):
                launcher = kernel.launchers[0]
                print(f"inductor: {name}, config {launcher.config}")
                out = poisoned()
                candidates["inductor's kernel"] = (lambda k=kernel, o=out: k.run(
                    *ins, o, rows, COLS, stream=torch.cuda.current_stream().cuda_stream))
                outputs["inductor's kernel"] = out
    tiny = torch.zeros(8, device="cuda")
    candidates["add_ (8 elements)"] = lambda: tiny.add_(1)
    for name, fn in candidates.items():
        compiled_kernel = fn()
        if os.environ.get("PTX_DIR") and hasattr(compiled_kernel, "asm"):  # the Triton variants' PTX
            with open(os.path.join(os.environ["PTX_DIR"], f"{name}.ptx"), "w") as f:
                f.write(compiled_kernel.asm["ptx"])
    torch.cuda.synchronize()
    unchecked = os.environ.get("UNCHECKED", "").split(",")
    for name, out in outputs.items():
        error = ((out.float() - expected).norm() / expected.norm()).item()
        print(f"{name}: relative error {error:.2e}")
        assert error < 1e-2 or name in unchecked, name

    # CPU_DELAYS (environment): "5,10,…", each yirage candidate again with that many µs of CPU
    # busy-waiting before its launch ("name ~5us"): whether do_bench's figure follows the CPU time.
    for delay in [float(d) for d in filter(None, os.environ.get("CPU_DELAYS", "").split(","))]:
        for name in [n for n in candidates if n.endswith(".yrg")]:
            def delayed(fn=candidates[name], seconds=delay * 1e-6):
                end = time.perf_counter() + seconds
                while time.perf_counter() < end:
                    pass
                fn()
            candidates[f"{name} ~{delay:g}us"] = delayed
    # ONLY (environment): "a,b,…", keep the candidates whose names contain one of these.
    if os.environ.get("ONLY"):
        wanted = os.environ["ONLY"].split(",")
        candidates = {n: f for n, f in candidates.items() if any(w in n for w in wanted)}
    # Each candidate's CPU time a call, launches queued without waiting: do_bench hides it behind
    # its L2 flush (a 256 MB zero_) only while it stays under that flush's GPU time.
    for name, fn in candidates.items():
        torch.cuda.synchronize()
        start = time.perf_counter()
        for _ in range(200):
            fn()
        cpu = (time.perf_counter() - start) / 200 * 1e6
        torch.cuda.synchronize()
        print(f"{name}: {cpu:.1f} µs of CPU a call")
    # PROFILE (environment): for each candidate, 40 calls each after do_bench's flush under
    # torch.profiler (CUPTI sees the driver API's launches too): the kernel's duration on the GPU
    # and the gap from the flush's end to its start, medians in µs.
    if os.environ.get("PROFILE"):
        flush = bench.l2_flush_buffer()
        with_events = bool(os.environ.get("PROFILE_EVENTS"))  # CUDA events around each call, as do_bench's
        for name, fn in candidates.items():
            with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
                events = []
                for _ in range(40):
                    flush.zero_()
                    if with_events:
                        events.append((torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)))
                        events[-1][0].record()
                    fn()
                    if with_events:
                        events[-1][1].record()
                torch.cuda.synchronize()
                if with_events:
                    span = statistics.median(b.elapsed_time(e) * 1e3 for b, e in events)
                    print(f"profile {name}: events {span:.2f} µs")
            if os.path.isdir(os.environ["PROFILE"]):  # a folder: each candidate's trace there too
                prof.export_chrome_trace(os.path.join(os.environ["PROFILE"], name.replace(" ", "_") + ".json"))
            kernels = sorted((e for e in prof.profiler.kineto_results.events()
                              if e.device_type() == torch.autograd.DeviceType.CUDA and "emcpy" not in e.name()),
                             key=lambda e: e.start_ns())
            durations, gaps, flush_end = [], [], None
            for e in kernels:
                if "elementwise" in e.name() or "fill" in e.name().lower():
                    flush_end = e.start_ns() + e.duration_ns()
                elif flush_end is not None:
                    durations.append(e.duration_ns() / 1e3)
                    gaps.append((e.start_ns() - flush_end) / 1e3)
                    flush_end = None
            if durations:
                print(f"profile {name}: kernel {statistics.median(durations):.2f} µs, gap after the flush "
                      f"{statistics.median(gaps):.2f} µs ({len(durations)} calls; kernels: "
                      f"{sorted(set(e.name()[:40] for e in kernels))})")
    # PAIRED (environment): each candidate's cost in a stream after the kernel before it, as
    # bench.py's second table measures it (bench.after_flush), in alternating rounds.
    if os.environ.get("PAIRED"):
        flush = bench.l2_flush_buffer()
        pairs = {name: [] for name in candidates}
        alone = []
        for _ in range(3):
            alone.append(bench.after_flush(flush, None))
            for name, fn in candidates.items():
                pairs[name].append(bench.after_flush(flush, fn))
        base = statistics.median(alone)
        print(f"paired: the flush alone {base:.2f} µs (rounds {min(alone):.2f}–{max(alone):.2f})")
        for name in candidates:
            print(f"paired {name}: flush + call less the flush {statistics.median(pairs[name]) - base:.2f} µs "
                  f"(rounds {min(pairs[name]) - base:.2f}–{max(pairs[name]) - base:.2f})")
    # AGAIN (environment): the yirage candidates timed a second time at the end of each round,
    # so that a difference owed to their place in the round shows.
    if os.environ.get("AGAIN"):
        for name in [n for n in candidates if ".yrg" in n]:
            candidates[name + " (again)"] = candidates[name]
    by_round = {name: [] for name in candidates}  # each round's do_bench samples
    # FLUSH_EXTRA (environment): "0,2,…", each candidate timed once for each count of idle event
    # records queued after do_bench's flush, outside its span ("name +2").
    extras = [int(n) for n in os.environ.get("FLUSH_EXTRA", "0").split(",")]
    driver = triton.runtime.driver.active
    plain_clear = driver.clear_cache
    idle_events = [torch.cuda.Event() for _ in range(max(extras))]
    if extras != [0]:
        by_round = {f"{name} +{n}": [] for name in candidates for n in extras}
    for _ in range(rounds):
        for name, fn in candidates.items():
            for n in extras:
                driver.clear_cache = lambda cache, n=n: (plain_clear(cache),
                                                         [e.record() for e in idle_events[:n]])
                # MOVE_FLUSH: hold a block of do_bench's size, so that its next flush lies elsewhere
                if os.environ.get("MOVE_FLUSH"):
                    keep.append(bench.l2_flush_buffer())
                samples = [t * 1e3 for t in triton.testing.do_bench(fn, return_mode="all")]
                by_round[f"{name} +{n}" if extras != [0] else name].append(samples)
    driver.clear_cache = plain_clear
    if os.environ.get("SAMPLES"):
        with open(os.environ["SAMPLES"], "w") as f:
            json.dump(by_round, f)
    print(f"\nntrans, {rows} rows, {rounds} rounds, µs (torch {torch.__version__}, triton {triton.__version__})\n")
    print("| kernel | median of round medians | round medians | p10 / p50 / p90 of all samples | mean |")
    print("|---|---|---|---|---|")
    for name in by_round:
        m = [statistics.median(times) for times in by_round[name]]
        s = sorted(t for times in by_round[name] for t in times)
        q = lambda f: s[int(f * (len(s) - 1))]  # noqa: E731
        print(f"| {name} | {statistics.median(m):.2f} | {min(m):.2f}–{max(m):.2f} | "
              f"{q(0.1):.2f} / {q(0.5):.2f} / {q(0.9):.2f} | {statistics.mean(s):.2f} |")


if __name__ == "__main__":
    main()
