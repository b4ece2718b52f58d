"""What CUDA events measure around short kernels after do_bench's L2 flush: for kernels whose
length is known (an 8-element add_, torch.cuda._sleep of so many cycles, nothing at all), after
flushes of several sizes or none, the number of distinct event spans, their median and mean, and
their two levels (modes.py's two_levels: lower, upper, and the upper's share), and which calls in
a row were slow. It showed (benchmarks/gpu/RESULTS.md, thirtieth session) that the events resolve
32 ns, and that once the CPU runs ahead of a GPU kept busy by do_bench's flush, every other call
measures 0.7-0.9 µs longer, whatever it runs. Not part of the build.

  python3 event_resolution_probe.py
"""
import collections
import statistics

import torch
import triton

from modes import two_levels  # this folder's modes.py


def spans_us(fn, calls=2000, flush=None, before=None):
    """CUDA-event spans (µs) around fn(), each after an L2 flush when `flush` is given and
    after before() when given."""
    pairs = []
    for _ in range(calls):
        if flush is not None:
            flush.zero_()
        if before is not None:
            before()
        begin, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        begin.record()
        fn()
        end.record()
        pairs.append((begin, end))
    torch.cuda.synchronize()
    return [b.elapsed_time(e) * 1e3 for b, e in pairs]


def describe(label, samples):
    counts = collections.Counter(round(s, 3) for s in samples)
    low, high, share = two_levels(samples)
    print(f"| {label} | {len(counts)} | {statistics.median(samples):.3f} | "
          f"{statistics.fmean(samples):.3f} | {low:.3f} / {high:.3f} / {share:.2f} |")


def main():
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}\n")
    tiny = torch.zeros(8, device="cuda", dtype=torch.float16)
    flush = torch.empty(256 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")
    for _ in range(3):
        spans_us(lambda: tiny.add_(1), calls=200)
    print("| what | distinct values | median | mean | lower level / upper level / upper share |")
    print("|---|---|---|---|---|")
    describe("8-element add_, no flush", spans_us(lambda: tiny.add_(1)))
    describe("8-element add_, after the flush", spans_us(lambda: tiny.add_(1), flush=flush))
    sleep = lambda: torch.cuda._sleep(100000)
    describe("8-element add_, after a 100k-cycle sleep", spans_us(lambda: tiny.add_(1), before=sleep))
    describe("8-element add_, after the flush and a 1k-cycle sleep",
             spans_us(lambda: tiny.add_(1), flush=flush, before=lambda: torch.cuda._sleep(1000)))
    describe("two add_, after the flush", spans_us(lambda: (tiny.add_(1), tiny.add_(1)), flush=flush))
    describe("nothing, after the flush", spans_us(lambda: None, flush=flush))
    describe("nothing, after a 100k-cycle sleep", spans_us(lambda: None, before=sleep))
    small = torch.empty(64 * 1024 * 1024 // 4, dtype=torch.int, device="cuda")
    describe("8-element add_, after a 64 MB zero_", spans_us(lambda: tiny.add_(1), flush=small))
    spans = spans_us(lambda: tiny.add_(1), calls=64, flush=flush)
    low, high, _ = two_levels(spans)
    print("\nslow (S) or fast (f) in call order, add_ after the flush: " +
          "".join("S" if s > (low + high) / 2 else "f" for s in spans) + "\n")
    for mb in (32, 96, 128, 160, 192, 224, 320, 512):
        other = torch.empty(mb * 1024 * 1024 // 4, dtype=torch.int, device="cuda")
        describe(f"8-element add_, after a {mb} MB zero_", spans_us(lambda: tiny.add_(1), flush=other))
        del other
    describe("8-element add_, after summing the flush buffer (a read)",
             spans_us(lambda: tiny.add_(1), before=lambda: flush.sum()))
    inside = flush[-16:]
    describe("add_ of 16 ints at the flush buffer's end, after the flush",
             spans_us(lambda: inside.add_(1), flush=flush))
    inside = flush[:16]
    describe("add_ of 16 ints at the flush buffer's start, after the flush",
             spans_us(lambda: inside.add_(1), flush=flush))
    for cycles in (1000, 2000, 3000, 4000, 5000, 6000, 8000):
        describe(f"torch.cuda._sleep({cycles}), after the flush",
                 spans_us(lambda c=cycles: torch.cuda._sleep(c), flush=flush))
    samples = [t * 1e3 for t in triton.testing.do_bench(lambda: tiny.add_(1), return_mode="all")]
    describe("do_bench of the add_ (all samples)", samples)
    # The raw timestamps: differences between consecutive events with nothing between them.
    events = [torch.cuda.Event(enable_timing=True) for _ in range(2001)]
    for e in events:
        e.record()
    torch.cuda.synchronize()
    describe("consecutive events, nothing between",
             [a.elapsed_time(b) * 1e3 for a, b in zip(events, events[1:])])


if __name__ == "__main__":
    main()
