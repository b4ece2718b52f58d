"""The real-model suite: the pieces of a transformer layer, sized as public model configurations
give them, as yirage kernel graphs with their references.

usage: suite.py export DIR     writes DIR/<graph>.json for every graph of the suite
       suite.py list           one line per graph: its name, inputs and source

Each graph is one piece of a decoder layer of one model, at one token count and dtype:
- `qkv`: the input RMSNorm (with its weight) and the fused Q/K/V projection, x[T,H] -> [T,Nq+2Nkv];
- `attn_L<n>`: attention at decode over a cache of n positions, grouped by KV head:
  q[kv, group*T, d] (already scaled by 1/sqrt(d), as callers fold it), kᵀ[kv, d, n], v[kv, n, d]
  -> softmax(q kᵀ) v without the max subtraction (the scores of scaled inputs stay small, as in
  Mirage's own attention graphs; the cache is stored transposed, d before n);
- `oproj`: the output projection plus the residual, a[T, heads*d] @ Wo + r[T,H];
- `mlp_up`: the post-attention RMSNorm (with its weight) and the gated MLP's up half,
  act(n Wg) * (n Wu) with n = rms_norm(x) (SiLU; GELU for Gemma, erf form where Gemma uses tanh);
- `down`: the MLP's down-projection plus the residual, h[T,I] @ Wd + r[T,H];
- `layer_L4096`: a whole decoder layer at decode over 4096 cached positions (LAYERS below).
Weights are stored [in, out] (x @ W). Biases (Qwen 2.5's Q/K/V) and Gemma 2's soft-capping are
left out; everything else is the config's own sizes, never rounded.
"""

import json
import math
import os
import sys

# Public configurations (config.json of each model on Hugging Face): hidden_size,
# num_attention_heads, num_key_value_heads, head_dim, intermediate_size, rms_norm_eps, the MLP's
# activation.
MODELS = {
    "llama3_8b": dict(source="meta-llama/Meta-Llama-3-8B", hidden=4096, heads=32, kv_heads=8, head_dim=128,
                      intermediate=14336, eps=1e-5, act="silu"),
    "llama3_70b": dict(source="meta-llama/Meta-Llama-3-70B", hidden=8192, heads=64, kv_heads=8, head_dim=128,
                       intermediate=28672, eps=1e-5, act="silu"),
    "qwen2.5_7b": dict(source="Qwen/Qwen2.5-7B", hidden=3584, heads=28, kv_heads=4, head_dim=128,
                       intermediate=18944, eps=1e-6, act="silu"),
    "qwen3_0.6b": dict(source="Qwen/Qwen3-0.6B", hidden=1024, heads=16, kv_heads=8, head_dim=128,
                       intermediate=3072, eps=1e-6, act="silu"),
    "qwen3_32b": dict(source="Qwen/Qwen3-32B", hidden=5120, heads=64, kv_heads=8, head_dim=128,
                      intermediate=25600, eps=1e-6, act="silu"),
    "mistral_7b": dict(source="mistralai/Mistral-7B-v0.3", hidden=4096, heads=32, kv_heads=8, head_dim=128,
                       intermediate=14336, eps=1e-5, act="silu"),
    "gemma2_2b": dict(source="google/gemma-2-2b", hidden=2304, heads=8, kv_heads=4, head_dim=256,
                      intermediate=9216, eps=1e-6, act="gelu"),
    "phi3_mini": dict(source="microsoft/Phi-3-mini-4k-instruct", hidden=3072, heads=32, kv_heads=32, head_dim=96,
                      intermediate=8192, eps=1e-5, act="silu"),
    # DeepSeek-V2-Lite: multi-head latent attention (q_lora_rank none, kv_lora_rank 512,
    # qk_rope_head_dim 64, qk_nope_head_dim 128): its `qkv` piece is the norm and the projections
    # of x to q (16 heads x 192) and to the compressed kv (512 + 64); the MLP of its dense first
    # layer (intermediate_size 10944) and of one routed expert (moe_intermediate_size 1408).
    "deepseek_v2_lite": dict(source="deepseek-ai/DeepSeek-V2-Lite", hidden=2048, heads=16, kv_heads=16,
                             head_dim=128, qkv_out=16 * 192 + 512 + 64, intermediate=10944, expert=1408,
                             eps=1e-6, act="silu"),
}

DTYPES = {"f16": "Float16", "bf16": "BFloat16"}

# The suite: (model, piece, tokens, dtype). Decode at 1-8 tokens, prefill at a few hundred; the
# attention pieces at decode over caches of 512, 4096 and 32768 positions.
SUITE = [
    ("llama3_8b", "qkv", 1, "f16"), ("llama3_8b", "qkv", 8, "f16"), ("llama3_8b", "qkv", 256, "f16"),
    ("llama3_8b", "attn_L512", 1, "f16"), ("llama3_8b", "attn_L4096", 1, "f16"),
    ("llama3_8b", "attn_L32768", 1, "f16"), ("llama3_8b", "oproj", 1, "f16"),
    ("llama3_8b", "mlp_up", 1, "f16"), ("llama3_8b", "down", 1, "f16"), ("llama3_8b", "mlp_up", 256, "f16"),
    ("llama3_70b", "qkv", 1, "bf16"), ("llama3_70b", "attn_L4096", 8, "bf16"), ("llama3_70b", "down", 8, "bf16"),
    ("qwen2.5_7b", "qkv", 1, "bf16"), ("qwen2.5_7b", "attn_L4096", 4, "bf16"), ("qwen2.5_7b", "oproj", 8, "bf16"),
    ("qwen2.5_7b", "mlp_up", 1, "bf16"), ("qwen2.5_7b", "down", 256, "bf16"),
    ("qwen3_0.6b", "qkv", 8, "f16"), ("qwen3_0.6b", "attn_L512", 8, "f16"), ("qwen3_0.6b", "mlp_up", 256, "f16"),
    ("qwen3_0.6b", "down", 1, "f16"),
    ("qwen3_32b", "qkv", 8, "bf16"), ("qwen3_32b", "oproj", 1, "bf16"),
    ("mistral_7b", "attn_L32768", 8, "f16"), ("mistral_7b", "oproj", 256, "f16"), ("mistral_7b", "mlp_up", 8, "f16"),
    ("gemma2_2b", "qkv", 1, "bf16"), ("gemma2_2b", "attn_L4096", 1, "bf16"), ("gemma2_2b", "mlp_up", 1, "bf16"),
    ("gemma2_2b", "down", 8, "bf16"),
    ("phi3_mini", "qkv", 1, "f16"), ("phi3_mini", "attn_L4096", 1, "f16"), ("phi3_mini", "mlp_up", 8, "f16"),
    ("phi3_mini", "down", 256, "f16"),
    ("deepseek_v2_lite", "qkv", 1, "bf16"), ("deepseek_v2_lite", "mlp_up", 8, "bf16"),
    ("deepseek_v2_lite", "expert_up", 1, "bf16"), ("deepseek_v2_lite", "expert_down", 8, "bf16"),
]


def graph_name(model, piece, tokens, dtype):
    return f"{model}.{piece}.t{tokens}.{dtype}"


class Graph:
    """A kernel graph in yirage's JSON form (docs/file-formats.md): operators in order, tensors
    numbered by the operator that makes them (every operator here makes one)."""

    def __init__(self, dtype):
        self.dtype, self.operators, self.inputs = DTYPES[dtype], [], []

    def input(self, sizes, scale=1.0):
        """An input of `sizes`; `scale`: its random values are uniform(-scale, scale)."""
        self.inputs.append((list(sizes), scale))
        return self.add({"kind": "Input", "sizes": list(sizes), "dtype": self.dtype})

    def add(self, op):
        self.operators.append(op)
        return len(self.operators) - 1

    def op(self, kind, *inputs, **fields):
        return self.add({"kind": kind, "inputs": list(inputs), **fields})

    def rms_norm(self, x, weight, size, eps):
        return self.op("RmsNorm", x, weight, sizes=[size], eps=eps, has_weight=True)

    def json(self, output):
        return {"operators": self.operators, "outputs": [output]}


def build(model, piece, tokens):
    """(Graph builder function, reference) for one piece: the reference takes an array module
    shim (Ops) and the inputs in order, and computes in that module."""
    m = MODELS[model]
    h, d, t = m["hidden"], m["head_dim"], tokens
    eps, act = m["eps"], m["act"]

    def qkv(g):
        n_out = m.get("qkv_out", (m["heads"] + 2 * m["kv_heads"]) * d)
        x, wn, w = g.input([t, h]), g.input([h]), g.input([h, n_out], 1 / math.sqrt(h))
        return g.op("Matmul", g.rms_norm(x, wn, h, eps), w)

    def attention(g, cache):
        group = m["heads"] // m["kv_heads"]
        q = g.input([m["kv_heads"], group * t, d], 1 / math.sqrt(d))
        k, v = g.input([m["kv_heads"], d, cache]), g.input([m["kv_heads"], cache, d])
        e = g.op("Exp", g.op("Matmul", q, k))
        return g.op("Matmul", g.op("Div", e, g.op("Reduction", e, dim=2)), v)

    def projection(g, n_in):
        a, w, r = g.input([t, n_in]), g.input([n_in, h], 1 / math.sqrt(n_in)), g.input([t, h])
        return g.op("Add", g.op("Matmul", a, w), r)

    def mlp_up(g, inter):
        x, wn = g.input([t, h]), g.input([h])
        wg, wu = g.input([h, inter], 1 / math.sqrt(h)), g.input([h, inter], 1 / math.sqrt(h))
        n = g.rms_norm(x, wn, h, eps)
        gate = g.op("Silu" if act == "silu" else "Gelu", g.op("Matmul", n, wg))
        return g.op("Mul", gate, g.op("Matmul", n, wu))

    def reference_attention(o, q, k, v):
        e = o.exp(q @ k)
        return (e / o.sum_last(e)) @ v

    def reference_norm(o, x, wn):
        return o.rms_norm(x, eps) * wn

    if piece == "qkv":
        return qkv, lambda o, x, wn, w: reference_norm(o, x, wn) @ w
    if piece.startswith("attn_L"):
        return (lambda g: attention(g, int(piece[len("attn_L"):]))), reference_attention
    if piece in ("oproj", "down", "expert_down"):
        n_in = {"oproj": m["heads"] * d, "down": m["intermediate"], "expert_down": m.get("expert")}[piece]
        return (lambda g: projection(g, n_in)), lambda o, a, w, r: a @ w + r
    if piece in ("mlp_up", "expert_up"):
        inter = m["intermediate"] if piece == "mlp_up" else m["expert"]

        def reference_mlp(o, x, wn, wg, wu):
            n = reference_norm(o, x, wn)
            return o.activation(act, n @ wg) * (n @ wu)

        return (lambda g: mlp_up(g, inter)), reference_mlp
    raise ValueError(f"no piece named {piece}")


class TorchOps:
    """The references' operations on PyTorch tensors."""

    def __init__(self):
        import torch
        self.torch = torch

    def exp(self, a):
        return self.torch.exp(a)

    def sum_last(self, a):
        return a.sum(-1, keepdim=True)

    def rms_norm(self, x, eps):
        return x * self.torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + eps).to(x.dtype)

    def activation(self, name, a):
        f = self.torch.nn.functional
        return f.silu(a) if name == "silu" else f.gelu(a)


class NumpyOps:
    """The references' operations on numpy arrays (GELU through an erf approximation whose error,
    below 1.5e-7, is far under float16's)."""

    def __init__(self):
        import numpy
        self.np = numpy

    def exp(self, a):
        return self.np.exp(a)

    def sum_last(self, a):
        return a.sum(axis=-1, keepdims=True)

    def rms_norm(self, x, eps):
        x32 = x.astype(self.np.float32)
        return (x32 / self.np.sqrt((x32 * x32).mean(axis=-1, keepdims=True) + eps)).astype(x.dtype)

    def activation(self, name, a):
        np = self.np
        if name == "silu":
            return a / (1 + np.exp(-a))
        # erf by Abramowitz and Stegun 7.1.26
        z = np.abs(a) / math.sqrt(2)
        s = 1 / (1 + 0.3275911 * z)
        poly = s * (0.254829592 + s * (-0.284496736 + s * (1.421413741 + s * (-1.453152027 + s * 1.061405429))))
        erf = np.sign(a) * (1 - poly * np.exp(-z * z))
        return 0.5 * a * (1 + erf)


# Whole decoder layers (benchmarks/graphs/decoder_layer.hpp): Qwen3-0.6B's at decode over 4096
# cached keys and values, as examples/graphs/ holds it, timed on its first output (the layer's
# result; the token's key and value, its other two, are left to the caller's cache).
LAYERS = [("qwen3_0.6b", "f16"), ("qwen3_0.6b", "bf16")]
EXAMPLES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "examples", "graphs")


def layer_graph(model, dtype):
    """(JSON, inputs [(shape, scale)], reference) of a decoder layer, the inputs in the order of
    decoder_layer.hpp: x, w_in, Wqkv, w_q, w_k, M, K, V, Wo, w_post, Wg, Wu, Wd."""
    m = MODELS[model]
    h, heads, kv, d, inter, eps = m["hidden"], m["heads"], m["kv_heads"], m["head_dim"], m["intermediate"], m["eps"]
    name = "decoder_layer.json" if dtype == "f16" else f"decoder_layer_{dtype}.json"
    g = json.load(open(os.path.join(EXAMPLES, name)))
    g["outputs"] = g["outputs"][:1]
    scales = [1, 1, 1 / math.sqrt(h), 1, 1, 1 / math.sqrt(d), 1, 1, 1 / math.sqrt(heads * d), 1,
              1 / math.sqrt(h), 1 / math.sqrt(h), 1 / math.sqrt(inter)]
    inputs = [(op["sizes"], scale) for op, scale in zip(g["operators"], scales)]
    assert all(op["kind"] == "Input" for op in g["operators"][:len(scales)])

    def reference(o, x, w_in, wqkv, w_q, w_k, rope, k_cache, v_cache, wo, w_post, wg, wu, wd):
        n = o.rms_norm(x, eps) * w_in
        qkv = n @ wqkv
        q, k, v = qkv[:, :heads * d], qkv[:, heads * d:(heads + kv) * d], qkv[:, (heads + kv) * d:]
        q = ((o.rms_norm(q.reshape(heads, d), eps) * w_q) @ rope / math.sqrt(d)).reshape(kv, heads // kv, d)
        k = (o.rms_norm(k.reshape(kv, d), eps) * w_k) @ rope
        e_cache = o.exp(q @ k_cache)
        e_new = o.exp(q @ k.reshape(kv, d, 1))
        a = (e_cache @ v_cache + e_new * v.reshape(kv, 1, d)) / (o.sum_last(e_cache) + e_new)
        r = x + a.reshape(1, heads * d) @ wo
        p = o.rms_norm(r, eps) * w_post
        return r + (o.activation(m["act"], p @ wg) * (p @ wu)) @ wd

    return g, inputs, reference


def graphs():
    """Every graph of the suite: {name: dict(json=..., inputs=[(shape, scale)], dtype=...,
    reference=..., model=..., piece=..., tokens=..., source=...)}."""
    out = {}
    for model, piece, tokens, dtype in SUITE:
        make, reference = build(model, piece, tokens)
        g = Graph(dtype)
        output = make(g)
        m = MODELS[model]
        config = ", ".join(f"{k} {v}" for k, v in m.items() if k != "source")
        out[graph_name(model, piece, tokens, dtype)] = dict(
            json=g.json(output), inputs=g.inputs, dtype=dtype, reference=reference, model=model, piece=piece,
            tokens=tokens, source=f"{m['source']} ({config})")
    for model, dtype in LAYERS:
        g, inputs, reference = layer_graph(model, dtype)
        m = MODELS[model]
        out[graph_name(model, "layer_L4096", 1, dtype)] = dict(
            json=g, inputs=inputs, dtype=dtype, reference=reference, model=model, piece="layer_L4096", tokens=1,
            source=f"{m['source']} (the whole decoder layer: examples/graphs/decoder_layer*.json)")
    return out


def main(argv):
    if len(argv) == 3 and argv[1] == "export":
        os.makedirs(argv[2], exist_ok=True)
        for name, g in graphs().items():
            with open(os.path.join(argv[2], name + ".json"), "w") as f:
                json.dump(g["json"], f, indent=1)
        return 0
    if len(argv) == 2 and argv[1] == "list":
        for name, g in graphs().items():
            shapes = " ".join("x".join(map(str, s)) for s, _ in g["inputs"])
            print(f"{name}\t{shapes}\t{g['source']}")
        return 0
    sys.stderr.write(__doc__.split("\n\n")[1] + "\n")
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
