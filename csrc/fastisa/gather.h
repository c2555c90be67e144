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

#endif
