"""RMSNorm + linear in Python: the user's graph, the fused µGraph Mirage would find, a proof by
fingerprint that they are equivalent, and both run on the reference executor.

Run inside `meson devenv -C build -w .` (README.md), which finds the build tree's package and
plugins: /usr/bin/python3 examples/python/rmsnorm_linear.py
"""
import numpy as np

import yirage as yr

ROWS, HIDDEN, COLS = 16, 1024, 1536

# The user's graph.
g = yr.new_kernel_graph()
X = g.new_input(dims=(ROWS, HIDDEN), dtype=yr.float16)
W = g.new_input(dims=(HIDDEN, COLS), dtype=yr.float16)
g.mark_output(g.matmul(g.rms_norm(X, normalized_shape=(HIDDEN,)), W))

# The same computation as one fused kernel: blocks over 64 output columns, the loop over 64-wide
# hidden tiles accumulating X·W and the RMS of X; one division after the loop.
f = yr.new_kernel_graph()
fX = f.new_input(dims=(ROWS, HIDDEN), dtype=yr.float16)
fW = f.new_input(dims=(HIDDEN, COLS), dtype=yr.float16)
tb = yr.new_threadblock_graph(grid_dim=(COLS // 64, 1, 1), block_dim=(128, 1, 1),
                              forloop_range=HIDDEN // 64)
tX = tb.new_input(dtensor=fX, input_map=(-1, -1, -1), forloop_dim=1)
tW = tb.new_input(dtensor=fW, input_map=(1, -1, -1), forloop_dim=0)
acc = tb.forloop_accum(tb.matmul(tX, tW))
rms = tb.forloop_accum(tX, "rms")
tb.new_output(tb.div(acc, rms), output_map=(1, -1, -1))
(O,) = f.customized([fX, fW], tb)
f.mark_output(O)

result = f.equivalent(g)
print(f"fused vs unfused: equivalent={result.equivalent} ({result.trials} trials, "
      f"{result.seconds:.3f} s)")

rng = np.random.default_rng(0)
x = rng.uniform(-1, 1, (ROWS, HIDDEN)).astype(np.float16)
w = rng.uniform(-1, 1, (HIDDEN, COLS)).astype(np.float16)
(want,) = g.run_reference([x, w])
(got,) = f.run_reference([x, w])
error = np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want.astype(np.float64))
print(f"reference outputs agree: relative error {error:.2e}")
assert result.equivalent and error < 1e-3

# Superoptimize on the CPU backend (yr.get_available_backends() lists the others) and run the
# fastest correct kernel it found on the same arrays, as a Mirage user would.
k = g.superoptimize(backend="cpu", time_budget=20)
best = k.search.candidates[0][1]
print(f"superoptimized: {best['description']}, {best['measured_seconds'] * 1e6:.1f} us on "
      f"{k.device.name}")
(out,) = k(inputs=[x, w])
error = np.linalg.norm(out.astype(np.float64) - want) / np.linalg.norm(want.astype(np.float64))
print(f"kernel output vs reference: relative error {error:.2e}")
assert error < 5e-3
