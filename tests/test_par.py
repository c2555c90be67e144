"""fastisa's worker pool (csrc/fastisa/par.h, fastisa._kernels.par).

* Every task of a job runs exactly once, whatever the thread count (more threads than
  CPUs included), the task count, the work per task (uneven: tasks are stolen) and the
  spin time (0: the workers sleep between jobs and are woken).
* Jobs submitted from several Python threads at once (the programs of an LNC2 grid) each
  run completely: one uses the pool, the others run serially in their own thread.
* A forked child starts workers of its own.
* The kernels on the pool give the same bits on 1, 2 and 3 threads as the numpy oracle:
  elementwise, stream shuffle, dma_compute, tensor_scalar_cumulative, topk, nc_matmul.
"""

import os
import sys
import threading

import ml_dtypes
import numpy as np
import pytest

from fastisa._kernels import par
from fastisa.nki import _compute, isa as nisa, language as nl
from test_nki_compute import T, empty


@pytest.mark.parametrize("threads", [1, 2, 3, 8])
@pytest.mark.parametrize("ntasks", [1, 2, 3, 7, 64, 1000])
def test_every_task_runs_exactly_once(threads, ntasks):
    reps = 300 if ntasks < 100 else 30
    assert par.check_once(threads, ntasks, reps) == [reps] * ntasks


def test_sleeping_workers_are_woken():
    old = par.spin_us()
    try:
        par.set_spin_us(0)          # a worker sleeps after every job
        assert par.check_once(2, 16, 500) == [500] * 16
    finally:
        par.set_spin_us(old)
    assert par.spin_us() == old
    with pytest.raises(ValueError):
        par.set_spin_us(-1)


def test_jobs_from_several_threads_at_once():
    before = par.stats()
    out, errs = {}, []

    def run(i):
        try:
            out[i] = par.check_once(2, 33, 400)
        except Exception as e:          # pragma: no cover - reported below
            errs.append(e)
    ts = [threading.Thread(target=run, args=(i,)) for i in range(4)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    assert not errs
    assert all(out[i] == [400] * 33 for i in range(4))
    after = par.stats()
    assert after["jobs"] + after["serial_jobs"] - before["jobs"] - before["serial_jobs"] == 1600
    assert after["workers"] >= 1


@pytest.mark.skipif(not hasattr(os, "fork") or sys.platform == "darwin",
                    reason="fork() without exec is a Linux-only pattern here")
def test_forked_child_has_a_working_pool():
    par.check_once(2, 8, 10)             # the parent's workers exist
    pid = os.fork()
    if pid == 0:                          # pragma: no cover - the child
        ok = par.check_once(2, 50, 200) == [200] * 50
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0


def _each_thread_count(monkeypatch, fn):
    outs = []
    for th in (1, 2, 3):
        monkeypatch.setattr(_compute, "THREADS", th)
        outs.append(fn())
    return outs


def test_pool_kernels_give_the_same_bits_on_any_thread_count(rng, monkeypatch):
    P, F = 128, 2048
    x = rng.standard_normal((P, F)).astype(np.float32)
    y = rng.standard_normal((P, F)).astype(np.float32)
    z = rng.standard_normal((P, F)).astype(np.float32)
    a, b = T(x, "float32"), T(y, "float32")
    mask = [(i + 5) % 32 for i in range(32)]
    rowmap = np.array([32 * (r // 32) + mask[r % 32] for r in range(P)])

    def run():
        d1 = empty((P, F), "float32")
        nisa.tensor_tensor(d1, a, b, nl.multiply)
        d2 = empty((P, F), "float32")
        nisa.nc_stream_shuffle(d2, a, mask)
        d3 = empty((P, F), "float32", nl.hbm)
        nisa.dma_compute(d3, [T(x, "float32", nl.hbm), T(y, "float32", nl.hbm),
                              T(z, "float32", nl.hbm)], nl.add)
        d4 = empty((P, F), "float32")
        nisa.tensor_scalar_cumulative(d4, a, nl.add, nl.add, 0.25)
        return d1.data.copy(), d2.data.copy(), d3.data.copy(), d4.data.copy()
    outs = _each_thread_count(monkeypatch, run)
    cum = np.add.accumulate(x + np.float32(0.25), axis=1)    # left to right, float32
    for o in outs:
        assert o[0].tobytes() == (x * y).tobytes()
        assert o[1].tobytes() == x[rowmap].tobytes()
        assert o[2].tobytes() == ((x + y) + z).tobytes()
        assert o[3].tobytes() == cum.tobytes()


def test_pool_matmul_and_topk_give_the_same_bits_on_any_thread_count(rng, monkeypatch):
    bf = ml_dtypes.bfloat16
    s = T(rng.standard_normal((128, 128)).astype(bf), "bfloat16")
    m = T(rng.standard_normal((128, 512)).astype(bf), "bfloat16")

    def mm():
        acc = empty((128, 512), "float32", nl.psum)
        nisa.nc_matmul(dst=acc, stationary=s, moving=m)
        nisa.nc_matmul(dst=acc, stationary=s, moving=m)
        return acc.data.copy()
    outs = _each_thread_count(monkeypatch, mm)
    s32, m32 = s.data.astype(np.float32), m.data.astype(np.float32)
    want = np.zeros((128, 512), np.float32)
    for _ in range(2):
        for k in range(128):       # k ascending, a float32 multiply and add per k
            want = want + np.outer(s32[k], m32[k])
    assert all(o.tobytes() == want.tobytes() for o in outs)

    from fastisa.nki import isa
    src = rng.standard_normal((128, 2048)).astype(bf)
    res = []
    for th in (1, 2, 3):       # 8 groups of 16 partitions, n = 32768 per group, k = 4
        monkeypatch.setattr(isa, "TOPK_THREADS", th)
        t = T(src.copy(), "bfloat16")
        v, i = empty((128, 4), "bfloat16"), empty((128, 4), "uint32")
        nisa.topk(v, i, t, 16 * 2048, sorted=True)
        res.append((v.data.tobytes(), i.data.tobytes()))
    assert res[0] == res[1] == res[2]
    snake = src.reshape(8, 16, 2048).transpose(0, 2, 1).reshape(8, -1).astype(np.float32)
    top = -np.sort(-snake, axis=1)[:, :4]        # k = 4: the 4 largest of each group ...
    got = v.data.astype(np.float32).reshape(8, 16, 4)[:, :4, 0]   # ... in snake order
    assert np.array_equal(got, top)


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_large_dma_copy_on_the_pool(rng, monkeypatch, threads):
    """dma_copy of >= 256 KiB in one dtype copies row pieces on the pool: contiguous,
    strided (a slice of a wider tensor, a transposed view) and odd partition counts give
    the source's bits; an overlapping source still takes numpy's copy."""
    monkeypatch.setattr(_compute, "THREADS", threads)
    bf = ml_dtypes.bfloat16
    x = rng.standard_normal((128, 4096)).astype(bf)
    for src, shape in [(T(x, "bfloat16", nl.hbm), (128, 4096)),
                       (T(x, "bfloat16", nl.hbm)[:, 1000:3100], (128, 2100)),
                       (T(x[:77], "bfloat16", nl.hbm), (77, 4096))]:
        d = empty(shape, "bfloat16")
        nisa.dma_copy(dst=d, src=src)
        assert d.data.view(np.uint16).tobytes() == np.ascontiguousarray(
            src.data).view(np.uint16).tobytes()
    big = T(np.concatenate([x, x]), "bfloat16", nl.hbm)      # [256, 4096]
    want = np.array(big.data[0:128])
    nisa.dma_copy(dst=big[64:192], src=big[0:128])            # overlapping: numpy's copy
    assert big.data[64:192].view(np.uint16).tobytes() == want.view(np.uint16).tobytes()


def test_threaded_copy_only_into_arrays_of_distinct_elements():
    """The dma_copy row split applies only where no two dst elements share memory."""
    from fastisa.nki.isa import _distinct_elements
    from numpy.lib.stride_tricks import as_strided
    base = np.zeros((256, 4096), np.float32)
    assert _distinct_elements(base) and _distinct_elements(base[:, 100:3000])
    assert _distinct_elements(base[::2, ::3]) and _distinct_elements(base.T[5:900])
    assert not _distinct_elements(as_strided(base, (128, 4096), (0, 4)))
    assert not _distinct_elements(as_strided(base, (128, 4096), (8, 4)))    # rows overlap
    assert _distinct_elements(as_strided(base, (128, 4096), (4096 * 4, 4)))
