"""What PyTorch's fused attention does on gqa's and qknorm's shapes: the kernel a user who knows
it would call instead of bench.py's explicit graph (exp, sum, divide, two matmuls). Times, as
bench.py does (triton.testing.do_bench, median, L2 flushed between calls), in µs:
torch.nn.functional.scaled_dot_product_attention with scale 1 on each backend that takes the
shapes (K stored as [keys, 64] beforehand, as a user of SDPA would keep it), the same under
torch.compile, and an 8-element add_ (do_bench's floor for one launch). Checks every output
against the float32 reference of bench.py. Not part of the build; benchmarks/gpu/RESULTS.md
(twenty-seventh session) has the numbers.

  python3 sdpa_probe.py
"""
import os
import sys

import torch
import triton
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
import bench  # noqa: E402

BACKENDS = [("flash", SDPBackend.FLASH_ATTENTION), ("efficient", SDPBackend.EFFICIENT_ATTENTION),
            ("cudnn", SDPBackend.CUDNN_ATTENTION)]


def time_us(fn):
    return triton.testing.do_bench(fn, return_mode="median") * 1e3


def main():
    torch.manual_seed(0)
    print(f"device: {torch.cuda.get_device_name()}, torch {torch.__version__}, triton {triton.__version__}")
    tiny = torch.zeros(8, device="cuda", dtype=torch.float16)
    print(f"8-element add_: {time_us(lambda: tiny.add_(1)):.1f} µs")
    for name, normalize in [("gqa", False), ("qknorm", True)]:
        for b in (1, 8):
            q, k, v = [torch.empty(s, device="cuda", dtype=torch.float16).uniform_(-1, 1)
                       for s in bench.attention_shapes(b)]
            expected = bench.BENCHMARKS[name][1](q.float(), k.float(), v.float())
            keys = k.transpose(1, 2).contiguous()  # [2b, 4096, 64], outside the timing

            def attend(q, keys, v):
                if normalize:
                    q = bench.rms_norm(q)
                return torch.nn.functional.scaled_dot_product_attention(
                    q[None], keys[None], v[None], scale=1.0)[0]

            cells = []
            for label, backend in BACKENDS:
                with sdpa_kernel(backend):
                    try:
                        out = attend(q, keys, v)
                    except RuntimeError as e:
                        cells.append(f"{label}: refused ({str(e).splitlines()[0][:60]})")
                        continue
                    error = ((out.float() - expected).norm() / expected.norm()).item()
                    cells.append(f"{label} {time_us(lambda: attend(q, keys, v)):.1f} (error {error:.1e})")
                    compiled = torch.compile(attend)
                    compiled(q, keys, v)
                    cells.append(f"{label} compiled {time_us(lambda: compiled(q, keys, v)):.1f}")
                    torch._dynamo.reset()
            print(f"{name} b={b}: " + "; ".join(cells))


if __name__ == "__main__":
    main()
