"""nki.language math functions with no nki.isa operator (divide, mod, fmod, floor, ceil,
trunc), masks over a reduction's input, and Beta 1 index expressions that reach outside
their tensor under a mask (issue 11).  Kernels of our own in the patterns of the public
tutorials (softmax divided by its row sum, adaptive pooling over windows that do not divide
the input, nearest-neighbour index arithmetic, tiling by 128 a dimension that is not a
multiple of 128), bit-exact against tests/reference.py."""

import numpy as np
import pytest

import reference as ref
from fastisa import nki
from fastisa.errors import AccessError, ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki import legacy_isa as lisa

RNG = np.random.default_rng(11)


def _specials(shape):
    """float32 values with signed zeros, infinities, NaN, subnormals and ordinary values."""
    v = RNG.standard_normal(shape).astype(np.float32) * 10
    flat = v.reshape(-1)
    sp = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -3e-39, 3.0, -3.0, 7.0],
                  np.float32)
    flat[: sp.size * 3] = np.tile(sp, 3)
    return v


def _same_bits(got, want):
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    both_nan = np.isnan(got) & np.isnan(want)
    return bool(((got.view(np.uint32) == want.view(np.uint32)) | both_nan).all())


@nki.jit
def _softmax_divide(a, b):
    """exp-free softmax tail: x / rowsum (column operand), a / b (two tiles), b / 3 (scalar)
    and 2 / a (scalar numerator)."""
    P, F = a.shape
    o1 = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm)
    o2 = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm)
    o3 = nl.ndarray((P, F), nl.bfloat16, buffer=nl.shared_hbm)
    o4 = nl.ndarray((P, F), nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    y = nl.load(b)
    s = nl.sum(y, axis=1)                         # [P, 1]
    nl.store(o1, nl.divide(y, s))
    nl.store(o2, x / y)
    nl.store(o3, nl.divide(y, 3, dtype=nl.bfloat16))
    nl.store(o4, 2.0 / x)
    return o1, o2, o3, o4


def test_divide_is_ieee_float32_division():
    a = _specials((64, 48))
    b = _specials((64, 48))[::-1].copy()
    b[:, 0] = RNG.random(64).astype(np.float32) + 0.5       # finite row sums
    o1, o2, o3, o4 = nki.simulate(_softmax_divide)(a, b)
    rows = ref.nki_tensor_reduce(b, "float32", "float32", "add").reshape(-1, 1)
    assert _same_bits(o1, ref.nki_lang_math("divide", b, rows))
    assert _same_bits(o2, ref.nki_lang_math("divide", a, b))
    want3 = ref.nki_round(ref.nki_lang_math("divide", b, 3.0), "bfloat16")
    assert _same_bits(o3.astype(np.float32), want3.astype(np.float32))
    assert _same_bits(o4, ref.nki_lang_math("divide", 2.0, a))
    # not a multiply by the reciprocal: 1/3 rounded first would give other bits here
    assert o2.dtype == np.float32 and np.isnan(o2).sum() > 0


@nki.jit
def _nearest_index(n_out, w_out, scale):
    """The nearest-neighbour pattern: row = floor(i / w), col = i mod w, src = floor(row *
    scale) on an int32 iota tile."""
    out = nl.ndarray((128, 3), nl.int32, buffer=nl.shared_hbm)
    i = lisa.iota(nl.arange(128)[:, None] + n_out, dtype=nl.int32)
    q = i / w_out                                     # int / int: a float32 quotient
    row = nl.floor(q, dtype=nl.int32)
    col = nl.mod(i, w_out, dtype=nl.int32)
    src = nl.floor(nl.multiply(row, scale, dtype=nl.float32), dtype=nl.int32)
    t = nl.ndarray((128, 3), nl.int32)
    t[:, 0:1] = row
    t[:, 1:2] = col
    t[:, 2:3] = src
    nl.store(out, t)
    return out


def test_integer_division_floor_and_mod_index_arithmetic():
    got = nki.simulate(_nearest_index)(1000, 38, 30 / 59)
    i = np.arange(128) + 1000
    assert (got[:, 0] == i // 38).all() and (got[:, 1] == i % 38).all()
    prod = ref.nki_alu("multiply", (i // 38).astype(np.float32), np.float32(30 / 59))
    want_src = ref.nki_lang_math("floor", prod)
    assert (got[:, 2] == want_src).all()
    t = nl.ndarray((4, 4), nl.int32)
    t.data[...] = np.arange(16).reshape(4, 4)
    assert nl.divide(t, 4).dtype is nl.float32          # numpy's true division
    assert nl.divide(t, 2.5).dtype is nl.float32 and nl.divide(3, t).dtype is nl.float32
    assert nl.divide(t, 4, dtype=nl.int32).dtype is nl.int32
    assert nl.mod(t, 4).dtype is nl.int32 and nl.floor(t).dtype is nl.int32


@pytest.mark.parametrize("op", ["mod", "fmod", "floor", "ceil", "trunc"])
@pytest.mark.parametrize("dst", ["float32", "bfloat16", "int32"])
def test_mod_fmod_and_rounding_functions_bits(op, dst):
    a = _specials((32, 40))
    b = _specials((32, 40))[:, ::-1].copy()
    x = nl.ndarray(a.shape, nl.float32)
    x.data[...] = a
    y = nl.ndarray(b.shape, nl.float32)
    y.data[...] = b
    fn = getattr(nl, op)
    if op in ("mod", "fmod"):
        got = fn(x, y, dtype=dst).data
        want = ref.nki_lang_math(op, a, b)
        got_s = fn(x, -2.5, dtype=dst).data                 # a scalar divisor
        want_s = ref.nki_lang_math(op, a, -2.5)
        _check(got_s, ref.nki_round(want_s, dst), dst)
    else:
        got = fn(x, dtype=dst).data
        want = ref.nki_lang_math(op, a)
    _check(got, ref.nki_round(want, dst), dst)


def _check(got, want, dst):
    if dst == "int32":
        assert np.array_equal(got, want)
    else:     # float: bit-exact (NaN payloads aside)
        assert _same_bits(got.astype(np.float32), want.astype(np.float32))


def test_mod_follows_the_divisor_sign_and_fmod_the_dividend():
    x = nl.ndarray((1, 6), nl.float32)
    x.data[...] = [[-7.0, 7.0, -7.0, 7.0, -6.0, 6.0]]
    y = nl.ndarray((1, 6), nl.float32)
    y.data[...] = [[3.0, -3.0, -3.0, 3.0, 3.0, -3.0]]
    assert nl.mod(x, y).data.tolist() == [[2.0, -2.0, -1.0, 1.0, 0.0, -0.0]]
    assert np.signbit(nl.mod(x, y).data[0, 5]) and not np.signbit(nl.mod(x, y).data[0, 4])
    assert nl.fmod(x, y).data.tolist() == [[-1.0, 1.0, -1.0, 1.0, -0.0, 0.0]]
    assert (x % 3.0).data.tolist() == [[2.0, 1.0, 2.0, 1.0, 0.0, 0.0]]


def test_language_only_functions_are_not_isa_operators():
    a = nl.ndarray((4, 8), nl.float32)
    a.data[...] = 1.0
    d = nl.ndarray((4, 8), nl.float32)
    with pytest.raises(ConstraintError, match="nki.language function, not an nki.isa operator"):
        nisa.tensor_tensor(d, a, a, nl.divide)
    with pytest.raises(ConstraintError, match="not an nki.isa operator"):
        nisa.tensor_scalar(d, a, nl.floor, None)
    with pytest.raises(ConstraintError, match="not an nki.isa operator"):
        nisa.tensor_scalar(d, a, np.remainder, 2.0)       # numpy's name maps to nl.mod
    assert np.isnan(d.data).all()                            # nothing written
    with pytest.raises(ConstraintError, match="at least one operand must be a tile"):
        nl.divide(1.0, 2.0)


@nki.jit
def _window_pool(a, h0, h1, w0, w1):
    """Adaptive-pool pattern: sum and max over a window tile larger than the window, the
    mask over the reduced axes selecting the window; a partition mask too."""
    P, H, W = a.shape
    s_out = nl.ndarray((P, 1), nl.float32, buffer=nl.shared_hbm)
    m_out = nl.ndarray((P, 1), nl.float32, buffer=nl.shared_hbm)
    x = nl.load(a)
    i_p = nl.arange(P)[:, None, None]
    i_h = nl.arange(H)[None, :, None]
    i_w = nl.arange(W)[None, None, :]
    win = (i_h >= h0) & (i_h < h1) & (i_w >= w0) & (i_w < w1)
    s = nl.sum(x, axis=[-2, -1], mask=win & (i_p < P - 3))
    m = nl.max(x, axis=[1, 2], mask=win)
    nl.store(s_out, s)
    nl.store(m_out, m)
    return s_out, m_out


def test_mask_over_reduced_axes_takes_only_the_active_elements():
    a = RNG.standard_normal((16, 6, 7)).astype(np.float32)
    a[0] = -0.0                                   # an all -0.0 window sums to -0.0
    a[1] = -np.inf
    a[2, 0, 0] = 1e30                             # outside the window: never added
    s, m = nki.simulate(_window_pool)(a, 1, 4, 2, 6)
    i_h = np.arange(6)[None, :, None]
    i_w = np.arange(7)[None, None, :]
    win = (i_h >= 1) & (i_h < 4) & (i_w >= 2) & (i_w < 6)
    pmask = np.arange(16)[:, None, None] < 13
    ws, wrote = ref.nki_masked_reduce(a, "add", (1, 2), win & pmask)
    s = s.reshape(-1)
    assert _same_bits(s[wrote], ws[wrote]) and np.isnan(s[~wrote]).all()   # not written
    assert np.signbit(s[0]) and s[0] == 0
    wm, _ = ref.nki_masked_reduce(a, "maximum", (1, 2), win)
    assert _same_bits(m.reshape(-1), wm) and m[1, 0] == -np.inf


@nki.jit
def _ragged_rows(a):
    """Rows tiled by 128 when N is not a multiple of 128: the last tile's slices reach
    past the end, the masks keep every access inside (nl.load / nl.store and Beta 1's
    nisa.dma_copy(dst=, src=, mask=))."""
    N, F = a.shape
    out = nl.ndarray((N, F), a.dtype, buffer=nl.shared_hbm)
    out2 = nl.ndarray((N, F), a.dtype, buffer=nl.shared_hbm)
    i_p = nl.arange(128)[:, None]
    i_f = nl.arange(F)[None, :]
    for t in nl.affine_range((N + 127) // 128):
        rows = t * 128 + i_p
        x = nl.load(a[t * 128:(t + 1) * 128, :], mask=rows < N)
        y = nl.multiply(x, 2.0)
        nl.store(out[t * 128 + i_p, i_f], y, mask=rows < N)
        buf = nl.ndarray((128, F), a.dtype, buffer=nl.sbuf)
        lisa.dma_copy(dst=buf, src=a[t * 128:(t + 1) * 128, :], mask=rows < N)
        lisa.dma_copy(dst=out2[t * 128:(t + 1) * 128, :], src=buf, mask=rows < N)
    return out, out2


def test_index_past_the_end_under_a_mask_is_not_accessed():
    a = RNG.standard_normal((200, 24)).astype(np.float32)
    out, out2 = nki.simulate(_ragged_rows)(a)
    assert (out.view(np.uint32) == (a * np.float32(2)).view(np.uint32)).all()
    assert (out2.view(np.uint32) == a.view(np.uint32)).all()


def test_index_past_the_end_raises_when_accessed_without_a_covering_mask():
    t = nl.ndarray((200, 8), nl.float32, buffer=nl.shared_hbm)
    t.data[...] = 1.0
    v = t[128:256, :]                                  # built: checked when accessed
    assert v.shape == (128, 8)
    with pytest.raises(AccessError, match=r"slice \[128:256\] is outside it"):
        nl.load(v)
    i_p = nl.arange(128)[:, None]
    with pytest.raises(AccessError, match="outside"):
        nl.load(v, mask=i_p < 100)                     # selects rows 200..227
    src = nl.ndarray((128, 8), nl.float32)
    src.data[...] = 5.0
    with pytest.raises(AccessError, match="outside"):
        nl.store(v, src, mask=i_p < 80)
    assert (t.data == 1.0).all()                       # a call that raises writes nothing
    nl.store(v, src, mask=i_p < 72)
    assert (t.data[128:] == 5.0).all() and (t.data[:128] == 1.0).all()
    on_chip = nl.ndarray((100, 8), nl.float32)
    with pytest.raises(AccessError, match="outside"):
        nisa.tensor_copy(dst=src, src=on_chip[0:128])  # any instruction: the indexing error


@nki.jit
def _gather_rows_skip(a, step):
    """Beta 1 indirect rows: a tile of row indices, some past the end, skipped."""
    N, F = a.shape
    out = nl.ndarray((64, F), a.dtype, buffer=nl.shared_hbm)
    ix, iy = nl.mgrid[0:64, 0:F]
    idx = lisa.iota(step * nl.arange(64)[:, None], dtype=np.int32)
    t = lisa.memset(shape=(64, F), value=-1, dtype=a.dtype)
    lisa.dma_copy(src=a[idx, iy], dst=t[ix, iy], oob_mode=nisa.oob_mode.skip)
    nl.store(out, t)
    return out


def test_oob_skip_with_a_tile_of_row_indices():
    a = RNG.standard_normal((100, 16)).astype(np.float32)
    got = nki.simulate(_gather_rows_skip)(a, 3)
    want = np.full((64, 16), -1, np.float32)
    rows = 3 * np.arange(64)
    ok = rows < 100
    want[ok] = a[rows[ok]]
    assert (got.view(np.uint32) == want.view(np.uint32)).all()
    with pytest.raises(AccessError, match="outside"):
        @nki.jit
        def err(a):
            out = nl.ndarray((64, 16), a.dtype, buffer=nl.shared_hbm)
            ix, iy = nl.mgrid[0:64, 0:16]
            idx = lisa.iota(3 * nl.arange(64)[:, None], dtype=np.int32)
            t = lisa.memset(shape=(64, 16), value=-1, dtype=a.dtype)
            lisa.dma_copy(src=a[idx, iy], dst=t[ix, iy], oob_mode=nisa.oob_mode.error)
            nl.store(out, t)
            return out
        nki.simulate(err)(a)


def test_buffer_predicates_and_expand_dims():
    t = nl.ndarray((4, 8), nl.float32)
    h = nl.ndarray((4, 8), nl.float32, buffer=nl.shared_hbm)
    assert nl.is_sbuf(nl.sbuf) and nl.is_on_chip(t) and not nl.is_psum(t) and not nl.is_hbm(t)
    assert nl.is_psum(nl.psum) and nl.is_on_chip(nl.psum)
    assert nl.is_hbm(h) and nl.is_hbm(nl.hbm) and nl.is_hbm(nl.private_hbm) and not nl.is_sbuf(h)
    with pytest.raises(ConstraintError, match="buffer"):
        nl.is_sbuf("sbuf")
    e = nl.expand_dims(t, 1)
    assert e.shape == (4, 1, 8) and np.shares_memory(e.data, t.data)
    assert nl.expand_dims(t, -1).shape == (4, 8, 1)
    with pytest.raises(ConstraintError, match="axis"):
        nl.expand_dims(t, 3)
