"""Forms the public tutorials use (issue 11), with kernels of our own in their patterns:
legacy index expressions that transpose or window a tile (views, so writes go through),
reductions over non-trailing axes, division by a power of two, ``t.broadcast_to``,
``tensor_copy(..., dtype=)``, ``t.reshape(shape=)``, ``nl.static_cast`` of host arrays."""

import ml_dtypes
import numpy as np
import pytest

from fastisa import nki
from fastisa.nki import isa as nisa, language as nl

BF16 = ml_dtypes.bfloat16


@nki.jit
def _transpose_by_index(a, f1, f2):
    """out[p, j2 * F1 + j1] = a[p, j1 * F2 + j2]: an index-expression write, as tutorials do."""
    out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
    t = nl.load(a)
    i_p = nl.arange(a.shape[0])[:, None, None]
    i_1 = nl.arange(f1)[None, :, None]
    i_2 = nl.arange(f2)[None, None, :]
    o = nl.ndarray(a.shape, a.dtype, buffer=nl.sbuf)
    o[i_p, i_2 * f1 + i_1] = nl.copy(t[i_p, i_1 * f2 + i_2])
    nl.store(out, o)
    return out


def test_index_expression_transpose_writes_through_a_view():
    a = np.arange(6 * 12, dtype=np.int16).reshape(6, 12)
    got = nki.simulate(_transpose_by_index)(a, 3, 4)
    want = a.reshape(6, 3, 4).transpose(0, 2, 1).reshape(6, 12)
    assert (got == want).all()


@nki.jit
def _window_mean(a, k):
    """k x k average pooling: an mgrid window view, a sum over axes [2, 4], / (k * k)."""
    c, h, w = a.shape
    out = nl.ndarray((c, h // k, w // k), a.dtype, buffer=nl.shared_hbm)
    i0, i1, i2, i3, i4 = nl.mgrid[0:c, 0:h // k, 0:k, 0:w // k, 0:k]
    t = nl.load(a)
    s = nl.sum(t[i0, k * i1 + i2, k * i3 + i4], axis=[2, 4]) / (k * k)
    nl.store(out, s)
    return out


def test_window_view_sum_over_non_trailing_axes_and_power_of_two_divide():
    a = (np.arange(3 * 8 * 8) % 13).astype(np.float32).reshape(3, 8, 8) * np.float32(0.37)
    got = nki.simulate(_window_mean)(a, 2)
    # the reduction adds k*k float32 values in the instruction's order; the reference sums
    # each window in float32 in the same (row-major over the window) order, then * 0.25
    win = a.reshape(3, 4, 2, 4, 2).transpose(0, 1, 3, 2, 4).reshape(3, 4, 4, 4)
    acc = np.zeros((3, 4, 4), np.float32)
    for j in range(4):
        acc = (acc + win[..., j]).astype(np.float32)
    want = (acc * np.float32(0.25)).astype(np.float32)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()


def test_divide_by_a_power_of_two():
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)
        nl.store(out, nl.divide(t, 8.0))
        return out
    a = np.random.default_rng(2).standard_normal((4, 16)).astype(np.float32)
    got = nki.simulate(k)(a)
    assert (got.view(np.uint32) == (a / np.float32(8)).view(np.uint32)).all()
    # other divisors: tests/test_nki_language_math.py


def test_tensor_method_broadcast_to_and_reshape_keyword():
    @nki.jit
    def k(a):
        out = nl.ndarray((4, 6), a.dtype, buffer=nl.shared_hbm)
        t = nl.load(a)                           # [1, 6]
        b = t.broadcast_to((4, 6))
        nl.store(out.reshape(shape=(4, 6)), b)
        return out
    a = np.arange(6, dtype=np.float32).reshape(1, 6)
    assert (nki.simulate(k)(a) == np.broadcast_to(a, (4, 6))).all()
    t = nl.ndarray((2, 6), nl.float32)
    assert t.reshape(shape=(2, 3, 2)).shape == (2, 3, 2)
    with pytest.raises(TypeError, match="both positionally and as a keyword"):
        t.reshape((12,), shape=(12,))


def test_tensor_copy_dtype_rounds_through_that_dtype():
    @nki.jit
    def k(a):
        out = nl.ndarray(a.shape, nl.float32, buffer=nl.shared_hbm)
        t = nl.load(a)
        d = nl.ndarray(a.shape, nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=d, src=t, dtype=nl.bfloat16)      # f32 -> bf16 -> f32
        nl.store(out, d)
        return out
    a = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    got = nki.simulate(k)(a)
    assert (got.view(np.uint32) == a.astype(BF16).astype(np.float32).view(np.uint32)).all()


def test_static_cast_of_a_host_array_is_numpy_astype():
    x = np.linspace(-2, 2, 17)
    y = nl.static_cast(x, nl.bfloat16)
    assert isinstance(y, np.ndarray) and y.dtype == BF16
    assert (y.view(np.uint16) == x.astype(BF16).view(np.uint16)).all()


def test_dge_mode_numbered_as_the_sdk():
    # SDK 2.33: unknown 0, swdge 1, hwdge 2, none 3; kernels pass the integers too
    assert [nisa.dge_mode(i).name for i in range(4)] == ["unknown", "swdge", "hwdge", "none"]
    src = nl.ndarray((4, 8), nl.float32, buffer=nl.hbm)
    src.data[...] = np.arange(32, dtype=np.float32).reshape(4, 8)
    dst = nl.ndarray((4, 8), nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=dst, src=src, dge_mode=2)
    assert (dst.data == src.data).all()
    with pytest.raises(Exception, match="dge_mode must be one of"):
        nisa.dma_copy(dst=dst, src=src, dge_mode=7)


def test_nc_versions_are_ordered_across_both_enum_names():
    from fastisa.nki import constants, enums
    assert nisa.get_nc_version() >= enums.nc_version.gen3          # trn2 is gen3
    assert constants.nc_version.gen4 > enums.nc_version.gen3 > constants.nc_version.gen2
    assert constants.nc_version.gen3 == enums.nc_version.gen3
