"""GPU time of one rms_norm kernel, yirage's against torch.compile's (Triton), and of a norm then
x @ W (the real-model suite's input norm + projection rows): each call captured 50 times back to
back in a CUDA graph, replayed, timed by CUDA events (warm L2; launch gaps inside a graph are
small), µs a call, median of 20 replays. yirage's graphs are compiled as they are (its rms_norm
kernel, then cuBLASLt's product). A benchmark, not a test; RESULTS.md has the figures.

usage (on a GPU machine with PyTorch, the SWIG wrapper compiled there as docs/python.md says):
    YIRAGE_RECORDINGS=0 PYTHONPATH=py YIRAGE_BACKEND_PATH=<plugin folder> \
        python3 benchmarks/gpu/norm_chain.py
(YIRAGE_RECORDINGS=0: the two-kernel graph launches its kernels into PyTorch's capture itself.)"""
import statistics

import torch

import yirage as yr

ROWS = [  # (tokens, hidden, projection columns, dtype name, eps)
    (1, 4096, 6144, "float16", 1e-5), (8, 4096, 6144, "float16", 1e-5),
    (256, 4096, 6144, "float16", 1e-5), (1, 8192, 10240, "bfloat16", 1e-5),
]


def per_call(fn, n=50):
    """µs a call of fn: n calls captured in a CUDA graph, the median of 20 replays."""
    fn()
    torch.cuda.synchronize()
    s = torch.cuda.Stream()
    with torch.cuda.stream(s):
        fn()
        graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(graph, stream=s):
            for _ in range(n):
                fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(20):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        graph.replay()
        b.record()
        torch.cuda.synchronize()
        times.append(a.elapsed_time(b) * 1e3 / n)
    return statistics.median(times)


def graphs(dev, T, H, N, ydt, eps):
    """yirage's norm alone and its norm then x @ W, compiled as they are."""
    kg = yr.new_kernel_graph()
    X, G = kg.new_input(dims=(T, H), dtype=ydt), kg.new_input(dims=(H,), dtype=ydt)
    kg.mark_output(kg.rms_norm(X, (H,), eps=eps, weight=G))
    fg = yr.new_kernel_graph()
    X, G = fg.new_input(dims=(T, H), dtype=ydt), fg.new_input(dims=(H,), dtype=ydt)
    B = fg.new_input(dims=(H, N), dtype=ydt)
    fg.mark_output(fg.matmul(fg.rms_norm(X, (H,), eps=eps, weight=G), B))
    return kg.compile(device=dev), fg.compile(device=dev)


def main():
    dev = yr.default_context().device("cuda", 0)
    print("| rows x hidden | dtype | torch.compile norm | yirage norm | x @ W (torch) | compiled norm + x @ W "
          "| yirage norm + x @ W |")
    print("|---|---|---|---|---|---|---|")
    for T, H, N, name, eps in ROWS:
        tdt, ydt = getattr(torch, name), getattr(yr, name)
        x = torch.randn(T, H, device="cuda", dtype=tdt)
        g = torch.randn(H, device="cuda", dtype=tdt)
        W = torch.randn(H, N, device="cuda", dtype=tdt) / H ** 0.5

        def norm(x, g):
            return (x.float() * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps)).to(x.dtype) * g

        cnorm = torch.compile(norm)
        cfull = torch.compile(lambda x, g, W: norm(x, g) @ W)
        n = cnorm(x, g)
        kn, kf = graphs(dev, T, H, N, ydt, eps)
        on, of = torch.empty_like(x), torch.empty(T, N, device="cuda", dtype=tdt)
        t = [per_call(lambda: cnorm(x, g)), per_call(lambda: kn([x, g], outputs=[on])), per_call(lambda: n @ W),
             per_call(lambda: cfull(x, g, W)), per_call(lambda: kf([x, g, W], outputs=[of]))]
        print(f"| {T} x {H} | {name} | " + " | ".join(f"{v:.2f}" for v in t) + " |")


if __name__ == "__main__":
    main()
