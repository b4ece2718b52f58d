"""What moves yirage's ntrans kernel between its two do_bench states (benchmarks/gpu/RESULTS.md,
thirtieth session): in one process, yirage's kernel and torch.compile's call are each timed with
do_bench right after one action (nothing, PyTorch kernels with and without do_bench's flush and
events, do_bench of an 8-element add_ or of a column, what bench.py does between its do_bench
calls), twice, and each timing's lower level and median printed. Not part of the build.

  python3 state_probe.py LIBYIRAGE CUDA_PLUGIN NTRANS_B8.yrg

Environment ACTIONS=label,label… runs only those actions; CLOCKS=1 also samples the SM and
memory clocks through NVML (libnvidia-ml.so.1, every millisecond, on a thread) during each timed
do_bench and prints their medians and the SM clock's lowest, in MHz.
"""
import contextlib
import ctypes as C
import os
import statistics
import sys
import threading
import time

import torch
import triton

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bench  # noqa: E402
from modes import two_levels  # noqa: E402  (this folder's modes.py)

ROWS, COLS, CALLS = 64, 4096, 1000


class ClockSampler:
    """NVML's SM and memory clocks of GPU 0, sampled every millisecond while `with` runs."""

    def __init__(self):
        self.nvml = C.CDLL("libnvidia-ml.so.1")
        if self.nvml.nvmlInit_v2() != 0:
            sys.exit("state_probe.py: nvmlInit_v2 failed")
        self.device = C.c_void_p()
        if self.nvml.nvmlDeviceGetHandleByIndex_v2(0, C.byref(self.device)) != 0:
            sys.exit("state_probe.py: no NVML device 0")

    def clock(self, kind):  # NVML_CLOCK_SM = 1, NVML_CLOCK_MEM = 2
        mhz = C.c_uint()
        self.nvml.nvmlDeviceGetClockInfo(self.device, kind, C.byref(mhz))
        return mhz.value

    def __enter__(self):
        self.sm, self.mem, self.running = [], [], True
        self.thread = threading.Thread(target=self.sample)
        self.thread.start()
        return self

    def sample(self):
        while self.running:
            self.sm.append(self.clock(1))
            self.mem.append(self.clock(2))
            time.sleep(0.001)

    def __exit__(self, *_):
        self.running = False
        self.thread.join()

    def summary(self):
        return f"SM {statistics.median(self.sm):.0f} (≥ {min(self.sm)}), mem {statistics.median(self.mem):.0f}"


def main():
    library, plugin, graph = sys.argv[1:4]
    y = bench.Yirage(library, plugin)
    kernel = y.compile(graph)
    ins = [torch.empty(ROWS, COLS, device="cuda", dtype=torch.float16).uniform_(-1, 1) for _ in range(3)]
    out = torch.empty(ROWS, COLS, device="cuda", dtype=torch.float16)
    keep = []
    run_yirage = bench.yirage_call(y, kernel, ins, out, keep)
    compiled = torch.compile(bench.BENCHMARKS["ntrans"][1])
    compiled(*ins)
    tiny = torch.zeros(8, device="cuda")
    flush = bench.l2_flush_buffer()

    def events_around(fn):
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        fn()
        end.record()
        keep.append((begin, end))

    eager = bench.BENCHMARKS["ntrans"][1]
    candidates = {"yirage": run_yirage, "torch.compile": lambda: compiled(*ins), "eager": lambda: eager(*ins)}

    def prelude():  # what bench.py does before a round's first do_bench
        placed = [t.clone() for t in ins]
        poisoned = torch.full((ROWS, COLS), float("nan"), device="cuda", dtype=torch.float16)
        expected = eager(*[t.float() for t in placed])
        (poisoned.float() - expected).norm().item()

    def stream_part():  # what bench.py does after a round's do_bench calls (after_flush)
        for fn in [None, *candidates.values()]:
            bench.after_flush(flush, fn)

    actions = {
        "nothing": lambda: None,
        f"{CALLS} × add_": lambda: [tiny.add_(1) for _ in range(CALLS)],
        f"{CALLS} × (flush, events around nothing)":
            lambda: [(flush.zero_(), events_around(lambda: None)) for _ in range(CALLS)],
        "do_bench(add_)": lambda: triton.testing.do_bench(lambda: tiny.add_(1)),
        "do_bench(eager)": lambda: triton.testing.do_bench(candidates["eager"]),
        "do_bench(torch.compile)": lambda: triton.testing.do_bench(candidates["torch.compile"]),
        "do_bench(yirage)": lambda: triton.testing.do_bench(run_yirage),
        "bench.py's prelude": prelude,
        "bench.py's stream part": stream_part,
        "bench.py's stream part and prelude": lambda: (stream_part(), prelude()),
    }
    wanted = os.environ.get("ACTIONS")
    if wanted:
        unknown = set(wanted.split(",")) - set(actions)
        if unknown:
            sys.exit(f"state_probe.py: no action {', '.join(sorted(unknown))}; there are {', '.join(actions)}")
        actions = {label: actions[label] for label in wanted.split(",")}
    sampler = ClockSampler() if os.environ.get("CLOCKS") == "1" else None
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}\n")
    print("each do_bench right after the action; lower level / median of its samples, µs"
          f"{' [clocks during it, MHz]' if sampler else ''}, two passes\n")
    print("| after | yirage | torch.compile |")
    print("|---|---|---|")
    for label, action in actions.items():
        cells = []
        for name in ("yirage", "torch.compile"):
            measured = []
            for _ in range(2):
                action()
                torch.cuda.synchronize()
                with sampler or contextlib.nullcontext():
                    timed = triton.testing.do_bench(candidates[name], return_mode="all")
                samples = [t * 1e3 for t in timed]
                clocks = f" [{sampler.summary()}]" if sampler else ""
                measured.append(f"{two_levels(samples)[0]:.2f} / {statistics.median(samples):.2f}{clocks}")
            cells.append(", ".join(measured))
        print(f"| {label} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main()
