"""What bench.py's timing leaves for a kernel's own work: triton.testing.do_bench (median, L2
flushed between calls, as bench.py times) of PyTorch's kernels that do almost nothing but launch
or read a given number of bytes after the flush. An 8-element add_ is the floor for one launch;
copy_ and sum over float16 tensors of the benchmarks' input sizes show what reading those bytes
from DRAM adds on top of it with a kernel spread over the whole GPU. Not part of the build;
benchmarks/gpu/RESULTS.md (twenty-seventh session) has the numbers.

  python3 floor_probe.py
"""
import torch
import triton


def time_us(fn):
    return triton.testing.do_bench(fn, return_mode="median") * 1e3


def main():
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    tiny = torch.zeros(8, device="cuda", dtype=torch.float16)
    print("| bytes read | add_ of 8 elements | copy_ | sum |")
    print("|---|---|---|---|")
    # ntrans b = 1 (3 × 8 × 4096), ntrans b = 8, lora's W, gqa's K and V at b = 1, at b = 8.
    for elements in (3 * 8 * 4096, 3 * 64 * 4096, 256 * 4096, 2 * 2 * 4096 * 64, 2 * 16 * 4096 * 64):
        src = torch.empty(elements, device="cuda", dtype=torch.float16).uniform_(-1, 1)
        dst = torch.empty_like(src)
        print(f"| {2 * elements} | {time_us(lambda: tiny.add_(1)):.1f} | "
              f"{time_us(lambda: dst.copy_(src)):.1f} | {time_us(lambda: src.sum()):.1f} |")


if __name__ == "__main__":
    main()
