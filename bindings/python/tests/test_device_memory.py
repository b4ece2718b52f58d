"""Any input on any device: numpy arrays in and out of kernels of every device, and
DeviceTensor (memory yirage allocates through a device's plugin). The CPU tests run everywhere;
the GPU ones need yirage's CUDA plugin and a GPU, not PyTorch, and skip (saying so) without
them, as in CI."""
import numpy as np
import pytest

import yirage as yr


def gpu_device():
    try:
        return yr.default_context().device("cuda", 0)
    except yr.NotFoundError as e:
        pytest.skip(f"no CUDA device for yirage: {e}")


def rms_norm_matmul():
    g = yr.new_kernel_graph()
    x = g.new_input(dims=(8, 256), dtype=yr.float16)
    w = g.new_input(dims=(256, 96), dtype=yr.float16)
    g.mark_output(g.matmul(g.rms_norm(x, normalized_shape=(256,)), w))
    return g


def inputs(seed=5):
    rng = np.random.default_rng(seed)
    return [rng.uniform(-1, 1, (8, 256)).astype(np.float16), rng.uniform(-1, 1, (256, 96)).astype(np.float16)]


def want(x, w):
    x64 = x.astype(np.float64)
    return (x64 / np.sqrt((x64 ** 2).mean(-1, keepdims=True))) @ w.astype(np.float64)


def relative_error(got, want):
    return np.linalg.norm(got.astype(np.float64) - want) / np.linalg.norm(want)


def check_device_tensors(device):
    g = rms_norm_matmul()
    k = g.compile(device=device)
    x, w = inputs()
    tx, tw = device.tensor(x), device.tensor(w)
    assert tx.shape == (8, 256) and tx.dtype is yr.float16 and tx.nbytes == 8 * 256 * 2
    assert tx.__dlpack_device__() == (device.info["dlpack_device_type"], device.info["dlpack_device_id"])
    assert np.array_equal(tx.numpy(), x)
    (out,) = k([tx, tw])
    got = out if isinstance(out, np.ndarray) else out.numpy()
    assert relative_error(got, want(x, w)) < 5e-3
    # Given outputs are written in place.
    given = device.empty((8, 96), yr.float16)
    given.copy_from(np.full((8, 96), np.nan, dtype=np.float16))
    (same,) = k([tx, tw], outputs=[given])
    assert same is given and relative_error(given.numpy(), want(x, w)) < 5e-3
    return k


def test_device_tensors_on_the_cpu():
    device = yr.devices("cpu")[0]
    check_device_tensors(device)
    x, _ = inputs()
    t = device.tensor(x)
    view = np.from_dlpack(t)  # host memory: numpy reads it without a copy
    del t  # the view keeps the memory
    assert np.array_equal(view, x)


def test_device_tensor_errors():
    device = yr.devices("cpu")[0]
    with pytest.raises(yr.InvalidArgumentError, match="float64 is not a yirage dtype"):
        device.tensor(np.zeros(3))
    with pytest.raises(yr.InvalidArgumentError, match="negative extent"):
        device.empty((2, -1))
    t = device.empty((2, 3), yr.float32)
    with pytest.raises(yr.InvalidArgumentError, match=r"shape \(3, 2\)"):
        t.copy_from(np.zeros((3, 2), np.float32))
    with pytest.raises(yr.InvalidArgumentError, match="does not match"):
        t.copy_from(np.zeros((2, 3), np.float16))
    with pytest.raises(yr.UnsupportedError, match="numpy has no bfloat16"):
        device.empty((2,), yr.bfloat16).numpy()
    with pytest.raises(yr.InvalidArgumentError, match="outside 0..6"):
        device.empty((1,) * 7).__dlpack__()


def test_numpy_in_numpy_out_on_a_gpu():
    device = gpu_device()
    k = rms_norm_matmul().compile(device=device)
    x, w = inputs(7)
    (out,) = k([x, w])
    assert isinstance(out, np.ndarray) and out.dtype == np.float16
    assert relative_error(out, want(x, w)) < 5e-3
    given = np.full((8, 96), np.nan, dtype=np.float16)
    (same,) = k([x, w], outputs=[given])
    assert same is given and relative_error(given, want(x, w)) < 5e-3
    with pytest.raises(yr.InvalidArgumentError, match="input 1 has shape"):
        k([x, w[:128]])


def test_device_tensors_on_a_gpu():
    device = gpu_device()
    check_device_tensors(device)
    x, _ = inputs(9)
    t = device.tensor(x)
    assert t.__dlpack_device__()[0] == 2  # kDLCUDA
    torch = pytest.importorskip("torch")
    view = torch.from_dlpack(t)  # PyTorch reads yirage's memory without a copy
    del t
    assert view.is_cuda and np.array_equal(view.cpu().numpy(), x)
