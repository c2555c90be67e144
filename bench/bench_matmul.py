"""Benchmark: matmul-heavy kernels, fastisa vs numpy's float32 matmul (issue 15), one run.

Rows (each ratio = fastisa time / numpy time; bar: <= 2x):

* ``nc_matmul [128,128]x[128,512] bf16``: one nc_matmul into a float32 PSUM tile (the
  tutorial's tile) against ``s32.T @ m32`` on float32 copies of the same operands.
* ``NKI matmul tutorial``: fastisa's mirror of the nki-samples fully optimised matmul
  (``fastisa.examples.nki_matmul_steps.matmul_optimized``: 128 x 128 x 512 tiles, blocks
  16 x 2 x 8; bf16 inputs, float32 PSUM, bf16 result) at lhsT [K=1024, M=4096], rhs
  [1024, N=2048] -- 1,024 nc_matmul calls -- as one ``nki.simulate`` call, against numpy's
  ``lhsT32.T @ rhs32`` (float32 operands prepared outside the timing).
* ``PTO TMATMUL [1024,1024]x[1024,128] f32``: one TMATMUL (the flash attention's P @ V)
  against numpy's ``p @ v``.
* ``PTO flash attention S=1024 D=128``: ``fastisa.examples.pto_flash_attention``'s
  instruction sequence (TLOAD, TTRANS, TMATMUL, row softmax, TMATMUL, TSTORE) on float32
  [1024, 128] Q, K, V, against the numpy float32 implementation
  ``softmax(Q @ K.T * scale) @ V`` (same steps: max, subtract, exp, sum, divide).

Accumulation orders (the bits are those orders', not numpy's): nc_matmul sums each
output in k order 0..K-1 onto its start value, a float32 multiply and add per k;
TMATMUL is a fused multiply-add chain k = 0..K-1 from +0.

Kernels (csrc/fastisa/nki_matmul.h, csrc/fastisa/tile.h; the instruction set is chosen at run
time, AVX-512F / AVX2 / the portable build, and every one gives the same bits):
nc_matmul with bf16/fp16/fp8 operands whose products are all exact in float32 (a
per-panel exponent-range check, fused into the bf16 decode; otherwise the
multiply-then-add loop) runs an FMA microkernel over the whole K loop -- AVX-512: 4 rows x
64 columns in 16 zmm accumulators; AVX2 + FMA (csrc/fastisa/mm256.h): 6 rows x 16 columns
in 12 ymm accumulators -- on 64-byte aligned moving panels decoded by the thread that
computes them (operand buffers kept between calls); TMATMUL's float path packs B into
aligned 64-column panels, reads A in place and writes dst directly when they are
contiguous float32 rows, K in chunks of 128 (the accumulators go through memory between
chunks: exact, so the chain is unchanged), with the same two microkernels.  Threads split
panels (nc_matmul) or rows (TMATMUL) and never change a bit.  No AMX / VDPBF16PS: their
pair sums are not the documented order.  ``FASTISA_MATMUL_ISA=scalar|avx2|avx512`` forces
a path (tests/test_matmul_fastpaths.py checks each against the oracles).  Inside
``nki.simulate`` a planned nc_matmul returns while the pool's workers run it, overlapping the
kernel's Python, and a tensor_tensor behind it is deferred onto the pool after it; every
element access waits for both (``FASTISA_MM_OVERLAP=0``: off, to compare; README
"nc_matmul overlaps the kernel's Python").

Each row prints wall and CPU time (all threads of the process) and the load average: on
the shared machine compare the ratios of one run, and prefer a quiet one.  The tutorial,
TMATMUL and attention rows alternate fastisa and numpy calls, 0.25 s apart (best_pair).

Run:  python bench/bench_matmul.py
"""

from __future__ import annotations

import math
import time

import ml_dtypes
import numpy as np
import pytest

from fastisa import shim


def best(fn, reps=3, warm=1):
    """(min wall seconds, min CPU seconds of this process) over ``reps`` calls of fn after
    ``warm`` untimed ones.  On the shared machine the minimum is the least-disturbed run;
    CPU time counts every thread of the process (numpy's BLAS threads and fastisa's
    spinning pool worker included)."""
    for _ in range(warm):
        fn()
    ws, cs = [], []
    for _ in range(reps):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        ws.append(time.perf_counter() - t0)
        cs.append(time.process_time() - c0)
    return min(ws), min(cs)


def best_pair(f, g, reps=9, warm=1, settle=0.25):
    """``(best(f), best(g))`` with the calls of f and g alternated (f, g, f, g, ...): the
    shared machine's speed drifts by up to 1.5x over seconds (2026-12-02: the same build's
    tutorial 135 ms, then 200 ms for a minute, CPU time rising with it), and timing all of
    f's runs before all of g's let one side's runs fall in a slow stretch and the other's
    not; alternated, both sides' minima come from the same stretches.  Each call starts
    ``settle`` seconds after the one before: numpy's OpenBLAS threads busy-wait for work for
    about 0.1 s after a matmul (its thread timeout, 2**28 cycles), and a fastisa run started
    inside that window shares the second core with them (measured: the tutorial 2.1-2.7x
    numpy alternated back to back, 1.4x after the pause)."""
    for _ in range(warm):
        f()
        g()
    out = ([], [], [], [])
    for _ in range(reps):
        for fn, w, c in ((f, out[0], out[1]), (g, out[2], out[3])):
            time.sleep(settle)
            t0, c0 = time.perf_counter(), time.process_time()
            fn()
            w.append(time.perf_counter() - t0)
            c.append(time.process_time() - c0)
    return (min(out[0]), min(out[1])), (min(out[2]), min(out[3]))


def _tile_fns():
    from fastisa.nki import isa as nisa, language as nl
    from fastisa.nki.tensor import NkiTensor
    rng = np.random.default_rng(0)
    bf = ml_dtypes.bfloat16
    s = rng.standard_normal((128, 128)).astype(bf)
    m = rng.standard_normal((128, 512)).astype(bf)
    st, mv = NkiTensor(s, "bfloat16", nl.sbuf), NkiTensor(m, "bfloat16", nl.sbuf)
    acc = NkiTensor(np.zeros((128, 512), np.float32), "float32", nl.psum)
    s32, m32 = s.astype(np.float32), m.astype(np.float32)

    def fi():
        nisa.nc_matmul(dst=acc, stationary=st, moving=mv, accumulate=False)

    def npf():
        s32.T @ m32
    return fi, npf


def nki_tile():
    fi, npf = _tile_fns()
    return best(fi, 60), best(npf, 60)


def _tutorial_fns(K=1024, M=4096, N=2048):
    with shim.installed():
        import nki
        from fastisa.examples import nki_matmul_steps as steps
    rng = np.random.default_rng(0)
    bf = ml_dtypes.bfloat16
    lhsT = rng.standard_normal((K, M)).astype(bf)
    rhs = rng.standard_normal((K, N)).astype(bf)
    run = nki.simulate(steps.matmul_optimized)
    out = np.asarray(run(lhsT, rhs))
    a, b = lhsT.astype(np.float32), rhs.astype(np.float32)
    ref = a.T @ b
    assert np.all(np.abs(out.astype(np.float32) - ref) <= np.abs(ref) * 2.0 ** -7 + 2.0 ** -6)
    return (lambda: run(lhsT, rhs)), (lambda: a.T @ b)


def nki_tutorial():
    # nine runs each side, alternated: on the shared machine single runs of either side
    # vary by up to 30% (and stretches of seconds by up to 1.5x), and the minimum of nine
    # is the least-disturbed one (2026-12-02)
    return best_pair(*_tutorial_fns(), 9)


def _attention_fns(S=1024, D=128):
    from fastisa import pto
    from fastisa.pto import BLayout, Tile, TileType
    f32 = np.float32
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((S, D)).astype(f32) for _ in range(3))
    o = np.zeros((S, D), f32)
    scale = 1.0 / math.sqrt(D)
    t = dict(q=Tile(TileType.Vec, f32, S, D), k=Tile(TileType.Vec, f32, S, D),
             v=Tile(TileType.Vec, f32, S, D), kt=Tile(TileType.Vec, f32, D, S),
             q_l=Tile(TileType.Left, f32, S, D), kt_r=Tile(TileType.Right, f32, D, S),
             v_r=Tile(TileType.Right, f32, S, D), sa=Tile(TileType.Acc, f32, S, S),
             sc=Tile(TileType.Vec, f32, S, S), tmp=Tile(TileType.Vec, f32, S, S),
             mx=Tile(TileType.Vec, f32, S, 1, blayout=BLayout.ColMajor),
             sm=Tile(TileType.Vec, f32, S, 1, blayout=BLayout.ColMajor),
             p_l=Tile(TileType.Left, f32, S, S), oa=Tile(TileType.Acc, f32, S, D),
             o=Tile(TileType.Vec, f32, S, D))
    gq, gk, gv, go = (pto.GlobalTensor(x) for x in (q, k, v, o))

    def fi():
        pto.TLOAD(t["q"], gq)
        pto.TLOAD(t["k"], gk)
        pto.TLOAD(t["v"], gv)
        pto.TMOV(t["q_l"], t["q"])
        pto.TTRANS(t["kt"], t["k"])
        pto.TMOV(t["kt_r"], t["kt"])
        pto.TMATMUL(t["sa"], t["q_l"], t["kt_r"])
        pto.TMOV(t["sc"], t["sa"])
        pto.TMULS(t["sc"], t["sc"], scale)
        pto.TROWMAX(t["mx"], t["sc"], t["tmp"])
        pto.TROWEXPANDSUB(t["tmp"], t["sc"], t["mx"])
        pto.TEXP(t["tmp"], t["tmp"])
        pto.TROWSUM(t["sm"], t["tmp"])
        pto.TROWEXPANDDIV(t["sc"], t["tmp"], t["sm"])
        pto.TMOV(t["p_l"], t["sc"])
        pto.TMOV(t["v_r"], t["v"])
        pto.TMATMUL(t["oa"], t["p_l"], t["v_r"])
        pto.TMOV(t["o"], t["oa"])
        pto.TSTORE(go, t["o"])

    def npf():
        s = (q @ k.T) * f32(scale)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        return p @ v
    fi()
    ref = npf()
    assert np.max(np.abs(o - ref)) < 1e-4
    return fi, npf


def _tmatmul_fns(M=1024, K=1024, N=128):
    """One TMATMUL of the flash attention's second product, P [M, K] @ V [K, N] float32
    (Left x Right into an Acc tile), against numpy's ``p @ v``; the operands are loaded and
    moved into the Left / Right tiles once, outside the timing."""
    from fastisa import pto
    from fastisa.pto import Tile, TileType
    f32 = np.float32
    rng = np.random.default_rng(0)
    p, v = rng.standard_normal((M, K)).astype(f32), rng.standard_normal((K, N)).astype(f32)
    pv, vv = Tile(TileType.Vec, f32, M, K), Tile(TileType.Vec, f32, K, N)
    pl, vr = Tile(TileType.Left, f32, M, K), Tile(TileType.Right, f32, K, N)
    acc, o = Tile(TileType.Acc, f32, M, N), Tile(TileType.Vec, f32, M, N)
    out = np.zeros((M, N), f32)
    pto.TLOAD(pv, pto.GlobalTensor(p))
    pto.TLOAD(vv, pto.GlobalTensor(v))
    pto.TMOV(pl, pv)
    pto.TMOV(vr, vv)

    def fi():
        pto.TMATMUL(acc, pl, vr)

    def npf():
        return p @ v
    fi()
    pto.TMOV(o, acc)
    pto.TSTORE(pto.GlobalTensor(out), o)
    ref = p.astype(np.float64) @ v.astype(np.float64)
    assert np.max(np.abs(out - ref)) < 1e-3
    return fi, npf


def pto_tmatmul():
    return best_pair(*_tmatmul_fns(), 15, warm=3)


def pto_attention():
    fi, npf = _attention_fns()
    # the first dozen calls of a fresh process are up to 2x slower (first use of the 4 MiB
    # tiles' pages; measured 2026-12-02: 15.8, 11.2, 7.2 ... then 5.1-5.3 ms steady), so
    # both sides are timed in the steady state
    return best_pair(fi, npf, 15, warm=12)


def main():
    rows = [("nc_matmul [128,128]x[128,512] bf16", nki_tile),
            ("NKI matmul tutorial 4096x1024x2048", nki_tutorial),
            ("PTO TMATMUL [1024,1024]x[1024,128] f32", pto_tmatmul),
            ("PTO flash attention S=1024 D=128", pto_attention)]
    import os
    from fastisa.nki import _compute
    print("matmul kernels: fastisa / numpy float32, min over runs (bar: wall ratio <= 2x); "
          f"load average {os.getloadavg()[0]:.1f}, NKI kernel threads {_compute._threads()}, "
          f"nc_matmul threads {_compute._mm_threads()}")
    print(f"{'kernel':<38} {'fastisa ms':>11} {'numpy ms':>10} {'ratio':>7}   "
          f"{'cpu ms':>8} {'np cpu ms':>9} {'cpu ratio':>9}")
    for name, fn in rows:
        (tf, cf), (tn, cn) = fn()
        r = tf / tn
        print(f"{name:<38} {tf * 1e3:>11.3f} {tn * 1e3:>10.3f} {r:>6.2f}x   "
              f"{cf * 1e3:>8.2f} {cn * 1e3:>9.2f} {cf / max(cn, 1e-9):>8.2f}x"
              f"{'' if r <= 2 else '  (above the 2x bar)'}")


# ---- pytest-benchmark (pytest bench/bench_matmul.py --benchmark-only) ----------------------
_FNS: dict = {}


def _fns(name, make):
    if name not in _FNS:
        _FNS[name] = make()
    return _FNS[name]


_CASES = {"tile": (_tile_fns, None), "tutorial": (_tutorial_fns, (5, 1)),
          "tmatmul": (_tmatmul_fns, (15, 3)),
          "attention": (_attention_fns, (15, 12))}    # (make, (rounds, warmup) or calibrated)


@pytest.mark.parametrize("side", ["fastisa", "numpy"])
@pytest.mark.parametrize("case", list(_CASES))
def test_matmul(benchmark, case, side):
    make, rounds = _CASES[case]
    benchmark.group = f"matmul-{case}"
    fn = _fns(case, make)[0 if side == "fastisa" else 1]
    if rounds is None:
        benchmark(fn)
    else:
        benchmark.pedantic(fn, rounds=rounds[0], warmup_rounds=rounds[1])


if __name__ == "__main__":
    main()
