"""vconcat / vextract, the scalar intrinsics, set_atomic_add (data_move to GM accumulates)
and the overflow status word, against tests/reference.py, bit-exact; with their
documented constraints as error tests."""
from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import tik
from fastisa.errors import AccessError, AlignmentError, ConstraintError
from fastisa.tik import platform
from tik_helpers import random_values, run_program, same_bits


@settings(max_examples=20, deadline=None)
@pytest.mark.parametrize("name", ["vconcat", "vextract"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@given(data=st.data())
def test_field_moves(name, dtype, data):
    target = data.draw(st.sampled_from(["Ascend910B", "Ascend310P"] if dtype == "float32"
                                       else ["Ascend910", "Ascend910B"]))
    nrep = data.draw(st.integers(1, 4))
    mode = data.draw(st.integers(0, 5))
    B = 32 // np.dtype(dtype).itemsize
    ds, ss = (data.draw(st.integers(0, 2)) * B for _ in range(2))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    big, small = nrep * 128, nrep * 16
    dn, sn = (big, small) if name == "vconcat" else (small, big)
    dst = random_values(rng, dtype, ds + dn + data.draw(st.integers(0, 9)))
    src = random_values(rng, dtype, ss + sn + data.draw(st.integers(0, 9)))
    dynamic = data.draw(st.booleans())

    def body(tk, ub):
        d = (lambda v: tk.Scalar("int32", "d", init_value=v)) if dynamic else (lambda v: v)
        getattr(tk, name)(ub[0][d(ds)], ub[1][d(ss)], d(nrep), d(mode))

    got = run_program(target, [dst, src], body, out_index="all")
    f = ref.tik_vconcat if name == "vconcat" else ref.tik_vextract
    assert same_bits(got[0], f(dst, ds, src, ss, nrep, mode))
    assert same_bits(got[1], src)


def _scalar_program(target, record, dtype):
    """Run ``record(tk) -> Scalar`` and return the scalar's value (stored via a UB
    element and data_move)."""
    platform.set_target(target)
    try:
        tk = tik.Tik()
        gm = tk.Tensor(dtype, (32,), name="x", scope=tik.scope_gm)
        out = tk.Tensor(dtype, (32,), name="out", scope=tik.scope_gm)
        ub = tk.Tensor(dtype, (32,), name="ub")
        tk.data_move(ub, gm, 0, 1, 1, 0, 0)
        ub[0].set_as(record(tk))
        tk.data_move(out, ub, 0, 1, 1, 0, 0)
        tk.BuildCCE("k", [gm], [out])
        r = tk.tikdb.start_debug({"x": np.zeros(32, dtype)}, interactive=False)[0][0]
        return float(r) if np.dtype(dtype).kind == "f" else int(r)
    finally:
        platform.set_target("Ascend910")


INTS = [0, 1, -1, 7, -9, 2**40 + 3, -(2**62), 2**63 - 1, -(2**63)]
FLOATS = [0.0, -0.0, 1.5, -2.25, 3.0e38, 1e-40, float("inf"), -float("inf")]


@pytest.mark.parametrize("name", ["max", "min"])
@pytest.mark.parametrize("dtype,vals", [("int64", INTS), ("float32", FLOATS)])
def test_scalar_max_min(name, dtype, vals):
    rng = np.random.default_rng(0)
    for _ in range(6):
        a, b = (vals[i] for i in rng.integers(0, len(vals), 2))

        def rec(tk):
            d = tk.Scalar(dtype, "d")
            getattr(tk, f"scalar_{name}")(d, tk.Scalar(dtype, "a", init_value=a),
                                          tk.Scalar(dtype, "b", init_value=b))
            return d
        got = _scalar_program("Ascend910", rec, dtype if dtype != "int64" else "int64")
        want = ref.tik_scalar_op(name, ref_val(dtype, a), ref_val(dtype, b), dtype=dtype)
        assert got == want or (math.isnan(got) and math.isnan(want)), (a, b)


def ref_val(dtype, v):
    return float(np.float32(v)) if dtype == "float32" else v


@pytest.mark.parametrize("name", ["abs", "sqrt"])
@pytest.mark.parametrize("dtype", ["int64", "float32"])
def test_scalar_abs_sqrt(name, dtype):
    vals = INTS[:6] + [10, 2**52 + 1] if dtype == "int64" else FLOATS + [2.0, -10.0]
    for v in vals:
        def rec(tk):
            d = tk.Scalar(dtype, "d")
            getattr(tk, f"scalar_{name}")(d, tk.Scalar(dtype, "a", init_value=v))
            return d
        got = _scalar_program("Ascend910", rec, dtype)
        want = ref.tik_scalar_op(name, ref_val(dtype, v), dtype=dtype)
        assert np.array([got], dtype).view(np.uint8).tobytes() == \
            np.array([want], dtype).view(np.uint8).tobytes(), (name, v, got, want)


@pytest.mark.parametrize("name", ["countbit0", "countbit1", "countleading0"])
def test_scalar_bit_counts(name):
    for v in INTS + [2**33, 5]:
        def rec(tk):
            d = tk.Scalar("int64", "d")
            getattr(tk, f"scalar_{name}")(d, tk.Scalar("int64", "a", init_value=v))
            return d
        assert _scalar_program("Ascend910", rec, "int64") == ref.tik_scalar_op(name, v), v


CONV = [("int32", "float32", ""), ("float16", "float32", ""), ("float32", "float16", ""),
        ("float32", "float16", "odd")] + [("float32", "int32", m) for m in
                                          ("round", "floor", "ceil", "away-zero", "to-zero")]


@pytest.mark.parametrize("src,dst,mode", CONV)
def test_scalar_conv(src, dst, mode):
    rng = np.random.default_rng(5)
    if src == "int32":
        vals = [0, 1, -1, 2**24 + 1, 2**31 - 1, -2**31, 16777217, 123456789]
    else:
        vals = [0.5, 1.5, 2.5, -0.5, -1.5, 1.2, -1.8, 1e10, -1e10, 65519.0, 65520.0,
                1e-8, 3.3333333, float("nan"), float("inf")]
        vals += list((rng.standard_normal(10) * 100).astype(src).astype(float))
    for v in vals:
        with np.errstate(over="ignore"):
            v = float(np.array([v]).astype(src)[0]) if src != "int32" else v

        def rec(tk):
            d = tk.Scalar(dst, "d")
            tk.scalar_conv(mode, d, tk.Scalar(src, "a", init_value=v))
            return d
        got = _scalar_program("Ascend910", rec, dst)
        want = ref.tik_scalar_op("conv", v, dtype=dst, round_mode=mode)
        assert np.array([got], dst).tobytes() == np.array([want], dst).tobytes() or (
            math.isnan(got) and math.isnan(want)), (src, dst, mode, v, got, want)


@pytest.mark.parametrize("target,dtype,mode", [("Ascend910", "float32", 1),
                                               ("Ascend910B", "float32", 1),
                                               ("Ascend910B", "float16", 2)])
def test_atomic_add(target, dtype, mode):
    """data_move UB->GM sets GM; with set_atomic_add on, further moves add to it (also
    with bursts and gaps); after set_atomic_add(0) moves overwrite again."""
    rng = np.random.default_rng(2)
    n = 256
    a, b, c = (random_values(rng, dtype, n, special=False) for _ in range(3))
    platform.set_target(target)
    try:
        tk = tik.Tik()
        g = [tk.Tensor(dtype, (n,), name=f"g{k}", scope=tik.scope_gm) for k in range(3)]
        out = tk.Tensor(dtype, (n,), name="out", scope=tik.scope_gm)
        out2 = tk.Tensor(dtype, (n,), name="out2", scope=tik.scope_gm)
        u = [tk.Tensor(dtype, (n,), name=f"u{k}") for k in range(3)]
        nb = n * np.dtype(dtype).itemsize // 32
        for k in range(3):
            tk.data_move(u[k], g[k], 0, 1, nb, 0, 0)
        tk.data_move(out, u[0], 0, 1, nb, 0, 0)
        tk.data_move(out2, u[0], 0, 1, nb, 0, 0)
        m = tk.Scalar("uint64", "m", init_value=mode)
        tk.set_atomic_add(m)
        tk.data_move(out, u[1], 0, 1, nb, 0, 0)
        tk.data_move(out, u[2], 0, 2, nb // 4, nb // 4, nb // 4)   # every other quarter
        tk.set_atomic_add(0)
        tk.data_move(out2, u[1], 0, 1, nb, 0, 0)
        tk.BuildCCE("k", g, [out, out2])
        r, r2 = tk.tikdb.start_debug({f"g{k}": x for k, x in enumerate((a, b, c))},
                                     interactive=False)
    finally:
        platform.set_target("Ascend910")
    want = ref.tik_atomic_add(a, b, dtype)
    q = n // 4
    c2 = np.zeros(n, dtype)
    c2[:q], c2[2 * q:3 * q] = c[:q], c[2 * q:3 * q]
    want = np.where(np.isin(np.arange(n) // q, [0, 2]), ref.tik_atomic_add(want, c2, dtype),
                    want).astype(dtype)
    assert same_bits(r, want)
    assert same_bits(r2, b)


def test_overflow_status():
    def rec(tk):
        s = tk.Scalar("uint64", "s")
        tk.get_overflow_status(s)
        s2 = tk.Scalar("uint64", "s2")
        tk.set_overflow_status(1)
        tk.get_overflow_status(s2)
        return s * 2 + s2
    assert _scalar_program("Ascend910", lambda tk: _as_int(tk, rec(tk)), "int64") == 1


def _as_int(tk, e):
    d = tk.Scalar("int64", "r")
    d.set_as(e)
    return d


ERRORS = [
    ("vconcat repeat", "Ascend910", lambda tk, h: tk.vconcat(h["p"], h["a"], 0, 0),
     ConstraintError, "immediate 0 is not supported"),
    ("vconcat mode", "Ascend910", lambda tk, h: tk.vconcat(h["p"], h["a"], 1, 6),
     ConstraintError, "mode_number should be in the range of [0, 5]"),
    ("vconcat dtype", "Ascend910", lambda tk, h: tk.vconcat(h["p"], h["f"], 1, 0),
     ConstraintError, "dtype should be equal"),
    ("vconcat f32 v100", "Ascend910", lambda tk, h: tk.vconcat(h["f"], h["f"], 1, 0),
     ConstraintError, "not supported on Ascend910"),
    ("vconcat dst extent", "Ascend910", lambda tk, h: tk.vconcat(h["p"], h["a"], 5, 0),
     AccessError, "tensor overflow"),
    ("vextract src extent", "Ascend910", lambda tk, h: tk.vextract(h["a"], h["p"], 5, 0),
     AccessError, "tensor overflow"),
    ("vextract align", "Ascend910", lambda tk, h: tk.vextract(h["a"][1], h["p"], 1, 0),
     AlignmentError, "not 32 align"),
    ("vextract scope", "Ascend910", lambda tk, h: tk.vextract(h["gm"], h["p"], 1, 0),
     ConstraintError, "scope must be UB"),
    ("scalar_abs dtype", "Ascend910",
     lambda tk, h: tk.scalar_abs(tk.Scalar("int16"), tk.Scalar("int16")),
     ConstraintError, "dst dtype should be one of"),
    ("scalar_max mixed", "Ascend910",
     lambda tk, h: tk.scalar_max(tk.Scalar("int64"), tk.Scalar("float32"), 1),
     ConstraintError, "must be the same"),
    ("scalar_conv pair", "Ascend910",
     lambda tk, h: tk.scalar_conv("", tk.Scalar("int32"), tk.Scalar("float16")),
     ConstraintError, "is not supported"),
    ("scalar_conv mode", "Ascend910",
     lambda tk, h: tk.scalar_conv("odd", tk.Scalar("int32"), tk.Scalar("float32")),
     ConstraintError, "round_mode should be one of"),
    ("set_atomic_add mode v100", "Ascend910", lambda tk, h: tk.set_atomic_add(2),
     ConstraintError, "mode should be in the range of (0, 1)"),
    ("set_atomic_add 310", "Ascend310", lambda tk, h: tk.set_atomic_add(1),
     ConstraintError, "not supported on Ascend310"),
    ("set_atomic_add scalar dtype", "Ascend910",
     lambda tk, h: tk.set_atomic_add(tk.Scalar("int32")), ConstraintError,
     "scalar of uint64"),
    ("set_overflow_status value", "Ascend910", lambda tk, h: tk.set_overflow_status(2),
     ConstraintError, "value should be 0 or 1"),
    ("get_overflow_status target", "Ascend910B",
     lambda tk, h: tk.get_overflow_status(tk.Scalar("uint64")), ConstraintError,
     "doesn't support version"),
    ("get_overflow_status dtype", "Ascend910",
     lambda tk, h: tk.get_overflow_status(tk.Scalar("int64")), ConstraintError,
     "Scalar of uint64"),
]


@pytest.mark.parametrize("case", ERRORS, ids=[c[0] for c in ERRORS])
def test_errors(case):
    _, target, call, exc, msg = case
    platform.set_target(target)
    try:
        tk = tik.Tik()
        h = {"p": tk.Tensor("float16", (512,), name="p"), "a": tk.Tensor("float16", (64,),
                                                                           name="a"),
             "f": tk.Tensor("float32", (512,), name="f"),
             "gm": tk.Tensor("float16", (64,), name="gm", scope=tik.scope_gm)}
        with pytest.raises(exc) as e:
            call(tk, h)
        assert msg in str(e.value), str(e.value)
    finally:
        platform.set_target("Ascend910")


@settings(max_examples=15, deadline=None)
@pytest.mark.parametrize("name", ["vcgadd", "vcgmax", "vcgmin", "vcpadd"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@given(data=st.data())
def test_group_pair_reduce(name, dtype, data):
    """vcgadd/vcgmax/vcgmin/vcpadd over masks, repeats, strides, Scalar arguments and dst
    overlapping src (in place)."""
    target = data.draw(st.sampled_from(["Ascend910B", "Ascend310P"] if dtype == "float32"
                                       else ["Ascend910", "Ascend910B", "Ascend310P"]))
    op = {"vcgadd": "add", "vcgmax": "max", "vcgmin": "min", "vcpadd": "pair"}[name]
    par = ref.tik_lanes_per_repeat(dtype)
    B = 32 // np.dtype(dtype).itemsize
    if data.draw(st.booleans()):
        mask = data.draw(st.sampled_from([1, 3, 16, 17, par // 2, par]))
    else:
        lo = data.draw(st.integers(0, 2**64 - 1))
        hi = data.draw(st.integers(0, 2**64 - 1)) if par == 128 else 0
        mask = [hi, lo or 1]
    nrep = data.draw(st.integers(1, 4))
    drep = data.draw(st.integers(0, 3))
    blk, rep = data.draw(st.integers(0, 2)), data.draw(st.sampled_from([0, 1, 8, 9]))
    ss = data.draw(st.integers(0, 2)) * B
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    src = random_values(rng, dtype, ref.tik_extent(dtype, ss, blk, rep, par, mask, nrep) + 4)
    per = par // 2 if op == "pair" else 8
    dn = 3 + (nrep - 1) * drep * per + per
    dst = random_values(rng, dtype, dn)
    in_place = data.draw(st.booleans()) and src.size >= dn
    dynamic = data.draw(st.booleans())

    def body(tk, ub):
        d = (lambda v: tk.Scalar("int64", "d", init_value=v)) if dynamic else (lambda v: v)
        m = [d(int(np.int64(np.uint64(v)))) if dynamic else v for v in mask] \
            if isinstance(mask, list) else d(mask)
        dv = ub[1][d(3)] if in_place else ub[0][d(3)]
        getattr(tk, name)(m, dv, ub[1][d(ss)], d(nrep), d(drep), d(blk), d(rep))

    got = run_program(target, [dst, src], body, out_index="all")
    sat = platform.TARGETS[target].saturation
    if in_place:
        # repeat by repeat: each reads its lanes, then writes
        want = src.copy()
        for r in range(nrep):
            part = ref.tik_group_reduce(op, want, 3 + r * drep * per, want, ss + r * rep * B,
                                        mask=mask, nrep=1, dst_rep=0, blk=blk, rep=0, sat=sat)
            want = part
        assert same_bits(got[1], want)
    else:
        want = ref.tik_group_reduce(op, dst, 3, src, ss, mask=mask, nrep=nrep, dst_rep=drep,
                                    blk=blk, rep=rep, sat=sat)
        assert same_bits(got[0], want), f"{name} mask={mask} nrep={nrep} blk={blk} rep={rep}"
        assert same_bits(got[1], src)


@pytest.mark.parametrize("form", ["vconv", "vec_conv"])
@pytest.mark.parametrize("target", ["Ascend910", "Ascend910B"])
def test_vconv_deqscale_one(form, target):
    """int32 -> float16 with deqscale=1.0 (the deq mode as public operators call it) is
    the int32 value rounded once to float16 (saturating where the target saturates)."""
    rng = np.random.default_rng(8)
    src = np.concatenate([rng.integers(-2**31, 2**31 - 1, 120, dtype=np.int64),
                          [65504, 65519, 65520, 70000, -65520, 2049, 2051, 0]]
                         ).astype(np.int32)
    dst = random_values(rng, "float16", 128)

    def body(tk, ub):
        if form == "vconv":
            tk.vconv(64, "", ub[0], ub[1], 2, 1, 1, 4, 8, deqscale=1.0)
        else:
            tk.vec_conv(64, "", ub[0], ub[1], 2, 4, 8, deqscale=1.0)
    got = run_program(target, [dst, src], body)
    want = ref.tik_vector("vconv", dst, 0, [src], [0], mask=64, nrep=2, blks=[1, 1],
                          reps=[4, 8], sat=platform.TARGETS[target].saturation)
    assert same_bits(got, want)


def test_vconv_deqscale_rules():
    platform.set_target("Ascend910")
    try:
        tk = tik.Tik()
        i32 = tk.Tensor("int32", (64,), name="i")
        f16 = tk.Tensor("float16", (64,), name="h")
        f32 = tk.Tensor("float32", (64,), name="f")
        with pytest.raises(NotImplementedError, match="deqscale 0.5 is not implemented"):
            tk.vconv(64, "", f16, i32, 1, 1, 1, 4, 8, deqscale=0.5)
        with pytest.raises(NotImplementedError, match="Scalar deqscale"):
            tk.vconv(64, "", f16, i32, 1, 1, 1, 4, 8,
                     deqscale=tk.Scalar("float16", "s", init_value=1.0))
        with pytest.raises(ConstraintError, match="deqscale should be None for current conv"):
            tk.vconv(64, "", f32, f16, 1, 1, 1, 8, 4, deqscale=1.0)
        with pytest.raises(ConstraintError, match="deqscale should be None"):
            tk.vec_conv(64, "", f32, f16, 1, 8, 4, deqscale=1.0)
    finally:
        platform.set_target("Ascend910")


def test_tensor_mov_is_a_block_move():
    """tensor_mov(dst, src, '', nburst, burst_len, dst_stride, src_stride) moves like
    data_move(dst, src, 0, nburst, burst_len, src_stride, dst_stride)."""
    x = np.arange(256, dtype=np.float16)
    y = np.full(256, -1, np.float16)

    def body(tk, ub):
        tk.tensor_mov(ub[1], ub[0], "", 3, 2, 1, 2)
    got = run_program("Ascend910", [x, y], body, out_index=1)
    want = ref.tik_data_move(y, 0, x, 0, 3, 2, 2, 1)
    assert same_bits(got, want)
    platform.set_target("Ascend910")
    tk = tik.Tik()
    a = tk.Tensor("float16", (256,), name="a")
    with pytest.raises(NotImplementedError, match="block_mode 'm'"):
        tk.tensor_mov(a, a, "m", 1, 1, 0, 0)
    with pytest.raises(NotImplementedError, match="relu=True"):
        tk.tensor_mov(a, a, "", 1, 1, 0, 0, relu=True)
