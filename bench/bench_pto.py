"""PTO benchmarks: TROWEXPANDEXPDIF and the row-softmax sequence on [1024, 1024] tiles,
fastisa against the same instructions written with numpy (same rounding), in one run.

    pytest bench/bench_pto.py --benchmark-only --benchmark-group-by=group
    python bench/bench_pto.py          # prints the fastisa/numpy ratios directly

The numpy versions produce the same bits as fastisa (checked before timing): float16 and
float32 arithmetic rounded once to the dtype, exp computed in float64 and rounded once,
TROWSUM accumulated left to right in float32 (``np.cumsum``), TROWMAX exact.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pytest

from fastisa import pto

R = C = 1024
V = pto.TileType.Vec
CM = pto.BLayout.ColMajor


class Case:
    def __init__(self, dtype, seed=0):
        rng = np.random.default_rng(seed)
        self.dt = np.dtype(dtype)
        self.x = pto.Tile(V, self.dt, R, C)
        self.x.data[...] = (rng.standard_normal((R, C)) * 3).astype(self.dt)
        self.m = pto.Tile(V, self.dt, R, 1, blayout=CM)
        self.s = pto.Tile(V, self.dt, R, 1, blayout=CM)
        self.e = pto.Tile(V, self.dt, R, C)
        self.y = pto.Tile(V, self.dt, R, C)
        pto.TROWMAX(self.m, self.x)

    # ---- fastisa ----
    def pto_expdif(self):
        pto.TROWEXPANDEXPDIF(self.e, self.x, self.m)
        return self.e.data

    def pto_softmax(self):
        pto.TROWMAX(self.m, self.x)
        pto.TROWEXPANDSUB(self.e, self.x, self.m)
        pto.TEXP(self.e, self.e)
        pto.TROWSUM(self.s, self.e)
        pto.TROWEXPANDDIV(self.y, self.e, self.s)
        return self.y.data

    # ---- numpy, same rounding ----
    def _sub(self, a, b):
        if self.dt == np.float32:
            return a - b
        return (a.astype(np.float32) - b.astype(np.float32)).astype(self.dt)

    def np_expdif(self):
        X, M = self.x.data, self.m.data
        return np.exp(self._sub(X, M).astype(np.float64)).astype(self.dt)

    def np_softmax(self):
        X = self.x.data
        M = X.max(axis=1, keepdims=True)
        E = np.exp(self._sub(X, M).astype(np.float64)).astype(self.dt)
        S = np.cumsum(E.astype(np.float32), axis=1)[:, -1:].astype(self.dt)
        if self.dt == np.float32:
            return E / S
        return (E.astype(np.float32) / S.astype(np.float32)).astype(self.dt)


CASES = {}


def case(dtype):
    if dtype not in CASES:
        CASES[dtype] = Case(dtype)
    return CASES[dtype]


@pytest.mark.parametrize("dtype", ["float32", "float16"])
@pytest.mark.parametrize("what", ["expdif", "softmax"])
@pytest.mark.parametrize("impl", ["fastisa", "numpy"])
def test_pto(benchmark, dtype, what, impl):
    c = case(dtype)
    fa = getattr(c, f"pto_{what}")
    fn = getattr(c, f"np_{what}")
    assert np.array_equal(fa().view(np.uint16 if c.dt.itemsize == 2 else np.uint32),
                          fn().view(np.uint16 if c.dt.itemsize == 2 else np.uint32))
    benchmark.group = f"pto {what} [{R}, {C}] {dtype}"
    benchmark.extra_info["impl"] = impl
    benchmark(fa if impl == "fastisa" else fn)


def _gil_work(tiles, reps=4):
    for _ in range(reps):
        for src, dst in tiles:
            pto.TEXP(dst, src)


def _gil_pairs():
    rng = np.random.default_rng(1)
    pairs = []
    for _ in range(2):
        a = pto.Tile(V, np.float32, 256, 1024)
        a.data[...] = rng.standard_normal((256, 1024)).astype(np.float32)
        pairs.append([(a, pto.Tile(V, np.float32, 256, 1024))])
    return pairs


@pytest.mark.parametrize("mode", ["sequential", "two-python-threads"])
def test_pto_gil_released(benchmark, mode):
    """Two Python threads running TEXP on separate tiles (kernel threads off): faster than
    running the same work one after the other only because every kernel releases the GIL."""
    import threading
    pairs = _gil_pairs()
    old = pto.get_num_threads()
    pto.set_num_threads(1)

    def seq():
        for p in pairs:
            _gil_work(p)

    def par():
        ts = [threading.Thread(target=_gil_work, args=(p,)) for p in pairs]
        for t in ts:
            t.start()
        for t in ts:
            t.join()

    benchmark.group = "pto GIL release: 2 x 4 TEXP [256, 1024] float32"
    try:
        benchmark(seq if mode == "sequential" else par)
    finally:
        pto.set_num_threads(old)


# ---- gather / scatter and sort families (issue 13) --------------------------------------
GR, GC = 256, 256


class GatherSortCase:
    """TGATHER / TSCATTER (index forms), MGATHER and TSORT32 on [256, 256] float32 against
    the numpy equivalents (same bits, checked before timing)."""

    def __init__(self, seed=0):
        rng = np.random.default_rng(seed)
        n = GR * GC
        self.src = pto.Tile(V, np.float32, GR, GC)
        self.src.data[...] = rng.standard_normal((GR, GC)).astype(np.float32)
        self.idx = pto.Tile(V, np.int32, GR, GC)
        self.idx.data[...] = rng.permutation(n).reshape(GR, GC)
        self.dst = pto.Tile(V, np.float32, GR, GC)
        self.gm_arr = rng.standard_normal(n).astype(np.float32)
        self.gm = pto.GlobalTensor(self.gm_arr)
        self.sidx = pto.Tile(V, np.uint32, GR, GC)
        self.sidx.data[...] = np.arange(GC, dtype=np.uint32)
        self.sdst = pto.Tile(V, np.float32, GR, 2 * GC)

    def pto_gather(self):
        pto.TGATHER(self.dst, self.src, self.idx)
        return self.dst.data

    def np_gather(self):
        return self.src.data.reshape(-1)[self.idx.data]

    def pto_scatter(self):
        pto.TSCATTER(self.dst, self.src, self.idx)
        return self.dst.data

    def np_scatter(self):
        out = self.dst.data.copy()
        out.reshape(-1)[self.idx.data.reshape(-1)] = self.src.data.reshape(-1)
        return out

    def pto_mgather(self):
        pto.MGATHER(self.dst, self.gm, self.idx)
        return self.dst.data

    def np_mgather(self):
        return self.gm_arr[self.idx.data]

    def pto_sort32(self):
        pto.TSORT32(self.sdst, self.src, self.sidx)
        return self.sdst.data

    def np_sort32(self):
        v = self.src.data.reshape(GR, GC // 32, 32)
        i = self.sidx.data.reshape(GR, GC // 32, 32)
        order = np.lexsort((i, -v.astype(np.float64)), axis=-1)
        vs = np.take_along_axis(v, order, -1)
        is_ = np.take_along_axis(i, order, -1)
        out = np.empty((GR, GC // 32, 32, 2), np.float32)
        out[..., 0] = vs
        out[..., 1] = is_.view(np.float32)
        return out.reshape(GR, 2 * GC)


_GS = []


def gs_case():
    if not _GS:
        _GS.append(GatherSortCase())
    return _GS[0]


@pytest.mark.parametrize("what", ["gather", "scatter", "mgather", "sort32"])
@pytest.mark.parametrize("impl", ["fastisa", "numpy"])
def test_pto_gather_sort(benchmark, what, impl):
    c = gs_case()
    fa, fn = getattr(c, f"pto_{what}"), getattr(c, f"np_{what}")
    assert np.array_equal(fa().view(np.uint32), fn().view(np.uint32))
    benchmark.group = f"pto {what} [{GR}, {GC}] float32"
    benchmark.extra_info["impl"] = impl
    benchmark(fa if impl == "fastisa" else fn)


def _best(f, n=15):
    best = float("inf")
    for _ in range(n):
        t = time.perf_counter()
        f()
        best = min(best, time.perf_counter() - t)
    return best


def main() -> int:
    print(f"PTO [{R}, {C}]: best of 15, fastisa vs numpy with the same rounding")
    for dtype in ("float32", "float16"):
        c = case(dtype)
        for what in ("expdif", "softmax"):
            fa, fn = getattr(c, f"pto_{what}"), getattr(c, f"np_{what}")
            same = np.array_equal(np.asarray(fa()).tobytes(), np.asarray(fn()).tobytes())
            ta, tn = _best(fa), _best(fn)
            print(f"  {what:8s} {dtype:8s} fastisa {ta * 1e3:8.2f} ms   numpy {tn * 1e3:8.2f} ms"
                  f"   ratio {tn / ta:5.2f}x   same bits: {same}")
    c = gs_case()
    print(f"PTO gather/scatter/sort [{GR}, {GC}] float32")
    for what in ("gather", "scatter", "mgather", "sort32"):
        fa, fn = getattr(c, f"pto_{what}"), getattr(c, f"np_{what}")
        same = np.array_equal(np.asarray(fa()).tobytes(), np.asarray(fn()).tobytes())
        ta, tn = _best(fa), _best(fn)
        print(f"  {what:8s} fastisa {ta * 1e3:8.2f} ms   numpy {tn * 1e3:8.2f} ms"
              f"   ratio {tn / ta:5.2f}x   same bits: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
