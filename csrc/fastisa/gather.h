/* fastisa PTO gather / scatter kernels (TGATHER, TSCATTER, MGATHER, MSCATTER).
 *
 * Python-free, header-only, static inline, fi_gx_ prefix.  The front-end turns every form
 * (index tile, mask pattern, row/column axis, global-memory coalescing, out-of-bounds mode)
 * into one array of element offsets, validated to lie inside the source / destination
 * buffer (offset -1: "no element": gather writes 0, scatter skips), so the kernels never read
 * or write out of bounds:
 *   fi_gx_gather   dst[r, c] = off < 0 ? 0 : src[off]          (bit copy)
 *   fi_gx_scatter  dst[off] (op)= src[r, c] in row-major order  (op: copy, add, max, min;
 *                  add/max/min computed in the element type: floats rounded once to T)
 */
#ifndef FASTISA_GATHER_H
#define FASTISA_GATHER_H

#include <stdint.h>
#include <string.h>

#include "tile.h"

typedef enum { FI_GX_COPY = 0, FI_GX_ADD = 1, FI_GX_MAX = 2, FI_GX_MIN = 3 } fi_gx_op;

/* dst[r, c] = src[off[r * C + c]] (0 when off < 0), for r < R, c < C. */
static inline void fi_gx_gather(fi_tile_arg d, const char *src, const int64_t *off, int R,
                                int C) {
    size_t isz = fi_tile_itemsize(d.fmt);
    ptrdiff_t r, c;
    for (r = 0; r < R; r++) {
        for (c = 0; c < C; c++) {
            int64_t o = off[r * C + c];
            char *dp = fi_tile_at(&d, r, c);
            if (o < 0) memset(dp, 0, isz);
            else memcpy(dp, src + (size_t)o * isz, isz);
        }
    }
}

/* dst[off[r * C + c]] (op)= src[r, c] for r < R, c < C in row-major order (off < 0: skip);
 * a later element to the same offset sees the earlier ones (last write wins for COPY). */
static inline void fi_gx_scatter(int op, int fmt, char *dst, const int64_t *off, fi_tile_arg s,
                                 int R, int C) {
    size_t isz = fi_tile_itemsize(fmt);
    int isf = fi_tile_is_float(fmt);
    ptrdiff_t r, c;
    for (r = 0; r < R; r++) {
        for (c = 0; c < C; c++) {
            int64_t o = off[r * C + c];
            const char *sp = fi_tile_at(&s, r, c);
            char *dp;
            if (o < 0) continue;
            dp = dst + (size_t)o * isz;
            if (op == FI_GX_COPY) { memcpy(dp, sp, isz); continue; }
            if (isf) {
                double x, y;
                fi_tile_load_d(fmt, dp, 1, &x, 1);
                fi_tile_load_d(fmt, sp, 1, &y, 1);
                if (op == FI_GX_ADD) x = x + y;
                else if (op == FI_GX_MAX) x = x < y ? y : x;
                else x = y < x ? y : x;
                fi_tile_store_d(fmt, dp, 1, &x, 1);
            } else {
                int64_t x, y;
                fi_tile_load_i(fmt, dp, 1, &x, 1);
                fi_tile_load_i(fmt, sp, 1, &y, 1);
                if (op == FI_GX_ADD) x = (int64_t)((uint64_t)x + (uint64_t)y);
                else if (op == FI_GX_MAX) x = x < y ? y : x;
                else x = y < x ? y : x;
                fi_tile_store_i(fmt, dp, 1, &x, 1);
            }
        }
    }
}

/* ---- index forms with the offsets computed in C ---------------------------------------
 * The index tile ix (int16/uint16/int32/uint32, read through fi_tile_load_i) gives one
 * element index v per (r, c).  The index mode maps v into [0, cap) or to "no element":
 *   FI_GX_UNDEF  v outside [0, cap) is an error (the check pass reports it, nothing written)
 *   FI_GX_ZERO   v outside [0, cap): no element (gather writes 0, scatter skips)
 *   FI_GX_CLAMP  v clamped to [0, cap - 1]
 *   FI_GX_WRAP   v mod cap (non-negative)
 * and the element offset is v (scols == 0) or (v / scols) * srs + (v % scols) * scs (the
 * row-major element number of a tile with scols columns and strides srs / scs).  A mapped
 * offset must be below limit (the buffer's element count), else it is an error too. */
enum { FI_GX_UNDEF = 0, FI_GX_ZERO = 1, FI_GX_CLAMP = 2, FI_GX_WRAP = 3 };

typedef struct {
    int mode;
    int64_t cap, scols, srs, scs, limit;
} fi_gx_map;

/* Offsets of n indices (in place); -1: no element, -2: error (then *bad = the index). */
static inline int fi_gx_map_chunk(const fi_gx_map *m, int64_t *v, int n, int64_t *bad) {
    int i, err = 0;
    if (m->scols == 0 && m->cap <= m->limit && n > 0) {
        /* offset = v: nothing to do when every index is in range (a vectorised min/max) */
        int64_t lo = v[0], hi = v[0];
        for (i = 1; i < n; i++) { lo = v[i] < lo ? v[i] : lo; hi = v[i] > hi ? v[i] : hi; }
        if (lo >= 0 && hi < m->cap) return 0;
    }
    for (i = 0; i < n; i++) {
        int64_t x = v[i], o;
        if (x < 0 || x >= m->cap) {
            if (m->mode == FI_GX_CLAMP) x = x < 0 ? 0 : m->cap - 1;
            else if (m->mode == FI_GX_WRAP) { x %= m->cap; if (x < 0) x += m->cap; }
            else if (m->mode == FI_GX_ZERO) { v[i] = -1; continue; }
            else { if (!err) *bad = x; err = 1; v[i] = -2; continue; }
        }
        o = m->scols > 0 ? (x / m->scols) * m->srs + (x % m->scols) * m->scs : x;
        if (o >= m->limit) { if (!err) *bad = x; err = 1; o = -2; }
        v[i] = o;
    }
    return err;
}

/* 1 (and *bad) when some index of the R x C index region is an error under m. */
static inline int fi_gx_check(const fi_gx_map *m, fi_tile_arg ix, int R, int C, int64_t *bad) {
    int64_t v[FI_TILE_CHUNK];
    ptrdiff_t r;
    int c0, n;
    for (r = 0; r < R; r++)
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            fi_tile_load_i(ix.fmt, fi_tile_at(&ix, r, c0), ix.cs, v, n);
            if (fi_gx_map_chunk(m, v, n, bad)) return 1;
        }
    return 0;
}

#define FI_GX_GATHER_LOOP(T)                                                                 \
    { T *q = (T *)fi_tile_at(&d, r, c0); const T *sp = (const T *)src;                       \
      for (i = 0; i < n; i++) q[i * d.cs] = v[i] < 0 ? (T)0 : sp[v[i]]; }

/* dst[r, c] = src[offset(ix[r, c])] (0 for no element), r < R, c < C.  Returns 1 (writing
 * nothing) when an index is an error; *bad is then that index.  src must not overlap dst. */
static inline int fi_gx_gather_idx(fi_tile_arg d, const char *src, const fi_gx_map *m,
                                   fi_tile_arg ix, int R, int C, int check, int64_t *bad) {
    int64_t v[FI_TILE_CHUNK];
    size_t isz = fi_tile_itemsize(d.fmt);
    ptrdiff_t r;
    int c0, n, i;
    if (check && fi_gx_check(m, ix, R, C, bad)) return 1;
    if (check && isz == 4 && m->scols == 0 && m->mode == FI_GX_UNDEF &&
        (ix.fmt == FI_INT32 || ix.fmt == FI_UINT32)) {
        /* checked above: every index is an offset inside src; a plain load loop */
        const uint32_t *sp = (const uint32_t *)src;
        for (r = 0; r < R; r++) {
            const int32_t *iv = (const int32_t *)fi_tile_at(&ix, r, 0);
            uint32_t *q = (uint32_t *)fi_tile_at(&d, r, 0);
            for (i = 0; i < C; i++) q[i * d.cs] = sp[(uint32_t)iv[i * ix.cs]];
        }
        return 0;
    }
    for (r = 0; r < R; r++)
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            fi_tile_load_i(ix.fmt, fi_tile_at(&ix, r, c0), ix.cs, v, n);
            fi_gx_map_chunk(m, v, n, bad);
            if (isz == 4) FI_GX_GATHER_LOOP(uint32_t)
            else if (isz == 2) FI_GX_GATHER_LOOP(uint16_t)
            else if (isz == 1) FI_GX_GATHER_LOOP(uint8_t)
            else if (isz == 8) FI_GX_GATHER_LOOP(uint64_t)
            else for (i = 0; i < n; i++) {
                char *dp = fi_tile_at(&d, r, c0 + i);
                if (v[i] < 0) memset(dp, 0, isz);
                else memcpy(dp, src + (size_t)v[i] * isz, isz);
            }
        }
    return 0;
}

/* dst[offset(ix[r, c])] (op)= src[r, c] in row-major order (no element: skipped).  Returns 1
 * (writing nothing) when an index is an error.  src must not overlap dst. */
static inline int fi_gx_scatter_idx(int op, int fmt, char *dst, const fi_gx_map *m,
                                    fi_tile_arg ix, fi_tile_arg s, int R, int C, int64_t *bad) {
    int64_t v[FI_TILE_CHUNK];
    size_t isz = fi_tile_itemsize(fmt);
    ptrdiff_t r;
    int c0, n, i;
    if (fi_gx_check(m, ix, R, C, bad)) return 1;
    if (op == FI_GX_COPY && isz == 4 && m->scols == 0 && m->mode == FI_GX_UNDEF &&
        (ix.fmt == FI_INT32 || ix.fmt == FI_UINT32)) {
        /* checked above: every index is an offset inside dst; a plain store loop */
        uint32_t *q = (uint32_t *)dst;
        for (r = 0; r < R; r++) {
            const int32_t *iv = (const int32_t *)fi_tile_at(&ix, r, 0);
            const uint32_t *sp = (const uint32_t *)fi_tile_at(&s, r, 0);
            for (i = 0; i < C; i++) q[(uint32_t)iv[i * ix.cs]] = sp[i * s.cs];
        }
        return 0;
    }
    for (r = 0; r < R; r++)
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            fi_tile_load_i(ix.fmt, fi_tile_at(&ix, r, c0), ix.cs, v, n);
            fi_gx_map_chunk(m, v, n, bad);
            if (op == FI_GX_COPY && isz == 4) {
                const uint32_t *sp = (const uint32_t *)fi_tile_at(&s, r, c0);
                uint32_t *q = (uint32_t *)dst;
                for (i = 0; i < n; i++) if (v[i] >= 0) q[v[i]] = sp[i * s.cs];
            } else if (op == FI_GX_COPY && isz == 2) {
                const uint16_t *sp = (const uint16_t *)fi_tile_at(&s, r, c0);
                uint16_t *q = (uint16_t *)dst;
                for (i = 0; i < n; i++) if (v[i] >= 0) q[v[i]] = sp[i * s.cs];
            } else {
                fi_tile_arg s1 = s;
                s1.p = fi_tile_at(&s, r, c0);
                fi_gx_scatter(op, fmt, dst, v, s1, 1, n);
            }
        }
    return 0;
}

#endif
