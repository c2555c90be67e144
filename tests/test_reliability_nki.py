"""Issue 12 (reliability), NKI: self-overlapping destinations, read-only memory,
partition limits of directly built tensors, per-thread eager accounting."""
from __future__ import annotations

import threading

import ml_dtypes
import numpy as np
import pytest

from fastisa import errors
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki.tensor import NkiTensor

BF16 = ml_dtypes.bfloat16


def sb(shape, dtype=np.float32, fill=0):
    return NkiTensor(np.full(shape, fill, dtype), dtype, nl.sbuf, "t")


# ---- item 3: a dst whose elements overlap each other ------------------------------------

def test_self_overlapping_dst_is_overlap_error():
    base = sb((128, 1024))
    dst = base.ap([[0, 128], [1, 1024]])          # every partition the same row
    src = sb((128, 1024), fill=1.0)
    before = base.data.copy()
    with pytest.raises(errors.OverlapError, match="tensor_scalar: dst elements must not "
                       "overlap each other"):
        nisa.tensor_scalar(dst, src, nl.add, 1.0)
    with pytest.raises(errors.OverlapError, match="tensor_copy: dst"):
        nisa.tensor_copy(dst, src)
    with pytest.raises(errors.OverlapError, match="activation: dst"):
        nisa.activation(dst, nl.exp, src)
    with pytest.raises(errors.OverlapError, match="memset: dst"):
        nisa.memset(dst, 0.0)
    with pytest.raises(errors.OverlapError, match="iota: dst"):
        ints = NkiTensor(np.zeros((128, 8), np.int32), "int32", nl.sbuf)
        nisa.iota(ints.ap([[0, 128], [1, 8]]), [[1, 8]])
    np.testing.assert_array_equal(base.data, before)


def test_overlapping_source_view_is_still_fine():
    base = sb((128, 64))
    base.data[0] = np.arange(64)
    dst = sb((128, 64))
    nisa.tensor_copy(dst, base.ap([[0, 128], [1, 64]]))   # broadcast row 0 as a source
    np.testing.assert_array_equal(dst.data, np.tile(np.arange(64, dtype=np.float32), (128, 1)))


def test_disjoint_interleaved_dst_accepted():
    # steps (2, 3) over 3 x 2 elements reach {0, 2, 3, 4, 5, 7}: no two the same
    base = sb((1, 16))
    dst = base.ap([[2, 3], [3, 2]])
    nisa.memset(dst, 1.0)
    assert base.data.reshape(-1)[[0, 2, 3, 4, 5, 7]].tolist() == [1.0] * 6
    assert base.data.sum() == 6


# ---- item 5: never write through a read-only array -----------------------------------

def test_read_only_dst_rejected_and_bytes_unchanged():
    raw = bytes(np.zeros((16, 8), np.float32).tobytes())
    ro = NkiTensor(np.frombuffer(raw, np.float32).reshape(16, 8), "float32", nl.sbuf, "ro")
    src = sb((16, 8), fill=2.0)
    for call in (lambda: nisa.tensor_scalar(ro, src, nl.multiply, 3.0),
                 lambda: nisa.tensor_tensor(ro, src, src, nl.add),
                 lambda: nisa.activation(ro, nl.exp, src),
                 lambda: nisa.reciprocal(ro, src),
                 lambda: nisa.tensor_copy(ro, src),
                 lambda: nisa.memset(ro, 1.0)):
        with pytest.raises(errors.ConstraintError, match="dst must be writable"):
            call()
    assert raw == bytes(16 * 8 * 4)


def test_read_only_reduce_res_rejected_before_dst_written():
    raw = bytes(16 * 4)
    rr = NkiTensor(np.frombuffer(raw, np.float32).reshape(16, 1), "float32", nl.sbuf, "rr")
    dst = sb((16, 8))
    with pytest.raises(errors.ConstraintError, match="reduce_res must be writable"):
        nisa.activation_reduce(dst, nl.exp, sb((16, 8), fill=1.0), nl.add, rr)
    assert not dst.data.any()


# ---- item 10: partitions > 128 on directly built tensors -------------------------------

def test_partitions_over_128_rejected():
    big = sb((256, 16))
    idx = NkiTensor(np.zeros((256, 8), np.uint32), "uint32", nl.sbuf)
    with pytest.raises(errors.ConstraintError, match="max8: dst partition dimension must "
                       "be <= 128"):
        nisa.max8(sb((256, 8)), big)
    with pytest.raises(errors.ConstraintError, match="nc_find_index8: dst partition"):
        nisa.nc_find_index8(idx, big, sb((256, 8)))
    with pytest.raises(errors.ConstraintError, match="nc_match_replace8: .*partition"):
        nisa.nc_match_replace8(sb((256, 16)), big, sb((256, 8)), 0.0)
    with pytest.raises(errors.ConstraintError, match="iota: dst partition"):
        nisa.iota(NkiTensor(np.zeros((256, 8), np.int32), "int32", nl.sbuf), [[1, 8]])
    with pytest.raises(errors.ConstraintError, match="memset: dst partition"):
        nisa.memset(big, 0.0)
    src = NkiTensor(np.zeros((256, 64), BF16), "bfloat16", nl.sbuf)
    with pytest.raises(errors.ConstraintError, match="topk: val_dst partition"):
        nisa.topk(NkiTensor(np.zeros((256, 8), BF16), "bfloat16", nl.sbuf), idx, src, 64)
    assert not big.data.any()


# ---- item 10: eager calls from several threads -----------------------------------------

def test_eager_sbuf_accounting_is_per_thread():
    """Each thread allocates 60% of SBUF: serially fine, so in threads too (main: one
    machine's accounting for every thread, so the threads' tensors did not fit)."""
    per_part = int(nl.sbuf_capacity() * 0.6) // 4
    errs, go = [], threading.Barrier(4)

    def work():
        try:
            go.wait()
            t = nl.ndarray((128, per_part), nl.float32, buffer=nl.sbuf)
            go.wait()
            nisa.memset(t, 1.0)
            del t
        except Exception as e:  # noqa: BLE001
            errs.append(e)
            go.abort()
    th = [threading.Thread(target=work) for _ in range(4)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    assert errs == []


def test_eager_compute_four_threads_bit_identical_to_one():
    rng = np.random.default_rng(3)
    xs = [rng.standard_normal((128, 512)).astype(np.float32) for _ in range(8)]

    def run(x):
        d = sb((128, 512))
        nisa.activation(d, nl.exp, NkiTensor(x, "float32", nl.sbuf), scale=0.5)
        nisa.tensor_scalar(d, d, nl.multiply, 3.0, op1=nl.add, operand1=-1.0)
        return d.data.view(np.uint32).copy()
    serial = [run(x) for x in xs]
    out = [None] * len(xs)

    def work(t):
        for k in range(t, len(xs), 4):
            out[k] = run(xs[k])
    th = [threading.Thread(target=work, args=(t,)) for t in range(4)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    for a, b in zip(out, serial):
        np.testing.assert_array_equal(a, b)
