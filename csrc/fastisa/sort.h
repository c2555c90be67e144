/* fastisa PTO sort kernels: TSORT32 (sort 32-element blocks into value-index pairs) and
 * TMRGSORT (merge up to 4 descending lists of value-index pairs).
 *
 * Python-free, header-only, static inline, fi_sort_ prefix.  A pair ("struct") is 8 bytes:
 * float32 [value, index u32], float16 [value, 0x0000, index u32] (pto-isa docs/isa/TSORT32.md).
 * Ordering (CPU simulator include/pto/cpu/TSort32.hpp, TMrgSort.hpp): TSORT32 is a stable
 * sort by value descending, ties by index ascending; TMRGSORT takes, at every step, the head
 * with the strictly greatest value, the lowest list number on ties.  Values are compared in
 * double (exact for every supported format); NaN compares false, so its position follows
 * the insertion order of the stable insertion sort used here.
 */
#ifndef FASTISA_SORT_H
#define FASTISA_SORT_H

#include <stdint.h>
#include <string.h>

#include "tile.h"

typedef struct { double v; uint32_t i; uint32_t k; uint8_t raw[4]; } fi_sort_item;

/* before(a, b): a sorts before b (value descending, then index ascending). */
static inline int fi_sort_before(const fi_sort_item *a, const fi_sort_item *b) {
    if (a->v != b->v) return a->v > b->v;
    return a->i < b->i;
}

/* Per row r < R and per block of 32 columns of src (C valid columns): the block's pairs
 * (src[r, c], idx[r, c]) sorted, written as 8-byte structs from dst[r, coef * 32 * b]
 * (coef = 8 / itemsize); only the block's valid count is written. */
static inline void fi_sort32(fi_tile_arg d, fi_tile_arg s, fi_tile_arg idx, int R, int C) {
    fi_sort_item it[32], tmp;
    size_t isz = fi_tile_itemsize(s.fmt);
    int coef = (int)(8 / isz);
    ptrdiff_t r;
    int b, k, n, j;
    for (r = 0; r < R; r++) {
        for (b = 0; b * 32 < C; b++) {
            n = C - 32 * b < 32 ? C - 32 * b : 32;
            for (k = 0; k < n; k++) {
                const char *sp = fi_tile_at(&s, r, 32 * b + k);
                int64_t iv;
                fi_tile_load_d(s.fmt, sp, 1, &it[k].v, 1);
                fi_tile_load_i(idx.fmt, fi_tile_at(&idx, r, 32 * b + k), 1, &iv, 1);
                it[k].i = (uint32_t)iv;
                memset(it[k].raw, 0, 4);
                memcpy(it[k].raw, sp, isz);
            }
            for (k = 1; k < n; k++) {          /* stable insertion sort */
                tmp = it[k];
                for (j = k - 1; j >= 0 && fi_sort_before(&tmp, &it[j]); j--) it[j + 1] = it[j];
                it[j + 1] = tmp;
            }
            for (k = 0; k < n; k++) {
                char *dp = fi_tile_at(&d, r, (ptrdiff_t)coef * (32 * b + k));
                memcpy(dp, it[k].raw, 4);                  /* value, zero-padded to 4 bytes */
                memcpy(dp + 4, &it[k].i, 4);
            }
        }
    }
}

/* Merges nl (2..4) lists of 8-byte structs (src[l], n[l] structs each, descending by the
 * value in their first itemsize bytes) into dst, at most out structs; with exhausted, stops
 * as soon as one list is used up.  done[l] receives the structs taken from list l.
 * Returns the number of structs written. */
static inline int fi_sort_merge(int fmt, char *dst, const char *const *src, const int *n, int nl,
                                int out, int exhausted, int *done) {
    int pos[4] = {0, 0, 0, 0}, w = 0, l, pick;
    double best, v;
    while (w < out) {
        pick = -1;
        best = 0;
        for (l = 0; l < nl; l++) {
            if (pos[l] >= n[l]) continue;
            fi_tile_load_d(fmt, src[l] + (size_t)pos[l] * 8, 1, &v, 1);
            if (pick < 0 || v > best) { best = v; pick = l; }
        }
        if (pick < 0) break;
        memcpy(dst + (size_t)w * 8, src[pick] + (size_t)pos[pick] * 8, 8);
        w++;
        pos[pick]++;
        if (exhausted) {
            int stop = 0;
            for (l = 0; l < nl; l++) if (pos[l] == n[l]) stop = 1;
            if (stop) break;
        }
    }
    for (l = 0; l < 4; l++) done[l] = l < nl ? pos[l] : 0;
    return w;
}

#endif
