"""nc_matmul accumulation groups (SDK 2.33 "Accumulation mode"): accumulate=None overwrites
a PSUM element the first time a matmul of a group writes it and accumulates afterwards;
True / False force it; a non-matmul read closes the group; a non-matmul write followed by
an accumulating matmul warns (undefined on NeuronCore-v2/v3).  Patterns from the SDK's
matmul tutorials, written here as our own kernels; results bit-exact against
reference.nki_matmul."""

import warnings

import numpy as np
import pytest

import reference as ref
from fastisa import nki
from fastisa.errors import ConstraintError, UndefinedBehaviorWarning
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import PSUM_DONE, PSUM_GROUP, PSUM_INIT, psum_state

TK, TM, TN = 128, 128, 512


def _inputs(rng, K, M, N):
    a = ref.nki_round(rng.standard_normal((K, M)), "bfloat16").astype(np.float32)
    b = ref.nki_round(rng.standard_normal((K, N)), "bfloat16").astype(np.float32)
    return a, b


def _want(a, b, start=None):
    M, N = a.shape[1], b.shape[1]
    z = np.zeros((M, N), np.float32) if start is None else start
    out = z
    for k in range(a.shape[0] // TK):   # one matmul per K tile, in order
        out = ref.nki_matmul(a[k * TK:(k + 1) * TK], b[k * TK:(k + 1) * TK], out)
    return out


def _load(src, shape):
    t = nl.ndarray(shape, nl.float32, buffer=nl.sbuf)
    nisa.dma_copy(dst=t, src=src)
    return t


@pytest.mark.parametrize("mode", ["none", "explicit"])
def test_k_loop_into_one_psum_tile(mode, rng):
    """Tutorial pattern: PSUM tile allocated per output tile, K loop accumulates into it."""
    K, M, N = 384, 256, 512

    @nki.jit
    def kernel(lhsT, rhs):
        result = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
        for m in nl.affine_range(M // TM):
            res_psum = nl.ndarray((TM, N), nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                lt = _load(lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM], (TK, TM))
                rt = _load(rhs[k * TK:(k + 1) * TK, :], (TK, N))
                if mode == "none":
                    nisa.nc_matmul(dst=res_psum, stationary=lt, moving=rt)
                else:
                    nisa.nc_matmul(dst=res_psum, stationary=lt, moving=rt, accumulate=(k > 0))
            sb = nl.ndarray((TM, N), nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=sb, src=res_psum)
            nisa.dma_copy(dst=result[m * TM:(m + 1) * TM, :], src=sb)
        return result

    a, b = _inputs(rng, K, M, N)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = nki.simulate(kernel)(a, b)
    for m in range(M // TM):
        want = _want(a[:, m * TM:(m + 1) * TM], b)
        np.testing.assert_array_equal(got[m * TM:(m + 1) * TM].view(np.uint32),
                                      want.view(np.uint32))
    assert not np.isnan(got).any()


def test_two_interleaved_accumulation_groups(rng):
    """Two PSUM tiles (and two column halves of a third) accumulate with their matmuls
    interleaved: each element's group is its own."""
    K, M, N = 512, 128, 256
    a, b = _inputs(rng, K, M, 2 * N)

    @nki.jit
    def kernel(lhsT, rhs):
        out = nl.ndarray((M, 4 * N), nl.float32, buffer=nl.shared_hbm)
        p0 = nl.ndarray((M, N), nl.float32, buffer=nl.psum)
        p1 = nl.ndarray((M, N), nl.float32, buffer=nl.psum)
        both = nl.ndarray((M, 2 * N), nl.float32, buffer=nl.psum)
        for k in nl.sequential_range(K // TK):
            lt = _load(lhsT[k * TK:(k + 1) * TK, :], (TK, M))
            r0 = _load(rhs[k * TK:(k + 1) * TK, 0:N], (TK, N))
            r1 = _load(rhs[k * TK:(k + 1) * TK, N:2 * N], (TK, N))
            nisa.nc_matmul(p0, lt, r0)
            nisa.nc_matmul(both[:, N:2 * N], lt, r1)
            nisa.nc_matmul(p1, lt, r1)
            nisa.nc_matmul(both[:, 0:N], lt, r0)
        for i, p in enumerate((p0, p1, both)):
            sb = nl.ndarray(p.shape, nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=sb, src=p)
            lo = [0, N, 2 * N][i]
            nisa.dma_copy(dst=out[:, lo:lo + p.shape[1]], src=sb)
        return out

    got = nki.simulate(kernel)(a, b)
    w0, w1 = _want(a, b[:, :N]), _want(a, b[:, N:])
    want = np.concatenate([w0, w1, w0, w1], axis=1)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def test_psum_tile_reused_across_output_tiles(rng):
    """One PSUM tile allocated outside the output loop: reading it (tensor_copy) closes the
    group, so the next output tile's first matmul overwrites instead of adding."""
    K, M, N = 256, 128, 128
    NT = 3
    a, b = _inputs(rng, K, M, NT * N)

    @nki.jit
    def kernel(lhsT, rhs):
        out = nl.ndarray((M, NT * N), nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((M, N), nl.float32, buffer=nl.psum)
        sb = nl.ndarray((M, N), nl.float32, buffer=nl.sbuf)
        for n in nl.sequential_range(NT):
            for k in nl.affine_range(K // TK):
                lt = _load(lhsT[k * TK:(k + 1) * TK, :], (TK, M))
                rt = _load(rhs[k * TK:(k + 1) * TK, n * N:(n + 1) * N], (TK, N))
                nisa.nc_matmul(dst=acc, stationary=lt, moving=rt)
            nisa.tensor_copy(dst=sb, src=acc)
            nisa.dma_copy(dst=out[:, n * N:(n + 1) * N], src=sb)
        return out

    got = nki.simulate(kernel)(a, b)
    want = np.concatenate([_want(a, b[:, n * N:(n + 1) * N]) for n in range(NT)], axis=1)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


def _psum(shape=(64, 32)):
    return nl.ndarray(shape, nl.float32, buffer=nl.psum)


def _sb(x):
    t = nl.ndarray(x.shape, nl.float32, buffer=nl.sbuf)
    t.data[...] = x
    return t


def test_memset_then_accumulate_warns_on_trn2_and_adds(rng):
    s, v = _inputs(rng, 16, 64, 32)
    for tgt, warns in (("trn2", True), ("trn3", False)):
        with nl.use_target(tgt):
            dst = _psum()
            nisa.memset(dst, 1.5)
            assert (psum_state(dst) == PSUM_INIT).all()
            with warnings.catch_warnings(record=True) as w:
                warnings.simplefilter("always")
                nisa.nc_matmul(dst, _sb(s), _sb(v))          # None: accumulates onto 1.5
            assert any(issubclass(x.category, UndefinedBehaviorWarning) for x in w) == warns
            want = ref.nki_matmul(s, v, np.full((64, 32), 1.5, np.float32))
            np.testing.assert_array_equal(dst.data.view(np.uint32), want.view(np.uint32))
            assert (psum_state(dst) == PSUM_GROUP).all()


def test_accumulate_true_on_fresh_psum_warns_and_keeps_nan(rng):
    s, v = _inputs(rng, 16, 64, 32)
    dst = _psum()
    with pytest.warns(UndefinedBehaviorWarning, match="never-written"):
        nisa.nc_matmul(dst, _sb(s), _sb(v), accumulate=True)
    assert np.isnan(dst.data).all()          # NaN-filled new memory + products = NaN


def test_accumulate_false_overwrites_open_group(rng):
    s, v = _inputs(rng, 16, 64, 32)
    dst = _psum()
    nisa.nc_matmul(dst, _sb(s), _sb(v))
    nisa.nc_matmul(dst, _sb(s), _sb(v), accumulate=False)
    want = ref.nki_matmul(s, v, np.zeros((64, 32), np.float32))
    np.testing.assert_array_equal(dst.data.view(np.uint32), want.view(np.uint32))
    nisa.nc_matmul(dst, _sb(s), _sb(v))                   # None in an open group: adds
    want = ref.nki_matmul(s, v, want)
    np.testing.assert_array_equal(dst.data.view(np.uint32), want.view(np.uint32))


def test_partial_group_per_element(rng):
    """A matmul into the left half opens a group there only: a full-width matmul then
    accumulates on the left half and overwrites the (NaN) right half."""
    s, v = _inputs(rng, 16, 64, 32)
    _, v2 = _inputs(rng, 16, 64, 64)
    dst = _psum((64, 64))
    nisa.nc_matmul(dst[:, 0:32], _sb(s), _sb(v))
    st = psum_state(dst)
    assert (st[:, :32] == PSUM_GROUP).all() and (st[:, 32:] == 0).all()
    nisa.nc_matmul(dst, _sb(s), _sb(v2))
    left = ref.nki_matmul(s, v2[:, :32], ref.nki_matmul(s, v, np.zeros((64, 32), np.float32)))
    right = ref.nki_matmul(s, v2[:, 32:], np.zeros((64, 32), np.float32))
    want = np.concatenate([left, right], axis=1)
    np.testing.assert_array_equal(dst.data.view(np.uint32), want.view(np.uint32))


def test_read_closes_group_and_failed_read_does_not(rng):
    s, v = _inputs(rng, 16, 64, 32)
    dst = _psum()
    nisa.nc_matmul(dst, _sb(s), _sb(v))
    with pytest.raises(ConstraintError):                  # wrong shape: raises, changes nothing
        nisa.tensor_copy(dst=nl.ndarray((64, 31), nl.float32, buffer=nl.sbuf), src=dst)
    assert (psum_state(dst) == PSUM_GROUP).all()
    out = nl.ndarray((64, 32), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=out, src=dst)
    assert (psum_state(dst) == PSUM_DONE).all()
    nisa.nc_matmul(dst, _sb(s), _sb(v))                   # new group: overwrites
    want = ref.nki_matmul(s, v, np.zeros((64, 32), np.float32))
    np.testing.assert_array_equal(dst.data.view(np.uint32), want.view(np.uint32))


def test_in_place_psum_op_marks_init(rng):
    s, v = _inputs(rng, 16, 64, 32)
    dst = _psum()
    nisa.nc_matmul(dst, _sb(s), _sb(v))
    nisa.tensor_scalar(dst=dst, data=dst, op0=nl.multiply, operand0=2.0)
    assert (psum_state(dst) == PSUM_INIT).all()


def test_accumulate_must_be_bool_or_none(rng):
    s, v = _inputs(rng, 16, 64, 32)
    with pytest.raises(ConstraintError, match="accumulate must be True, False or None"):
        nisa.nc_matmul(_psum(), _sb(s), _sb(v), accumulate="yes")


def test_double_row_perf_mode_contracts_partition_and_first_free_dim(rng):
    import ml_dtypes
    K, M, N = 64, 16, 40
    s = rng.standard_normal((K, 2, M)).astype(ml_dtypes.float8_e5m2)
    v = rng.standard_normal((K, 2, N)).astype(ml_dtypes.float8_e4m3fn)
    st = nl.ndarray((K, 2, M), nl.float8_e5m2)
    st.data[...] = s
    mv = nl.ndarray((K, 2, N), nl.float8_e4m3fn)
    mv.data[...] = v
    dst = _psum((M, N))
    nisa.nc_matmul(dst, st, mv, perf_mode=nisa.matmul_perf_mode.double_row)
    want = ref.nki_matmul(s.astype(np.float32).reshape(2 * K, M),
                          v.astype(np.float32).reshape(2 * K, N), np.zeros((M, N), np.float32))
    np.testing.assert_array_equal(dst.data.view(np.uint32), want.view(np.uint32))
    with pytest.raises(ConstraintError, match="float8"):
        b = nl.ndarray((K, 2, M), nl.bfloat16)
        nisa.nc_matmul(_psum((M, N)), b, mv, perf_mode="double_row")
    with pytest.raises(ConstraintError):
        nisa.nc_matmul(_psum((M, N)), _sb(np.zeros((K, M), np.float32)), mv,
                       perf_mode="double_row")
