"""Plain-numpy oracles, one per instruction, written from the spec: slow and obvious.

Kernels are compared against these bit for bit (0 ULP where the ISA is exact).  Each
function names the spec section it follows.  Nothing here imports fastisa's kernels.

Sections (keep them in this order; each front-end adds its oracles to its own section):
formats, TIK, NKI, PTO.
"""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np


# ======================================================================================
# Number formats (spec 000 "Supported Data Types", "Type Casting"; reference/numerics.md)
# ======================================================================================


# ---- end of formats section ----


# ======================================================================================
# TIK (spec 002; reference/tik.md sections 0 and 1)
# ======================================================================================


# ---- end of TIK section ----


# ======================================================================================
# NKI (specs 000 and 001; reference/nki.md section 2)
# ======================================================================================


# ---- NKI core: topk, max8 family, iota, casting (nki-core) ----------------------------

def nki_bf16_order_key(bits):
    """Order key of bf16 bit patterns as Python-comparable floats: value order with
    -0 == +0; a NaN ranks by its bit pattern (positive NaN above +inf, negative below -inf).
    """
    bits = np.asarray(bits, dtype=np.uint16).astype(np.int64)
    vals = (bits << 16).astype(np.uint32).view(np.float32).astype(np.float64)
    vals = np.where(vals == 0.0, 0.0, vals)                    # -0 == +0
    nan = np.isnan(vals)
    pos = (bits & 0x8000) == 0
    # NaN: beyond the infinities, ordered by payload bits
    vals = np.where(nan & pos, np.inf, vals)
    vals = np.where(nan & ~pos, -np.inf, vals)
    tier = np.where(nan & pos, 1, np.where(nan & ~pos, -1, 0))
    payload = np.where(pos, bits & 0x7FFF, -(bits & 0x7FFF))
    return tier, vals, payload


def nki_topk_group(snake_bits, k):
    """Spec 001 for one group: (value bits, indices) of the top k of a de-snaked group,
    descending by value, ties by lower index first.  snake_bits: 1-D uint16, length n."""
    snake_bits = np.asarray(snake_bits, dtype=np.uint16)
    tier, vals, payload = nki_bf16_order_key(snake_bits)
    idx = np.arange(snake_bits.size)
    order = sorted(idx.tolist(), key=lambda i: (-tier[i], -vals[i], -payload[i] if tier[i] else 0, i))
    top = np.array(order[:k], dtype=np.int64)
    return snake_bits[top], top.astype(np.uint32)


def nki_desnake(src_bits, n):
    """[P, F] bf16 bits (P a multiple of 16) -> [P // 16, n] snakes: e = col*16 + partition."""
    src_bits = np.asarray(src_bits, dtype=np.uint16)
    P = src_bits.shape[0]
    cols = (n + 15) // 16
    out = []
    for g in range(P // 16):
        block = src_bits[16 * g:16 * g + 16, :cols]        # [16, cols]
        out.append(block.T.reshape(-1)[:n])
    return np.stack(out)


def nki_topk(src_bits, n, k, val_before, idx_before):
    """nisa.topk(sorted=True) on [P, F] bf16 bits: the expected val_dst / idx_dst ([P, k]),
    starting from their previous contents; only result slots j < k are written, at
    partition j % 16, column j // 16 of each group."""
    val = np.array(val_before, dtype=np.uint16, copy=True)
    idx = np.array(idx_before, dtype=np.uint32, copy=True)
    snakes = nki_desnake(src_bits, n)
    for g in range(snakes.shape[0]):
        v, i = nki_topk_group(snakes[g], k)
        for j in range(k):
            val[16 * g + j % 16, j // 16] = v[j]
            idx[16 * g + j % 16, j // 16] = i[j]
    return val, idx


def nki_topk_results(val_bits, idx, k):
    """Read back the k results per group from snake-layout [P, >= ceil(k/16)] outputs."""
    P = val_bits.shape[0]
    v = np.empty((P // 16, k), np.uint16)
    i = np.empty((P // 16, k), np.uint32)
    for g in range(P // 16):
        for j in range(k):
            v[g, j] = val_bits[16 * g + j % 16, j // 16]
            i[g, j] = idx[16 * g + j % 16, j // 16]
    return v, i


def _f32_rank_key(x):
    x = float(x)
    if math.isnan(x):
        return (1, 0.0)
    return (0, 0.0 if x == 0.0 else x)


def nki_max8(rows):
    """max8 on [P, N] float32 rows: (values [P, 8], indices [P, 8]), descending, NaN above
    +inf, -0 == +0, ties by lower index."""
    rows = np.asarray(rows, dtype=np.float32)
    P, N = rows.shape
    vals = np.empty((P, 8), np.float32)
    idx = np.empty((P, 8), np.uint32)
    for p in range(P):
        order = sorted(range(N), key=lambda i: (tuple(-v for v in _f32_rank_key(rows[p, i])), i))
        for j, i in enumerate(order[:8]):
            vals[p, j] = rows[p, i]
            idx[p, j] = i
    return vals, idx


def nki_find_index8(data, vals):
    """nc_find_index8 on [P, N] / [P, 8] float32: first occurrence, duplicates in vals take
    successive occurrences, missing -> 0xFFFFFFFF (reference/nki.md 2.3)."""
    data = np.asarray(data, dtype=np.float32)
    vals = np.asarray(vals, dtype=np.float32)
    P, N = data.shape
    out = np.full((P, 8), 0xFFFFFFFF, np.uint32)
    for p in range(P):
        for j in range(8):
            start = 0
            prev = [i for i in range(j) if vals[p, i] == vals[p, j]]
            if prev:
                if out[p, prev[-1]] == 0xFFFFFFFF:
                    continue
                start = int(out[p, prev[-1]]) + 1
            for i in range(start, N):
                if data[p, i] == vals[p, j]:
                    out[p, j] = i
                    break
    return out


def nki_match_replace8(data, vals, imm):
    """nc_match_replace8 on [P, N] / [P, 8] float32: for i = 7..0 replace the first element
    equal to vals[i] by imm (a later search sees earlier replacements); returns (data after,
    indices [P, 8], 0xFFFFFFFF when not found)."""
    work = np.array(data, dtype=np.float32, copy=True)
    vals = np.asarray(vals, dtype=np.float32)
    P, N = work.shape
    idx = np.full((P, 8), 0xFFFFFFFF, np.uint32)
    for p in range(P):
        for i in range(7, -1, -1):
            for e in range(N):
                if work[p, e] == vals[p, i]:
                    work[p, e] = np.float32(imm)
                    idx[p, i] = e
                    break
    return work, idx


def nki_iota(P, pattern, offset=0, channel_multiplier=0):
    """iota values as int32 [P, prod(num)]: offset + p*cm + sum idx_d*step_d, wrapped."""
    sizes = [n for _, n in pattern]
    out = np.empty((P, int(np.prod(sizes))), np.int64)
    for p in range(P):
        for flat, multi in enumerate(np.ndindex(*sizes)):
            out[p, flat] = offset + p * channel_multiplier + \
                sum(i * s for i, (s, _) in zip(multi, pattern))
    return ((out + 2**31) % 2**32 - 2**31).astype(np.int32)


def nki_f32_to(x, np_dtype):
    """float32 -> destination storage with one RNE rounding (spec 000 Type Casting):
    integers RNE + saturate (NaN -> 0), floats by ml_dtypes / numpy RNE casts."""
    x = np.asarray(x, dtype=np.float32)
    dt = np.dtype(np_dtype)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        r = np.rint(x.astype(np.float64))
        r = np.where(np.isnan(r), 0, np.clip(r, info.min, info.max))
        return r.astype(dt)
    return x.astype(dt)



# ---- end of NKI section ----


# ======================================================================================
# PTO (specs 003 and 004; reference/pto.md sections 1 and 2)
# ======================================================================================


# ---- end of PTO section ----
