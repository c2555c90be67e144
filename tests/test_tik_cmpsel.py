"""TIK compare/select (vcmp_*, vcmpv_*, vec_cmpv_*, vcmpvs_*, vsel, vec_sel, CMPMASK moves)
against the lane-by-lane oracles in tests/reference.py, bit-exact.

Hypothesis draws masks (contiguous and bitwise), repeat counts, block and repeat strides
(including 0), start blocks and Scalar-valued (runtime) arguments; destinations start
with random contents so that untouched lanes / bytes are checked to be preserved.
float16 compares are swept over all 65536 codes.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa.tik import platform
from tik_helpers import random_values, run_program, same_bits

OPS = ["eq", "ne", "lt", "gt", "le", "ge"]
TARGETS = ["Ascend910", "Ascend910B", "Ascend310P"]
V200 = ["Ascend910B", "Ascend310P"]


def _values(rng, data, dtype, n):
    """Random codes (inf/NaN/subnormals) or, half the time, small integers so that equal
    operands are common."""
    if data.draw(st.booleans()):
        return rng.integers(-3, 4, n).astype(dtype)
    return random_values(rng, dtype, n)


@st.composite
def _mask(draw, par):
    if draw(st.booleans()):
        return draw(st.sampled_from([1, 7, 16, 33, par // 2, par]))
    lo = draw(st.integers(0, 2**64 - 1))
    hi = draw(st.integers(0, 2**64 - 1)) if par == 128 else 0
    return [hi, lo or 1]


def _dyn(tk, on):
    def f(v):
        return tk.Scalar("int64", "d", init_value=v) if on else v
    return f


def _mask_arg(d, mask, dynamic):
    """A [mask_h, mask_l] list as int64 Scalars (two's complement) or the immediates."""
    if not isinstance(mask, list):
        return d(mask)
    return [d(int(np.int64(np.uint64(v)))) if dynamic else v for v in mask]


@settings(max_examples=12, deadline=None)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@given(data=st.data())
def test_vcmpv(op, dtype, data):
    """vcmpv_* / vec_cmpv_* / vcmpvs_*: every lane of every repeat into the bit tensor."""
    form = data.draw(st.sampled_from(["vcmpv", "vec_cmpv", "vcmpvs"]))
    target = data.draw(st.sampled_from(V200 if form == "vcmpvs" else TARGETS))
    par = ref.tik_lanes_per_repeat(dtype)
    B = 32 // np.dtype(dtype).itemsize
    nrep = data.draw(st.integers(1, 4))
    nsrc = 1 if form == "vcmpvs" else 2
    blks = [1 if form == "vec_cmpv" else data.draw(st.integers(0, 3)) for _ in range(nsrc)]
    reps = [data.draw(st.sampled_from([0, 1, 2, 8, 9, 16])) for _ in range(nsrc)]
    starts = [data.draw(st.integers(0, 2)) * B for _ in range(nsrc)]
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    srcs = [_values(rng, data, dtype, ref.tik_extent(dtype, s, b, r, par, par, nrep) +
                    data.draw(st.integers(0, 9))) for s, b, r in zip(starts, blks, reps)]
    ddt = data.draw(st.sampled_from(["uint8", "uint16", "uint32", "uint64"]))
    des = np.dtype(ddt).itemsize
    dstart = data.draw(st.integers(0, 1)) * (32 // des)
    nb = dstart * des + nrep * par // 8 + data.draw(st.integers(0, 40))
    dst = rng.integers(0, 255, -(-nb // des) * des, dtype=np.uint8, endpoint=True).view(ddt)
    scalar = srcs[0][data.draw(st.integers(0, srcs[0].size - 1))] if form == "vcmpvs" else None
    if scalar is not None and not np.isfinite(scalar):
        scalar = np.dtype(dtype).type(1.0)
    dynamic = data.draw(st.booleans())

    def body(tk, ub):
        d = _dyn(tk, dynamic)
        dv = ub[0][d(dstart)]
        sv = [u[d(s)] for u, s in zip(ub[1:], starts)]
        if form == "vcmpv":
            getattr(tk, f"vcmpv_{op}")(dv, sv[0], sv[1], d(nrep), d(blks[0]), d(blks[1]),
                                       d(reps[0]), d(reps[1]))
        elif form == "vec_cmpv":
            getattr(tk, f"vec_cmpv_{op}")(dv, sv[0], sv[1], d(nrep), d(reps[0]), d(reps[1]))
        else:
            sc = tk.Scalar(dtype, "c", init_value=float(scalar)) if dynamic else float(scalar)
            getattr(tk, f"vcmpvs_{op}")(dv, sv[0], sc, d(nrep), d(blks[0]), d(reps[0]))

    got = run_program(target, [dst] + srcs, body, out_index="all")
    for a, b in zip(srcs, got[1:]):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), "source modified"
    bits = ref.tik_cmp_lanes(op, srcs[0], starts[0], srcs[1] if nsrc == 2 else None,
                             starts[1] if nsrc == 2 else 0, lanes=range(par), nrep=nrep,
                             blks=blks + [1], reps=reps + [0], scalar=scalar)
    want = dst.view(np.uint8).copy()
    fb = ref.tik_bits_to_bytes(bits)
    want[dstart * des:dstart * des + fb.size] = fb
    assert np.array_equal(got[0].view(np.uint8), want), (
        f"{form}_{op} {dtype} {target} nrep={nrep} blks={blks} reps={reps} starts={starts}")


@pytest.mark.parametrize("op", OPS)
def test_vcmpv_float16_every_code(op):
    """Every float16 code against a permutation of every code, and against itself."""
    codes = np.arange(65536, dtype=np.uint32).astype(np.uint16)
    a = codes.view(np.float16)
    b = np.random.default_rng(1).permutation(codes).view(np.float16)
    n = 16384   # 128 repeats of 128 lanes per instruction
    for other in (b, a):
        dst = np.zeros(65536 // 8, np.uint8)

        def body(tk, ub):
            for k in range(4):
                getattr(tk, f"vec_cmpv_{op}")(ub[0][k * n // 8], ub[1][k * n], ub[2][k * n],
                                              128, 8, 8)
        got = run_program("Ascend910", [dst, a, other], body, ub_size=1 << 20)
        want = np.packbits(ref.tik_compare(op, a, other), bitorder="little")
        assert np.array_equal(got, want)


@settings(max_examples=15, deadline=None)
@pytest.mark.parametrize("op", OPS)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@given(data=st.data())
def test_vcmp_then_vsel_mode0(op, dtype, data):
    """mov_tensor_to_cmpmask (random initial CMPMASK), vcmp_* under a mask (inactive bits
    kept), mov_cmpmask_to_tensor, then vsel mode 0 (or vec_sel) by that CMPMASK."""
    target = data.draw(st.sampled_from(TARGETS + (["Ascend310"] if dtype == "float16"
                                                  else [])))
    par = ref.tik_lanes_per_repeat(dtype)
    B = 32 // np.dtype(dtype).itemsize
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    cmask = data.draw(_mask(par))
    cblks = [data.draw(st.integers(0, 3)) for _ in range(2)]
    cst = [data.draw(st.integers(0, 1)) * B for _ in range(2)]
    csrc = [_values(rng, data, dtype, ref.tik_extent(dtype, s, b, 0, par, cmask, 1) + 3)
            for s, b in zip(cst, cblks)]
    init = rng.integers(0, 2**63, 2, dtype=np.int64).view(np.uint64) ^ np.uint64(2**63)
    reg_out = np.zeros(4, np.uint64)
    # vsel geometry
    form = data.draw(st.sampled_from(["vsel", "vec_sel"]))
    smask = data.draw(_mask(par))
    nrep = data.draw(st.integers(1, 3))
    blks = [1, 1, 1] if form == "vec_sel" else [data.draw(st.integers(0, 3)) for _ in range(3)]
    reps = [data.draw(st.sampled_from([0, 2, 8, 9, 16])) for _ in range(3)]
    if nrep > 1 and reps[0] == 0 or blks[0] == 0:
        pass  # dst lanes written more than once: last lane/repeat wins, as the oracle
    sst = [data.draw(st.integers(0, 2)) * B for _ in range(3)]
    arrs = [random_values(rng, dtype, ref.tik_extent(dtype, s, b, r, par, smask, nrep) + 5)
            for s, b, r in zip(sst, blks, reps)]
    dynamic = data.draw(st.booleans())

    def body(tk, ub):
        d = _dyn(tk, dynamic)
        tk.mov_tensor_to_cmpmask(ub[1])
        m = _mask_arg(d, cmask, dynamic)
        cm = getattr(tk, f"vcmp_{op}")(m, ub[2][d(cst[0])], ub[3][d(cst[1])], d(cblks[0]),
                                       d(cblks[1]))
        tk.mov_cmpmask_to_tensor(ub[0], cm)
        sm = _mask_arg(d, smask, dynamic)
        dv, s0, s1 = (u[d(s)] for u, s in zip(ub[4:], sst))
        if form == "vsel":
            tk.vsel(sm, 0, dv, cm, s0, s1, d(nrep), *[d(b) for b in blks],
                    *[d(r) for r in reps])
        else:
            tk.vec_sel(sm, 0, dv, cm, s0, s1, d(nrep), *[d(r) for r in reps])

    got = run_program(target, [reg_out, init] + csrc + arrs, body, out_index="all")
    old = int(init[0]) | (int(init[1]) << 64)
    new = ref.tik_vcmp_register(old, op, csrc[0], cst[0], csrc[1], cst[1], mask=cmask,
                                blks=cblks)
    assert int(got[0][0]) | (int(got[0][1]) << 64) == new
    assert np.array_equal(got[0][2:], reg_out[2:])
    want = ref.tik_vsel(arrs[0], sst[0], arrs[1], sst[1], arrs[2], sst[2],
                        sel_bits=lambda r: new, mask=smask, nrep=nrep, blks=blks, reps=reps)
    assert same_bits(got[4], want), f"{form} mask={smask} nrep={nrep} blks={blks} reps={reps}"


@settings(max_examples=25, deadline=None)
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@given(data=st.data())
def test_vsel_modes_1_2(dtype, data):
    """vsel modes 1 (scalar src1) and 2 (tensor src1) by a sel bit tensor; afterwards
    CMPMASK bits 0..63 hold the scalar's bits (mode 1) or the sel address (mode 2)."""
    target = data.draw(st.sampled_from(V200))
    mode = data.draw(st.sampled_from([1, 2]))
    form = data.draw(st.sampled_from(["vsel", "vec_sel"]))
    par = ref.tik_lanes_per_repeat(dtype)
    B = 32 // np.dtype(dtype).itemsize
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    mask = data.draw(_mask(par))
    nrep = data.draw(st.integers(1, 4))
    nops = 3 if mode == 2 else 2
    blks = [1] * 3 if form == "vec_sel" else [data.draw(st.integers(0, 3)) for _ in range(3)]
    reps = [data.draw(st.sampled_from([0, 2, 8, 9, 16])) for _ in range(3)]
    sst = [data.draw(st.integers(0, 2)) * B for _ in range(3)]
    arrs = [random_values(rng, dtype, ref.tik_extent(dtype, s, b, r, par, mask, nrep) + 5)
            for s, b, r in zip(sst[:nops], blks, reps)]
    sdt = data.draw(st.sampled_from(["uint8", "uint16", "uint32", "uint64"]))
    ses = np.dtype(sdt).itemsize
    sel_start = data.draw(st.integers(0, 1)) * (32 // ses)
    sel = rng.integers(0, 255, sel_start * ses + nrep * par // 8 + 32, dtype=np.uint8,
                       endpoint=True)
    sel = sel[:sel.size // ses * ses].view(sdt)
    scalar = float(random_values(rng, dtype, 1, special=False)[0])
    reg_out = np.zeros(2, np.uint64)
    dynamic = data.draw(st.booleans())
    addr = {}

    def body(tk, ub):
        d = _dyn(tk, dynamic)
        dv, s0 = ub[2][d(sst[0])], ub[3][d(sst[1])]
        s1 = ub[4][d(sst[2])] if mode == 2 else (
            tk.Scalar(dtype, "c", init_value=scalar) if dynamic else scalar)
        sv = ub[1][d(sel_start)]
        addr["sel"] = ub[1].byte_off + sel_start * ses
        m = _mask_arg(d, mask, dynamic)
        if form == "vsel":
            tk.vsel(m, mode, dv, sv, s0, s1, d(nrep), *[d(b) for b in blks],
                    *[d(r) for r in reps])
        else:
            tk.vec_sel(m, mode, dv, sv, s0, s1, d(nrep), *[d(r) for r in reps])
        tk.mov_cmpmask_to_tensor(ub[0], tk._cmpmask)

    got = run_program(target, [reg_out, sel] + arrs, body, out_index="all")
    sbytes = sel.view(np.uint8)[sel_start * ses:]

    def sel_bits(r):
        return int.from_bytes(sbytes[r * par // 8:(r + 1) * par // 8].tobytes(), "little")
    sc = np.dtype(dtype).type(scalar)
    want = ref.tik_vsel(arrs[0], sst[0], arrs[1], sst[1], arrs[2] if mode == 2 else None,
                        sst[2], sel_bits=sel_bits, mask=mask, nrep=nrep, blks=blks, reps=reps,
                        scalar=None if mode == 2 else sc)
    assert same_bits(got[2], want), f"mode {mode} mask={mask} nrep={nrep} blks={blks}"
    ut = {2: np.uint16, 4: np.uint32}[np.dtype(dtype).itemsize]
    low = int(np.array([sc]).astype(dtype).view(ut)[0]) if mode == 1 else addr["sel"]
    assert int(got[0][0]) == low and int(got[0][1]) == 0


def test_vsel_in_place():
    """dst == src0 (same start and strides) reads each lane before writing it."""
    a = np.arange(256, dtype=np.float16)
    b = -np.arange(256, dtype=np.float16)
    sel = np.frombuffer(bytes([0b10101010] * 32), dtype=np.uint8).copy()

    def body(tk, ub):
        tk.mov_tensor_to_cmpmask(ub[2])
        tk.vsel(128, 0, ub[0], tk._cmpmask, ub[0], ub[1], 2, 1, 1, 1, 8, 8, 8)
    got = run_program("Ascend910", [a, b, sel], body)
    bit = np.tile(np.arange(128) % 2 == 1, 2)
    assert same_bits(got, np.where(bit, a, b))


def test_vsel_mode0_repeats_use_same_cmpmask_and_nan_bits():
    """Mode 0 applies CMPMASK to every repeat; NaN payloads are copied bit for bit."""
    a = np.full(192, np.nan, np.float32)
    a.view(np.uint32)[:] = 0x7FC01234
    b = np.arange(192, dtype=np.float32)
    reg = np.array([0xF0F0F0F0F0F0F0F0, 0], np.uint64)

    def body(tk, ub):
        cm = tk.mov_tensor_to_cmpmask(ub[2])
        tk.vsel(64, 0, ub[1], cm, ub[0], ub[1], 3, 1, 1, 1, 8, 8, 8)
    got = run_program("Ascend910", [a, b, reg], body, out_index=1)
    bit = np.tile([(0xF0F0F0F0F0F0F0F0 >> i) & 1 for i in range(64)], 3).astype(bool)
    assert np.array_equal(got.view(np.uint32), np.where(bit, a.view(np.uint32),
                                                        b.view(np.uint32)))


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_vec_sel_mode0_sel_tensor(dtype):
    """vec_sel mode 0 with a sel tensor (how public operators call it after vec_cmpv_*):
    every repeat selects by the tensor's first PAR bits."""
    par = ref.tik_lanes_per_repeat(dtype)
    rng = np.random.default_rng(4)
    a, b = (random_values(rng, dtype, 3 * par) for _ in range(2))
    d = random_values(rng, dtype, 3 * par)
    sel = rng.integers(0, 256, 32, dtype=np.uint8)

    def body(tk, ub):
        tk.vec_sel(par, 0, ub[0], ub[3].reinterpret_cast_to("uint16"), ub[1], ub[2], 3, 8, 8,
                   8)
    got = run_program("Ascend910", [d, a, b, sel], body)
    bits = int.from_bytes(sel[:par // 8].tobytes(), "little")
    want = ref.tik_vsel(d, 0, a, 0, b, 0, sel_bits=lambda r: bits, mask=par, nrep=3,
                        blks=[1, 1, 1], reps=[8, 8, 8])
    assert same_bits(got, want)
