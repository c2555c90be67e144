"""nc_matmul overlapped with the kernel's Python (issue 15): inside ``nki.simulate`` a
planned nc_matmul called from kernel code returns while the pool's workers still run it,
and every access to tensor elements waits for it first.  These tests check that the
overlap happens (so they can fail), that every way a kernel can reach the result sees the
finished bits (the reference chain of tests/reference.py), that the operands stay alive
and unchanged until the matmul ends, and that nothing is left running after the kernel.
Kernels are our own, in the pattern of the SDK's tiled-matmul tutorials."""

import contextlib
import copy

import numpy as np
import ml_dtypes
import pytest

import reference as ref
from fastisa import nki
from fastisa._kernels import nki as _k
from fastisa.nki import _compute, _pe
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl

TK, TM, TN = 128, 128, 512
BF16 = ml_dtypes.bfloat16

needs_threads = pytest.mark.skipif(_compute._threads() < 2,
                                   reason="the overlap needs a second thread")


def _can():
    """Whether nc_matmul can overlap here now: the portable and sanitizer builds, CPUs
    without AVX2 + FMA and a forced scalar instruction set (set_matmul_isa, which other tests
    change and restore) run every call to completion, and these tests then check that."""
    return _k.can_overlap()


def _inputs(seed, K=2 * TK):
    rng = np.random.default_rng(seed)
    a = ref.nki_round(rng.standard_normal((K, TM)), "bfloat16").astype(np.float32)
    b = ref.nki_round(rng.standard_normal((K, TN)), "bfloat16").astype(np.float32)
    return a, b


def _want(a, b):
    out = np.zeros((TM, TN), np.float32)
    for k in range(a.shape[0] // TK):
        out = ref.nki_matmul(a[k * TK:(k + 1) * TK], b[k * TK:(k + 1) * TK], out)
    return out


def _tiles(lhsT, rhs):
    K = lhsT.shape[0]
    s = nl.ndarray((TK, K // TK, TM), nl.bfloat16, buffer=nl.sbuf)
    m = nl.ndarray((TK, K // TK, TN), nl.bfloat16, buffer=nl.sbuf)
    for k in range(K // TK):
        nisa.dma_copy(dst=s[0:TK, k, 0:TM], src=lhsT[k * TK:(k + 1) * TK, 0:TM])
        nisa.dma_copy(dst=m[0:TK, k, 0:TN], src=rhs[k * TK:(k + 1) * TK, 0:TN])
    return s, m


SEEN = []


def _matmuls(s, m, acc, nk):
    for k in range(nk):
        nisa.nc_matmul(dst=acc, stationary=s[0:TK, k, 0:TM], moving=m[0:TK, k, 0:TN])
        SEEN.append(_k.pending())


def _read(how, acc):
    """acc's values as float32, read the way ``how`` names."""
    if how == "data":
        return np.array(acc.data)
    if how == "ap":
        return np.array(acc.ap([[TN, TM], [1, TN]]).data)
    if how == "deepcopy":
        return np.array(copy.deepcopy(acc).data)
    if how == "slice":
        return np.array(acc[0:TM, 0:TN].data)
    raise AssertionError(how)


def _kernel_copy_out(lhsT, rhs):
    """acc -> SBUF (tensor_copy, the plan path) -> HBM"""
    out = nl.ndarray((TM, TN), nl.float32, buffer=nl.shared_hbm)
    s, m = _tiles(lhsT, rhs)
    acc = nl.ndarray((TM, TN), nl.float32, buffer=nl.psum)
    _matmuls(s, m, acc, lhsT.shape[0] // TK)
    r = nl.ndarray((TM, TN), nl.float32, buffer=nl.sbuf)
    nisa.tensor_copy(dst=r, src=acc)
    nisa.dma_copy(dst=out, src=r)
    return out


@contextlib.contextmanager
def _overlap_off():
    """nc_matmul's overlap switched off (FASTISA_MM_OVERLAP=0's flag), restored after."""
    old = _pe._OVERLAP[0]
    _pe._OVERLAP[0] = False
    try:
        yield
    finally:
        _pe._OVERLAP[0] = old


def _run(kernel, *args):
    SEEN.clear()
    out = np.asarray(nki.simulate(kernel)(*args))
    assert not _k.pending()         # nothing outlives the kernel
    return out


@needs_threads
@pytest.mark.parametrize("seed", [0, 1])
def test_overlapped_matmuls_give_the_reference_bits(seed):
    a, b = _inputs(seed, K=4 * TK)
    want = _want(a, b)
    lhsT, rhs = a.astype(BF16), b.astype(BF16)
    got = _run(_kernel_copy_out, lhsT, rhs)
    assert any(SEEN) == _can(), "no nc_matmul overlapped: the test would not see a missing join"
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    with _overlap_off():
        off = _run(_kernel_copy_out, lhsT, rhs)
        assert not any(SEEN)
    np.testing.assert_array_equal(off.view(np.uint32), got.view(np.uint32))


@needs_threads
@pytest.mark.parametrize("how", ["data", "ap", "deepcopy", "slice"])
def test_every_read_of_the_result_waits_for_the_matmul(how):
    a, b = _inputs(2)
    want = _want(a, b)
    lhsT, rhs = a.astype(BF16), b.astype(BF16)
    got = []
    was_pending = []

    def kernel(lhsT, rhs):
        s, m = _tiles(lhsT, rhs)
        acc = nl.ndarray((TM, TN), nl.float32, buffer=nl.psum)
        _matmuls(s, m, acc, 2)
        was_pending.append(_k.pending())
        got.append(_read(how, acc))
        out = nl.ndarray((1, 1), nl.float32, buffer=nl.shared_hbm)
        return out

    _run(kernel, lhsT, rhs)
    assert was_pending == [_can()]
    np.testing.assert_array_equal(got[0].view(np.uint32), want.view(np.uint32))


@needs_threads
def test_operands_stay_alive_and_unchanged_until_the_matmul_ends():
    """The kernel drops its only references to the operand tiles while the matmul runs
    and allocates (and fills) new tiles of the same size: the matmul still reads the
    values it was given."""
    a, b = _inputs(3, K=TK)
    want = _want(a, b)
    lhsT, rhs = a.astype(BF16), b.astype(BF16)

    def kernel(lhsT, rhs):
        out = nl.ndarray((TM, TN), nl.float32, buffer=nl.shared_hbm)
        acc = nl.ndarray((TM, TN), nl.float32, buffer=nl.psum)
        s, m = _tiles(lhsT, rhs)
        nisa.nc_matmul(dst=acc, stationary=s[0:TK, 0, 0:TM], moving=m[0:TK, 0, 0:TN])
        SEEN.append(_k.pending())
        del s, m
        junk = [nl.ndarray((TK, 1, TN), nl.bfloat16, buffer=nl.sbuf) for _ in range(4)]
        for j in junk:
            nisa.memset(dst=j, value=7.0)
        r = nl.ndarray((TM, TN), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=r, src=acc)
        nisa.dma_copy(dst=out, src=r)
        return out

    _run(kernel, lhsT, rhs)          # the first call of the signature stores its plan
    got = _run(kernel, lhsT, rhs)
    assert SEEN == [_can()]
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))


@needs_threads
def test_a_kernel_that_raises_leaves_nothing_running():
    a, b = _inputs(4)
    lhsT, rhs = a.astype(BF16), b.astype(BF16)

    def kernel(lhsT, rhs):
        s, m = _tiles(lhsT, rhs)
        acc = nl.ndarray((TM, TN), nl.float32, buffer=nl.psum)
        _matmuls(s, m, acc, 2)
        raise RuntimeError("kernel bug")

    SEEN.clear()
    with pytest.raises(RuntimeError, match="kernel bug"):
        nki.simulate(kernel)(lhsT, rhs)
    assert SEEN[-1] is _can()
    assert not _k.pending()


def test_no_overlap_outside_simulate():
    """Outside nki.simulate the caller may hold the storage arrays: every nc_matmul has
    finished when it returns."""
    a, b = _inputs(5, K=TK)
    from fastisa.nki.tensor import NkiTensor
    s = NkiTensor(a.astype(BF16), "bfloat16", nl.sbuf)
    m = NkiTensor(b.astype(BF16), "bfloat16", nl.sbuf)
    raw = np.zeros((TM, TN), np.float32)
    acc = NkiTensor(raw, "float32", nl.psum)
    for _ in range(3):              # the first call stores the plan; later ones hit it
        nisa.nc_matmul(dst=acc, stationary=s, moving=m, accumulate=False)
        assert not _k.pending()
    np.testing.assert_array_equal(raw.view(np.uint32), _want(a, b).view(np.uint32))


@needs_threads
def test_concurrent_threads_each_get_their_own_bits():
    """Two Python threads run the threaded panel path at once (the kernel releases the
    GIL): each job's threads mark the stationary copy they decoded with the job's own
    number, so no thread reuses another job's copy."""
    import threading
    from fastisa.nki.tensor import NkiTensor
    cases = []
    for seed in (6, 7):
        a, b = _inputs(seed, K=TK)
        cases.append((NkiTensor(a.astype(BF16), "bfloat16", nl.sbuf),
                      NkiTensor(b.astype(BF16), "bfloat16", nl.sbuf), _want(a, b)))
    bad = []

    def work(i):
        s, m, want = cases[i]
        raw = np.zeros((TM, TN), np.float32)
        acc = NkiTensor(raw, "float32", nl.psum)
        for _ in range(40):
            nisa.nc_matmul(dst=acc, stationary=s, moving=m, accumulate=False)
            if not np.array_equal(raw.view(np.uint32), want.view(np.uint32)):
                bad.append(i)
                return

    th = [threading.Thread(target=work, args=(i,)) for i in (0, 1)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    assert bad == []


# ---- a tensor_tensor deferred behind the overlapped nc_matmul ----------------------------
def _kernel_accumulate_rows(lhsT, rhs, groups=6):
    """The tutorial's pattern: per output tile a fresh PSUM tile, a group of matmuls into
    it, the group added into an SBUF row (tensor_tensor, deferred behind the last matmul),
    then the next tile allocated and its first matmul issued while that add is pending."""
    out = nl.ndarray((TM, TN), nl.float32, buffer=nl.shared_hbm)
    s, m = _tiles(lhsT, rhs)
    r = nl.ndarray((TM, TN), nl.float32, buffer=nl.sbuf)
    nisa.memset(dst=r, value=0.0)
    for g in range(groups):
        acc = nl.ndarray((TM, TN), nl.float32, buffer=nl.psum)
        SEEN.append(("alloc", _k.pending()))
        _matmuls(s, m, acc, lhsT.shape[0] // TK)
        nisa.tensor_tensor(dst=r, data1=r, data2=acc, op=nl.add)
        SEEN.append(("add", _k.pending()))
    nisa.dma_copy(dst=out, src=r)
    return out


def _want_rows(a, b, groups=6):
    tile = _want(a, b)
    r = np.zeros((TM, TN), np.float32)
    for _ in range(groups):
        r = r + tile            # a float32 add per group, as the instruction
    return r


@needs_threads
def test_a_tensor_tensor_behind_the_matmul_is_deferred_and_exact():
    a, b = _inputs(6)
    want = _want_rows(a, b)
    lhsT, rhs = a.astype(BF16), b.astype(BF16)
    _run(_kernel_accumulate_rows, lhsT, rhs)          # stores the plans
    got = _run(_kernel_accumulate_rows, lhsT, rhs)
    marks = [x for x in SEEN if isinstance(x, tuple)]      # (the matmuls add bare flags)
    adds = [p for what, p in marks if what == "add"]
    allocs = [p for what, p in marks[1:] if what == "alloc"]
    # deferred: still pending after an add, and a next tile's allocation did not wait (a
    # group whose matmuls end before the kernel reaches its add runs the add at once:
    # timing, so "some", not "every")
    assert any(adds) == _can() and any(allocs) == _can()
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    with _overlap_off():
        off = _run(_kernel_accumulate_rows, lhsT, rhs)
    np.testing.assert_array_equal(off.view(np.uint32), want.view(np.uint32))


@needs_threads
@pytest.mark.parametrize("how", ["data", "slice", "tensor_copy", "matmul"])
def test_every_read_after_a_deferred_add_sees_it(how):
    """Whatever the kernel does next -- read the row's elements, copy it, issue another
    matmul -- it sees the deferred add done."""
    a, b = _inputs(7)
    tile = _want(a, b)
    lhsT, rhs = a.astype(BF16), b.astype(BF16)
    got = []

    def kernel(lhsT, rhs):
        s, m = _tiles(lhsT, rhs)
        r = nl.ndarray((TM, TN), nl.float32, buffer=nl.sbuf)
        nisa.memset(dst=r, value=1.0)
        acc = nl.ndarray((TM, TN), nl.float32, buffer=nl.psum)
        _matmuls(s, m, acc, 2)
        nisa.tensor_tensor(dst=r, data1=r, data2=acc, op=nl.add)
        SEEN.append(_k.pending())
        if how == "data":
            got.append(np.array(r.data))
        elif how == "slice":
            got.append(np.array(r[0:TM, 0:TN].data))
        elif how == "tensor_copy":
            c = nl.ndarray((TM, TN), nl.float32, buffer=nl.sbuf)
            nisa.tensor_copy(dst=c, src=r)
            got.append(np.array(c.data))
        else:   # a matmul into a new tile, then the row read back through HBM
            acc2 = nl.ndarray((TM, TN), nl.float32, buffer=nl.psum)
            nisa.nc_matmul(dst=acc2, stationary=s[0:TK, 0, 0:TM], moving=m[0:TK, 0, 0:TN])
        out = nl.ndarray((TM, TN), nl.float32, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=r)
        return out

    want = np.float32(1.0) + tile
    _run(kernel, lhsT, rhs)                 # stores the plans
    deferred = False
    for _ in range(5):      # until the add was deferred once (timing: see above)
        got.clear()
        out = _run(kernel, lhsT, rhs)
        np.testing.assert_array_equal(out.view(np.uint32), want.view(np.uint32))
        if got:
            np.testing.assert_array_equal(got[-1].view(np.uint32), want.view(np.uint32))
        deferred = deferred or SEEN[-1]
        if deferred:
            break
    assert deferred == _can()
