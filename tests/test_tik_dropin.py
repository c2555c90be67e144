"""TIK drop-in behaviour (issue 18): the front-end details real CANN operators rely on.

Each test states the TIK source it follows (caffe-huawei-atlas-convertor
``convertor/huawei/te/tik/``: the 2020 TIK API and its debugger).  The kernels here are our
own, written in the style of the public operators (an entry function, tiling with
for_range, a tail, if_scope/elif_scope/else_scope)."""
from __future__ import annotations

import numpy as np
import pytest

from fastisa import errors, tik
from fastisa.tik import platform


@pytest.fixture(autouse=True)
def _default_target():
    platform.set_target("Ascend910")
    yield
    platform.set_target("Ascend910")


# --------------------------------------------------------------------------------------
# B2: one index on a multi-dimensional tensor is the flattened element
# --------------------------------------------------------------------------------------

def test_single_index_on_2d_tensor_is_flat_element():
    # TIK Tensor.__getitem__: an int index treats the tensor as one dimension
    tk = tik.Tik()
    x = tk.Tensor("float16", (4, 16), name="x", scope=tik.scope_gm)
    y = tk.Tensor("float16", (4, 16), name="y", scope=tik.scope_gm)
    u = tk.Tensor("float16", (4, 16), name="u", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, 4, 0, 0)
    s = tk.Scalar("float16", "s")
    s.set_as(u[17])              # flat element 17 = row 1, column 1
    u[3].set_as(s)               # flat element 3 = row 0, column 3
    u[2, 5].set_as(s)            # full index: row 2, column 5
    tk.vec_adds(16, u[32], u[32], 1.0, 1, 8, 8)   # flat start 32 = row 2
    tk.data_move(y, u, 0, 1, 4, 0, 0)
    tk.BuildCCE("k", [x], [y])
    xin = np.arange(64, dtype=np.float16).reshape(4, 16)
    (out,) = tk.tikdb.start_debug({"x": xin}, interactive=False)
    want = xin.copy()
    want[0, 3] = xin[1, 1]
    want[2, 5] = xin[1, 1]
    want[2] += np.float16(1)
    assert np.array_equal(out.view(np.uint16), want.view(np.uint16))


def test_index_count_must_match_rank():
    tk = tik.Tik()
    u = tk.Tensor("float16", (2, 4, 16), name="u", scope=tik.scope_ubuf)
    with pytest.raises(errors.ConstraintError, match="index not match shape"):
        u[1, 2]
    assert u[1, 2, 3].offset == 1 * 64 + 2 * 16 + 3
    assert u[5].offset == 5


def test_tensor_call_is_getitem():
    # TIK Tensor.__call__(index) returns __getitem__(index)
    tk = tik.Tik()
    u = tk.Tensor("int32", (3, 8), name="u", scope=tik.scope_ubuf)
    assert u(9).offset == u[9].offset == 9


# --------------------------------------------------------------------------------------
# B3: Scalar.set_as(tensor[i]) of another dtype takes the bits
# --------------------------------------------------------------------------------------

def _bits_program(src_dtype, scalar_dtype, values, index):
    tk = tik.Tik()
    n = len(values)
    x = tk.Tensor(src_dtype, (n,), name="x", scope=tik.scope_gm)
    y = tk.Tensor(scalar_dtype, (32 // np.dtype(scalar_dtype).itemsize,), name="y",
                  scope=tik.scope_gm)
    u = tk.Tensor(src_dtype, (n,), name="u", scope=tik.scope_ubuf)
    v = tk.Tensor(scalar_dtype, y.shape, name="v", scope=tik.scope_ubuf)
    tk.data_move(u, x, 0, 1, n * np.dtype(src_dtype).itemsize // 32, 0, 0)
    s = tk.Scalar(scalar_dtype, "s")
    s.set_as(u[index])
    v[0].set_as(s)
    tk.data_move(y, v, 0, 1, 1, 0, 0)
    tk.BuildCCE("k", [x], [y])
    (out,) = tk.tikdb.start_debug({"x": np.asarray(values, dtype=src_dtype)},
                                  interactive=False)
    return out[0]


@pytest.mark.parametrize("src,dst", [("float16", "uint16"), ("float16", "int16"),
                                     ("float32", "int32"), ("int32", "float32"),
                                     ("float16", "int32"), ("float16", "float32"),
                                     ("int32", "int16"), ("int32", "float16"),
                                     ("uint16", "float16")])
def test_scalar_set_as_reinterprets_bits(src, dst, rng):
    # TIK debugger SetScalar.eval_: wider scalar = tensor[i:i+ratio].view(dst)[0],
    # narrower = [tensor[i]].view(dst)[0] (the low-order bytes), equal width = view
    raw = rng.integers(0, 1 << 16, size=32, dtype=np.uint16)
    if src == "float16":   # finite float16 codes only (a NaN would not survive vec_adds)
        raw &= 0x7BFF
    vals = raw.view(np.uint8).view(src)
    i = 4
    got = _bits_program(src, dst, vals, i)
    sb, db = np.dtype(src).itemsize, np.dtype(dst).itemsize
    want = vals.view(np.uint8)[i * sb:i * sb + db].view(dst)[0]
    assert np.array_equal(np.array([got]).view(np.uint8), np.array([want]).view(np.uint8))


def test_scalar_set_as_wider_read_past_the_end_is_rejected():
    tk = tik.Tik()
    u = tk.Tensor("float16", (16,), name="u", scope=tik.scope_ubuf)
    s = tk.Scalar("int32", "s")
    s.set_as(u[15])     # needs elements 15 and 16
    tk.BuildCCE("k", [], [])
    with pytest.raises(errors.AccessError, match="element 15 as int32"):
        tk.tikdb.start_debug({}, interactive=False)


def argmax_rows(rows, cols, kernel_name="argmax_rows"):
    """An operator in the style of the public ones: per row of a (rows, cols) float16
    input, the column of the maximum (first one on ties), as int32.  cols <= 128; rows
    tiled 8 at a time with a tail; the vcmax index (a uint16 bit pattern in a float16
    tensor) is read with a uint16 Scalar, as arg_max_with_value does."""
    tk = tik.Tik()
    x = tk.Tensor("float16", (rows, cols), name="x", scope=tik.scope_gm)
    y = tk.Tensor("int32", (rows,), name="y", scope=tik.scope_gm)
    per = 8
    row_blocks = cols * 2 // 32
    ub = tk.Tensor("float16", (per, cols), name="ub", scope=tik.scope_ubuf)
    res = tk.Tensor("float16", (per * 2,), name="res", scope=tik.scope_ubuf)
    out = tk.Tensor("int32", (rows + 7) // 8 * 8, name="out", scope=tik.scope_ubuf)
    idx = tk.Scalar("uint16", "idx")
    idx32 = tk.Scalar("int32", "idx32")
    ntiles = (rows + per - 1) // per
    with tk.for_range(0, ntiles) as t:
        n = tk.Scalar("int32", "n")
        with tk.if_scope(t < ntiles - 1):
            n.set_as(per)
        with tk.else_scope():
            n.set_as(rows - (ntiles - 1) * per)
        tk.data_move(ub, x[t * per * cols], 0, 1, n * row_blocks, 0, 0)
        tk.vcmax(cols, res, ub, n, 1, 1, row_blocks)
        with tk.for_range(0, n) as r:
            idx.set_as(res[r * 2 + 1])
            idx32.set_as(idx)
            out[t * per + r].set_as(idx32)
    tk.data_move(y, out, 0, 1, (rows * 4 + 31) // 32, 0, 0)
    tk.BuildCCE(kernel_name, [x], [y])
    return tk


@pytest.mark.parametrize("rows", [1, 8, 13])
def test_argmax_reads_vcmax_index_bits(rows, rng):
    cols = 64
    x = rng.standard_normal((rows, cols)).astype(np.float16)
    x[:, 26] = 10.0    # the case issue 18 saw come back as index 0
    x[0, 3] = 11.0
    tk = argmax_rows(rows, cols)
    (out,) = tk.tikdb.start_debug({"x": x}, interactive=False)
    assert np.array_equal(out, np.argmax(x, axis=1).astype(np.int32))
