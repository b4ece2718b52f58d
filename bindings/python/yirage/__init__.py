"""yirage: a multi-level superoptimizer for tensor programs.

The Python binding of yirage.h, shaped like Mirage's API:

    import yirage as yr
    g = yr.new_kernel_graph()
    X = g.new_input(dims=(16, 4096), dtype=yr.float16)
    W = g.new_input(dims=(4096, 6144), dtype=yr.float16)
    O = g.matmul(g.rms_norm(X, normalized_shape=(4096,)), W)
    g.mark_output(O)
    (out,) = g.run_reference([x, w])      # numpy arrays (or any __dlpack__ host tensor)
    k = g.superoptimize(backend="cpu", time_budget=60)
    (out,) = k(inputs=[x, w])             # the fastest correct kernel found, on the CPU

Every failing call raises a yirage.Error subclass carrying the C library's status and message.
"""

import collections
import functools as _functools
import math
import operator
import os as _os
import sys as _sys

import numpy as _np

from . import yirage_c as _c
# The extension itself, for the release functions that classes keep as attributes: at interpreter
# exit Python may clear the globals of the SWIG proxy module (yirage_c.py) before the last yirage
# objects are collected, and the proxy's wrappers then call None.
from . import _yirage_c as _ext


def _path(value, what):
    """A file-system path for the C library: a str or os.PathLike (bytes taken as the file
    system's bytes); anything else is a TypeError, and a NUL byte a ValueError (C would stop
    reading the path there)."""
    if isinstance(value, (bytes, bytearray)):
        value = _os.fsdecode(bytes(value))
    elif not isinstance(value, str):
        try:
            value = _os.fspath(value)
        except TypeError:
            raise TypeError(f"{what} must be a str or os.PathLike, not {type(value).__name__}") from None
        if isinstance(value, bytes):
            value = _os.fsdecode(value)
    if "\0" in value:
        raise ValueError(f"{what} contains a NUL byte: {value!r}")
    return value


__all__ = [
    "float16", "bfloat16", "float32", "DType", "Error", "InvalidArgumentError",
    "UnsupportedError", "NotFoundError", "OutOfMemoryError", "BackendError",
    "VersionMismatchError", "CorruptDataError", "CancelledError", "TimeoutError_", "InternalError",
    "KernelGraph", "ThreadblockGraph", "Tensor", "EquivalenceResult", "new_kernel_graph",
    "new_threadblock_graph", "load", "from_bytes", "target", "version", "abi_version",
    "Context", "Device", "DeviceTensor", "Kernel", "SearchReport", "SearchPlan", "default_context",
    "get_available_backends",
    "devices", "search_cache_dir",
]


class DType:
    """An element type: yirage.float16, yirage.bfloat16 or yirage.float32."""

    def __init__(self, value, name, numpy, size):
        self.value, self.name, self.numpy, self.size = value, name, numpy, size  # size: bytes

    def __repr__(self):
        return "yirage." + self.name


float16 = DType(_c.YIRAGE_FLOAT16, "float16", _np.float16, 2)
bfloat16 = DType(_c.YIRAGE_BFLOAT16, "bfloat16", None, 2)  # numpy has no bfloat16
float32 = DType(_c.YIRAGE_FLOAT32, "float32", _np.float32, 4)
_DTYPES = {d.value: d for d in (float16, bfloat16, float32)}


class Error(Exception):
    """A yirage call failed; .status is the C status name, the message is the C library's."""

    status = "UNKNOWN"


class InvalidArgumentError(Error, ValueError):
    status = "INVALID_ARGUMENT"


class UnsupportedError(Error):
    status = "UNSUPPORTED"


class NotFoundError(Error, LookupError):
    status = "NOT_FOUND"


class OutOfMemoryError(Error, MemoryError):
    status = "OUT_OF_MEMORY"


class BackendError(Error):
    status = "BACKEND"


class VersionMismatchError(Error):
    status = "VERSION_MISMATCH"


class CorruptDataError(Error):
    status = "CORRUPT_DATA"


class CancelledError(Error):
    status = "CANCELLED"


class TimeoutError_(Error, TimeoutError):
    status = "TIMEOUT"


class InternalError(Error):
    status = "INTERNAL"


_ERRORS = {cls.status: cls for cls in (
    InvalidArgumentError, UnsupportedError, NotFoundError, OutOfMemoryError, BackendError,
    VersionMismatchError, CorruptDataError, CancelledError, TimeoutError_, InternalError)}


def _check(result):
    """Raises for a non-OK status; returns the out-values (None, one value, or a tuple)."""
    if not isinstance(result, list):
        result = [result]
    status, outs = result[0], result[1:]
    if status != _c.YIRAGE_OK:
        name = _c.yirage_status_name(status)
        raise _ERRORS.get(name, Error)(_c.yirage_last_error_message())
    if not outs:
        return None
    return outs[0] if len(outs) == 1 else tuple(outs)


def _declared_layout(function, dims, strides):
    """Mirage's strides= of a graph input or output: None where they are None or the compact
    row-major ones; else the strides (in elements) of a dense layout of `dims` in another dim
    order (column-major, say), which the calls lay the tensor out in (_KernelLayouts). Strides
    with gaps or overlaps raise UnsupportedError."""
    if strides is None:
        return None
    dims, strides = tuple(int(d) for d in dims), tuple(int(s) for s in strides)
    if len(strides) != len(dims):
        raise InvalidArgumentError(f"{function}: strides={strides} has {len(strides)} entries for "
                                   f"the {len(dims)} dims {dims}")
    step = 1
    for stride, extent in sorted((s, d) for s, d in zip(strides, dims) if d > 1):
        if stride != step:
            raise UnsupportedError(f"{function}: Mirage's strides={strides} of dims {dims} have gaps "
                                   f"or overlaps; yirage takes dense layouts only (each stride the "
                                   f"product of the extents of the dims with smaller strides)")
        step *= extent
    row_major = []
    step = 1
    for d in reversed(dims):
        row_major.insert(0, step)
        step *= d
    if all(s == r for s, r, d in zip(strides, row_major, dims) if d > 1):
        return None
    return strides


def _compact(x):
    """Input x with its logical values in a compact row-major tensor of its library (x itself
    where it is one; DeviceTensors always are); other objects as they are (the C library
    refuses strided ones)."""
    if isinstance(x, _np.ndarray):
        return _np.ascontiguousarray(x)
    if hasattr(x, "contiguous"):  # PyTorch
        return x.contiguous()
    if type(x).__module__.startswith("cupy"):
        import cupy
        return cupy.ascontiguousarray(x)
    return x


def _laid_out(x, strides, function):
    """A new tensor of x's library holding x's values laid out with `strides` (a dense layout,
    _declared_layout)."""
    if hasattr(x, "contiguous") and hasattr(x, "new_empty_strided"):  # PyTorch
        return x.new_empty_strided(tuple(x.shape), strides).copy_(x)
    xp = _np if isinstance(x, _np.ndarray) else None
    if xp is None and type(x).__module__.startswith("cupy"):
        import cupy as xp
    if xp is None:
        raise UnsupportedError(f"{function}: a {type(x).__name__} output cannot be laid out with "
                               f"strides={strides} (yirage's DeviceTensors are compact row-major); "
                               f"pass numpy, PyTorch or CuPy tensors")
    order = sorted(range(len(strides)), key=lambda d: -strides[d])  # outermost dim first
    buffer = xp.empty([x.shape[d] for d in order], dtype=x.dtype)
    view = buffer.transpose([order.index(d) for d in range(len(order))])
    view[...] = x
    return view


class _KernelLayouts:
    """The strides a graph's calls take inputs in and give outputs in, where Mirage's
    new_input(dims, strides) / mark_output(A, strides) declared other than row-major ones.
    yirage's kernels read and write compact row-major tensors: an input is read by its logical
    values, whatever its strides (a strided one is copied to a compact one first), and an output
    with declared strides is copied into a new tensor of that layout after the kernel
    (docs/python.md). Both cost one copy of the tensor per call."""

    def __init__(self):
        self.inputs, self.outputs = {}, {}  # index -> strides

    def __bool__(self):
        return bool(self.inputs or self.outputs)

    def compact_inputs(self, inputs):
        if not self.inputs or not isinstance(inputs, (list, tuple)):
            return inputs
        return [_compact(x) if i in self.inputs else x for i, x in enumerate(inputs)]

    def lay_out(self, outputs, given):
        """The kernel's compact outputs in their declared layouts; into `given` where the
        caller passed outputs."""
        if not self.outputs:
            return outputs
        outputs = list(outputs)
        for i, strides in self.outputs.items():
            if given is None:
                outputs[i] = _laid_out(outputs[i], strides, "mark_output(strides=...)")
            elif outputs[i] is not given[i]:
                given[i][...] = outputs[i]
                outputs[i] = given[i]
        return outputs

    def compact_outputs(self, given):
        """Compact stand-ins for given outputs of declared layouts (lay_out copies them back)."""
        if not self.outputs or given is None:
            return given
        return [_compact(x) if i in self.outputs else x for i, x in enumerate(given)]


def _dims(dims, what="dims"):
    """A tuple of ints from a sequence of integers (numpy's included); anything else, a str or
    a float among them too, is a TypeError."""
    try:
        if isinstance(dims, (str, bytes)):
            raise TypeError
        return tuple(operator.index(d) for d in dims)
    except TypeError:
        raise TypeError(f"{what} must be a sequence of ints, not {dims!r}") from None


def _dtype(dtype):
    if not isinstance(dtype, DType):
        raise TypeError(f"dtype must be yirage.float16, yirage.bfloat16 or yirage.float32, "
                        f"not {dtype!r}")
    return dtype


def version():
    """The library's release version, e.g. '0.1.0'."""
    return _c.yirage_version()


def abi_version():
    """The loaded library's ABI version as (major, minor)."""
    v = _c.yirage_abi_version()
    return v >> 16, v & 0xFFFF


class Tensor:
    """A tensor of a kernel graph or of a thread-block graph (owned by that graph)."""

    def __init__(self, graph, handle):
        self._graph, self._handle = graph, handle

    @property
    def dims(self):
        return _check(_c.yirage_py_tensor_dims(self._handle))

    shape = dims

    @property
    def num_dims(self):
        """The number of dims (Mirage's DTensor.num_dims)."""
        return len(self.dims)

    def dim(self, i):
        """Dim i (Mirage's DTensor.dim(idx))."""
        return self.dims[i]

    @property
    def dtype(self):
        return _DTYPES[_check(_c.yirage_tensor_get_dtype(self._handle))]

    def __repr__(self):
        return f"yirage.Tensor(dims={self.dims}, dtype={self.dtype!r})"


def _handle(x, role="tensor"):
    if isinstance(x, _RunningMaxValue):
        raise x.misuse()
    if not isinstance(x, Tensor):
        raise TypeError(f"{role} must be a yirage.Tensor, not {type(x).__name__}")
    return x._handle


class _Owned:
    """A C handle the object owns (`_handle`), released by release(), at the end of a `with`
    block, or when the object is collected; `_release_handle` is the C function that frees it."""

    _handle = None

    def release(self):
        if self._handle is not None:
            self._release_handle(self._handle)
            self._handle = None

    def __del__(self):
        self.release()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.release()


class _Graph(_Owned):
    """What kernel graphs and thread-block graphs share: the compute operators."""

    _prefix = None  # "yirage_graph_" or "yirage_block_graph_"

    def _call(self, name, *args):
        return _check(getattr(_c, self._prefix + name)(self._live(), *args))

    def _tensor(self, name, *args):
        return Tensor(self, self._call(name, *args))

    def _live(self):
        if self._handle is None:
            raise InvalidArgumentError("the graph was released")
        return self._handle

    def matmul(self, A, B):
        return self._tensor("matmul", _handle(A, "A"), _handle(B, "B"))

    def _unary(name):  # noqa: N805 - a method factory
        def op(self, X):
            return self._tensor(name, _handle(X, "X"))
        op.__name__ = name
        op.__doc__ = f"Elementwise {name}."
        return op

    exp = _unary("exp")
    silu = _unary("silu")
    gelu = _unary("gelu")
    relu = _unary("relu")
    sqrt = _unary("sqrt")
    square = _unary("square")
    sigmoid = _unary("sigmoid")
    log = _unary("log")
    neg = _unary("neg")

    def _binary(name):  # noqa: N805
        def op(self, A, B):
            return self._tensor(name, _handle(A, "A"), _handle(B, "B"))
        op.__name__ = name
        op.__doc__ = f"Elementwise {name} with size-1 broadcasting."
        return op

    add = _binary("add")
    sub = _binary("sub")
    mul = _binary("mul")
    div = _binary("div")
    pow = _binary("pow")
    max = _binary("max")
    del _unary, _binary

    def clamp(self, A, min_val, max_val):
        """A clamped to [min_val, max_val] (Mirage's names; positionally as before)."""
        return self._tensor("clamp", _handle(A, "A"), float(min_val), float(max_val))

    def mul_scalar(self, X, scalar):
        return self._tensor("mul_scalar", _handle(X, "X"), float(scalar))

    def reduction(self, X, dim):
        return self._tensor("reduction", _handle(X, "X"), int(dim))

    def reduction_max(self, X, dim):
        return self._tensor("reduction_max", _handle(X, "X"), int(dim))

    def rms_norm(self, X, normalized_shape, eps=0.0, weight=None):
        w = None if weight is None else _handle(weight, "weight")
        return self._tensor("rms_norm", _handle(X, "X"), _dims(normalized_shape,
                                                               "normalized_shape"),
                            float(eps), w)

    def concat(self, A, B, dim):
        return self._tensor("concat", _handle(A, "A"), _handle(B, "B"), int(dim))


class KernelGraph(_Graph):
    """A kernel graph. Release it with .release() or a `with` block; otherwise on collection."""

    _prefix = "yirage_graph_"
    _release_handle = staticmethod(_ext.yirage_graph_release)

    def __init__(self, handle=None):
        self._handle = handle if handle is not None else _check(_c.yirage_graph_create())
        self._block_inputs = None
        self._layouts = _KernelLayouts()

    def new_input(self, dims, strides=None, dtype=float16):
        """A new input of `dims` (Mirage's order: dims, strides, dtype). `strides` (Mirage's
        layout of the tensor the calls are given, in elements: None or row-major, or another
        dense layout such as column-major) changes no value: the kernels read the input's
        logical values, copying a strided one to a compact one first. A second positional
        argument that is not a tuple or list is yirage's older new_input(dims, dtype)."""
        if strides is not None and not isinstance(strides, (tuple, list)):
            strides, dtype = None, strides
        layout = _declared_layout("new_input()", _dims(dims), strides)
        index = self._call("num_inputs")
        t = self._tensor("new_input", _dims(dims), _dtype(dtype).value)
        if layout is not None:
            self._layouts.inputs[index] = layout
        return t

    def softmax(self, X, dim):
        return self._tensor("softmax", _handle(X, "X"), int(dim))

    def split(self, X, sizes, dim):
        return [Tensor(self, t) for t in _check(
            _c.yirage_py_split(self._live(), _handle(X, "X"), int(dim), _dims(sizes, "sizes")))]

    def chunk(self, X, chunks, dim):
        return [Tensor(self, t) for t in _check(
            _c.yirage_py_chunk(self._live(), _handle(X, "X"), int(chunks), int(dim)))]

    # Views (torch's names; Mirage's kernel graph has none): computed as compact tensors.
    def reshape(self, X, shape):
        """X's elements in row-major order under `shape` (one entry may be -1, inferred)."""
        return self._tensor("reshape", _handle(X, "X"), _dims(shape, "shape"))

    def permute(self, X, dims):
        """Output dim i is X's dim dims[i] (entries may be negative)."""
        return self._tensor("permute", _handle(X, "X"), _dims(dims))

    def transpose(self, X, dim0, dim1):
        return self._tensor("transpose", _handle(X, "X"), int(dim0), int(dim1))

    def mark_output(self, A, strides=None):
        """Marks A as an output. `strides` (Mirage's, in elements: None or row-major, or another
        dense layout such as column-major) is the layout the calls return it in: the kernel
        writes a compact tensor, copied into one of that layout (numpy, PyTorch, CuPy)."""
        layout = _declared_layout("mark_output()", Tensor(self, _handle(A, "A")).dims, strides)
        index = self._call("num_outputs")
        self._call("mark_output", _handle(A, "A"))
        if layout is not None:
            self._layouts.outputs[index] = layout

    # ---- Mirage's KNGraph calls beyond the builder ----

    def __call__(self, inputs=None, stream=None, outputs=None, **compile_options):
        """Runs the graph as it is (Mirage's graph(inputs=..., stream=...) on a graph that was
        not superoptimized) where the inputs are: the CPU for numpy arrays and host tensors,
        their GPU for GPU tensors; compiled on the first call (again after the graph grew or
        the inputs moved). Mirage's compile options (target_cc, num_warp_groups,
        pipeline_stages, profiling, enable_online_softmax, file_id) are accepted and have no
        effect: yirage's backends choose their own."""
        unknown = set(compile_options) - _MIRAGE_COMPILE_OPTIONS
        if unknown:
            raise TypeError(f"KernelGraph.__call__() got unexpected keyword arguments {sorted(unknown)}")
        if inputs is None:
            raise TypeError("KernelGraph.__call__() needs inputs=[...]")
        # What decides the kernel, cheap to read on every call: where the inputs are, and the
        # graph's size (graphs only grow).
        where = _dlpack_device(inputs)
        state = (where, self.num_operators, self._call("num_outputs"))
        cached = getattr(self, "_compiled", None)
        if cached is None or cached[0] != state:
            self._compiled = cached = (state, Kernel(self, _device_at(where)))
        return cached[1](inputs, outputs=outputs, stream=stream)

    def to_dot(self):
        """The graph as Graphviz's DOT text: its tensors and operators, and each customized
        operator's µGraph (grid, imap/fmap/omap, for-loop, accumulators) as a cluster."""
        return _check(_c.yirage_py_graph_to_dot(self._live()))

    def visualize(self, file_name):
        """Mirage's drawing: writes file_name.dot (Graphviz's DOT, to_dot()) and file_name.png,
        drawn by Graphviz's `dot` program (which must be on PATH), and says so for each."""
        import shutil
        import subprocess
        with open(file_name + ".dot", "w", encoding="utf-8") as f:
            f.write(self.to_dot())
        print(f"Graph saved as {file_name}.dot")
        dot = shutil.which("dot")
        if dot is None:
            raise UnsupportedError(f"visualize({file_name!r}): the PNG needs Graphviz's `dot` program "
                                   f"(Debian: apt-get install graphviz); {file_name}.dot was written")
        subprocess.run([dot, "-Tpng", "-o", file_name + ".png", file_name + ".dot"], check=True)
        print(f"Graph saved as {file_name}.png")

    def get_owner_independent_hash(self):
        """A hash of the graph's structure (its canonical binary file), as an int."""
        import hashlib
        return int.from_bytes(hashlib.sha256(self.to_bytes()).digest()[:8], "little")

    def to_json(self, filename):
        """Writes the graph as a JSON file (yirage's format, docs/file-formats.md)."""
        with open(filename, "wb") as f:
            f.write(self.to_bytes("json"))

    def from_json(self, filename):
        """Replaces this graph with the one in `filename` (Mirage's instance method)."""
        loaded = load(filename)
        old, self._handle, loaded._handle = self._handle, loaded._handle, None
        self._layouts = _KernelLayouts()
        if old is not None:
            _c.yirage_graph_release(old)

    def customized(self, inputs, tb_graph):
        """Adds the fused kernel `tb_graph`; `inputs` must be the tensors its new_input calls
        read, in order (as in Mirage). Returns its output tensors."""
        if not isinstance(tb_graph, ThreadblockGraph):
            raise TypeError("tb_graph must be a yirage.ThreadblockGraph")
        if [_handle(t) for t in inputs] != [t._handle for t in tb_graph._dtensors]:
            raise InvalidArgumentError(
                "customized: inputs must be the tensors the block graph's new_input calls read, "
                "in order")
        return [Tensor(self, t) for t in _check(
            _c.yirage_py_customized(self._live(), tb_graph._live()))]

    @property
    def inputs(self):
        n = self._call("num_inputs")
        return [Tensor(self, self._call("get_input", i)) for i in range(n)]

    @property
    def outputs(self):
        n = self._call("num_outputs")
        return [Tensor(self, self._call("get_output", i)) for i in range(n)]

    @property
    def num_operators(self):
        return self._call("num_operators")

    def run_reference(self, inputs):
        """Evaluates the graph in float64 on host tensors (numpy arrays or any object with
        __dlpack__, in host memory) and returns the outputs as new numpy arrays."""
        ins = _dlpack_inputs(inputs)
        outs = _numpy_outputs([(t.dims, t.dtype) for t in self.outputs])
        capsules_in = [x.__dlpack__() for x in ins]
        capsules_out = [o.__dlpack__() for o in outs]
        _check(_c.yirage_py_run_reference(self._live(), capsules_in, capsules_out))
        return outs

    def equivalent(self, other, trials=3, seed=1, threads=0):
        """Fingerprint equivalence with another graph over the same inputs."""
        if not isinstance(other, KernelGraph):
            raise TypeError("other must be a yirage.KernelGraph")
        r = _check(_c.yirage_py_equivalent(self._live(), other._live(), int(trials), int(seed),
                                           int(threads)))
        return EquivalenceResult(*r)

    def save(self, path):
        """Writes the graph: JSON when path ends in .json, binary otherwise."""
        self._call("save", _path(path, "save(): path"))

    def estimate_cost(self, target):
        """The cost model's estimate in seconds on a built-in target ("h100", "cpu", …): a
        ranking heuristic, not a measurement (docs/targets.md)."""
        return _check(_c.yirage_py_estimate_cost(self._live(), str(target)))

    def to_bytes(self, format="binary"):
        formats = {"binary": _c.YIRAGE_GRAPH_FORMAT_BINARY, "json": _c.YIRAGE_GRAPH_FORMAT_JSON}
        if format not in formats:
            raise ValueError("format must be 'binary' or 'json'")
        return _check(_c.yirage_py_serialize(self._live(), formats[format]))


EquivalenceResult = collections.namedtuple("EquivalenceResult",
                                           ["equivalent", "trials", "seconds", "reason"])

# forloop_accum's `acc`, with Mirage's meanings: None accumulates the tiles as they are; "sum",
# "mean" and "rms" also reduce the last dim to 1 (over the loop's tiles together); "reduce_sum"
# is yirage's older name of "sum", "max" an elementwise maximum (forloop_accum_max).
_ACCUMULATORS = {None: _c.YIRAGE_ACCUM_SUM, "sum": _c.YIRAGE_ACCUM_REDUCE_SUM,
                 "reduce_sum": _c.YIRAGE_ACCUM_REDUCE_SUM, "mean": _c.YIRAGE_ACCUM_REDUCE_MEAN,
                 "rms": _c.YIRAGE_ACCUM_REDUCE_RMS, "max": _c.YIRAGE_ACCUM_MAX}

# Mirage's running maximum. Mirage's tb.reduction_max(A, dim) returns (M, diff): M the maximum
# over the iterations so far, diff the previous M minus the new one, and online softmax
# accumulates with forloop_accum_rescale(X, exp(diff)) (acc = acc·exp(diff) + X). yirage's
# reduction_max is the tile's own maximum m_i, and its rescale accumulator is
# Σ_i X_i·exp(m_i − max_i m_i) (docs/ugraphs.md). The two agree when X is linear in exp(−M)
# (X = g·exp(−M), g not depending on M, as exp(A − M)·V is): Σ g_i·exp(−M_i)·exp(M_i − M_F) =
# Σ g_i·exp(−m_i)·exp(m_i − M_F). So yirage takes exp(diff) as M itself, follows how each tile of
# the loop depends on a running maximum, and refuses the uses where M_i and m_i differ. Outside
# the loop, or with one iteration, the running maximum is the tile's: nothing to follow.
#
# A tile's form in a running maximum: None (independent of it), "max" (M itself), "shifted"
# (x − M), "scaled" (linear in exp(−M)) or "mixed" (anything else).
_Tile = collections.namedtuple("_Tile", ["phase", "form", "maximum"])  # maximum: (key, dims)


def _running_form(op, forms, maximum, dim):
    """The form of `op`'s result from its tile inputs' forms (all in the one running maximum
    `maximum`), for the ops that keep a tile linear in exp(−M); "mixed" for the others."""
    m_dims = maximum[1]
    if op == "sub" and forms == [None, "max"]:
        return "shifted"
    if op == "exp" and forms == ["shifted"]:
        return "scaled"
    if op in ("add", "sub") and forms == ["scaled", "scaled"]:
        return "scaled"
    if op == "mul" and forms in (["scaled", None], [None, "scaled"]):
        return "scaled"
    if forms[:1] == ["scaled"] and not any(forms[1:]):
        # exp(−M) passes through these as a factor; through a matmul or a reduction only when M
        # is constant along the dim they sum.
        if (op in ("div", "mul_scalar", "neg") or (op == "matmul" and m_dims[-1] == 1)
                or (op == "reduction" and m_dims[dim] == 1)):
            return "scaled"
    return "mixed"


class _RunningMaxValue:
    """A value of Mirage's running maximum that yirage has no tile for: reduction_max's second
    output (diff) and exp(diff). Only tb.forloop_accum_rescale(X, exp(diff)) takes them."""

    def __init__(self, graph, maximum, what):
        self.graph, self.maximum, self.what = graph, maximum, what

    def misuse(self):
        return UnsupportedError(
            f"tb.reduction_max()'s {self.what} (Mirage's difference of running maxima) is "
            f"only accepted as forloop_accum_rescale(X, exp(diff)): yirage has no tile for it, "
            f"its rescale accumulator takes the maximum itself (docs/ugraphs.md)")

    def __repr__(self):
        return f"yirage.ThreadblockGraph.reduction_max(...) {self.what}"


def _pointer_key(arg):
    """The key of a SWIG tensor pointer among an operator's arguments; None for other ones."""
    return int(arg) if type(arg).__name__ == "SwigPyObject" else None


class ThreadblockGraph(_Graph):
    """A thread-block graph (µGraph) for KernelGraph.customized (docs/ugraphs.md)."""

    _prefix = "yirage_block_graph_"
    _release_handle = staticmethod(_ext.yirage_block_graph_release)

    def __init__(self, grid_dim, block_dim=(128, 1, 1), forloop_range=1, reduction_dimx=64, *,
                 shared_memory_limit=0):
        self._handle = None
        # reduction_dimx: Mirage's size for forloop_accum(x, "sum_todimx") (its fourth
        # positional argument); nothing else reads it.
        if not isinstance(reduction_dimx, int) or reduction_dimx < 1:
            raise ValueError(f"new_threadblock_graph(): reduction_dimx must be a positive int, "
                             f"not {reduction_dimx!r}")
        grid = _dims(grid_dim, "grid_dim") + (1,) * (3 - len(tuple(grid_dim)))
        threads = 1
        for d in _dims(block_dim, "block_dim"):
            threads *= d
        self._handle = _check(_c.yirage_py_block_graph_create(
            grid[0], grid[1], grid[2], threads, int(forloop_range), int(shared_memory_limit)))
        self._grid, self._forloop_range, self._reduction_dimx = grid, int(forloop_range), reduction_dimx
        self._dtensors = []
        self._tiles = {}  # pointer key -> _Tile

    def _tensor(self, name, *args):
        t = super()._tensor(name, *args)
        ins = [self._tiles[k] for k in map(_pointer_key, args) if k in self._tiles]
        phases = {tile.phase for tile in ins}
        phase = "after" if "after" in phases else "iteration" if "iteration" in phases else "invariant"
        maxima = {tile.maximum for tile in ins if tile.form is not None}
        form = maximum = None
        if maxima:
            maximum = maxima.pop()
            dim = args[-1] if name == "reduction" else None
            form = "mixed" if maxima else _running_form(name, [x.form for x in ins], maximum, dim)
        self._tiles[int(t._handle)] = _Tile(phase, form, maximum)
        return t

    def _tile(self, X, role="X"):
        """What this graph follows of tile X; a tile of another graph passes as independent (the
        C library refuses it)."""
        return self._tiles.get(int(_handle(X, role)), _Tile("invariant", None, None))

    def _grid_map(self, mapping, what):
        """Mirage's map with the axes of one block set to -1: Mirage ignores them (a dim split
        or laid out once), yirage wants -1 there."""
        mapping = _dims(mapping, what)
        if len(mapping) != 3:
            return mapping  # the C library says what is wrong
        return tuple(-1 if blocks == 1 else d for blocks, d in zip(self._grid, mapping))

    def new_input(self, dtensor, input_map, forloop_dim, store_in_dmem=False):
        """A tile of `dtensor` per block (input_map: the dim each grid axis splits, -1 none) and
        per loop iteration (forloop_dim). Mirage's store_in_dmem is accepted and has no effect:
        the backend decides where the tiles live."""
        t = self._tensor("new_input", _handle(dtensor, "dtensor"),
                         self._grid_map(input_map, "input_map"), int(forloop_dim))
        self._tiles[int(t._handle)] = _Tile("iteration" if int(forloop_dim) >= 0 else "invariant",
                                            None, None)
        self._dtensors.append(dtensor)
        return t

    def exp(self, X):
        """Elementwise exp; of reduction_max's diff, Mirage's rescale factor for
        forloop_accum_rescale."""
        if isinstance(X, _RunningMaxValue) and X.what == "diff" and X.graph is self:
            return _RunningMaxValue(self, X.maximum, "exp(diff)")
        return super().exp(X)

    def reduction_max(self, A, dim):
        """Mirage's (M, diff): the maximum of A over `dim` (kept as size 1), and the difference
        of running maxima, which only forloop_accum_rescale(X, exp(diff)) takes. In the loop M is
        the maximum over the iterations so far in Mirage and this iteration's in yirage; the
        uses where they differ are refused (see _running_form)."""
        m = self._tensor("reduction_max", _handle(A, "A"), int(dim))
        tile = self._tile(m)
        if tile.phase == "iteration" and self._forloop_range > 1 and tile.form is None:
            self._tiles[int(m._handle)] = _Tile("iteration", "max", (int(m._handle), m.dims))
        return m, _RunningMaxValue(self, m, "diff")

    def rms_norm(self, X, normalized_shape=None, eps=0.0, weight=None):
        """X over the root mean square of its last dims (Mirage's tb.rms_norm(A): the last dim,
        no eps); normalized_shape, eps and weight as in KernelGraph.rms_norm."""
        if normalized_shape is None:
            normalized_shape = Tensor(self, _handle(X, "X")).dims[-1:]
        return super().rms_norm(X, normalized_shape, eps, weight)

    def _refuse_running(self, function, X, allowed=None, role="X"):
        """Raises where X depends on a running maximum (other than in form `allowed`)."""
        form = self._tile(X, role).form
        if form is not None and form != allowed:
            raise UnsupportedError(
                f"{function}: {role} depends on tb.reduction_max()'s maximum inside the for-loop, "
                f"which is the maximum over the iterations so far in Mirage and this iteration's "
                f"in yirage; they agree only through forloop_accum_rescale(X, exp(diff)) with X "
                f"linear in exp(-max) (as exp(A - max)·V), and forloop_accum_max(max)")

    def forloop_accum(self, X, acc=None):
        """X accumulated over the for-loop, as Mirage's: acc None keeps X's shape; "sum", "mean"
        and "rms" reduce its last dim to 1 as well (the sum, mean or root mean square over the
        loop's tiles together); "sum_todimx" folds the last dim to the graph's reduction_dimx,
        adding its slices of reduction_dimx (out[..., j] = sum over k of x[..., k*dimx + j]);
        "max" is the elementwise maximum."""
        if acc not in _ACCUMULATORS and acc != "sum_todimx":
            raise ValueError("forloop_accum(): acc must be None, 'sum', 'mean', 'rms', "
                             f"'sum_todimx', 'reduce_sum' or 'max', not {acc!r}")
        self._refuse_running(f"forloop_accum(acc={acc!r})", X, "max" if acc == "max" else None)
        if acc == "sum_todimx":
            n = Tensor(self, _handle(X, "X")).dims[-1]
            if n % self._reduction_dimx != 0:
                raise InvalidArgumentError(
                    f"forloop_accum(): acc='sum_todimx' folds X's last dim ({n}) to the graph's "
                    f"reduction_dimx ({self._reduction_dimx}), which must divide it")
            t = self._tensor("accumulate_to_dimx", _handle(X, "X"), self._reduction_dimx)
        else:
            t = self._tensor("accumulate", _handle(X, "X"), _ACCUMULATORS[acc])
        self._tiles[int(t._handle)] = _Tile("after", None, None)
        return t

    def forloop_accum_max(self, X):
        """The elementwise maximum of X over the for-loop (Mirage's forloop_accum_max)."""
        return self.forloop_accum(X, "max")

    def forloop_accum_rescale(self, A, B, acc=None):
        """Mirage's online-softmax accumulator (acc = acc·B + A each iteration; acc="sum" also
        sums the last dim to 1) for B = exp(diff) of (M, diff) = tb.reduction_max(...): yirage's
        rescale accumulator Σ_i A_i·exp(M_i − max_i M_i) (docs/ugraphs.md). Other B are not
        supported. In the loop A must be linear in exp(−M), as exp(S − M)·V is."""
        if not (isinstance(B, _RunningMaxValue) and B.what == "exp(diff)" and B.graph is self):
            raise UnsupportedError(
                "forloop_accum_rescale(): Mirage's B must be exp(diff) of (max, diff) = "
                "tb.reduction_max(...) of this graph: yirage's rescale accumulator is online "
                "softmax's (docs/ugraphs.md), not a general acc·B + A")
        if acc not in (None, "sum"):
            raise ValueError(f"forloop_accum_rescale(): acc must be None or 'sum', not {acc!r}")
        M = B.maximum
        if self._tile(M).form == "max":
            tile = self._tile(A, "A")
            if (tile.form != "scaled" or tile.maximum[0] != int(M._handle)
                    or (acc == "sum" and M.dims[-1] != 1)):
                raise UnsupportedError(
                    "forloop_accum_rescale(): in the for-loop A must be linear in exp(-max) of the "
                    "maximum whose exp(diff) is B (as exp(S - max)·V is; with acc='sum', max of "
                    "last dim 1): only then do Mirage's running maximum and yirage's "
                    "per-iteration one give the same sum")
        else:
            self._refuse_running("forloop_accum_rescale()", M, role="M")
            self._refuse_running("forloop_accum_rescale()", A, role="A")
        if acc == "sum":
            A = self.reduction(A, -1)
        t = self._tensor("accumulate_rescale", _handle(A, "A"), _handle(M, "M"))
        self._tiles[int(t._handle)] = _Tile("after", None, None)
        return t

    def new_output(self, stensor, output_map, forloop_dim=-1, dtype=None):
        """Saves the tile as the customized operator's next output; `dtype` writes it as another
        dtype than its own (float32 partial sums of a 16-bit graph, docs/ugraphs.md)."""
        self._refuse_running("new_output()", stensor, role="stensor")
        output_map = self._grid_map(output_map, "output_map")
        if dtype is None:
            self._call("new_output", _handle(stensor, "stensor"), output_map, int(forloop_dim))
        else:
            self._call("new_output_as", _handle(stensor, "stensor"), output_map,
                       int(forloop_dim), _dtype(dtype).value)

    @property
    def shared_memory_bytes(self):
        return self._call("shared_memory_bytes")


def _dlpack_inputs(inputs):
    """The inputs as objects exporting __dlpack__ (numpy arrays are passed without copies, except
    read-only ones, which numpy cannot export)."""
    if isinstance(inputs, (str, bytes)) or not hasattr(inputs, "__iter__"):
        raise TypeError(f"inputs must be a sequence of tensors, not {type(inputs).__name__}")
    ins = []
    for i, x in enumerate(inputs):
        if isinstance(x, _np.ndarray) and not x.flags.writeable:
            x = x.copy()
        if not hasattr(x, "__dlpack__"):
            raise TypeError(f"input {i} must be a numpy array or support __dlpack__, not "
                            f"{type(x).__name__}")
        ins.append(x)
    return ins


def _numpy_outputs(shapes):
    """New numpy arrays, poisoned with NaN, for (dims, dtype) pairs."""
    outs = []
    for dims, dtype in shapes:
        if dtype.numpy is None:
            raise UnsupportedError(f"numpy has no {dtype.name}: this graph's outputs "
                                   f"cannot be returned as numpy arrays (pass outputs=)")
        outs.append(_np.full(dims, _np.nan, dtype=dtype.numpy))
    return outs


def _library(inputs):
    """The library ("yirage" for DeviceTensor, "torch", "cupy" or "") whose tensors `inputs`
    are, by the first that is one."""
    for x in inputs:
        if isinstance(x, DeviceTensor):
            return "yirage"
        library = type(x).__module__.partition(".")[0]
        if library in ("torch", "cupy"):
            return library
    return ""


# yirage's dtypes that PyTorch has, by name, with their DLPack (type code, bits).
_TORCH_DTYPES = {"float16": (2, 16), "bfloat16": (4, 16), "float32": (2, 32)}
_torch_by_name, _torch_dlpack = {}, {}  # name -> torch dtype, torch dtype -> DLPack; first call


def _torch_tables(torch):
    if not _torch_by_name:
        for name, dl in _TORCH_DTYPES.items():
            _torch_by_name[name] = getattr(torch, name)
            _torch_dlpack[getattr(torch, name)] = dl
    return _torch_by_name, _torch_dlpack


def _torch_outputs(torch, shapes, like):
    """New PyTorch tensors of (dims, yirage dtype) `shapes` on the device of tensor `like`."""
    by_name = _torch_tables(torch)[0]
    return [torch.empty(dims, dtype=by_name[d.name], device=like.device) for dims, d in shapes]


_RUN_HOST = 2  # yirage_py_kernel_run's mode for host tensors on any device
_TORCH_GPU_DEVICE_TYPES = (2, 10)  # DLPack's kDLCUDA and kDLROCM: PyTorch's "cuda" devices


def _on_host(tensors):
    """Whether every tensor is in host memory (DLPack kDLCPU)."""
    return all(x.__dlpack_device__()[0] == 1 for x in tensors)


def _device_outputs(shapes, inputs, library, device):
    """New outputs on a device, made by `library` (yirage's DeviceTensor, PyTorch or CuPy, the
    inputs'), so they are __dlpack__ tensors of that library on the inputs' device."""
    if library == "yirage":
        return [device.empty(dims, dtype) for dims, dtype in shapes]
    if library == "torch":
        import torch
        like = next(x for x in inputs if type(x).__module__.startswith("torch"))
        return _torch_outputs(torch, shapes, like)
    if library == "cupy":
        import cupy
        on = next(x.device.id for x in inputs if type(x).__module__.startswith("cupy"))
        with cupy.cuda.Device(on):
            return [cupy.empty(dims, dtype=d.numpy) for dims, d in shapes]
    raise UnsupportedError(f"{device.backend}: yirage does not know which library should own the outputs "
                           f"of these inputs; pass outputs= (tensors on the device), or PyTorch, CuPy, "
                           f"numpy or yirage.DeviceTensor inputs")


def _make_torch_spec(torch, shapes):
    """What yirage_py_torch_run needs of PyTorch to run a kernel of outputs `shapes` ((dims,
    yirage dtype) each) on PyTorch GPU tensors, read once: its tensor type and dtypes, the
    outputs' allocators on a device (_torch_allocators), the outputs' dims and dtypes, a place for
    each device's allocators and the current-stream function."""
    by_name, dlpack = _torch_tables(torch)
    outputs = tuple((tuple(dims), by_name[d.name]) for dims, d in shapes)
    return (torch.Tensor, dlpack, _functools.partial(_torch_allocators, torch, outputs), outputs, {},
            _torch_current_stream(torch))


def _torch_allocators(torch, outputs, device):
    """Per output ((dims, torch.dtype)), a function of no arguments making a new compact one on
    CUDA device `device`: torch.empty_like of one element expanded to its dims (cheaper than
    torch.empty with dtype= and device=, whose keyword arguments PyTorch parses at every call:
    docs/python.md, "Cheap calls"), or torch.empty itself where that would not give a compact
    tensor of the output's dims and dtype."""
    where = torch.device("cuda", device)
    made = []
    for dims, dtype in outputs:
        try:
            like = torch.empty((), dtype=dtype, device=where).expand(dims)
            probe = torch.empty_like(like)
            compact = (probe.is_contiguous() and tuple(probe.shape) == dims and probe.dtype == dtype
                       and probe.device == where)
        except RuntimeError:
            compact = False
        made.append(_functools.partial(torch.empty_like, like) if compact
                    else _functools.partial(torch.empty, dims, dtype=dtype, device=where))
    return tuple(made)


def _torch_current_stream(torch):
    """A function of a CUDA device index giving PyTorch's current stream there as an integer
    handle (torch._C's raw one where it has it: about 5 µs less than torch.cuda.current_stream)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    return raw if raw is not None else (lambda device: torch.cuda.current_stream(device).cuda_stream)


def _torch_stream(torch, device):
    """PyTorch's current stream on CUDA device `device` (an index), as an integer handle."""
    return _torch_current_stream(torch)(device)


def _current_stream(library, inputs):
    """The current stream (as an integer handle) of the inputs' library on their device; 0 (the
    default stream) for other inputs."""
    if library == "torch":
        import torch
        on = next(x.device for x in inputs if type(x).__module__.startswith("torch"))
        return _torch_stream(torch, on.index) if on.type == "cuda" else 0
    if library == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    return 0


# ---- backends, devices, the superoptimizer and compiled kernels ----

class Device:
    """One device of a backend plugin; .info has its name, dtypes and target properties."""

    def __init__(self, context, handle):
        self._context, self._handle = context, handle  # the context keeps the device alive
        self.info = _check(_c.yirage_py_device_info(handle))

    @property
    def backend(self):
        return self.info["backend"]

    @property
    def name(self):
        return self.info["name"]

    @property
    def is_host(self):
        return self.info["dlpack_device_type"] == 1  # kDLCPU

    def __repr__(self):
        return f"yirage.Device({self.backend}:{self.info['index']}, {self.name!r})"

    def empty(self, dims, dtype=float16):
        """A new, uninitialized DeviceTensor of `dims` and `dtype` in this device's memory."""
        return DeviceTensor(self, dims, dtype)

    def tensor(self, array):
        """A DeviceTensor holding a copy of `array` (a float16 or float32 numpy array, or
        anything numpy.asarray takes)."""
        array = _np.ascontiguousarray(array)
        dtype = _DTYPE_OF_NUMPY.get(array.dtype)
        if dtype is None:
            raise InvalidArgumentError(f"Device.tensor(): numpy dtype {array.dtype} is not a yirage dtype "
                                       f"(float16, float32)")
        t = DeviceTensor(self, array.shape, dtype)
        t.copy_from(array)
        return t


_DTYPE_OF_NUMPY = {_np.dtype(_np.float16): float16, _np.dtype(_np.float32): float32}


class DeviceTensor:
    """A tensor in a device's memory, allocated by yirage through the device's plugin: for
    programs with no GPU library of their own (numpy). Made by Device.tensor(array) or
    Device.empty(dims, dtype); kernels called on DeviceTensors return DeviceTensors (and wait);
    .numpy() copies one back; __dlpack__ hands it to PyTorch, CuPy or JAX without a copy (the
    memory lives until both this object and their tensor are gone)."""

    _release_handle = staticmethod(_ext.yirage_buffer_release)

    def __init__(self, device, dims, dtype=float16):
        self.device, self.shape, self.dtype = device, tuple(int(d) for d in dims), _dtype(dtype)
        if any(d < 0 for d in self.shape):
            raise InvalidArgumentError(f"DeviceTensor(): dims {self.shape} has a negative extent")
        self.nbytes = math.prod(self.shape) * dtype.size
        self._handle = _check(_c.yirage_py_buffer_alloc(device._handle, self.nbytes))

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self._release_handle(self._handle)
            self._handle = None

    def __repr__(self):
        return f"yirage.DeviceTensor({self.shape}, {self.dtype}, on {self.device!r})"

    def __dlpack__(self, stream=None, **kwargs):
        return _check(_c.yirage_py_buffer_dlpack(self._handle, self.shape, self.dtype.value))

    def __dlpack_device__(self):
        return (self.device.info["dlpack_device_type"], self.device.info["dlpack_device_id"])

    def _host_view(self, array, writable):
        array = _np.asarray(array)
        if array.shape != self.shape or array.nbytes != self.nbytes or (
                self.dtype.numpy is not None and array.dtype != self.dtype.numpy):
            raise InvalidArgumentError(f"DeviceTensor: a host array of shape {array.shape} and dtype "
                                       f"{array.dtype} does not match {self.shape} {self.dtype.name}")
        if writable and not array.flags.writeable:
            raise InvalidArgumentError("DeviceTensor: the host array is read-only")
        return _np.ascontiguousarray(array) if not writable else array

    def copy_from(self, array):
        """Copies a host array of the same shape and dtype in (returns when done)."""
        _check(_c.yirage_py_buffer_copy(self._handle, self._host_view(array, False), 1))
        return self

    def copy_to(self, array):
        """Copies the data out into a writable host array of the same shape and size in bytes (for
        bfloat16, which numpy has not, a uint16 array of its bits); returns the array."""
        _check(_c.yirage_py_buffer_copy(self._handle, self._host_view(array, True), 0))
        return array

    def numpy(self):
        """A new numpy array holding a copy of the data (float16 and float32 only)."""
        if self.dtype.numpy is None:
            raise UnsupportedError(f"numpy has no {self.dtype.name}: hand the tensor to PyTorch through DLPack")
        return self.copy_to(_np.empty(self.shape, dtype=self.dtype.numpy))


class Context:
    """Loaded backend plugins: $YIRAGE_BACKEND_PATH and the install's folder, plus `plugins`
    (paths). Released with the last reference; kernels compiled from it stay usable."""

    _release_handle = staticmethod(_ext.yirage_context_release)

    def __init__(self, plugins=(), search_default_paths=True, cache_dir=None):
        if isinstance(plugins, (str, bytes, _os.PathLike)):
            raise TypeError("Context(): plugins must be a list of paths, not one path")
        self._handle = _check(_c.yirage_py_context_create(
            [_path(p, "Context(): each of plugins") for p in plugins], 1 if search_default_paths else 0,
            None if cache_dir is None else _path(cache_dir, "Context(): cache_dir")))
        self.backends, errors = _check(_c.yirage_py_backends(self._handle))
        self.load_errors = [line for line in errors.splitlines() if line]

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self._release_handle(self._handle)
            self._handle = None

    def device(self, backend="cpu", index=0):
        if not isinstance(backend, str):
            raise TypeError(f"backend must be a str, not {type(backend).__name__}")
        return Device(self, _check(_c.yirage_py_device(self._handle, backend, int(index))))

    def devices(self, backend=None):
        return [self.device(b["name"], i) for b in self.backends
                if backend in (None, b["name"]) for i in range(b["num_devices"])]


_default_context = None


def default_context():
    """The context made from the default plugin folders on first use."""
    global _default_context
    if _default_context is None:
        _default_context = Context()
    return _default_context


def get_available_backends():
    """The loaded backends: dicts with name, version, path, num_devices, unavailable_reason."""
    return list(default_context().backends)


def devices(backend=None):
    return default_context().devices(backend)


class Kernel:
    """A graph compiled for a device; call it on tensors. The result of superoptimize also
    carries the search's report (.search)."""

    _release_handle = staticmethod(_ext.yirage_kernel_release)

    def __init__(self, graph, device, search=None, layouts=None):
        self.graph, self.device, self.search = graph, device, search
        # Mirage's declared strides of the graph's inputs and outputs (_KernelLayouts).
        self._layouts = layouts if layouts is not None else getattr(graph, "_layouts", None)
        self._handle = _check(_c.yirage_py_compile(graph._live(), device._handle))
        # The kernel holds its own copy of the graph; this is all a call needs from it.
        self._outputs = [(tuple(t.dims), t.dtype) for t in graph.outputs]
        self._host = device.is_host
        self._device_type = device.info["dlpack_device_type"]
        self._torch_spec = None  # _make_torch_spec's, at the first call on PyTorch tensors

    def __del__(self):
        if getattr(self, "_handle", None) is not None:
            self._release_handle(self._handle)
            self._handle = None

    def __call__(self, inputs, outputs=None, stream=None, synchronize=False):
        """Runs on `inputs` (numpy arrays or __dlpack__ tensors on the kernel's device, in the
        graph's input order) without copying them and returns the outputs: the given `outputs`
        (__dlpack__ tensors), else new tensors of the inputs' library (DeviceTensors for
        DeviceTensors; PyTorch, CuPy on a GPU), or new numpy arrays.

        On a host device the call returns when the kernel is done. On a GPU it returns once the
        kernel is queued on `stream` (an integer handle; default: the current stream of the
        inputs' library, as PyTorch's own operations do, else the default stream), like a
        PyTorch operation: work queued after it on that stream sees the outputs; read them from
        the host or another stream after a synchronize (synchronize=True waits here)."""
        spec = self._torch_spec
        tried = spec is not None and (stream is None or type(stream) is int) and not self._layouts
        if tried:
            # Calls after the first on PyTorch GPU tensors: straight to the C path.
            done = _c.yirage_py_torch_run(self._handle, spec, inputs, outputs, stream, self._device_type,
                                          1 if synchronize else 0)
            if done is not None:
                return done[1] if done[0] == _c.YIRAGE_OK else _check(done)
        if self._layouts:
            given = None if outputs is None else list(outputs)
            results = self._run(self._layouts.compact_inputs(inputs),
                                self._layouts.compact_outputs(given), stream, synchronize)
            return self._layouts.lay_out(results, given)
        return self._run(inputs, outputs, stream, synchronize, torch_tried=tried)

    def _run(self, inputs, outputs, stream, synchronize, torch_tried=False):
        if stream is not None and not isinstance(stream, int):
            # A stream object, as Mirage takes PyTorch's: its handle (PyTorch's cuda_stream,
            # CuPy's ptr).
            stream = getattr(stream, "cuda_stream", getattr(stream, "ptr", stream))
        if not self._host and not torch_tried and isinstance(inputs, (list, tuple)):
            done = self._torch_call(inputs, outputs, stream, synchronize)
            if done is not None:
                return done
        ins = _dlpack_inputs(inputs)
        library = _library(ins)
        if not self._host and library != "yirage" and _on_host(ins):
            return self._host_call(ins, outputs, library)
        if library == "yirage":
            # Memory yirage allocated: nothing but yirage orders its work, so the call waits.
            stream, synchronize = 0, True
        if outputs is None:
            outputs = (_numpy_outputs(self._outputs) if self._host and library != "yirage"
                       else _device_outputs(self._outputs, ins, library, self.device))
        else:
            outputs = list(outputs)
            for i, x in enumerate(outputs):
                if not hasattr(x, "__dlpack__"):
                    raise TypeError(f"output {i} must support __dlpack__, not {type(x).__name__}")
        if stream is None:
            stream = 0 if self._host else _current_stream(library or _library(outputs), ins + outputs)
        _check(_c.yirage_py_kernel_run(self._handle, [x.__dlpack__() for x in ins],
                                       [x.__dlpack__() for x in outputs], int(stream),
                                       1 if self._host or synchronize else 0))
        return outputs

    def _host_call(self, ins, outputs, library):
        """The call on host tensors of a kernel of a device with its own memory: yirage copies
        them in and the outputs out (yirage_kernel_run_host), so numpy in gives numpy out and
        PyTorch CPU tensors in give PyTorch CPU tensors out."""
        if outputs is None:
            if library == "torch":
                import torch
                like = next(x for x in ins if type(x).__module__.startswith("torch"))
                outputs = _torch_outputs(torch, self._outputs, like)
            else:
                outputs = _numpy_outputs(self._outputs)
        else:
            outputs = list(outputs)
        _check(_c.yirage_py_kernel_run(self._handle, [x.__dlpack__() for x in ins],
                                       [x.__dlpack__() for x in outputs], 0, _RUN_HOST))
        return outputs

    def _torch_call(self, inputs, outputs, stream, synchronize):
        """The call on PyTorch GPU tensors, read in C without DLPack (yirage checks them as it
        checks DLPack's), or None where they are not for that path (a subclass such as
        Parameter, a host tensor, a dtype yirage has not, more than 16 tensors)."""
        spec = self._torch_spec
        if spec is None:
            torch = _sys.modules.get("torch")
            if torch is None or self._device_type not in _TORCH_GPU_DEVICE_TYPES:
                return None
            spec = self._torch_spec = _make_torch_spec(torch, self._outputs)
        done = _c.yirage_py_torch_run(self._handle, spec, inputs, outputs, stream, self._device_type,
                                      1 if synchronize else 0)
        return None if done is None else _check(done)

    def synchronize(self, stream=0):
        """Waits until this kernel's work queued on `stream` (an integer handle) has finished."""
        _check(_c.yirage_py_kernel_synchronize(self._handle, int(stream)))

    def describe(self):
        """How a run launches, as text: a line per device launch with the graph's operators it
        runs ("... as one program" where the backend took several in one launch), and whether
        runs on one stream and set of buffers are replayed as a recording (a CUDA graph)."""
        return _check(_c.yirage_py_kernel_describe(self._handle))

    def measure(self, seed=1, warmup=2, repeats=10, flush_bytes=0):
        """Checks the kernel against its graph in float64 on seeded random inputs (outputs
        poisoned first) and times `repeats` runs after `warmup` with the backend's timers.
        flush_bytes > 0: before each timed run a kernel writes that many bytes on the
        device (its L2 size: cold caches, and the device's time alone). A wrong kernel is a
        result, not an error: a dict with correct, relative_error, median_seconds, min_seconds
        and error (why it is wrong, "" when correct)."""
        return _check(_c.yirage_py_kernel_measure(self._handle, int(seed), int(warmup), int(repeats),
                                                  int(flush_bytes)))


def _seconds_text(seconds):
    """'25.6 us', '2.59 ms', '1.20 s'."""
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms" if seconds < 1 else f"{seconds:.2f} s"


def _spread_text(low, high, samples):
    """The spread of a measurement's timed runs; '' where none was recorded."""
    if samples <= 0 or low < 0 or high < 0:
        return ""
    if samples == 1:
        return "one run"
    return f"{_seconds_text(low)} to {_seconds_text(high)} over {samples} runs"


class SearchReport:
    """What a search did: .stats (states, candidates, seconds, from_cache…), .candidates
    ((KernelGraph, info) pairs, best first) and .profiled (one dict per graph measured).
    str(report) is the report as the CLI prints it: no -1 sentinels, but "not estimated",
    "not measured (why)" and each measurement's spread (a wide one: the machine was busy)."""

    def __init__(self, handle, status):
        try:
            self.stats, candidates, self.profiled = _check(_c.yirage_py_search_report(handle))
        finally:
            _c.yirage_search_result_release(handle)
        self.candidates = [(KernelGraph(g), info) for g, info in candidates]
        self.timed_out = status == _c.YIRAGE_ERROR_TIMEOUT

    def __str__(self):
        s = self.stats
        lines = [f"search: {s['seconds']:.1f} s{' (from the cache)' if s['from_cache'] else ''}, "
                 f"{s['states']} states, {s['candidates']} candidates"]
        busy = False
        if self.profiled:
            lines.append(f"  #       estimate     measured  {'spread of the timed runs':<32}  rel.error     "
                         f"result  description")
        for i, r in enumerate(self.profiled):
            estimate = _seconds_text(r["estimated_seconds"]) if r["estimated_seconds"] >= 0 else "not estimated"
            measured = _seconds_text(r["measured_seconds"]) if r["measured_seconds"] >= 0 else "not timed"
            error = f"{r['relative_error']:.1e}" if r["relative_error"] >= 0 else "not checked"
            spread = _spread_text(r["min_seconds"], r["max_seconds"], r["samples"])
            busy = busy or (r["kept"] and 0 < r["min_seconds"] and 2 * r["min_seconds"] < r["max_seconds"])
            lines.append(f"{i:3}  {estimate:>13}  {measured:>11}  {spread:<32}  {error:<12}  "
                         f"{'ok' if r['kept'] else 'DROP':<6}  {r['description']}")
            if not r["kept"]:
                lines.append(f"        dropped: {r['error']}")
        if busy:
            lines.append("  (a run took over twice the fastest: the machine was busy while they were timed; "
                         "remeasure=True on a quiet machine gives steadier figures)")
        lines.append("candidates, best first:")
        for i, (_, info) in enumerate(self.candidates):
            estimate = (f"{_seconds_text(info['estimated_seconds'])} estimated"
                        if info["estimated_seconds"] >= 0 else "not estimated")
            if info["measured_seconds"] >= 0:
                spread = _spread_text(info["measured_min_seconds"], info["measured_max_seconds"],
                                      info["measured_samples"])
                measured = f"{_seconds_text(info['measured_seconds'])} measured" + (f" ({spread})" if spread else "")
            else:
                measured = f"not measured ({info['not_measured']})"
            lines.append(f"{i:3}  {estimate}, {measured}  {info['description']}")
        return "\n".join(lines)


class _ProgressBar:
    """A one-line progress bar on stderr, drawn only when stderr is a terminal."""

    def __init__(self, budget):
        import sys
        self.budget, self.out = budget, sys.stderr

    def __call__(self, states, candidates, seconds):
        done = min(1.0, seconds / self.budget)
        bar = "#" * int(done * 30)
        self.out.write(f"\rsearch [{bar:<30}] {seconds:5.1f} s  {states} states  "
                       f"{candidates} candidates")
        self.out.flush()

    def close(self):
        self.out.write("\n")


def search_cache_dir():
    """The folder where searches are cached by default: $YIRAGE_SEARCH_CACHE, else
    $XDG_CACHE_HOME/yirage/search, else ~/.cache/yirage/search; None where YIRAGE_SEARCH_CACHE
    is "off" (no cache)."""
    import os
    chosen = os.environ.get("YIRAGE_SEARCH_CACHE")
    if chosen:
        return None if chosen == "off" else chosen
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "yirage", "search")


# Mirage's superoptimize keywords that yirage accepts without effect, with why (docs/python.md).
_MIRAGE_NO_EFFECT = {
    "config": "yirage's search derives its grids and loops from the target",
    "save_codes": "the generated code is in the plugin's kernel cache",
    "is_formal_verified": "every candidate is checked by fingerprints (docs/verification.md)",
    "previous_checkpoint": "searches are cached by request instead (cache_dir)",
    "use_graph_dataset": "see use_cached_graphs",
    "warmup_iters": "the profiler's warm-up is its own",
}


def _search_grids(griddims, franges):
    """Mirage's griddims and franges as the search's (fixed grid, grid candidates, loop
    candidates), each None where free: one grid is the only one tried; several, each value a block
    count to try on any axis. franges: the for-loop ranges to try."""
    fixed = grids = None
    if griddims is not None:
        shapes = [tuple(int(v) for v in g) + (1,) * (3 - len(tuple(g))) for g in griddims]
        if len(shapes) == 1:
            fixed = shapes[0]
        else:
            grids = sorted({v for shape in shapes for v in shape if v > 1})
    # (yirage's candidates are loop ranges of 2 or more: a 1, Mirage's "no loop", is dropped.)
    loops = None if franges is None else [int(f) for f in franges if int(f) != 1]
    return fixed, grids, loops


def _superoptimize(graph, backend=None, device=None, time_budget=60, top_k=4, threads=0,
                   cache_dir=None, progress=None, context=None, remeasure=False, *,
                   griddims=None, franges=None, blockdims=None, imaps=None, omaps=None, fmaps=None,
                   verbose=False, profile_iters=None, use_cached_graphs=True, **mirage):
    import sys
    unknown = set(mirage) - set(_MIRAGE_NO_EFFECT)
    if unknown:
        raise TypeError(f"superoptimize() got unexpected keyword arguments {sorted(unknown)}")
    for name, value in (("imaps", imaps), ("omaps", omaps), ("fmaps", fmaps)):
        if value is not None:
            raise UnsupportedError(f"superoptimize(): Mirage's {name}= is not supported: yirage's "
                                   f"search enumerates the maps itself")
    if blockdims is not None:
        raise UnsupportedError("superoptimize(): Mirage's blockdims= is not supported (Mirage "
                               "requires None too)")
    if backend in ("triton", "nki"):
        raise UnsupportedError(f"superoptimize(): Mirage's backend={backend!r} is not a yirage "
                               f"backend; yirage's: {[b['name'] for b in get_available_backends()]}")
    if cache_dir is None:
        cache_dir = search_cache_dir() if use_cached_graphs else None
    elif cache_dir is False:
        cache_dir = None
    dev = _device_for(context, backend, device)
    fixed, grids, loops = _search_grids(griddims, franges)
    bar = None
    if progress is None and (sys.stderr.isatty() or verbose):
        progress = bar = _ProgressBar(float(time_budget))
    try:
        status, handle = _c.yirage_py_superoptimize(
            graph._live(), dev._handle, None, float(time_budget), int(top_k), int(threads),
            None if cache_dir is None else _path(cache_dir, "superoptimize(): cache_dir"), 1 if remeasure else 0,
            progress,
            grids, loops, fixed, int(profile_iters) if profile_iters is not None else 0)
    finally:
        if bar is not None:
            bar.close()
    if status not in (_c.YIRAGE_OK, _c.YIRAGE_ERROR_TIMEOUT) or handle is None:
        _check([status])
    report = SearchReport(handle, status)
    if not report.candidates:
        # What was measured, and why each was dropped (the input graph is always measured).
        why = "; ".join(f"{r['description']}: {r['error']}" for r in report.profiled)
        raise NotFoundError("superoptimize(): no correct candidate was found" +
                            (" within the budget" if report.timed_out else "") +
                            (f" ({why})" if why else ""))
    return Kernel(report.candidates[0][0], dev, report, graph._layouts)


def _device_for(context, backend, device):
    """The device a search or a compile runs on: `device` if it is one; neither a backend nor a
    device: default_device(); else the backend's device `device` (default: set_gpu_device_id's
    for CUDA, 0 otherwise; no backend: the CPU's)."""
    if isinstance(device, Device):
        return device
    if backend is None and device is None:
        return default_device()
    ctx = context if context is not None else default_context()
    name = backend if backend is not None else "cpu"
    return ctx.device(name, device if device is not None else (_gpu_device_id if name == "cuda" else 0))


def _compile(graph, backend=None, device=None, context=None, *, async_=False, inputs=None,
             **mirage):
    unknown = set(mirage) - _MIRAGE_COMPILE_OPTIONS
    if unknown:
        raise TypeError(f"compile() got unexpected keyword arguments {sorted(unknown)}")
    if async_:
        raise UnsupportedError("compile(): Mirage's async_=True is not supported: yirage's compile "
                               "returns the compiled Kernel")
    if inputs is not None and backend is None and device is None:
        return Kernel(graph, _device_at(_dlpack_device(_dlpack_inputs(inputs))))
    return Kernel(graph, _device_for(context, backend, device))


KernelGraph.superoptimize = _superoptimize
KernelGraph.superoptimize.__doc__ = """Searches for a faster equivalent of this graph on a device
    (the backend's device `device`, or a yirage.Device), profiles the `top_k` cheapest verified
    candidates and the graph itself there, and returns the fastest correct one compiled, as a
    callable yirage.Kernel whose .search holds the report. A progress bar is drawn on stderr when
    it is a terminal; `progress` may be a callable (states, candidates, seconds) instead.

    With no backend (and no device) it runs on yirage.default_device(): CUDA where present, else
    the CPU. Mirage's keywords are taken (docs/python.md has the table): griddims (one grid: only
    it; several: their values as per-axis block counts), franges (for-loop ranges), verbose (the
    progress bar), profile_iters (timed runs per candidate), use_cached_graphs=False (no cache);
    config, save_codes, is_formal_verified, previous_checkpoint, use_graph_dataset and
    warmup_iters have no effect; imaps, omaps, fmaps, blockdims and backend "triton" / "nki" are
    errors that name them.

    Searches are cached in `cache_dir` (default: search_cache_dir(), the user's cache folder;
    False: no cache). A request searched and profiled before on the same device with the same
    plugin build and yirage version is answered from the cache at once, with the cached winner
    (.search.stats["from_cache"] set, nothing measured); remeasure=True profiles the cached
    candidates again and stores the new answer."""
KernelGraph.compile = _compile
KernelGraph.compile.__doc__ = """This graph compiled as it is for a device (the backend's device
    `device`, or a yirage.Device; neither: where Mirage's `inputs=` are, else
    yirage.default_device()): a callable yirage.Kernel. Mirage's compile options (target_cc,
    num_warp_groups, pipeline_stages, profiling, enable_online_softmax, file_id) have no effect;
    async_=True raises UnsupportedError."""


def _search_device(target, context, backend, device):
    """Where a search runs: nowhere (None) for a built-in `target` with neither a backend nor a
    device, else as superoptimize's (_device_for)."""
    if target is not None and backend is None and device is None:
        return None
    return _device_for(context, backend, device)


def _search(graph, target=None, backend=None, device=None, time_budget=60, top_k=4, threads=0,
            cache_dir=False, progress=None, context=None, remeasure=False, *, griddims=None,
            franges=None, profile_iters=None):
    dev = _search_device(target, context, backend, device)
    fixed, grids, loops = _search_grids(griddims, franges)
    if cache_dir is None:
        cache_dir = search_cache_dir()
    status, handle = _c.yirage_py_superoptimize(
        graph._live(), None if dev is None else dev._handle, None if target is None else str(target),
        float(time_budget), int(top_k), int(threads),
        None if cache_dir is False else _path(cache_dir, "search(): cache_dir"), 1 if remeasure else 0,
        progress, grids, loops, fixed, int(profile_iters) if profile_iters is not None else 0)
    if status not in (_c.YIRAGE_OK, _c.YIRAGE_ERROR_TIMEOUT) or handle is None:
        _check([status])
    return SearchReport(handle, status)


KernelGraph.search = _search
KernelGraph.search.__doc__ = """The superoptimizer's search alone: a SearchReport (.candidates
    best first, .stats, .profiled, .timed_out when the budget ran out) instead of a compiled kernel.
    With a built-in `target` ("h100", "h200", "a100", "mi300x", "cpu"; yirage.target lists its properties)
    and neither a backend nor a device, candidates are estimated for that target and nothing is
    measured, so no such hardware is needed; otherwise it runs where superoptimize would and
    profiles the `top_k` cheapest there (a target then replaces the device's properties). Other
    keywords as superoptimize's; searches are not cached unless `cache_dir` is given (None:
    search_cache_dir())."""


class SearchPlan(_Owned):
    """A search split into work units that any process can run (searches in shards,
    docs/python.md): the pattern for Ray, Dask or a multiprocessing pool.

        plan = yirage.SearchPlan(graph, min_units=8, target="h100", time_budget=300)
        partial = plan.run_units([0, 3, 6])      # bytes; in any process with the same plan
        plan.add_partial(partial)                # in the process that gathers
        report = plan.merge()                    # == graph.search(target="h100", ...)

    Planning is deterministic: a process that plans the same graph with the same options and
    min_units gets the same units and the same .id, so workers rebuild the plan (a plan is not
    pickled) and only the graph (KernelGraph.to_bytes), the options, unit indices and partial
    results travel. A partial result is checked on arrival; one of another plan raises
    InvalidArgumentError, malformed bytes CorruptDataError.

    The options are KernelGraph.search's: `target` (a built-in target's name; with neither a
    backend nor a device nothing is measured), backend / device / context (where the merge
    profiles; also the target when `target` is None), time_budget (seconds, counted from each call
    that runs units, and from merge), threads, griddims and franges. `min_units` (>= 1): the least
    units wanted; a small search may have fewer, and 0 where planning searched everything."""

    _release_handle = staticmethod(_ext.yirage_search_plan_release)

    def __init__(self, graph, min_units=1, *, target=None, backend=None, device=None, time_budget=60,
                 threads=0, griddims=None, franges=None, context=None):
        self._handle = None
        if not isinstance(graph, KernelGraph):
            raise TypeError(f"SearchPlan(): graph must be a yirage.KernelGraph, not {type(graph).__name__}")
        min_units = operator.index(min_units)
        if not 1 <= min_units < 2**32:
            raise InvalidArgumentError(f"SearchPlan(): min_units must be from 1 to 2**32 - 1, not {min_units}")
        self.graph = graph
        self.device = _search_device(target, context, backend, device)
        self._target = None if target is None else str(target)
        self._time_budget, self._threads = float(time_budget), int(threads)
        self._fixed, self._grids, self._loops = _search_grids(griddims, franges)
        self._handle = _check(_c.yirage_py_search_plan_create(
            graph._live(), min_units, None if self.device is None else self.device._handle, self._target,
            self._time_budget, self._threads, self._grids, self._loops, self._fixed))

    def __reduce__(self):
        raise TypeError("a yirage.SearchPlan is not pickled: build it again in the worker from the same "
                        "graph and options (planning is deterministic, the plan ids are equal)")

    def _live(self):
        if self._handle is None:
            raise InvalidArgumentError("this SearchPlan has been released")
        return self._handle

    @property
    def num_units(self):
        """The number of work units (0 where planning searched everything)."""
        return _check(_c.yirage_search_plan_num_units(self._live()))

    def __len__(self):
        return self.num_units

    @property
    def id(self):
        """32 hexadecimal digits naming the plan (its graph, target, options, min_units and the
        yirage version): equal plans have equal ids; name checkpoint files with it."""
        return _check(_c.yirage_py_search_plan_id(self._live()))

    def __repr__(self):
        return f"yirage.SearchPlan({self.id}, {self.num_units} units)"

    def run_units(self, units):
        """Runs units (indices below num_units; repeats run once) on the plan's threads and
        returns their partial result as bytes, for add_partial in any process with the same plan.
        Where the budget (counted from this call) runs out, it still returns bytes, holding only
        the units that finished: the gathering plan's unit_done / missing_units say which to run
        again. An index out of range raises InvalidArgumentError and runs nothing."""
        units = [operator.index(u) for u in units]
        if any(u < 0 for u in units):
            raise InvalidArgumentError(f"run_units(): unit indices must be >= 0, not {min(units)}")
        status, partial = _c.yirage_py_search_plan_run_units(self._live(), units)
        if status in (_c.YIRAGE_ERROR_TIMEOUT, _c.YIRAGE_ERROR_CANCELLED) and partial is not None:
            return partial
        _check([status])
        return partial

    def add_partial(self, data):
        """Adds a partial result's units (bytes from run_units; a unit added before counts once)
        and returns how many were new. Nothing in the bytes is trusted: a partial result of
        another plan raises InvalidArgumentError, malformed bytes CorruptDataError; either way
        the plan is unchanged."""
        return _check(_c.yirage_py_search_plan_add_partial(self._live(), data))

    def unit_done(self, unit):
        """Whether unit `unit`'s result has been added."""
        unit = operator.index(unit)
        if unit < 0:
            raise InvalidArgumentError(f"unit_done(): unit {unit} of a plan of {self.num_units} units")
        return bool(_check(_c.yirage_search_plan_unit_done(self._live(), unit)))

    def missing_units(self):
        """The units whose results have not been added, in order."""
        return [u for u in range(self.num_units) if not self.unit_done(u)]

    def _merge(self, device, top_k, profile_iters, progress):
        status, handle = _c.yirage_py_search_plan_merge(
            self._live(), None if device is None else device._handle, self._target, self._time_budget,
            int(top_k), self._threads, progress, self._grids, self._loops, self._fixed,
            int(profile_iters) if profile_iters is not None else 0)
        if status not in (_c.YIRAGE_OK, _c.YIRAGE_ERROR_TIMEOUT) or handle is None:
            _check([status])
        return SearchReport(handle, status)

    def merge(self, *, backend=None, device=None, context=None, top_k=4, profile_iters=None, progress=None):
        """The answer of the units added so far, as KernelGraph.search gives it with the plan's
        options: a SearchReport whose candidates are verified against the graph here. With units
        missing the report is incomplete and its .timed_out is set (missing_units lists them), as
        a search stopped by its budget. It profiles the `top_k` cheapest where the plan's device
        is, or on backend / device when given (a device whose properties differ from the plan's
        target, with no `target` in the plan, raises InvalidArgumentError)."""
        dev = self.device if backend is None and device is None else _device_for(context, backend, device)
        return self._merge(dev, top_k, profile_iters, progress)

    def kernel(self, *, backend=None, device=None, context=None, top_k=4, profile_iters=None, progress=None):
        """merge() profiled on a device (backend / device, else the plan's, else
        yirage.default_device()), then the fastest correct candidate compiled: the yirage.Kernel
        that KernelGraph.superoptimize returns, its report in .search. Raises NotFoundError where
        no correct candidate was found."""
        if backend is None and device is None:
            dev = self.device if self.device is not None else default_device()
        else:
            dev = _device_for(context, backend, device)
        report = self._merge(dev, top_k, profile_iters, progress)
        if not report.candidates:
            why = "; ".join(f"{r['description']}: {r['error']}" for r in report.profiled)
            raise NotFoundError("SearchPlan.kernel(): no correct candidate was found" +
                                (" (units missing or the budget ran out)" if report.timed_out else "") +
                                (f" ({why})" if why else ""))
        return Kernel(report.candidates[0][0], dev, report, self.graph._layouts)


def new_kernel_graph():
    return KernelGraph()


def new_threadblock_graph(grid_dim, block_dim=(128, 1, 1), forloop_range=1, reduction_dimx=64, *,
                          shared_memory_limit=0):
    return ThreadblockGraph(grid_dim, block_dim, forloop_range, reduction_dimx,
                            shared_memory_limit=shared_memory_limit)


def target(name):
    """The properties of a built-in target ("cpu", "h100", "h200", "a100", "mi300x") as a dict."""
    return _check(_c.yirage_py_target(str(name)))


def load(path):
    """A graph from a file written by KernelGraph.save (either format)."""
    return KernelGraph(_check(_c.yirage_graph_load(_path(path, "load(): path"))))


def from_bytes(data):
    return KernelGraph(_check(_c.yirage_py_deserialize(bytes(data))))


# ---- Mirage's module-level calls ----

__version__ = version()
_MIRAGE_COMPILE_OPTIONS = {"target_cc", "num_warp_groups", "pipeline_stages", "profiling",
                           "enable_online_softmax", "file_id"}
_gpu_device_id = 0


def set_gpu_device_id(device_id):
    """The GPU that searches and runs use by default (Mirage's set_gpu_device_id)."""
    global _gpu_device_id
    if not isinstance(device_id, int) or device_id < 0:
        raise ValueError(f"set_gpu_device_id(): device_id must be a non-negative int, not {device_id!r}")
    _gpu_device_id = device_id


def bypass_compile_errors(value=True):
    """Mirage's switch that silences nvcc in superoptimize; accepted without effect: yirage's
    plugins compile quietly and count the candidates that fail (search.stats["unbuildable"])."""
    if not isinstance(value, bool):
        raise TypeError(f"bypass_compile_errors(): value must be a bool, not {type(value).__name__}")


def convert_dtype_to_torch_type(type):  # noqa: A002 - Mirage's parameter name
    """The PyTorch dtype of a yirage dtype (Mirage's convert_dtype_to_torch_type)."""
    name = _dtype(type).name
    try:
        import torch
    except ImportError as e:
        raise ImportError(f"convert_dtype_to_torch_type(): PyTorch is not installed ({e})") from e
    return _torch_tables(torch)[0][name]


def convert_torch_type_to_dtype(type):  # noqa: A002 - Mirage's parameter name
    """The yirage dtype of a PyTorch dtype (Mirage's convert_torch_type_to_dtype)."""
    for d in _DTYPES.values():
        if str(type) == f"torch.{d.name}":
            return d
    raise UnsupportedError(f"convert_torch_type_to_dtype(): {type} is not a yirage dtype "
                           f"(float16, bfloat16, float32)")


def generate_cuda_program(input_graph, *, target_cc=None, input_strides=None, num_warp_groups=-1,
                          pipeline_stages=-1, profiling=False, enable_online_softmax=False):
    """Mirage's CUDA source of a graph: not supported. yirage's CUDA plugin generates and
    compiles its code inside KernelGraph.compile / superoptimize, and the C ABI does not return
    the source."""
    raise UnsupportedError("generate_cuda_program(): yirage does not return generated CUDA source; "
                           "its CUDA plugin generates and compiles it in KernelGraph.compile() and "
                           "superoptimize()")


def _dlpack_device(inputs):
    """The DLPack device (type, index) of the first input that has one; None where none does."""
    for x in inputs:
        where = getattr(x, "__dlpack_device__", None)
        if where is not None:
            kind, index = where()
            return int(kind), int(index)
    return None


def _device_at(where):
    """The device of a DLPack device (type, index): the CPU for kDLCPU (numpy arrays, host
    tensors), that CUDA device for kDLCUDA; default_device() for anything else or None."""
    if where is not None and where[0] == 1:  # kDLCPU
        return default_context().device("cpu", 0)
    if where is not None and where[0] == 2:  # kDLCUDA
        return default_context().device("cuda", where[1])
    return default_device()


def default_device():
    """The device used where no backend is named: CUDA device set_gpu_device_id() (0 by
    default) where the CUDA plugin has devices, else the CPU."""
    cuda = default_context().devices("cuda")
    if cuda:
        if _gpu_device_id >= len(cuda):
            raise NotFoundError(f"set_gpu_device_id({_gpu_device_id}): there are {len(cuda)} CUDA devices")
        return cuda[_gpu_device_id]
    return default_context().device("cpu", 0)
