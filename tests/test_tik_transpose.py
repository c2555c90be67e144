"""TIK transposes (vnchwconv, vec_trans_scatter, vtranspose, vec_trans) against the oracles
in tests/reference.py, bit-exact, over every dtype width, both high-half flags, repeat
counts, repeat strides, scattered block addresses and Scalar-valued arguments; plus the
error rules (tests/test_tik_isa_errors.py)."""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from tik_helpers import run_program

NCHW_DTYPES = ["int8", "uint8", "int16", "uint16", "float16", "int32", "uint32", "float32"]


def _dyn(tk, on):
    def f(v):
        return tk.Scalar("int64", "d", init_value=v) if on else v
    return f


@settings(max_examples=20, deadline=None)
@pytest.mark.parametrize("dtype", NCHW_DTYPES)
@given(data=st.data())
def test_vnchwconv(dtype, data):
    es = np.dtype(dtype).itemsize
    target = data.draw(st.sampled_from(["Ascend910B", "Ascend310P"] if es == 4 else
                                       ["Ascend910", "Ascend910B", "Ascend310P"]))
    name = data.draw(st.sampled_from(["vnchwconv", "vec_trans_scatter"]))
    nrep = data.draw(st.integers(1, 3))
    drep, srep = (data.draw(st.sampled_from([0, 1, 2, 16, 17])) for _ in range(2))
    dh, sh = data.draw(st.booleans()), data.draw(st.booleans())
    nblk = 20
    sblocks = data.draw(st.lists(st.integers(0, nblk - 1), min_size=16, max_size=16))
    dblocks = data.draw(st.permutations(range(nblk)))[:16]
    B = 32 // es
    shift = 1 if nrep == 1 else 0
    # tensors hold every block they are addressed at, over every repeat
    s_n = (nblk + (nrep - 1 + shift) * srep) * B + data.draw(st.integers(0, 3)) * B
    d_n = (nblk + (nrep - 1 + shift) * drep) * B
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = rng.integers(0, 255, s_n * es, dtype=np.uint8, endpoint=True).view(dtype)
    dst = rng.integers(0, 255, d_n * es, dtype=np.uint8, endpoint=True).view(dtype)
    dynamic = data.draw(st.booleans())

    def body(tk, ub):
        d = _dyn(tk, dynamic)
        getattr(tk, name)(dh, sh, [ub[0][d(b * B)] for b in dblocks],
                          [ub[1][d(b * B)] for b in sblocks], d(nrep), d(drep), d(srep))

    got = run_program(target, [dst, src], body, out_index="all")
    assert np.array_equal(got[1].view(np.uint8), src.view(np.uint8)), "src modified"
    ub = np.concatenate([dst.view(np.uint8), src.view(np.uint8)])
    off = dst.nbytes
    want = ref.tik_nchwconv(ub, [b * 32 for b in dblocks], [off + b * 32 for b in sblocks],
                            es, nrep, drep, srep, dh, sh)[:off]
    assert np.array_equal(got[0].view(np.uint8), want), (
        f"{name} {dtype} nrep={nrep} drep={drep} srep={srep} dh={dh} sh={sh}")


@pytest.mark.parametrize("dtype", ["int8", "float16", "float32"])
def test_vnchwconv_in_place(dtype):
    """dst_list == src_list (one repeat): every source block is read before any write."""
    es = np.dtype(dtype).itemsize
    x = np.random.default_rng(3).integers(0, 255, 512, dtype=np.uint8).view(dtype)
    B = 32 // es

    def body(tk, ub):
        lst = [ub[0][i * B] for i in range(16)]
        tk.vnchwconv(True, False, lst, lst, 1, 0, 0)
    got = run_program("Ascend910B", [x], body)
    want = ref.tik_nchwconv(x.view(np.uint8), [i * 32 for i in range(16)],
                            [i * 32 for i in range(16)], es, 1, 0, 0, True, False)
    assert np.array_equal(got.view(np.uint8), want)


def test_vnchwconv_float16_is_a_16x16_transpose():
    x = np.arange(256 * 3, dtype=np.uint16).view(np.float16)
    y = np.zeros_like(x)

    def body(tk, ub):
        tk.vnchwconv(False, False, [ub[1][16 * i] for i in range(16)],
                     [ub[0][16 * i] for i in range(16)], 3, 16, 16)
    got = run_program("Ascend910", [x, y], body, out_index=1)
    assert np.array_equal(got.view(np.uint16),
                          x.view(np.uint16).reshape(3, 16, 16).transpose(0, 2, 1).ravel())


@settings(max_examples=20, deadline=None)
@pytest.mark.parametrize("dtype", ["int16", "uint16", "float16"])
@given(data=st.data())
def test_vec_trans(dtype, data):
    form = data.draw(st.sampled_from(["vtranspose", "vec_trans", "in_place"]))
    nrep = 1 if form == "vtranspose" else data.draw(st.integers(1, 3))
    drep, srep = (1, 1) if form == "vtranspose" else \
        (data.draw(st.integers(0 if nrep == 1 else 1, 3)) for _ in range(2))
    if form == "in_place":
        srep = drep
    ds, ss = (data.draw(st.integers(0, 3)) * 16 for _ in range(2))
    if form == "in_place":
        ss = ds
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    n = 64 + ((nrep - 1) * max(drep, srep) + 1) * 256
    src = rng.integers(0, 65535, n, dtype=np.uint16).view(dtype)
    dst = rng.integers(0, 65535, n, dtype=np.uint16).view(dtype)
    dynamic = data.draw(st.booleans())

    def body(tk, ub):
        d = _dyn(tk, dynamic)
        s = ub[0 if form == "in_place" else 1][d(ss)]
        if form == "vtranspose":
            tk.vtranspose(ub[0][d(ds)], s)
        else:
            tk.vec_trans(ub[0][d(ds)], s, d(nrep), d(drep), d(srep))

    got = run_program("Ascend910", [dst, src], body, out_index="all")
    srca = dst if form == "in_place" else src
    want = ref.tik_transpose16(dst, ds, srca if form != "in_place" else dst, ss, nrep, drep,
                               srep)
    assert np.array_equal(got[0].view(np.uint16), want.view(np.uint16))
    assert np.array_equal(got[1].view(np.uint16), src.view(np.uint16))
