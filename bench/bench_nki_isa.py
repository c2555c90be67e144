"""Benchmark: one instruction per nki-isa family at [128, 2048] float32, fastisa vs numpy.

Each baseline is a numpy implementation of the same documented semantics, written the way
a numpy simulator runs it (vectorised over partitions; a Python loop only where the
semantics are sequential along the free axis, as a scan or a per-lane generator is):

=========  ============================  ====================================================
family     fastisa instruction           numpy baseline
=========  ============================  ====================================================
scan       tensor_tensor_scan (mul, add)  column loop ``r = d0[:, i] * r + d1[:, i]``
cumul      tensor_scalar_cumulative       ``np.add.accumulate(x + imm, axis=1)``
stats      4 x bn_stats + bn_aggr         per 512-tile even/odd mean and m2, Chan combine
move       nc_stream_shuffle              ``dst[:] = src[rowmap]`` (quadrant permutation)
predicate  tensor_copy_predicated         ``np.copyto(dst, src, where=pred != 0)``
dma        dma_compute (3 sources)        ``(a + b) + c``
transpose  dma_transpose [128, 128] bf16  ``src.T.copy()`` x 16 (the 2048 columns in 128-wide
           x 16                           tiles; the instruction's last dim is <= 128, 2 bytes)
mx         quantize_mx (bf16 -> e4m3fn)   group amax / exponent / divide / ml_dtypes cast
random     rng (uint32)                   per-lane XORWOW, vectorised over the 128 lanes
=========  ============================  ====================================================

Each baseline is the form a user writing a numpy simulator would write for the
documented semantics, neither a strawman nor hand-tuned: no Python loop over what numpy
vectorises, and no ``out=`` juggling that is only right for some operand aliasings.  The
two rows nearest the bar, checked against the alternatives (one core, load 2-7):

- ``move``: ``dst[:] = src[rowmap]``, the whole tile gathered at once (into a 1 MiB
  temporary, then copied; 88-94 us at load 2, 100-115 us at load 8).  Not the fastest
  natural form: the formula written per quadrant, ``for q in range(4):
  dst[32q:32q+32] = src[32q + mask]``, does the same two copies through 256 KiB
  temporaries that stay in cache, 20-24% faster (80-87 us against 101-115 us, alternating
  rounds at load 8), so against it every move ratio here is about 0.8x as large;
  ``np.take(src, rowmap, axis=0, out=dst)`` is slower (124-129 us).  fastisa copies each
  row once, at ``memcpy``'s speed on the same bytes (30-34 us for 1 MiB here): about 3x
  against the whole-tile gather (2.3x against the quadrant loop) is the one-core ceiling.
- ``dma``: ``np.add(np.add(a, b), c, out=dst)`` -- what ``dst[...] = a + b + c`` costs too
  (215-218 us at load 2), and right when dst is one of the sources.  The
  temporary-free ``np.add(a, b, out=dst); np.add(dst, c, out=dst)`` (150-163 us, wrong
  when dst is c) is the tuned form.  fastisa's one fused AVX-512 / AVX2 pass (3 MiB
  read, 1 MiB written: 141-144 us, a C loop over the same arrays 124-131 us) runs at the
  core's L3 bandwidth (the 4 MiB working set exceeds the 2 MiB L2): about 1.7x is the
  one-core ceiling.  With two idle cores each thread's half fits its own L2.

Each case is timed in 60 alternating rounds of about 2 ms (fastisa, numpy, fastisa, ...)
and each side's best round is reported (the machine may be shared: the least disturbed
round of each; rounds shorter than the scheduler's time slice, so that at a load average
of 10 on 2 cores some rounds of each side still run undisturbed -- 9 rounds of 50 ms gave
1.5x and 4.4x for one case in consecutive runs there).
fastisa's OpenMP kernels use the idle CPUs at the first instruction (``FASTISA_THREADS=n``
sets it); numpy is single-threaded.  ``--cpu`` adds each side's CPU time per call (its
best round, ``time.process_time``: every thread's time, none of the time the process
waited for a CPU) and their ratio, the figure a loaded machine disturbs least.

Run:  python bench/bench_nki_isa.py [--cpu]   (prints a table and the ratios; bar: >= 3x)
"""

from __future__ import annotations

import os
import time

import ml_dtypes
import numpy as np

from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from fastisa.nki._compute import _threads
from fastisa.nki.tensor import NkiTensor

P, F = 128, 2048
BF16 = ml_dtypes.bfloat16
ROUNDS = 60
ROUND_S = 0.002


def _inner(fn):
    """Calls per timed round: about ROUND_S of work (at least one call)."""
    fn()
    t0 = time.perf_counter()
    fn()
    dt = time.perf_counter() - t0
    return max(1, int(ROUND_S / max(dt, 1e-7)))


def timeit_pair(fa, fb, rounds=ROUNDS, cpu=False):
    """Best-of-rounds seconds per call of fa and of fb, timed in alternating rounds (fa's
    round, then fb's), so that a load spike on the shared machine hits both sides alike
    and the best round of each is the least disturbed one.  cpu: also the best rounds'
    CPU seconds per call (time.process_time), returned as (ta, tb, ca, cb)."""
    na, nb = _inner(fa), _inner(fb)
    ta, tb, ca, cb = [], [], [], []
    clk = time.process_time
    for _ in range(rounds):
        c0, t0 = clk(), time.perf_counter()
        for _ in range(na):
            fa()
        ta.append((time.perf_counter() - t0) / na)
        ca.append((clk() - c0) / na)
        c0, t0 = clk(), time.perf_counter()
        for _ in range(nb):
            fb()
        tb.append((time.perf_counter() - t0) / nb)
        cb.append((clk() - c0) / nb)
    if cpu:
        return min(ta), min(tb), min(ca), min(cb)
    return min(ta), min(tb)


def T(a, fmt, buf=nl.sbuf):
    return NkiTensor(np.ascontiguousarray(a), fmt, buf)


def cases():
    rng = np.random.default_rng(0)
    x = rng.standard_normal((P, F)).astype(np.float32)
    y = rng.standard_normal((P, F)).astype(np.float32)
    z = rng.standard_normal((P, F)).astype(np.float32)
    out = []

    # scan
    a, b, d = T(x * 0.5, "float32"), T(y, "float32"), T(np.empty((P, F), np.float32), "float32")

    def np_scan():
        r = np.zeros(P, np.float32)
        o = np.empty((P, F), np.float32)
        for i in range(F):
            r = a.data[:, i] * r + b.data[:, i]
            o[:, i] = r
        return o
    out.append(("scan", "tensor_tensor_scan",
                lambda: nisa.tensor_tensor_scan(d, a, b, 0.0, nl.multiply, nl.add), np_scan))

    # cumulative
    out.append(("cumul", "tensor_scalar_cumulative",
                lambda: nisa.tensor_scalar_cumulative(d, a, nl.add, nl.add, 0.25),
                lambda: np.add.accumulate(a.data + np.float32(0.25), axis=1)))

    # stats
    st = T(np.empty((P, 24), np.float32), "float32")
    mv = T(np.empty((P, 2), np.float32), "float32")

    def fi_stats():
        for k in range(4):
            nisa.bn_stats(st[:, 6 * k:6 * k + 6], a[:, 512 * k:512 * (k + 1)])
        nisa.bn_aggr(mv, st)

    def np_stats():
        res = []
        for k in range(4):
            t = a.data[:, 512 * k:512 * (k + 1)]
            for h in (t[:, 0::2], t[:, 1::2]):
                m = h.mean(axis=1, dtype=np.float32)
                res.append((np.float32(h.shape[1]), m, ((h - m[:, None]) ** 2).sum(axis=1)))
        n, mean, m2 = res[0]
        n = np.full(P, n, np.float32)
        for nb, mb, m2b in res[1:]:
            nn = n + nb
            dlt = mb - mean
            mean = mean + dlt * (nb / nn)
            m2 = (m2 + m2b) + dlt * dlt * (n * nb / nn)
            n = nn
        return mean, m2 / n
    out.append(("stats", "bn_stats x4 + bn_aggr", fi_stats, np_stats))

    # move: stream shuffle
    mask = [(i + 5) % 32 for i in range(32)]
    rowmap = np.array([32 * (r // 32) + mask[r % 32] for r in range(P)])
    dd = T(np.empty((P, F), np.float32), "float32")
    out.append(("move", "nc_stream_shuffle", lambda: nisa.nc_stream_shuffle(dd, a, mask),
                lambda: dd.data.__setitem__(slice(None), a.data[rowmap])))

    # predicated copy
    pred = T((rng.random((P, F)) < 0.5).astype(np.uint8), "uint8")
    out.append(("predicate", "tensor_copy_predicated",
                lambda: nisa.tensor_copy_predicated(dd, b, pred),
                lambda: np.copyto(dd.data, b.data, where=pred.data != 0)))

    # dma_compute
    c = T(z, "float32", nl.hbm)
    hb, hc = T(x, "float32", nl.hbm), T(y, "float32", nl.hbm)
    dh = T(np.empty((P, F), np.float32), "float32", nl.hbm)
    out.append(("dma", "dma_compute (3 srcs)", lambda: nisa.dma_compute(dh, [hb, hc, c], nl.add),
                lambda: np.add(np.add(hb.data, hc.data), c.data, out=dh.data)))

    # transpose (2-byte, <= 128 columns per instruction)
    xb = T(x.astype(BF16), "bfloat16", nl.hbm)
    tb = [T(np.empty((128, 128), BF16), "bfloat16") for _ in range(16)]   # 16 SBUF tiles

    def fi_tr():
        for k in range(16):
            nisa.dma_transpose(tb[k], xb[:, 128 * k:128 * (k + 1)])

    def np_tr():
        for k in range(16):
            tb[k].data[...] = xb.data[:, 128 * k:128 * (k + 1)].T
    out.append(("transpose", "dma_transpose x16", fi_tr, np_tr))

    # mx
    qx = T(x.astype(BF16), "bfloat16")
    qd = T(np.empty((P, F // 4), np.uint32), "float8_e4m3fn_x4")
    qs = T(np.empty((P, F // 4), np.uint8), "uint8")

    def fi_mx():
        with nl.use_target("trn3"):
            nisa.quantize_mx(qd, qx, qs)

    def np_mx():
        v = qx.data.astype(np.float32)
        g = np.abs(v).reshape(P // 8, 8, F // 4, 4).max(axis=(1, 3))
        e = np.floor(np.log2(np.where(g > 0, g, 1.0))).astype(np.int32)
        s = np.clip(np.where(g > 0, e - 7 + 127, 0), 0, 254)
        scale = np.ldexp(1.0, s - 127).astype(np.float32)
        q = v / np.repeat(np.repeat(scale, 8, axis=0), 4, axis=1)
        codes = np.clip(q, -448, 448).astype(ml_dtypes.float8_e4m3fn)
        return codes.view(np.uint32), s.astype(np.uint8)
    out.append(("mx", "quantize_mx", fi_mx, np_mx))

    # random
    ru = T(np.empty((P, F), np.uint32), "uint32")
    from fastisa.nki._random import seed_states
    st0 = seed_states(0, "gpsimd")[:, :6].copy()

    def np_rng():
        s = [st0[:, k].copy() for k in range(6)]
        o = np.empty((P, F), np.uint32)
        for i in range(F):
            t = s[0] ^ (s[0] >> np.uint32(2))
            s[0], s[1], s[2], s[3] = s[1], s[2], s[3], s[4]
            s[4] = (s[4] ^ (s[4] << np.uint32(4))) ^ (t ^ (t << np.uint32(1)))
            s[5] = s[5] + np.uint32(362437)
            o[:, i] = s[5] + s[4]
        return o
    out.append(("random", "rng", lambda: nisa.rng(ru, engine=nisa.engine.gpsimd), np_rng))
    return out


def main(argv=None):
    import sys
    cpu = "--cpu" in (sys.argv[1:] if argv is None else argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    print(f"nki-isa families at [{P}, {F}] float32 (best of {ROUNDS} alternating rounds of "
          f"~{ROUND_S * 1e3:.0f} ms; "
          f"fastisa vs numpy, same semantics; load average {load:.2f}, "
          f"fastisa threads {_threads()})")
    print(f"{'family':<10} {'instruction':<26} {'fastisa us':>11} {'numpy us':>11} {'ratio':>7}"
          + (f" {'fi cpu us':>10} {'np cpu us':>10} {'cpu ratio':>9}" if cpu else ""))
    worst = None
    for fam, name, fi, npf in cases():
        tf, tn, *c = timeit_pair(fi, npf, cpu=cpu)
        r = tn / tf
        worst = r if worst is None else min(worst, r)
        extra = (f" {c[0] * 1e6:>10.1f} {c[1] * 1e6:>10.1f} {c[1] / max(c[0], 1e-12):>8.1f}x"
                 if cpu else "")
        print(f"{fam:<10} {name:<26} {tf * 1e6:>11.1f} {tn * 1e6:>11.1f} {r:>6.1f}x{extra}"
              f"{'' if r >= 3 else '  (below the 3x bar)'}")
    print(f"lowest ratio {worst:.1f}x")


if __name__ == "__main__":
    main()
