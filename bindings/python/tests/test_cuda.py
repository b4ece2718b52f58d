"""The CUDA backend from Python with PyTorch tensors: superoptimize for the GPU, run on CUDA
tensors without copies (outputs allocated by PyTorch, or given), on PyTorch's stream. Skips
where PyTorch, a GPU or the CUDA plugin is missing (as in CI); run on a GPU machine with
YIRAGE_BACKEND_PATH pointing at the plugin."""
import ctypes
import json
import os
import pathlib

import pytest

import yirage as yr

torch = pytest.importorskip("torch")


def cuda_device():
    if not torch.cuda.is_available():
        pytest.skip("no CUDA device for PyTorch")
    try:
        return yr.default_context().device("cuda", 0)
    except yr.NotFoundError as e:
        pytest.skip(f"no CUDA device for yirage: {e}")


def relative_error(got, want):
    return ((got.float() - want).norm() / want.norm()).item()


def test_superoptimize_and_run_on_torch_tensors():
    device = cuda_device()
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(8, 512), dtype=yr.float16)
    W = g.new_input(dims=(512, 384), dtype=yr.float16)
    g.mark_output(g.matmul(g.rms_norm(X, normalized_shape=(512,)), W))
    k = g.superoptimize(device=device, time_budget=10, top_k=2)
    assert k.search.candidates[0][1]["measured_seconds"] > 0
    x = torch.empty((8, 512), device="cuda", dtype=torch.float16).uniform_(-1, 1)
    w = torch.empty((512, 384), device="cuda", dtype=torch.float16).uniform_(-1, 1)
    xf = x.float()
    want = (xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True))) @ w.float()
    (out,) = k(inputs=[x, w])
    assert isinstance(out, torch.Tensor) and out.device == x.device and out.dtype == torch.float16
    assert relative_error(out, want) < 1e-2
    given = torch.full_like(out, float("nan"))
    stream = torch.cuda.current_stream().cuda_stream
    (same,) = k([x, w], outputs=[given], stream=stream)
    assert same is given and relative_error(given, want) < 1e-2
    with pytest.raises(yr.InvalidArgumentError):
        k([x.cpu(), w])  # a host tensor for a CUDA kernel


def test_c_path_checks_strides_and_reads_compact_tensors():
    # Torch tensors are read in C without DLPack: a compact one passes no strides, a strided one is
    # refused, as DLPack's would be, and outputs allocated by the call are compact.
    device = cuda_device()
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(64, 32), dtype=yr.float16)
    g.mark_output(g.exp(X))
    k = g.compile(device=device)
    x = torch.empty((64, 32), device="cuda", dtype=torch.float16).uniform_(-1, 1)
    (out,) = k([x], synchronize=True)
    assert out.is_contiguous() and relative_error(out, x.float().exp()) < 1e-2
    strided = torch.empty((32, 64), device="cuda", dtype=torch.float16).uniform_(-1, 1).t()
    with pytest.raises(yr.UnsupportedError, match="is strided"):
        k([strided])
    with pytest.raises(yr.UnsupportedError, match="output 0 is strided"):
        k([x], outputs=[torch.empty((32, 64), device="cuda", dtype=torch.float16).t()])
    (again,) = k([strided.contiguous()], synchronize=True)
    assert relative_error(again, strided.float().exp()) < 1e-2


@pytest.mark.parametrize("dims", [(7,), (6, 40), (2, 3, 16), (2, 3, 4, 8), (1, 3, 2, 4, 8)])
def test_outputs_made_by_the_call_are_new_and_compact(dims):
    # The call makes its outputs with torch.empty_like of one element expanded to their dims: of
    # every rank (4 and 5 too, where PyTorch could pick a channels-last layout), compact, on the
    # inputs' device, and a new tensor each call.
    device = cuda_device()
    g = yr.new_kernel_graph()
    g.mark_output(g.exp(g.new_input(dims=dims, dtype=yr.float16)))
    k = g.compile(device=device)
    x = torch.empty(dims, device="cuda", dtype=torch.float16).uniform_(-1, 1)
    outs = [k([x], synchronize=True)[0] for _ in range(3)]  # the first call, then the C path's
    assert len({o.data_ptr() for o in outs}) == 3
    for out in outs:
        assert out.shape == dims and out.dtype == torch.float16 and out.device == x.device
        assert out.is_contiguous() and relative_error(out, x.float().exp()) < 1e-2
    assert all(f.func is torch.empty_like for f in k._torch_spec[4][0])


def test_rms_norm_on_tensors_that_are_not_16_byte_aligned():
    # A row of whole 16-byte vectors moves in vectors where its pointers are aligned, else element
    # by element: both give the norm (views that start 2 bytes into their storage, then copies).
    device = cuda_device()
    g = yr.new_kernel_graph()
    X, G = g.new_input(dims=(8, 4096), dtype=yr.float16), g.new_input(dims=(4096,), dtype=yr.float16)
    g.mark_output(g.rms_norm(X, (4096,), eps=1e-5, weight=G))
    k = g.compile(device=device)
    x = torch.empty(8 * 4096 + 1, device="cuda", dtype=torch.float16).uniform_(-1, 1)[1:].view(8, 4096)
    w = torch.empty(4097, device="cuda", dtype=torch.float16).uniform_(-1, 1)[1:]
    assert x.data_ptr() % 16 != 0 and w.data_ptr() % 16 != 0
    for xs, ws in [(x, w), (x.contiguous(), w.contiguous())]:
        (out,) = k([xs, ws], synchronize=True)
        xf = xs.float()
        want = xf * torch.rsqrt(xf.pow(2).mean(-1, keepdim=True) + 1e-5) * ws.float()
        assert relative_error(out, want) < 1e-2


def test_calls_queue_on_torchs_current_stream():
    # A call queues the kernel on PyTorch's current stream and returns without waiting, as a
    # PyTorch operation does: work queued after it on that stream sees its outputs.
    device = cuda_device()
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(64, 1024), dtype=yr.float16)
    g.mark_output(g.mul(g.rms_norm(g.exp(X), normalized_shape=(1024,)), X))
    k = g.compile(device=device)
    x = torch.empty((64, 1024), device="cuda", dtype=torch.float16).uniform_(-1, 1)
    e = x.float().exp()
    want = e * torch.rsqrt(e.pow(2).mean(-1, keepdim=True)) * x.float()
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(200_000_000)  # keeps `side` busy for about 0.1 s
        for _ in range(20):
            (out,) = k([x])
            y = out * 1  # a PyTorch op queued after the call on `side`
        assert not side.query()  # the calls returned while the stream still slept
    side.synchronize()
    assert relative_error(y, want) < 1e-2
    (waited,) = k([x], synchronize=True)
    assert relative_error(waited, want) < 1e-2
    k.synchronize(torch.cuda.current_stream().cuda_stream)
    # PyTorch tensors are read without DLPack; yirage checks them all the same. A subclass
    # (a Parameter) takes the DLPack path.
    with pytest.raises(yr.InvalidArgumentError):
        k([x[:, :512]])
    with pytest.raises(yr.InvalidArgumentError):
        k([x.half().float()])  # float32 for a float16 input
    (on_side,) = k([x], stream=side, synchronize=True)  # a stream object, as Mirage passes
    assert relative_error(on_side, want) < 1e-2
    (param,) = k([torch.nn.Parameter(x, requires_grad=False)], synchronize=True)
    assert relative_error(param, want) < 1e-2


def test_weight_products_on_unaligned_operands():
    # Weight products load A and B in 16-byte groups and multiply on tensor cores; either one
    # element past a 16-byte boundary takes the FMA path instead. 8 and 16 rows (one mma tile in
    # part and whole), the graph compiled as it is: the pre-defined matmul runs.
    cuda_device()
    for rows in (8, 16):
        g = yr.new_kernel_graph()
        X = g.new_input(dims=(rows, 512), dtype=yr.float16)
        W = g.new_input(dims=(512, 384), dtype=yr.float16)
        g.mark_output(g.matmul(X, W))
        k = g.compile(backend="cuda")
        xs = torch.empty(rows * 512 + 1, device="cuda", dtype=torch.float16).uniform_(-1, 1)
        ws = torch.empty(512 * 384 + 1, device="cuda", dtype=torch.float16).uniform_(-1, 1)
        for x in (xs[:-1].view(rows, 512), xs[1:].view(rows, 512)):
            for w in (ws[:-1].view(512, 384), ws[1:].view(512, 384)):
                want = x.float() @ w.float()
                out = torch.full((rows, 384), float("nan"), device="cuda", dtype=torch.float16)
                k([x, w], outputs=[out])
                torch.cuda.synchronize()
                assert relative_error(out, want) < 1e-2, (rows, x.data_ptr() % 16, w.data_ptr() % 16)


def test_weight_product_ugraph_on_unaligned_operands(tmp_path):
    # gated_mlp's µGraph in blocks of 32 weight columns is one weight-product kernel whose warps
    # stream W1 or W2, silu and the gate applied to the sums (backends/cuda/codegen/cuda_matmul.hpp). An
    # operand one element past a 16-byte boundary sends the warps that read it to the FMA path
    # while the others stay on tensor cores; every combination must give the same result.
    cuda_device()
    examples = pathlib.Path(os.environ.get("YIRAGE_EXAMPLES", "examples")) / "graphs"
    graph = json.loads((examples / "gated_mlp_fused.json").read_text())
    ugraph = graph["operators"][3]["block_graph"]
    ugraph["grid"], ugraph["forloop_range"] = [128, 1, 1], 32
    (tmp_path / "gated.json").write_text(json.dumps(graph))
    k = yr.load(tmp_path / "gated.json").compile(backend="cuda")

    def placements(rows, cols):  # on a 16-byte boundary, and one element past it
        s = torch.empty(rows * cols + 1, device="cuda", dtype=torch.float16).uniform_(-1, 1)
        return s[:-1].view(rows, cols), s[1:].view(rows, cols)

    xs, w1s, w2s = placements(8, 4096), placements(4096, 4096), placements(4096, 4096)
    for x in xs:
        for w1 in w1s:
            for w2 in w2s:
                want = torch.nn.functional.silu(x.float() @ w1.float()) * (x.float() @ w2.float())
                out = torch.full((8, 4096), float("nan"), device="cuda", dtype=torch.float16)
                k([x, w1, w2], outputs=[out])
                torch.cuda.synchronize()
                where = (x.data_ptr() % 16, w1.data_ptr() % 16, w2.data_ptr() % 16)
                assert relative_error(out, want) < 1e-2, where


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32),
                ("ndim", ctypes.c_int32), ("code", ctypes.c_uint8), ("bits", ctypes.c_uint8),
                ("lanes", ctypes.c_uint16), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


def test_runs_on_two_streams_keep_their_intermediates():
    # Three kernels (exp, rms_norm, mul) with two intermediate tensors, run again and again on two
    # streams at once on different inputs, each run into outputs of its own: each stream needs its
    # own intermediates (with one set, one stream's exp overwrote what the other's rms_norm read).
    # The Python call waits for each run, so the runs are queued through the C ABI (ctypes on
    # the library the binding loaded), which does not.
    cuda_device()
    rows, cols, runs = 4096, 4096, 8
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(rows, cols), dtype=yr.float16)
    g.mark_output(g.mul(g.rms_norm(g.exp(X), normalized_shape=(cols,)), X))
    k = g.compile(backend="cuda")
    lib = ctypes.CDLL("libyirage.so.1")
    shape = (ctypes.c_int64 * 2)(rows, cols)

    def dl(t):  # float16 (code 2) on CUDA (device type 2)
        return ctypes.pointer(_DLTensor(t.data_ptr(), 2, t.device.index, 2, 2, 16, 1, shape, None, 0))

    streams = [torch.cuda.Stream(), torch.cuda.Stream()]
    xs = [torch.empty((rows, cols), device="cuda", dtype=torch.float16).uniform_(-1, 1) for _ in streams]
    outs = [[torch.full_like(x, float("nan")) for _ in range(runs)] for x in xs]
    torch.cuda.synchronize()
    for r in range(runs):
        for stream, x, out in zip(streams, xs, outs):
            ins = (ctypes.POINTER(_DLTensor) * 1)(dl(x))
            result = (ctypes.POINTER(_DLTensor) * 1)(dl(out[r]))
            assert lib.yirage_kernel_run(ctypes.c_void_p(int(k._handle)), ins, 1, result, 1,
                                         ctypes.c_void_p(stream.cuda_stream)) == 0
    torch.cuda.synchronize()
    for x, out in zip(xs, outs):
        e = x.float().exp()
        want = e * torch.rsqrt(e.pow(2).mean(-1, keepdim=True)) * x.float()
        for r in range(runs):
            assert relative_error(out[r], want) < 1e-2, r


if __name__ == "__main__":
    test_superoptimize_and_run_on_torch_tensors()
    test_calls_queue_on_torchs_current_stream()
    test_weight_products_on_unaligned_operands()
    test_runs_on_two_streams_keep_their_intermediates()
    print("ok")
