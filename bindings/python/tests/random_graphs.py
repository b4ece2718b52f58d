"""Random kernel graphs: graphs no one wrote by hand, superoptimized and run, against the reference
executor (docs/reliability.md, "Graphs no one wrote by hand").

A seed gives one graph: an input of 2 or 3 dims (sizes with no common power of two among them),
then 2 to 9 operators drawn from matmuls (against new weight inputs), elementwise operators
(broadcast rows included), norms, softmaxes, reductions, concats, chunks, reshapes and permutes,
and the shapes the search fuses most (attention over new key and value inputs, gated MLPs, a norm
then a product), each applied to a tensor made before it; the last tensor is an output, sometimes an earlier one
too (then part of the graph may feed no output). Values stay within a few units (products are
scaled by 1/sqrt(k), exp and square by 1/4, divisors, logs and roots take clamped operands), so a
dtype's tolerance holds wherever the kernels are right.

    check: superoptimize each graph on a backend in this process, run the answer on seeded inputs
           and compare every output with the float64 reference (relative norm of the difference);
           exit status 1 if any fails or raises.
    write: save each graph as DIR/seed<N>_<dtype>.yrg, for `yirage superoptimize` and
           `yirage run --reference` on any backend (bfloat16 too, which numpy lacks).

usage: random_graphs.py check [--seeds A:B] [--dtypes float32,float16] [--backend cpu] [--budget S]
       random_graphs.py write DIR [--seeds A:B] [--dtypes float32,float16,bfloat16]
"""

import argparse
import math
import os
import sys
import traceback

import numpy as np

import yirage as yr

# dtype: (yirage's, numpy's, relative tolerance of an output against the float64 reference)
DTYPES = {"float32": (yr.float32, np.float32, 1e-3), "float16": (yr.float16, np.float16, 2e-2),
          "bfloat16": (yr.bfloat16, None, 6e-2)}

# Operator kinds and how often each is drawn.
KINDS = {"matmul": 6, "unary": 3, "binary": 4, "rms_norm": 2, "softmax": 2, "reduction": 2,
         "reduction_max": 1, "scale": 1, "div": 1, "root_or_log": 1, "concat": 2, "chunk": 1,
         "reshape": 1, "transpose": 1, "attention": 2, "gated_mlp": 2, "norm_product": 2}


class RandomGraph:
    """One seed's graph: .graph, .input_dims (in order), .ops (a line per operator drawn)."""

    def __init__(self, seed, dtype):
        self.rng = np.random.default_rng(seed)
        self.dtype = DTYPES[dtype][0]
        self.graph = yr.new_kernel_graph()
        self.input_dims = []
        self.pool = []  # (tensor, dims): what later operators may read
        self.ops = []
        r = self.rng
        m = int(r.choice([1, 2, 5, 8, 16, 33, 64]))
        k = int(r.choice([16, 48, 64, 96, 128, 200, 256]))
        dims = (m, k) if r.random() < 0.75 else (int(r.choice([1, 2, 3])), m, k)
        self.pool.append((self._input(dims), dims))
        for _ in range(int(r.integers(2, 10))):
            self._draw()
        outputs = [self.pool[-1][0]]
        if len(self.pool) > 3 and r.random() < 0.3:
            outputs.append(self.pool[int(r.integers(1, len(self.pool) - 1))][0])
        for t in outputs:
            self.graph.mark_output(t)

    def _input(self, dims):
        self.input_dims.append(tuple(dims))
        return self.graph.new_input(dims=tuple(dims), dtype=self.dtype)

    def _pick(self, fits=lambda dims: True):
        fitting = [p for p in self.pool if fits(p[1])]
        return fitting[self.rng.integers(len(fitting))]

    def _add(self, t, what):
        self.pool.append((t, tuple(t.dims)))
        self.ops.append(what)

    def _draw(self):
        r, g = self.rng, self.graph
        names = list(KINDS)
        weights = np.array([KINDS[n] for n in names], dtype=float)
        kind = names[r.choice(len(names), p=weights / weights.sum())]
        x, d = self._pick()
        if kind == "matmul" and len(d) >= 2:
            n = int(r.choice([8, 16, 24, 40, 64, 96, 128, 130]))
            w = d[:-2] + (d[-1], n)
            self._add(g.mul_scalar(g.matmul(x, self._input(w)), 1 / math.sqrt(d[-1])), f"matmul {d} x {w}")
        elif kind == "unary":
            name = str(r.choice(["silu", "gelu", "relu", "sigmoid", "exp", "square", "neg"]))
            y = getattr(g, name)(x)
            self._add(g.mul_scalar(y, 0.25) if name in ("exp", "square") else y, f"{name} {d}")
        elif kind == "binary":
            name = str(r.choice(["add", "sub", "mul", "max"]))
            same = [p for p in self.pool if p[1] == d]
            if r.random() < 0.3:  # a broadcast operand: a new input of size 1 along most dims
                b = tuple(1 if i < len(d) - 1 and r.random() < 0.7 else s for i, s in enumerate(d))
                y, b_what = self._input(b), b
            else:
                y, b_what = same[r.integers(len(same))][0], d
            self._add(getattr(g, name)(x, y), f"{name} {d}, {b_what}")
        elif kind == "rms_norm":
            weighted = bool(r.random() < 0.5)
            w = self._input((d[-1],)) if weighted else None
            self._add(g.rms_norm(x, normalized_shape=(d[-1],), eps=1e-6, weight=w), f"rms_norm {d} weighted={weighted}")
        elif kind == "softmax":
            self._add(g.softmax(x, dim=len(d) - 1), f"softmax {d}")
        elif kind in ("reduction", "reduction_max"):
            dim = int(r.integers(len(d)))
            y = getattr(g, kind)(x, dim)
            self._add(g.mul_scalar(y, 1 / d[dim]) if kind == "reduction" else y, f"{kind} {d} dim {dim}")
        elif kind == "scale":
            self._add(g.mul_scalar(x, float(r.choice([0.5, 2.0, -1.5]))), f"mul_scalar {d}")
        elif kind == "div":
            y, _ = self._pick(lambda e: e == d)
            self._add(g.div(x, g.clamp(y, 0.5, 2.0)), f"div {d} by a clamp")
        elif kind == "root_or_log":
            name = str(r.choice(["sqrt", "log"]))
            self._add(getattr(g, name)(g.clamp(x, 0.25, 3.0)), f"{name} of a clamp {d}")
        elif kind == "concat":
            dim = int(r.integers(len(d)))
            y, e = self._pick(lambda e: len(e) == len(d) and all(a == b for i, (a, b) in enumerate(zip(e, d)) if i != dim))
            self._add(g.concat(x, y, dim), f"concat {d}, {e} dim {dim}")
        elif kind == "chunk" and d[-1] % 2 == 0:
            for part in g.chunk(x, 2, len(d) - 1):
                self._add(part, f"chunk {d}")
        elif kind == "reshape" and d[-1] % 2 == 0 and len(d) < 4:
            if len(d) == 2 and r.random() < 0.5:
                shape = (d[0] * d[1] // 2, 2) if r.random() < 0.5 else (d[0] * d[1],)
            else:
                shape = d[:-1] + (d[-1] // 2, 2)
            self._add(g.reshape(x, shape), f"reshape {d} -> {shape}")
        elif kind == "attention" and len(d) >= 2:  # softmax(x·K / sqrt(k))·V over t keys
            t, dv = int(r.choice([16, 64, 100, 256, 1001])), int(r.choice([16, 64, 128]))
            scores = g.mul_scalar(g.matmul(x, self._input(d[:-2] + (d[-1], t))), 1 / math.sqrt(d[-1]))
            self._add(g.matmul(g.softmax(scores, dim=len(d) - 1), self._input(d[:-2] + (t, dv))),
                      f"attention {d} over {t} keys to {dv}")
        elif kind == "gated_mlp" and len(d) >= 2:  # (silu(x·Wg) ⊙ x·Wu)·Wd / sqrt(n k)
            n = int(r.choice([24, 64, 96, 192]))
            w = d[:-2] + (d[-1], n)
            gate = g.silu(g.mul_scalar(g.matmul(x, self._input(w)), 1 / math.sqrt(d[-1])))
            up = g.mul_scalar(g.matmul(x, self._input(w)), 1 / math.sqrt(d[-1]))
            down = g.matmul(g.mul(gate, up), self._input(d[:-2] + (n, d[-1])))
            self._add(g.mul_scalar(down, 1 / math.sqrt(n)), f"gated_mlp {d} through {n}")
        elif kind == "norm_product" and len(d) >= 2:  # rms_norm(x)·W / sqrt(k)
            n = int(r.choice([16, 64, 130, 256]))
            y = g.matmul(g.rms_norm(x, normalized_shape=(d[-1],), eps=1e-6), self._input(d[:-2] + (d[-1], n)))
            self._add(g.mul_scalar(y, 1 / math.sqrt(d[-1])), f"rms_norm·W {d} x {n}")
        elif kind == "transpose" and len(d) >= 2:
            self._add(g.transpose(x, len(d) - 2, len(d) - 1), f"transpose {d}")


def seeded_inputs(graph, seed, dtype):
    rng = np.random.default_rng(seed + 1_000_003)
    return [rng.uniform(-1, 1, dims).astype(DTYPES[dtype][1]) for dims in graph.input_dims]


def relative_error(got, want):
    got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
    scale = np.linalg.norm(want)
    return float(np.linalg.norm(got - want) / (scale if scale > 0 else 1))


def check(seed, dtype, backend="cpu", budget=3.0):
    """Superoptimizes seed's graph on `backend`, runs the answer and compares it with the reference.
    Returns (relative errors, the answer's description, the graph, the kernel's own check or None);
    raises what yirage raises. The kernel's own check (Kernel.measure) runs where an error is past
    the dtype's tolerance: it also allows twice what storing the graph's tensors in the dtype alone
    gives (docs/backends.md), which a graph of cancelling float16 values needs."""
    if DTYPES[dtype][1] is None:
        raise ValueError(f"check: numpy has no {dtype}; write graph files and run them through the CLI")
    rg = RandomGraph(seed, dtype)
    inputs = seeded_inputs(rg, seed, dtype)
    want = rg.graph.run_reference(inputs)
    kernel = rg.graph.superoptimize(backend=backend, time_budget=budget)
    got = kernel(inputs=inputs)
    description = kernel.search.candidates[0][1]["description"]
    errors = [relative_error(a, b) for a, b in zip(got, want)]
    own = None if all(e <= DTYPES[dtype][2] for e in errors) else kernel.measure(warmup=0, repeats=1)
    return errors, description, rg, own


def seed_range(text):
    first, _, last = text.partition(":")
    return range(int(first), int(last))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("mode", choices=["check", "write"])
    parser.add_argument("dir", nargs="?")
    parser.add_argument("--seeds", default="0:20", help="A:B, the seeds A to B-1")
    parser.add_argument("--dtypes", default=None)
    parser.add_argument("--backend", default="cpu")
    parser.add_argument("--budget", type=float, default=3.0, help="each search's time budget, seconds")
    args = parser.parse_args()
    if args.mode == "write":
        if not args.dir:
            parser.error("write needs DIR")
        os.makedirs(args.dir, exist_ok=True)
        for seed in seed_range(args.seeds):
            for dtype in (args.dtypes or "float32,float16,bfloat16").split(","):
                RandomGraph(seed, dtype).graph.save(os.path.join(args.dir, f"seed{seed}_{dtype}.yrg"))
        return 0
    failures = 0
    for seed in seed_range(args.seeds):
        for dtype in (args.dtypes or "float32,float16").split(","):
            try:
                errors, description, rg, own = check(seed, dtype, args.backend, args.budget)
                ok = own is None or own["correct"]
                failures += not ok
                note = "" if own is None else f" (its own check: {own['error'] or 'within its dtype storage allowance'})"
                print(f"{'ok' if ok else 'FAIL'} seed {seed} {dtype}: relative errors "
                      f"{', '.join(f'{e:.1e}' for e in errors)}{note} [{description}]; {'; '.join(rg.ops)}",
                      flush=True)
            except Exception as e:  # noqa: BLE001 - every error is reported, then counted
                failures += 1
                print(f"ERROR seed {seed} {dtype}: {type(e).__name__}: {e}", flush=True)
                traceback.print_exc()
    print(f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
