"""The C path for PyTorch GPU tensors (yirage_py_torch_run, Kernel._torch_call), checked without
PyTorch or a GPU: stand-ins with PyTorch's reads (dtype, get_device, data_ptr, shape,
is_contiguous, stride) over numpy memory, run by a kernel of the CPU plugin. test_cuda.py runs the
same path on real PyTorch CUDA tensors where a GPU is."""
import functools
import sys

import numpy as np
import pytest

import yirage as yr
from yirage import _c

from test_runtime import inputs, relative_error, small_graph


class Dtype:
    def __init__(self, numpy):
        self.numpy = numpy


FLOAT16, FLOAT32, INT8 = Dtype(np.float16), Dtype(np.float32), Dtype(np.int8)


class Device:
    def __init__(self, kind, index):
        self.type, self.index = kind, index


class Tensor:
    """PyTorch's tensor as yirage_py_torch_run reads it, over a numpy array."""

    def __init__(self, array, dtype, device=0, is_cuda=True):
        self.array, self.dtype, self.device_index, self.is_cuda = array, dtype, device, is_cuda

    def get_device(self):
        return self.device_index

    def data_ptr(self):
        return self.array.ctypes.data

    @property
    def shape(self):
        return tuple(self.array.shape)

    def is_contiguous(self):
        return self.array.flags.c_contiguous

    def stride(self):
        return tuple(s // self.array.itemsize for s in self.array.strides)


class Parameter(Tensor):
    """A subclass, as torch.nn.Parameter is: the DLPack path's, not this one's."""


made = []  # what empty() made, in order


def empty(dims, dtype, device):
    t = Tensor(np.full(dims, np.nan, dtype=dtype.numpy), dtype, device.index)
    made.append(t)
    return t


def allocators(outputs, device):
    """Per output, what makes a new one on `device` (as yirage._torch_allocators gives them)."""
    return tuple(functools.partial(empty, dims, dtype, Device("cuda", device)) for dims, dtype in outputs)


def spec_of(kernel, stream=lambda device: 0):
    dtypes = {FLOAT16: (2, 16), FLOAT32: (2, 32)}
    outputs = tuple((tuple(dims), {"float16": FLOAT16, "float32": FLOAT32}[d.name]) for dims, d in kernel._outputs)
    return (Tensor, dtypes, functools.partial(allocators, outputs), outputs, {}, stream)


@pytest.fixture(scope="module")
def kernel():
    return small_graph().compile(device=yr.default_context().device("cpu"))


def want(x, w):
    x64, w64 = x.astype(np.float64), w.astype(np.float64)
    return (x64 / np.sqrt(np.mean(x64 * x64, axis=-1, keepdims=True) + 1e-6)) @ w64


def run(kernel, spec, ins, outs=None, stream=None, synchronize=0):
    return _c.yirage_py_torch_run(kernel._handle, spec, ins, outs, stream, kernel._device_type, synchronize)


def test_new_outputs_from_empty_on_the_inputs_device(kernel):
    x, w = inputs()
    spec = spec_of(kernel)
    made.clear()
    (out,) = yr._check(run(kernel, spec, [Tensor(x, FLOAT16), Tensor(w, FLOAT16)]))
    assert out is made[0] and out.array.shape == (8, 96) and out.array.dtype == np.float16
    assert relative_error(out.array, want(x, w)) < 5e-3
    # The allocators of device 0 are kept for the next call.
    assert list(spec[4]) == [0] and spec[4][0][0].args[2].index == 0


def test_given_outputs_and_strided_inputs(kernel):
    x, w = inputs(1)
    out = Tensor(np.full((8, 96), np.nan, dtype=np.float16), FLOAT16)
    got = yr._check(run(kernel, spec_of(kernel), (Tensor(x, FLOAT16), Tensor(w, FLOAT16)), [out], 0, 1))
    assert got == [out] and relative_error(out.array, want(x, w)) < 5e-3
    # A tensor that is not contiguous passes its strides, and the run refuses them as it refuses
    # a strided DLPack tensor's.
    wt = np.ascontiguousarray(w.T).T
    with pytest.raises(yr.UnsupportedError, match="input 1 is strided"):
        yr._check(run(kernel, spec_of(kernel), (Tensor(x, FLOAT16), Tensor(wt, FLOAT16)), [out]))


def test_the_current_stream_of_the_inputs_device(kernel):
    asked = []
    x, w = inputs()
    yr._check(run(kernel, spec_of(kernel, lambda device: asked.append(device) or 0),
                  [Tensor(x, FLOAT16), Tensor(w, FLOAT16)]))
    assert asked == [0]
    yr._check(run(kernel, spec_of(kernel, lambda device: asked.append(device) or 0),
                  [Tensor(x, FLOAT16), Tensor(w, FLOAT16)], stream=0))
    assert asked == [0]  # a given stream is not looked up
    yr._check(run(kernel, spec_of(kernel), [Tensor(x, FLOAT16), Tensor(w, FLOAT16)], stream=np.uint64(0)))


@pytest.mark.parametrize("case", ["subclass", "host tensor", "xpu tensor", "other dtype", "17 inputs", "no inputs",
                                  "subclass output", "rank 7"])
def test_tensors_not_for_this_path_go_to_dlpack(kernel, case):
    x, w = inputs()
    ins, outs = [Tensor(x, FLOAT16), Tensor(w, FLOAT16)], None
    if case == "subclass":
        ins[1] = Parameter(w, FLOAT16)
    elif case == "host tensor":
        ins[0] = Tensor(x, FLOAT16, device=-1, is_cuda=False)
    elif case == "xpu tensor":  # a device index, but not a CUDA device
        ins[1] = Tensor(w, FLOAT16, device=0, is_cuda=False)
    elif case == "other dtype":
        ins[0] = Tensor(x.astype(np.int8), INT8)
    elif case == "17 inputs":
        ins = (ins * 9)[:17]
    elif case == "no inputs":
        ins = []
    elif case == "subclass output":
        outs = [Parameter(np.empty((8, 96), np.float16), FLOAT16)]
    else:
        ins[0] = Tensor(np.zeros((1,) * 7, np.float16), FLOAT16)
    made.clear()
    assert run(kernel, spec_of(kernel), ins, outs) is None
    assert made == []  # nothing allocated before the path was refused


def test_bad_tensors_are_refused_with_the_run_s_errors(kernel):
    x, w = inputs()
    with pytest.raises(yr.InvalidArgumentError, match=r"yirage_kernel_run: run: input 1 has shape \[64,96\]"):
        yr._check(run(kernel, spec_of(kernel), [Tensor(x, FLOAT16), Tensor(w[:64], FLOAT16)]))
    with pytest.raises(yr.InvalidArgumentError, match="takes 2 inputs"):
        yr._check(run(kernel, spec_of(kernel), [Tensor(x, FLOAT16)]))
    out = Tensor(np.empty((8, 96), np.float32), FLOAT32)
    with pytest.raises(yr.InvalidArgumentError, match="output 0"):
        yr._check(run(kernel, spec_of(kernel), [Tensor(x, FLOAT16), Tensor(w, FLOAT16)], [out]))
    with pytest.raises(yr.InvalidArgumentError, match="device"):  # device 3 of the CPU plugin
        yr._check(run(kernel, spec_of(kernel), [Tensor(x, FLOAT16, 3), Tensor(w, FLOAT16, 3)]))


def test_a_failing_read_raises_its_own_error(kernel):
    class Broken(Tensor):
        def data_ptr(self):
            raise RuntimeError("no pointer here")

    x, w = inputs()
    spec = list(spec_of(kernel))
    spec[0] = Broken
    with pytest.raises(RuntimeError, match="no pointer here"):
        run(kernel, tuple(spec), [Broken(x, FLOAT16), Broken(w, FLOAT16)])
    with pytest.raises(TypeError, match="spec"):
        run(kernel, spec[:3], [Tensor(x, FLOAT16), Tensor(w, FLOAT16)])
    assert run(kernel, spec_of(kernel), 5) is None  # not a list or tuple: the other path's
    bad = list(spec_of(kernel))
    bad[2] = lambda device: ()  # no allocator for the output
    with pytest.raises(TypeError, match="one function per output"):
        run(kernel, tuple(bad), [Tensor(x, FLOAT16), Tensor(w, FLOAT16)])
    bad = list(spec_of(kernel))
    bad[3] = (((8, 96),),)  # an output without its dtype
    with pytest.raises(TypeError, match="outputs are"):
        run(kernel, tuple(bad), [Tensor(x, FLOAT16), Tensor(w, FLOAT16)])
    bad = list(spec_of(kernel))
    bad[1] = {FLOAT16: "float16"}
    with pytest.raises(TypeError, match="DLPack code"):
        run(kernel, tuple(bad), [Tensor(x, FLOAT16), Tensor(w, FLOAT16)])
    spec = spec_of(kernel, lambda device: "not a stream")
    with pytest.raises(TypeError):
        run(kernel, spec, [Tensor(x, FLOAT16), Tensor(w, FLOAT16)])


def test_calls_keep_no_references(kernel):
    x, w = inputs()
    spec = spec_of(kernel)
    ins = [Tensor(x, FLOAT16), Tensor(w, FLOAT16)]
    out = Tensor(np.empty((8, 96), np.float16), FLOAT16)
    counted = [spec, spec[3][0][0], ins, ins[0], out, FLOAT16, Tensor.__init__]
    yr._check(run(kernel, spec, ins))  # the first call fills the places
    made.clear()
    counted += [spec[4][0], spec[4][0][0]]  # the allocators, kept
    before = [sys.getrefcount(o) for o in counted]
    for _ in range(50):
        yr._check(run(kernel, spec, ins))
        yr._check(run(kernel, spec, ins, [out]))
        run(kernel, spec, [Parameter(x, FLOAT16), ins[1]])
        with pytest.raises(yr.InvalidArgumentError):
            yr._check(run(kernel, spec, ins[:1]))
    made.clear()
    assert [sys.getrefcount(o) for o in counted] == before


def test_kernel_call_takes_the_c_path_once_its_spec_is_made(kernel, monkeypatch):
    x, w = inputs(2)
    monkeypatch.setattr(kernel, "_torch_spec", spec_of(kernel))
    made.clear()
    (out,) = kernel._torch_call([Tensor(x, FLOAT16), Tensor(w, FLOAT16)], None, None, False)
    assert out is made[0] and relative_error(out.array, want(x, w)) < 5e-3
    assert kernel._torch_call([Parameter(x, FLOAT16), Tensor(w, FLOAT16)], None, None, False) is None


def test_calls_after_the_first_go_straight_to_the_c_path(kernel, monkeypatch):
    x, w = inputs(3)
    monkeypatch.setattr(kernel, "_torch_spec", spec_of(kernel))
    monkeypatch.setattr(kernel, "_run", None)  # not reached: Kernel.__call__ calls the C path itself
    made.clear()
    (out,) = kernel((Tensor(x, FLOAT16), Tensor(w, FLOAT16)), synchronize=True)
    assert out is made[0] and relative_error(out.array, want(x, w)) < 5e-3
    given = Tensor(np.full((8, 96), np.nan, dtype=np.float16), FLOAT16)
    assert kernel([Tensor(x, FLOAT16), Tensor(w, FLOAT16)], outputs=[given], stream=0) == [given]
    assert relative_error(given.array, want(x, w)) < 5e-3
    with pytest.raises(yr.InvalidArgumentError, match="takes 2 inputs"):
        kernel([Tensor(x, FLOAT16)])


def test_an_iterator_of_inputs_is_left_to_the_other_path(kernel, monkeypatch):
    x, w = inputs(4)
    monkeypatch.setattr(kernel, "_torch_spec", spec_of(kernel))
    (out,) = kernel(iter([x, w]))  # numpy arrays, each read once by the DLPack path
    assert relative_error(out, want(x, w)) < 5e-3


def test_allocators_made_twice_at_once_keep_the_first_stored(kernel):
    # Making a device's allocators runs Python (PyTorch releases the GIL there): another thread
    # may store its own meanwhile. The call then uses the stored ones, never freed ones.
    x, w = inputs(5)
    outputs = tuple((tuple(dims), FLOAT16) for dims, _ in kernel._outputs)
    spec = list(spec_of(kernel))
    theirs = allocators(outputs, 0)

    def racing(device):
        spec[4][device] = theirs  # the other thread's, stored first
        return tuple(functools.partial(pytest.fail, "the second allocators were used") for _ in outputs)

    spec[2] = racing
    spec = tuple(spec)
    made.clear()
    (out,) = yr._check(run(kernel, spec, [Tensor(x, FLOAT16), Tensor(w, FLOAT16)]))
    assert spec[4][0] is theirs and out is made[0]
    assert relative_error(out.array, want(x, w)) < 5e-3


def test_inputs_the_c_path_refuses_are_not_offered_to_it_twice(kernel, monkeypatch):
    x, w = inputs(6)
    monkeypatch.setattr(kernel, "_torch_spec", spec_of(kernel))
    monkeypatch.setattr(kernel, "_host", False)  # as on a GPU: the host path copies numpy in and out
    monkeypatch.setattr(kernel, "_torch_call", lambda *a: pytest.fail("offered to the C path again"))
    (out,) = kernel([x, w])  # numpy arrays: refused by the C path in Kernel.__call__, then DLPack's
    assert relative_error(out, want(x, w)) < 5e-3
