"""Every TIK vector instruction against the per-lane oracle (tests/reference.py), bit-exact.

Hypothesis draws masks (contiguous, bitwise, counter), repeat counts, block and repeat
strides (including 0) and start blocks; the destination starts with random contents so
that masked-off lanes are checked to be preserved.  Float16 instructions are also swept
over all 65536 codes.
"""
from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa.tik import platform
from tik_helpers import random_values, run_program, same_bits

TARGETS = ["Ascend910", "Ascend910B", "Ascend310P"]

VS = ["vadds", "vmuls", "vmaxs", "vmins", "vaxpy"]
UN = ["vabs", "vexp", "vln", "vrec", "vrelu", "vrsqrt", "vsqrt", "vnot"]
BIN = ["vadd", "vsub", "vmul", "vdiv", "vmax", "vmin", "vand", "vor"]
DTYPES = ["float16", "float32", "int16", "int32", "uint16", "uint32"]


def _cases(names, extra=()):
    out = []
    for n in names:
        for d in DTYPES:
            tg = [t for t in TARGETS if platform.TARGETS[t].supports(n, d)]
            if tg:
                out.append((n, d, d, tg))
    return out + list(extra)


VS_CASES = _cases(VS, [("vaxpy", "float32", "float16", TARGETS)])
UN_CASES = _cases(UN)
BIN_CASES = _cases(BIN)
DUP_CASES = _cases(["vector_dup"])
CONV_CASES = [("vconv", d, s, TARGETS) for (s, d) in [
    ("float16", "float32"), ("float32", "float16"), ("float16", "int32"),
    ("float32", "int32"), ("int32", "float32"), ("int32", "float16"), ("float16", "int8"),
    ("float16", "uint8"), ("int8", "float16"), ("uint8", "float16")]]
CONV_MODES = {("float16", "float32"): [""], ("float32", "float16"): ["", "none", "odd"],
              ("int32", "float32"): [""], ("int32", "float16"): [""],
              ("int8", "float16"): [""], ("uint8", "float16"): [""]}
INT_MODES = ["round", "floor", "ceil", "away-zero", "to-zero"]


def _ident(c):
    return f"{c[0]}-{c[2]}->{c[1]}"


@st.composite
def geometry(draw, par, nops, family, counter_ok):
    """mask spec, nrep, block strides, rep strides, start blocks for nops operands."""
    kind = draw(st.sampled_from(["contig", "bits", "counter"] if counter_ok
                                else ["contig", "bits"]))
    if kind == "contig":
        mask, counter = draw(st.sampled_from([1, 16, 100 % par or par, par, 7])), None
        mask = min(mask, par)
    elif kind == "bits":
        lo = draw(st.integers(0, 2**64 - 1))
        hi = draw(st.integers(0, 2**64 - 1)) if par == 128 else 0
        if lo == 0 and hi == 0:
            lo = 1
        mask, counter = [hi, lo], None
    else:
        mask, counter = None, draw(st.integers(1, 3 * par + 5))
    nrep = draw(st.integers(1, 4))
    bmax = 2 if family == "vec" else 3
    blks = [draw(st.integers(0, bmax)) if family != "vec" else 1 for _ in range(nops)]
    reps = [draw(st.sampled_from([0, 1, 2, 3, 4, 8, 9, 12])) for _ in range(nops)]
    starts = [draw(st.integers(0, 2)) for _ in range(nops)]
    return mask, counter, nrep, blks, reps, starts


def _check(name, family, dst_dt, src_dts, target, geo, data, scalar=None, round_mode="",
           stride_unit=None):
    """stride_unit None: the legacy call leaves it at its default; else it is passed and
    the oracle walks the addresses of the unit the target uses (0 on Ascend 310/910)."""
    mask, counter, nrep, blks, reps, sblocks = geo
    tg = platform.TARGETS[target]
    par = ref.tik_lanes_per_repeat(dst_dt, *src_dts)
    dts = [dst_dt] + list(src_dts)
    starts = [k * (32 // np.dtype(d).itemsize) for k, d in zip(sblocks, dts)]
    su = 0 if stride_unit is None or tg.family == "v100" else stride_unit
    sukw = {} if stride_unit is None else {"stride_unit": stride_unit}
    sizes = []
    for d, s, b, r in zip(dts, starts, blks, reps):
        ext = ref.tik_extent(d, s, b, r, par, mask if mask is not None else par, nrep, counter,
                             su)
        sizes.append(ext + data.draw(st.integers(0, 20)))
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    arrays = [random_values(rng, d, n) for d, n in zip(dts, sizes)]
    m = counter if counter is not None else mask
    mode = "counter" if counter is not None else "normal"
    # half of the examples pass mask, repeat count, strides and start elements as runtime
    # Scalars (validated and resolved when the program runs, not when it is recorded)
    dynamic = data.draw(st.booleans())
    scalar_arg = scalar

    def body(tk, ub):
        nonlocal m, scalar_arg
        if dynamic:
            def dyn(v):
                return tk.Scalar("int64", "d", init_value=v)
            if isinstance(m, list):
                m = [dyn(m[0] - 2**64 if m[0] >= 2**63 else m[0]),
                     dyn(m[1] - 2**64 if m[1] >= 2**63 else m[1])]
            else:
                m = dyn(m)
            nrep_, blks_, reps_ = dyn(nrep), [dyn(b) for b in blks], [dyn(r) for r in reps]
            d = ub[0][dyn(starts[0])]
            srcs = [u[dyn(s)] for u, s in zip(ub[1:], starts[1:])]
            if scalar is not None:
                sdt = dst_dt if family == "dup" else src_dts[0]
                scalar_arg = tk.Scalar(sdt, "c", init_value=scalar)
        else:
            nrep_, blks_, reps_ = nrep, blks, reps
            d = ub[0][starts[0]]
            srcs = [u[s] for u, s in zip(ub[1:], starts[1:])]
        _call(tk, d, srcs, nrep_, blks_, reps_)

    def _call(tk, d, srcs, nrep, blks, reps):
        if name.startswith("vec_"):   # the vec_ forms: block strides fixed to 1
            f = getattr(tk, name)
            if family == "vs":
                kw = {} if name == "vec_axpy" else {"mask_mode": mode}
                f(m, d, srcs[0], scalar_arg, nrep, reps[0], reps[1], **kw)
            elif family in ("un", "bin"):
                f(m, d, *srcs, nrep, *reps)
            elif family == "dup":
                f(m, d, scalar_arg, nrep, reps[0])
            else:
                f(m, round_mode, d, srcs[0], nrep, reps[0], reps[1])
        elif family == "vs":
            kw = {} if name == "vaxpy" else {"mask_mode": mode}
            getattr(tk, name)(m, d, srcs[0], scalar_arg, nrep, blks[0], blks[1], reps[0],
                              reps[1], **kw, **sukw)
        elif family == "un":
            getattr(tk, name)(m, d, srcs[0], nrep, blks[0], blks[1], reps[0], reps[1], **sukw)
        elif family == "bin":
            getattr(tk, name)(m, d, srcs[0], srcs[1], nrep, *blks, *reps, **sukw)
        elif family == "dup":
            tk.vector_dup(m, d, scalar_arg, nrep, blks[0], reps[0], **sukw)
        else:
            tk.vconv(m, round_mode, d, srcs[0], nrep, blks[0], blks[1], reps[0], reps[1],
                     **sukw)

    everything = run_program(target, arrays, body, out_index="all")
    got = everything[0]
    # sources (the UB tensors right after dst) are never modified: nothing is written
    # outside dst's active lanes
    for k, (a, b) in enumerate(zip(arrays[1:], everything[1:])):
        assert np.array_equal(a.view(np.uint8), b.view(np.uint8)), f"src {k} modified"
    sc = None
    if scalar is not None:
        sdt = dst_dt if family == "dup" else src_dts[0]
        with np.errstate(over="ignore"):
            sc = np.array(scalar).astype(np.float64).astype(sdt) if np.dtype(sdt).kind == "f" \
                else np.array(int(scalar)).astype(np.int64).astype(sdt)
    want = ref.tik_vector(name, arrays[0], starts[0], arrays[1:], starts[1:], scalar=sc,
                          mask=mask, nrep=nrep, counter=counter, blks=blks, reps=reps,
                          sat=tg.saturation, round_mode=round_mode, stride_unit=su)
    assert same_bits(got, want), (
        f"{name} {dts} {target} stride_unit={stride_unit} mask={mask} counter={counter} "
        f"nrep={nrep} blks={blks} "
        f"reps={reps} starts={starts}\n got={got}\nwant={want}")


def _scalar(data, dt):
    if np.dtype(dt).kind == "f":
        return data.draw(st.sampled_from([2.0, -0.5, 1.0009765625, 3.14159, 1e-3, 70000.0,
                                          -1e30, 0.0]))
    return data.draw(st.sampled_from([2, -7, 0, 3, 40000, -70000]))


@settings(max_examples=15, deadline=None)
@pytest.mark.parametrize("case", VS_CASES, ids=_ident)
@given(data=st.data())
def test_vector_scalar(case, data):
    name, dst, src, targets = case
    target = data.draw(st.sampled_from(targets))
    par = ref.tik_lanes_per_repeat(dst, src)
    counter_ok = platform.TARGETS[target].counter_mode and name != "vaxpy"
    geo = data.draw(geometry(par, 2, "legacy", counter_ok))
    if name == "vaxpy" and geo[3][0] == 0:
        geo[3][0] = 1  # dst blk stride 0 with axpy: NotImplementedError (test_tik_errors)
    _check(name, "vs", dst, [src], target, geo, data, scalar=_scalar(data, src))


@settings(max_examples=12, deadline=None)
@pytest.mark.parametrize("case", UN_CASES, ids=_ident)
@given(data=st.data())
def test_single_source(case, data):
    name, dst, src, targets = case
    target = data.draw(st.sampled_from(targets))
    geo = data.draw(geometry(ref.tik_lanes_per_repeat(dst), 2, "legacy", False))
    _check(name, "un", dst, [src], target, geo, data)


@settings(max_examples=12, deadline=None)
@pytest.mark.parametrize("case", BIN_CASES, ids=_ident)
@given(data=st.data())
def test_two_tensor(case, data):
    name, dst, src, targets = case
    target = data.draw(st.sampled_from(targets))
    geo = data.draw(geometry(ref.tik_lanes_per_repeat(dst), 3, "legacy", False))
    _check(name, "bin", dst, [src, src], target, geo, data)


@settings(max_examples=12, deadline=None)
@pytest.mark.parametrize("case", DUP_CASES, ids=_ident)
@given(data=st.data())
def test_dup(case, data):
    name, dst, _, targets = case
    target = data.draw(st.sampled_from(targets))
    geo = data.draw(geometry(ref.tik_lanes_per_repeat(dst), 1, "legacy", False))
    _check(name, "dup", dst, [], target, geo, data, scalar=_scalar(data, dst))


@settings(max_examples=10, deadline=None)
@pytest.mark.parametrize("case", CONV_CASES, ids=_ident)
@given(data=st.data())
def test_conv(case, data):
    name, dst, src, targets = case
    target = data.draw(st.sampled_from(targets))
    mode = data.draw(st.sampled_from(CONV_MODES.get((src, dst), INT_MODES + (
        ["", "none"] if dst in ("int8", "uint8") else []))))
    geo = data.draw(geometry(ref.tik_lanes_per_repeat(dst, src), 2, "legacy", False))
    _check(name, "conv", dst, [src], target, geo, data, round_mode=mode)


VEC_FORMS = ([("vec_" + n[1:], "un", 2) for n in UN] + [("vec_" + n[1:], "bin", 3) for n in BIN]
             + [("vec_adds", "vs", 2), ("vec_muls", "vs", 2), ("vec_axpy", "vs", 2),
                ("vec_dup", "dup", 1), ("vec_conv", "conv", 2)])


@settings(max_examples=8, deadline=None)
@pytest.mark.parametrize("name,family,nops", VEC_FORMS, ids=[c[0] for c in VEC_FORMS])
@given(data=st.data())
def test_vec_forms(name, family, nops, data):
    """Every vec_ form (block strides fixed to 1) against the oracle, over the dtypes its
    legacy twin supports."""
    legacy = "vector_dup" if name == "vec_dup" else "v" + name[4:]
    if family == "conv":
        dst, src, target = "float32", "float16", data.draw(st.sampled_from(TARGETS))
    else:
        cases = [c for c in _cases([legacy]) if c[0] == legacy]
        _, dst, src, targets = data.draw(st.sampled_from(cases))
        target = data.draw(st.sampled_from(targets))
    par = ref.tik_lanes_per_repeat(dst, src)
    counter_ok = platform.TARGETS[target].counter_mode and family == "vs" and name != "vec_axpy"
    geo = data.draw(geometry(par, nops, "vec", counter_ok))
    scalar = _scalar(data, src) if family in ("vs", "dup") else None
    _check(name, family, dst, [src] * (nops - 1), target, geo, data, scalar=scalar)


STRIDE_UNIT_CASES = [("vadds", "vs", 2), ("vaxpy", "vs", 2), ("vmuls", "vs", 2),
                     ("vabs", "un", 2), ("vexp", "un", 2), ("vadd", "bin", 3),
                     ("vmax", "bin", 3), ("vector_dup", "dup", 1), ("vconv", "conv", 2)]


@settings(max_examples=12, deadline=None)
@pytest.mark.parametrize("name,family,nops", STRIDE_UNIT_CASES, ids=[c[0] for c in
                                                                       STRIDE_UNIT_CASES])
@given(data=st.data())
def test_stride_unit(name, family, nops, data):
    """Legacy forms with stride_unit 0 or 1 (rep stride = gap in blocks after a repeat's
    last block) on targets that have the field; on Ascend910 any value is ignored."""
    target = data.draw(st.sampled_from(TARGETS))
    su = data.draw(st.sampled_from([0, 1, 1] + ([2, 3, 7] if target == "Ascend910" else [])))
    dst = src = "float16"
    if name == "vaxpy":
        dst = data.draw(st.sampled_from(["float16", "float32"]))
    if name == "vconv":
        dst = "float32"
    par = ref.tik_lanes_per_repeat(dst, src)
    geo = data.draw(geometry(par, nops, "legacy", False))
    if name == "vaxpy" and geo[3][0] == 0:
        geo[3][0] = 1
    srcs = [src] * (nops - 1)
    scalar = _scalar(data, src) if family in ("vs", "dup") else None
    _check(name, family, dst, srcs, target, geo, data, scalar=scalar, stride_unit=su)


# ---- every float16 code ---------------------------------------------------------------

ALL_F16 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.float16)


def _sweep(target, name, arrays, call, want):
    got = run_program(target, arrays, call, ub_size=1 << 20)  # the sweeps need > 256 KiB
    assert same_bits(got, want), name


@pytest.mark.parametrize("target", ["Ascend310P", "Ascend910B"])
@pytest.mark.parametrize("name", ["vec_adds", "vec_muls", "vmaxs", "vmins", "vec_axpy"])
def test_every_f16_code_vector_scalar(target, name):
    sat = platform.TARGETS[target].saturation
    rng = np.random.default_rng(1)
    dst0 = random_values(rng, "float16", 65536)
    for s in (2.0, -0.3330078125, 1000.0):
        def call(tk, ub, s=s):
            if name == "vec_axpy":
                # 65536 lanes = 2 instructions of 256 repeats of 128: use a loop
                with tk.for_range(0, 2) as i:
                    tk.vec_axpy(128, ub[0][i * 32768], ub[1][i * 32768], s, 255, 8, 8)
                    tk.vec_axpy(128, ub[0][i * 32768 + 32640], ub[1][i * 32768 + 32640], s,
                                1, 8, 8)
            elif name.startswith("vec_"):
                getattr(tk, name)(65536, ub[0], ub[1], s, 1, 8, 8, mask_mode="counter")
            else:
                getattr(tk, name)(65536, ub[0], ub[1], s, 1, 1, 1, 8, 8, mask_mode="counter")
        want = ref.tik_vector(name, dst0, 0, [ALL_F16], [0], scalar=np.float16(s),
                              counter=65536, reps=[8, 8], sat=sat)
        _sweep(target, name, [dst0, ALL_F16], call, want)


@pytest.mark.parametrize("target", ["Ascend310P", "Ascend910B"])
@pytest.mark.parametrize("name", ["vabs", "vexp", "vln", "vrec", "vrelu", "vrsqrt", "vsqrt"])
def test_every_f16_code_single_source(target, name):
    sat = platform.TARGETS[target].saturation
    dst0 = np.zeros(65536, np.float16)

    def call(tk, ub):
        with tk.for_range(0, 512) as r:
            getattr(tk, name)(128, ub[0][r * 128], ub[1][r * 128], 1, 1, 1, 8, 8)
    want = ref.tik_vector(name, dst0, 0, [ALL_F16], [0], counter=65536, reps=[8, 8], sat=sat)
    _sweep(target, name, [dst0, ALL_F16], call, want)


@pytest.mark.parametrize("target", ["Ascend310P", "Ascend910B"])
@pytest.mark.parametrize("name", ["vadd", "vsub", "vmul", "vdiv", "vmax", "vmin"])
def test_every_f16_code_two_tensor(target, name):
    sat = platform.TARGETS[target].saturation
    rng = np.random.default_rng(2)
    other = rng.permutation(ALL_F16.view(np.uint16)).view(np.float16)
    dst0 = np.zeros(65536, np.float16)

    def call(tk, ub):
        with tk.for_range(0, 256) as r:
            getattr(tk, name)(128, ub[0][r * 256], ub[1][r * 256], ub[2][r * 256], 2,
                              1, 1, 1, 8, 8, 8)
    want = ref.tik_vector(name, dst0, 0, [ALL_F16, other], [0, 0], counter=65536,
                          reps=[8, 8, 8], sat=sat)
    _sweep(target, name, [dst0, ALL_F16, other], call, want)


@pytest.mark.parametrize("dst,modes", [("float32", [""]), ("int32", INT_MODES),
                                       ("int8", ["none"] + INT_MODES),
                                       ("uint8", ["none"] + INT_MODES)])
def test_every_f16_code_conv(dst, modes):
    for mode in modes:
        d0 = np.zeros(65536, dst)
        par = ref.tik_lanes_per_repeat(dst, "float16")
        srep = par * 2 // 32
        drep = par * np.dtype(dst).itemsize // 32

        def call(tk, ub, mode=mode):
            with tk.for_range(0, 65536 // par // 128) as r:
                tk.vec_conv(par, mode, ub[0][r * par * 128], ub[1][r * par * 128], 128,
                            drep, srep)
        want = ref.tik_vector("vec_conv", d0, 0, [ALL_F16], [0], counter=65536,
                              reps=[drep, srep], round_mode=mode)
        _sweep("Ascend910B", f"conv {dst} {mode}", [d0, ALL_F16], call, want)


ALL_I16 = np.arange(65536, dtype=np.uint32).astype(np.uint16).view(np.int16)


@pytest.mark.parametrize("name", ["vadds", "vmuls", "vmaxs", "vmins"])
def test_every_int16_code_vector_scalar(name):
    dst0 = np.zeros(65536, np.int16)
    for s in (3, -32768, 32767):
        def call(tk, ub, s=s):
            getattr(tk, name)(65536, ub[0], ub[1], s, 1, 1, 1, 8, 8, mask_mode="counter")
        want = ref.tik_vector(name, dst0, 0, [ALL_I16], [0], scalar=np.int16(s),
                              counter=65536, reps=[8, 8])
        _sweep("Ascend310P", f"{name} {s}", [dst0, ALL_I16], call, want)


@pytest.mark.parametrize("name", ["vadd", "vmul", "vmax", "vand", "vor", "vnot"])
def test_every_16bit_integer_code_two_tensor(name):
    dt = np.uint16 if name in ("vand", "vor", "vnot") else np.int16
    a = ALL_I16.view(np.uint16).astype(dt)
    b = np.random.default_rng(3).permutation(a)
    dst0 = np.zeros(65536, dt)

    def call(tk, ub):
        with tk.for_range(0, 256) as r:
            if name == "vnot":
                tk.vnot(128, ub[0][r * 256], ub[1][r * 256], 2, 1, 1, 8, 8)
            else:
                getattr(tk, name)(128, ub[0][r * 256], ub[1][r * 256], ub[2][r * 256], 2,
                                  1, 1, 1, 8, 8, 8)
    srcs = [a] if name == "vnot" else [a, b]
    want = ref.tik_vector(name, dst0, 0, srcs, [0] * len(srcs), counter=65536,
                          reps=[8] * (1 + len(srcs)))
    _sweep("Ascend310P", name, [dst0] + srcs, call, want)


@pytest.mark.parametrize("src", ["int8", "uint8"])
def test_every_8bit_code_conv_to_f16(src):
    a = np.arange(256, dtype=np.uint16).astype(np.uint8).view(src)
    dst0 = np.zeros(256, np.float16)

    def call(tk, ub):
        tk.vec_conv(128, "", ub[0], ub[1], 2, 8, 4)
    want = ref.tik_vector("vec_conv", dst0, 0, [a], [0], mask=128, nrep=2, reps=[8, 4])
    _sweep("Ascend910", src, [dst0, a], call, want)
    assert np.array_equal(want, a.astype(np.float16))
