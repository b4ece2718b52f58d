"""Attention (the Mirage gqa benchmark) in Python, checked against numpy.

Run inside `meson devenv -C build -w .` (README.md): /usr/bin/python3 examples/python/gqa.py
"""
import numpy as np

import yirage as yr

HEADS, QUERIES, KEYS, DIM = 2, 64, 512, 64

g = yr.new_kernel_graph()
Q = g.new_input(dims=(HEADS, QUERIES, DIM), dtype=yr.float16)
K = g.new_input(dims=(HEADS, DIM, KEYS), dtype=yr.float16)
V = g.new_input(dims=(HEADS, KEYS, DIM), dtype=yr.float16)
A = g.matmul(Q, K)
E = g.exp(A)
S = g.reduction(E, 2)
O = g.matmul(g.div(E, S), V)
g.mark_output(O)

rng = np.random.default_rng(1)
q, k, v = (rng.uniform(-0.5, 0.5, t.dims).astype(np.float16) for t in (Q, K, V))
(out,) = g.run_reference([q, k, v])
scores = np.exp(q.astype(np.float64) @ k)
want = (scores / scores.sum(2, keepdims=True)) @ v
error = np.linalg.norm(out - want) / np.linalg.norm(want)
print(f"gqa {out.shape} {out.dtype}: relative error vs numpy {error:.2e}")
assert error < 1e-3
