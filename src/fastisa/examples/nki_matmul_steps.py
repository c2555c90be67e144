"""The optimisation steps of a tiled NKI matmul, timed by fastisa's engine schedule.

Five kernels in the patterns of the AWS NKI matrix-multiplication tutorial (aws-neuron-sdk
``nki/guides/tutorials/matrix_multiplication.rst``), written for fastisa: one
[128, 64] x [128, 512] tile (basic); then, for a large [K, M] x [K, N] product, tiles loaded
inside the K loop (tiled), the stationary tiles hoisted out of the N loop (hoisted loads),
the free dimensions blocked so loaded tiles are reused (blocked), and every dimension
blocked with one DMA per block and SBUF accumulation across K blocks (fully optimised).

All five compute lhsT.T @ rhs exactly as the hardware does: bfloat16 inputs, float32 PSUM
accumulation, the result rounded to bfloat16.  The demo checks each against numpy and
prints the schedule's estimated latency: each step is faster than the one before and the
last one is compute-bound on the Tensor engine.  The latencies are model estimates
(``fastisa.schedule``), not measurements.
"""

import ml_dtypes
import numpy as np

import nki
import nki.isa as nisa
import nki.language as nl

from fastisa import cost
from fastisa.examples import Report

TITLE = "NKI matmul optimisation steps (basic, tiled, hoisted, blocked, fully optimised), timed"
FRONTEND = "nki"
ORDER = 40

TM, TK, TN = 128, 128, 512   # stationary free, partition (contraction), moving free maxima


@nki.jit
def matmul_basic(lhsT, rhs):
    """[128, 64]^T x [128, 512] -> [64, 512]: one DMA per operand, one matmul."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    a = nl.ndarray((K, M), dtype=lhsT.dtype, buffer=nl.sbuf)
    b = nl.ndarray((K, N), dtype=rhs.dtype, buffer=nl.sbuf)
    nisa.dma_copy(dst=a, src=lhsT)
    nisa.dma_copy(dst=b, src=rhs)
    acc = nl.ndarray((M, N), dtype=nl.float32, buffer=nl.psum)
    nisa.nc_matmul(dst=acc, stationary=a, moving=b)
    res = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.sbuf)
    nisa.tensor_copy(dst=res, src=acc)
    nisa.dma_copy(dst=out, src=res)
    return out


@nki.jit
def matmul_tiled(lhsT, rhs):
    """Every (m, n) output tile accumulates K/128 matmuls; both operand tiles are loaded
    inside the K loop."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        for n in nl.affine_range(N // TN):
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                a = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                b = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
                nisa.dma_copy(dst=b, src=rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                nisa.nc_matmul(dst=acc, stationary=a, moving=b)
            res = nl.ndarray((TM, TN), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=res)
    return out


@nki.jit
def matmul_hoisted(lhsT, rhs):
    """As tiled, but the K stationary tiles of an output row are loaded once per m."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // TM):
        a_tiles = []
        for k in nl.affine_range(K // TK):
            a = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.dma_copy(dst=a, src=lhsT[k * TK:(k + 1) * TK, m * TM:(m + 1) * TM])
            a_tiles.append(a)
        for n in nl.affine_range(N // TN):
            b_tiles = []
            for k in nl.affine_range(K // TK):
                b = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=b, src=rhs[k * TK:(k + 1) * TK, n * TN:(n + 1) * TN])
                b_tiles.append(b)
            acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
            for k in nl.affine_range(K // TK):
                nisa.nc_matmul(dst=acc, stationary=a_tiles[k], moving=b_tiles[k])
            res = nl.ndarray((TM, TN), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=acc)
            nisa.dma_copy(dst=out[m * TM:(m + 1) * TM, n * TN:(n + 1) * TN], src=res)
    return out


@nki.jit
def matmul_blocked(lhsT, rhs, BM=2, BN=2):
    """The free dimensions blocked: BM stationary and BN moving tile columns are loaded
    once per block pair and reused by BM * BN output tiles."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    for m in nl.affine_range(M // (TM * BM)):
        a_tiles = []
        for bm in nl.affine_range(BM):
            col = (m * BM + bm) * TM
            row = []
            for k in nl.affine_range(K // TK):
                a = nl.ndarray((TK, TM), dtype=lhsT.dtype, buffer=nl.sbuf)
                nisa.dma_copy(dst=a, src=lhsT[k * TK:(k + 1) * TK, col:col + TM])
                row.append(a)
            a_tiles.append(row)
        for n in nl.affine_range(N // (TN * BN)):
            b_tiles = []
            for bn in nl.affine_range(BN):
                col = (n * BN + bn) * TN
                row = []
                for k in nl.affine_range(K // TK):
                    b = nl.ndarray((TK, TN), dtype=rhs.dtype, buffer=nl.sbuf)
                    nisa.dma_copy(dst=b, src=rhs[k * TK:(k + 1) * TK, col:col + TN])
                    row.append(b)
                b_tiles.append(row)
            for bm in nl.affine_range(BM):
                for bn in nl.affine_range(BN):
                    acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
                    for k in nl.affine_range(K // TK):
                        nisa.nc_matmul(dst=acc, stationary=a_tiles[bm][k],
                                       moving=b_tiles[bn][k])
                    res = nl.ndarray((TM, TN), dtype=lhsT.dtype, buffer=nl.sbuf)
                    nisa.tensor_copy(dst=res, src=acc)
                    r0, c0 = (m * BM + bm) * TM, (n * BN + bn) * TN
                    nisa.dma_copy(dst=out[r0:r0 + TM, c0:c0 + TN], src=res)
    return out


@nki.jit
def matmul_optimized(lhsT, rhs, BM=16, BN=2, BK=8):
    """Every dimension blocked: one DMA per [128, BK, block] operand block, partial sums of
    a K block added into float32 SBUF result rows, one DMA per result row block."""
    K, M = lhsT.shape
    _, N = rhs.shape
    out = nl.ndarray((M, N), dtype=lhsT.dtype, buffer=nl.shared_hbm)
    blk_m, blk_n, blk_k = TM * BM, TN * BN, TK * BK
    for n in nl.affine_range(N // blk_n):
        n0 = n * blk_n
        rows = []
        for i in nl.affine_range(M // TM):
            r = nl.ndarray((TM, BN, TN), dtype=nl.float32, buffer=nl.sbuf)
            nisa.memset(dst=r, value=0.0)
            rows.append(r)
        for k in nl.sequential_range(K // blk_k):
            b = nl.ndarray((TK, BK, blk_n), dtype=rhs.dtype, buffer=nl.sbuf)
            for kt in nl.affine_range(BK):
                k0 = (k * BK + kt) * TK
                nisa.dma_copy(dst=b[0:TK, kt, 0:blk_n], src=rhs[k0:k0 + TK, n0:n0 + blk_n])
            for m in nl.affine_range(M // blk_m):
                m0 = m * blk_m
                a = nl.ndarray((TK, BK, blk_m), dtype=lhsT.dtype, buffer=nl.sbuf)
                for kt in nl.affine_range(BK):
                    k0 = (k * BK + kt) * TK
                    nisa.dma_copy(dst=a[0:TK, kt, 0:blk_m], src=lhsT[k0:k0 + TK, m0:m0 + blk_m])
                for nt in nl.affine_range(BN):
                    for mt in nl.affine_range(BM):
                        acc = nl.ndarray((TM, TN), dtype=nl.float32, buffer=nl.psum)
                        for kt in nl.affine_range(BK):
                            nisa.nc_matmul(dst=acc,
                                           stationary=a[0:TK, kt, mt * TM:(mt + 1) * TM],
                                           moving=b[0:TK, kt, nt * TN:(nt + 1) * TN])
                        r = rows[m * BM + mt]
                        nisa.tensor_tensor(dst=r[0:TM, nt, 0:TN], data1=r[0:TM, nt, 0:TN],
                                           data2=acc, op=nl.add)
        for i in nl.affine_range(M // TM):
            res = nl.ndarray((TM, blk_n), dtype=lhsT.dtype, buffer=nl.sbuf)
            nisa.tensor_copy(dst=res, src=rows[i].reshape((TM, blk_n)))
            nisa.dma_copy(dst=out[i * TM:(i + 1) * TM, n0:n0 + blk_n], src=res)
    return out


STEPS = (("tiled", matmul_tiled), ("hoisted loads", matmul_hoisted),
         ("blocked free dims", matmul_blocked), ("fully optimised", matmul_optimized))


def timed(kernel, lhsT, rhs):
    """Run ``kernel`` under a fresh profile: (output, Profile)."""
    with cost.profiling() as prof:
        out = nki.simulate(kernel)(lhsT, rhs)
    return np.asarray(out), prof


def demo(seed=0, K=1024, M=2048, N=2048):
    rng = np.random.default_rng(seed)
    bf = ml_dtypes.bfloat16
    r = Report("nki_matmul_steps", TITLE, __doc__.split("\n\n")[1])
    ref = None
    a0 = rng.standard_normal((128, 64)).astype(bf)
    b0 = rng.standard_normal((128, 512)).astype(bf)
    out0, p0 = timed(matmul_basic, a0, b0)
    want0 = (a0.astype(np.float32).T @ b0.astype(np.float32)).astype(bf)
    r.check("basic [128,64]^T x [128,512] within 1 bf16 ULP of numpy (float32 sum order)",
            np.all(np.abs(out0.astype(np.float32) - want0.astype(np.float32))
                   <= np.abs(want0.astype(np.float32)) * 2.0 ** -7 + 1e-6))
    r.notes.append(f"basic [64 x 128 x 512]: estimated {p0.latency().ns:,.0f} ns, "
                   f"{p0.verdict()}")
    lhsT = rng.standard_normal((K, M)).astype(bf)
    rhs = rng.standard_normal((K, N)).astype(bf)
    ref = (lhsT.astype(np.float32).T @ rhs.astype(np.float32))
    r.inputs += [("lhsT", lhsT), ("rhs", rhs)]
    last = None
    lats = []
    for name, k in STEPS:
        out, prof = timed(k, lhsT, rhs)
        err = np.abs(out.astype(np.float32) - ref)
        ok = np.all(err <= np.abs(ref) * 2.0 ** -7 + 2.0 ** -6)
        r.check(f"{name}: lhsT.T @ rhs within 1 bf16 ULP of float32 numpy", ok)
        lat = prof.latency().ns
        lats.append(lat)
        r.notes.append(f"{name:<18} estimated {lat:>12,.0f} ns; {prof.verdict()}")
        last = (out, prof)
    r.check("each step's estimated latency is below the previous step's",
            all(b < a for a, b in zip(lats, lats[1:])))
    r.check("the fully optimised kernel is compute-bound on the Tensor engine",
            last[1].verdict().startswith("compute-bound on Tensor"))
    r.outputs.append(("out (fully optimised)", last[0]))
    r.cycles = last[1].totals()
    r.latency_ns = last[1].latency().ns
    r.verdict = "fully optimised step: " + last[1].verdict()
    return r
