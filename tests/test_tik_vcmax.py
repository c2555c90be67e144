"""vcmax / vcmin: per-repeat [value, lane index] pairs, bit-exact against
reference.tik_reduce_arg (lane-by-lane oracle)."""
from __future__ import annotations

import numpy as np
import pytest

import reference as ref
from fastisa import errors, tik
from fastisa.tik import platform
from tik_helpers import bits, random_values, run_program

FP16 = np.float16


@pytest.fixture
def rng():
    return np.random.default_rng(20261130)


def _run(name, dst, src, mask, nrep, drep, blk, srep, target="Ascend910"):
    got = run_program(target, [dst, src],
                      lambda tk, ub: getattr(tk, name)(mask, ub[0], ub[1], nrep, drep, blk,
                                                       srep))
    want = ref.tik_reduce_arg(name[2:], dst, 0, src, 0, mask=mask, nrep=nrep, dst_rep=drep,
                              blk=blk, rep=srep)
    return got, want


def _src_len(dtype, mask, nrep, blk, srep):
    par = ref.tik_lanes_per_repeat(dtype)
    return ref.tik_extent(dtype, 0, blk, srep, par, mask, nrep)


@pytest.mark.parametrize("name", ["vcmax", "vcmin"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_simple_known_values(name, dtype):
    par = ref.tik_lanes_per_repeat(dtype)
    src = np.arange(par * 2, dtype=dtype)
    src[:par] = src[:par][::-1]            # repeat 0 descending, repeat 1 ascending
    dst = np.full(32, 7, dtype)
    got = run_program("Ascend910", [dst, src],
                      lambda tk, ub: getattr(tk, name)(par, ub[0], ub[1], 2, 1, 1, 8))
    ut = np.uint16 if dtype == "float16" else np.uint32
    g = got.view(ut)
    if name == "vcmax":
        assert got[0] == par - 1 and g[1] == 0 and got[2] == 2 * par - 1 and g[3] == par - 1
    else:
        assert got[0] == 0 and g[1] == par - 1 and got[2] == par and g[3] == 0
    assert (got[4:] == 7).all()


@pytest.mark.parametrize("name", ["vcmax", "vcmin"])
@pytest.mark.parametrize("dtype", ["float16", "float32"])
@pytest.mark.parametrize("mask_kind", ["contig", "bitwise"])
def test_random_against_oracle(rng, name, dtype, mask_kind):
    par = ref.tik_lanes_per_repeat(dtype)
    for _ in range(6):
        nrep = int(rng.choice([1, 2, 3, 17, 255]))
        blk = int(rng.choice([0, 1, 2]))
        srep = int(rng.choice([0, 1, 8, 16]))
        drep = int(rng.choice([0, 1, 2, 3]))
        if mask_kind == "contig":
            mask = int(rng.integers(1, par + 1))
        else:
            lo = int(rng.integers(1, 2**64, dtype=np.uint64))
            hi = int(rng.integers(0, 2**64, dtype=np.uint64)) if par == 128 else 0
            mask = [hi, lo]
        n = _src_len(dtype, mask, nrep, blk, srep)
        src = random_values(rng, dtype, n)
        dn = 2 * ((nrep - 1) * drep + 1)
        dn = -(-dn * np.dtype(dtype).itemsize // 32) * 32 // np.dtype(dtype).itemsize + 16
        dst = random_values(rng, dtype, dn)
        got, want = _run(name, dst, src, mask, nrep, drep, blk, srep)
        assert (bits(got) == bits(want)).all(), (nrep, blk, srep, drep, mask)


@pytest.mark.parametrize("name", ["vcmax", "vcmin"])
def test_ties_zeros_infinities_nan(name):
    par = 128
    rows = []
    # ties: the first (lowest) lane wins
    r = np.zeros(par, FP16); r[[5, 9, 100]] = 3.0; r[[6, 50]] = -3.0; rows.append(r)
    # -0 and +0 compare equal: first lane's bits kept
    r = np.full(par, FP16(1.0) if name == "vcmin" else FP16(-1.0)); r[10] = -0.0
    r[11] = 0.0; rows.append(r)
    r = r.copy(); r[10] = 0.0; r[11] = -0.0; rows.append(r)
    # infinities
    r = np.zeros(par, FP16); r[3] = np.inf; r[4] = -np.inf; r[70] = np.inf
    r[71] = -np.inf; rows.append(r)
    # NaN: the first NaN wins over everything
    r = np.zeros(par, FP16); r[2] = np.inf; r[40] = np.nan; r[41] = -np.inf
    r[90] = np.nan; rows.append(r)
    src = np.concatenate(rows)
    nrep = len(rows)
    dst = np.full(32, 9, FP16)
    got, want = _run(name, dst, src, 128, nrep, 1, 1, 8)
    assert (bits(got) == bits(want)).all()
    g = bits(got)
    if name == "vcmax":
        assert got[0] == 3.0 and g[1] == 5
        assert g[6] == 0x7C00 and g[7] == 3
    else:
        assert got[0] == -3.0 and g[1] == 6
        assert g[6] == 0xFC00 and g[7] == 4
    assert g[2] == 0x8000 and g[3] == 10      # -0 first
    assert g[4] == 0x0000 and g[5] == 10      # +0 first
    assert np.isnan(got[8]) and g[9] == 40
    assert (got[10:] == 9).all()


@pytest.mark.parametrize("name", ["vcmax", "vcmin"])
def test_fp16_every_code(name):
    """Every float16 code appears in some repeat (512 repeats of 128 lanes, in two
    instructions of 256 repeats... 255 max, so three)."""
    codes = np.arange(65536, dtype=np.uint16).view(FP16)
    rng = np.random.default_rng(1)
    codes = codes[rng.permutation(65536)]
    for part in (codes[:255 * 128], codes[255 * 128:510 * 128], codes[510 * 128:]):
        nrep = part.size // 128
        dst = np.zeros(2 * nrep + 16, FP16)
        got, want = _run(name, dst, part.copy(), 128, nrep, 1, 1, 8)
        assert (bits(got) == bits(want)).all()


def test_in_place_and_masked_off_dst_preserved(rng):
    src = random_values(rng, "float16", 128 * 4)
    # dst_rep_stride 3: pairs at 0, 6, 12, 18; everything between untouched
    dst = random_values(rng, "float16", 48)
    got, want = _run("vcmax", dst, src, [0, 0xF0F0], 4, 3, 1, 8)
    assert (bits(got) == bits(want)).all()
    keep = np.ones(48, bool)
    keep[[0, 1, 6, 7, 12, 13, 18, 19]] = False
    assert (bits(got)[keep] == bits(dst)[keep]).all()


def test_dst_rep_stride_zero_last_repeat_wins(rng):
    src = random_values(rng, "float32", 64 * 5, special=False)
    dst = np.zeros(16, np.float32)
    got, want = _run("vcmin", dst, src, 64, 5, 0, 1, 8)
    assert (bits(got) == bits(want)).all()
    assert got[0] == src[256:].min()
    assert got.view(np.uint32)[1] == int(np.argmin(src[256:]))


def _tk():
    platform.set_target("Ascend910")
    return tik.Tik()


def _ub(tk, n=512, dtype="float16", name="x"):
    return tk.Tensor(dtype, (n,), name=name, scope=tik.scope_ubuf)


def _build_run(tk):
    o = tk.Tensor("float16", (16,), name="o", scope=tik.scope_gm)
    tk.BuildCCE("k", [], [o])
    return tk.tikdb.start_debug({}, interactive=False)


@pytest.mark.parametrize("name", ["vcmax", "vcmin"])
def test_errors(name):
    tk = _tk()
    f = getattr(tk, name)
    with pytest.raises(errors.ConstraintError, match="repeat_times"):
        f(128, _ub(tk), _ub(tk), 0, 1, 1, 8)
    with pytest.raises(errors.ConstraintError, match="repeat_times"):
        f(128, _ub(tk), _ub(tk), 256, 1, 1, 8)
    with pytest.raises(errors.ConstraintError, match="dst_rep_stride"):
        f(128, _ub(tk), _ub(tk), 1, 256, 1, 8)
    with pytest.raises(errors.ConstraintError, match="src_rep_stride"):
        f(128, _ub(tk), _ub(tk), 1, 1, 1, -1)
    with pytest.raises(errors.ConstraintError, match="mask"):
        f(129, _ub(tk), _ub(tk), 1, 1, 1, 8)
    with pytest.raises(errors.ConstraintError, match="mask"):
        f(65, _ub(tk, dtype="float32"), _ub(tk, dtype="float32"), 1, 1, 1, 8)
    with pytest.raises(errors.ConstraintError, match="dtype"):
        f(128, _ub(tk), _ub(tk, dtype="float32"), 1, 1, 1, 8)
    with pytest.raises(errors.ConstraintError, match="dtype"):
        f(128, _ub(tk, dtype="int16"), _ub(tk, dtype="int16"), 1, 1, 1, 8)
    with pytest.raises(errors.ConstraintError, match="scope"):
        f(128, tk.Tensor("float16", (512,), name="g", scope=tik.scope_gm), _ub(tk), 1, 1,
          1, 8)


@pytest.mark.parametrize("name", ["vcmax", "vcmin"])
def test_dst_overflow_counts_pairs(name):
    # 3 repeats, dst_rep_stride 2 pairs: needs 2*((3-1)*2 + 1) = 10 elements
    tk = _tk()
    getattr(tk, name)(128, _ub(tk, 10, name="d"), _ub(tk, 384), 3, 2, 1, 8)
    _build_run(tk)
    tk = _tk()
    getattr(tk, name)(128, _ub(tk, 9, name="d"), _ub(tk, 384), 3, 2, 1, 8)
    with pytest.raises(errors.AccessError, match="need write 10 elements"):
        _build_run(tk)


def test_src_overflow():
    tk = _tk()
    tk.vcmax(128, _ub(tk, 16, name="d"), _ub(tk, 383, name="s"), 3, 1, 1, 8)
    with pytest.raises(errors.AccessError, match="need read 384 elements"):
        _build_run(tk)


def test_alignment():
    tk = _tk()
    u = _ub(tk, 64, name="d")
    tk.vcmax(128, u[2], _ub(tk, 384, name="s"), 1, 1, 1, 8)
    with pytest.raises(errors.AlignmentError, match="not 32 align"):
        _build_run(tk)


@pytest.mark.parametrize("name", ["vcadd", "vcmax", "vcmin"])
def test_stride_unit(name):
    """Ignored on Ascend 910 (TIK forces it to 0); elsewhere only 0 is implemented for the
    reductions."""
    tk = _tk()
    getattr(tk, name)(128, _ub(tk), _ub(tk), 1, 1, 1, 8, stride_unit=1)
    platform.set_target("Ascend310P")
    try:
        tk = tik.Tik()
        with pytest.raises(NotImplementedError, match=f"{name}: stride_unit=1 is not "
                           "implemented"):
            getattr(tk, name)(128, _ub(tk), _ub(tk), 1, 1, 1, 8, stride_unit=1)
    finally:
        platform.set_target("Ascend910")
