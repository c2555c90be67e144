/* fastisa data-movement kernels for NKI: bit copies driven by strides, maps and masks.
 *
 * Python-free, header-only, static inline, fi_move_ prefix.  Nothing here converts a
 * value: every kernel copies element bit patterns of `itemsize` bytes (1, 2 or 4), so one
 * kernel serves every format, packed x4 containers included.  Strides are in BYTES.
 *
 *   fi_move_strided     dst[i0..i4] = src[i0..i4] over a 5-d index space with independent
 *                       strides (dma_transpose: src strides permuted; any strided copy)
 *   fi_move_rows        dst row r = src row map[r] (map[r] < 0: row r untouched)
 *                       (nc_stream_shuffle)
 *   fi_move_rows_inplace  the same with dst and src one array (no copy of it)
 *   fi_move_predicated  dst[p,i] = src[p,i] where (pred[p,i] != 0) != rev, else untouched
 *                       (tensor_copy_predicated; src stride 0 = a broadcast scalar)
 *   fi_move_gather      dst[p,j] = data[p, idx[p,j]] (nc_n_gather); status 1 when an
 *                       index is out of range (nothing written then)
 *   fi_move_nonzero     per row: indices (+offset) of the nonzero elements, padding, count
 *
 * Kernels never validate (the Python front-ends do) and never raise.
 */
#ifndef FASTISA_MOVE_H
#define FASTISA_MOVE_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include "par.h"

static inline void fi_move_elem(char *d, const char *s, int itemsize) {
    switch (itemsize) {
    case 1: *(uint8_t *)d = *(const uint8_t *)s; break;
    case 2: { uint16_t v; memcpy(&v, s, 2); memcpy(d, &v, 2); break; }
    case 4: { uint32_t v; memcpy(&v, s, 4); memcpy(d, &v, 4); break; }
    default: memcpy(d, s, (size_t)itemsize); break;
    }
}

/* Inner loop of a strided copy: n elements, byte strides ds / ss. */
static inline void fi_move_line(char *d, ptrdiff_t ds, const char *s, ptrdiff_t ss,
                                ptrdiff_t n, int itemsize) {
    if (ds == itemsize && ss == itemsize) { memcpy(d, s, (size_t)(n * itemsize)); return; }
    switch (itemsize) {
    case 1: for (ptrdiff_t i = 0; i < n; i++) d[i * ds] = s[i * ss]; break;
    case 2:
        for (ptrdiff_t i = 0; i < n; i++) { uint16_t v; memcpy(&v, s + i * ss, 2); memcpy(d + i * ds, &v, 2); }
        break;
    case 4:
        for (ptrdiff_t i = 0; i < n; i++) { uint32_t v; memcpy(&v, s + i * ss, 4); memcpy(d + i * ds, &v, 4); }
        break;
    default:
        for (ptrdiff_t i = 0; i < n; i++) memcpy(d + i * ds, s + i * ss, (size_t)itemsize);
    }
}

#if defined(__SSE2__)
#include <emmintrin.h>
/* One 8 x 8 block of 2-byte elements: dst row r (8 contiguous elements at d + r * d3) =
 * src column r (element c at s + c * s4, 8 contiguous rows along s3 == 2).  Bit copies
 * through SSE2 unpacks (part of every x86-64 CPU). */
static inline void fi_move_t8x8_16(char *d, ptrdiff_t d3, const char *s, ptrdiff_t s4) {
    __m128i a0 = _mm_loadu_si128((const __m128i *)(const void *)(s));
    __m128i a1 = _mm_loadu_si128((const __m128i *)(const void *)(s + s4));
    __m128i a2 = _mm_loadu_si128((const __m128i *)(const void *)(s + 2 * s4));
    __m128i a3 = _mm_loadu_si128((const __m128i *)(const void *)(s + 3 * s4));
    __m128i a4 = _mm_loadu_si128((const __m128i *)(const void *)(s + 4 * s4));
    __m128i a5 = _mm_loadu_si128((const __m128i *)(const void *)(s + 5 * s4));
    __m128i a6 = _mm_loadu_si128((const __m128i *)(const void *)(s + 6 * s4));
    __m128i a7 = _mm_loadu_si128((const __m128i *)(const void *)(s + 7 * s4));
    __m128i t0 = _mm_unpacklo_epi16(a0, a1), t1 = _mm_unpackhi_epi16(a0, a1);
    __m128i t2 = _mm_unpacklo_epi16(a2, a3), t3 = _mm_unpackhi_epi16(a2, a3);
    __m128i t4 = _mm_unpacklo_epi16(a4, a5), t5 = _mm_unpackhi_epi16(a4, a5);
    __m128i t6 = _mm_unpacklo_epi16(a6, a7), t7 = _mm_unpackhi_epi16(a6, a7);
    __m128i u0 = _mm_unpacklo_epi32(t0, t2), u1 = _mm_unpackhi_epi32(t0, t2);
    __m128i u2 = _mm_unpacklo_epi32(t1, t3), u3 = _mm_unpackhi_epi32(t1, t3);
    __m128i u4 = _mm_unpacklo_epi32(t4, t6), u5 = _mm_unpackhi_epi32(t4, t6);
    __m128i u6 = _mm_unpacklo_epi32(t5, t7), u7 = _mm_unpackhi_epi32(t5, t7);
    _mm_storeu_si128((__m128i *)(void *)(d), _mm_unpacklo_epi64(u0, u4));
    _mm_storeu_si128((__m128i *)(void *)(d + d3), _mm_unpackhi_epi64(u0, u4));
    _mm_storeu_si128((__m128i *)(void *)(d + 2 * d3), _mm_unpacklo_epi64(u1, u5));
    _mm_storeu_si128((__m128i *)(void *)(d + 3 * d3), _mm_unpackhi_epi64(u1, u5));
    _mm_storeu_si128((__m128i *)(void *)(d + 4 * d3), _mm_unpacklo_epi64(u2, u6));
    _mm_storeu_si128((__m128i *)(void *)(d + 5 * d3), _mm_unpackhi_epi64(u2, u6));
    _mm_storeu_si128((__m128i *)(void *)(d + 6 * d3), _mm_unpacklo_epi64(u3, u7));
    _mm_storeu_si128((__m128i *)(void *)(d + 7 * d3), _mm_unpackhi_epi64(u3, u7));
}
#define FI_MOVE_T16 1
/* Tiles of FI_MOVE_TI dst rows x FI_MOVE_TJ dst columns: a tile's source rows and its dst
 * cache lines (32 columns of 2 bytes: whole 64-byte lines) stay in L1 while it is done.
 * (The SSE2 8 x 8 path; the AVX passes walk the whole tile, see below.) */
#define FI_MOVE_TI 64
#define FI_MOVE_TJ 32

#if defined(__GNUC__)
#include <immintrin.h>
/* The same unpacks on 256-bit registers, each working within its two 128-bit lanes, with
 * the lanes loaded from two groups of 8 source rows (vinserti128 from memory is a load,
 * not a shuffle): register r holds src rows j + r (low lane) and j + 8 + r (high lane),
 * elements i..i+7, so after the three unpack stages register k is dst row i + k, columns
 * j..j+15 -- one 32-byte store, no lane extraction.  Dst rows [0, n3) x columns [0, n4),
 * n3 a multiple of 8, n4 of 16.  Chosen at run time on CPUs with AVX2.  (speed14: half
 * the shuffles of extracting 128-bit lanes; 16 [128, 128] tiles 20.5 -> 17.4 us.) */
#define FI_MOVE_T8X8_STAGES(V, LO16, HI16, LO32, HI32, LO64, HI64, a, o)                   \
    do {                                                                                \
        V t0 = LO16(a[0], a[1]), t1 = HI16(a[0], a[1]);                                \
        V t2 = LO16(a[2], a[3]), t3 = HI16(a[2], a[3]);                                \
        V t4 = LO16(a[4], a[5]), t5 = HI16(a[4], a[5]);                                \
        V t6 = LO16(a[6], a[7]), t7 = HI16(a[6], a[7]);                                \
        V u0 = LO32(t0, t2), u1 = HI32(t0, t2), u2 = LO32(t1, t3), u3 = HI32(t1, t3);   \
        V u4 = LO32(t4, t6), u5 = HI32(t4, t6), u6 = LO32(t5, t7), u7 = HI32(t5, t7);   \
        o[0] = LO64(u0, u4); o[1] = HI64(u0, u4); o[2] = LO64(u1, u5); o[3] = HI64(u1, u5); \
        o[4] = LO64(u2, u6); o[5] = HI64(u2, u6); o[6] = LO64(u3, u7); o[7] = HI64(u3, u7); \
    } while (0)

static __attribute__((target("avx2"), noinline)) void fi_move_t8x16_16_avx2(
        char *d, ptrdiff_t d3, const char *s, ptrdiff_t s4, ptrdiff_t n3, ptrdiff_t n4) {
    for (ptrdiff_t j = 0; j < n4; j += 16)
        for (ptrdiff_t i = 0; i < n3; i += 8) {
            const char *p = s + i * 2 + j * s4;
            char *q = d + i * d3 + j * 2;
            __m256i a[8], o[8];
            for (int r = 0; r < 8; r++)
                a[r] = _mm256_inserti128_si256(
                    _mm256_castsi128_si256(_mm_loadu_si128((const __m128i *)(const void *)(p + r * s4))),
                    _mm_loadu_si128((const __m128i *)(const void *)(p + (8 + r) * s4)), 1);
            FI_MOVE_T8X8_STAGES(__m256i, _mm256_unpacklo_epi16, _mm256_unpackhi_epi16,
                                _mm256_unpacklo_epi32, _mm256_unpackhi_epi32,
                                _mm256_unpacklo_epi64, _mm256_unpackhi_epi64, a, o);
            for (int k = 0; k < 8; k++)
                _mm256_storeu_si256((__m256i *)(void *)(q + k * d3), o[k]);
        }
}
#define FI_MOVE_T16_AVX2 1

/* The same on 512-bit registers: lane L of register r is src row j + 8L + r (elements
 * i..i+7; lanes 1-3 by masked 128-bit broadcasts from memory, a load and a blend), so
 * register k ends as dst row i + k, columns j..j+31: one 64-byte store.  Dst rows
 * [0, n3) x columns [0, n4), n3 a multiple of 8, n4 of 32.  (speed14: 16 [128, 128]
 * tiles 22.8 -> 14.2 us over extracting 128-bit lanes.) */
static __attribute__((target("avx512f,avx512bw"), noinline)) void fi_move_t8x32_16_avx512(
        char *d, ptrdiff_t d3, const char *s, ptrdiff_t s4, ptrdiff_t n3, ptrdiff_t n4) {
    for (ptrdiff_t j = 0; j < n4; j += 32)
        for (ptrdiff_t i = 0; i < n3; i += 8) {
            const char *p = s + i * 2 + j * s4;
            char *q = d + i * d3 + j * 2;
            __m512i a[8], o[8];
            for (int r = 0; r < 8; r++) {
                __m512i v = _mm512_castsi128_si512(
                    _mm_loadu_si128((const __m128i *)(const void *)(p + r * s4)));
                v = _mm512_mask_broadcast_i32x4(
                    v, 0x00f0, _mm_loadu_si128((const __m128i *)(const void *)(p + (8 + r) * s4)));
                v = _mm512_mask_broadcast_i32x4(
                    v, 0x0f00, _mm_loadu_si128((const __m128i *)(const void *)(p + (16 + r) * s4)));
                v = _mm512_mask_broadcast_i32x4(
                    v, 0xf000, _mm_loadu_si128((const __m128i *)(const void *)(p + (24 + r) * s4)));
                a[r] = v;
            }
            FI_MOVE_T8X8_STAGES(__m512i, _mm512_unpacklo_epi16, _mm512_unpackhi_epi16,
                                _mm512_unpacklo_epi32, _mm512_unpackhi_epi32,
                                _mm512_unpacklo_epi64, _mm512_unpackhi_epi64, a, o);
            for (int k = 0; k < 8; k++)
                _mm512_storeu_si512((void *)(q + k * d3), o[k]);
        }
}
#endif
#else
#define FI_MOVE_T16 0
#endif

/* Transposing copy when the two innermost index axes are swapped between dst and src
 * (dst contiguous along axis 4, src along axis 3): 2-byte elements on x86-64 in 8 x 8
 * blocks by fi_move_t8x8_16 (the remainder element by element), other widths in tiles of
 * 32 x 32 elements -- the same bit copies either way. */
/* The widest SIMD path fi_move_tile2 takes: 0 = the best the CPU has, 1 = SSE2 only,
 * 2 = AVX2 at most.  Only tests lower it (fastisa._kernels.move.set_simd_cap), so that
 * the narrower paths run on wider CPUs too; one copy per translation unit. */
static int fi_move_simd_cap = 0;

static inline void fi_move_tile2(char *d, ptrdiff_t d3, ptrdiff_t d4, const char *s,
                                 ptrdiff_t s3, ptrdiff_t s4, ptrdiff_t n3, ptrdiff_t n4,
                                 int itemsize) {
#if FI_MOVE_T16
    if (itemsize == 2 && d4 == 2 && s3 == 2) {
        /* 8 x 8 blocks; with AVX-512 / AVX2, 8 dst rows x 32 / 16 dst columns per pass
         * over the columns [0, w), then 8 x 8 blocks for the columns [w, nb4). */
        ptrdiff_t nb3 = n3 & ~(ptrdiff_t)7, nb4 = n4 & ~(ptrdiff_t)7, done = 0, w = 0;
#ifdef FI_MOVE_T16_AVX2
        if (nb3 && fi_move_simd_cap == 0 && __builtin_cpu_supports("avx512bw") && n4 >= 32) {
            w = n4 & ~(ptrdiff_t)31;
            fi_move_t8x32_16_avx512(d, d3, s, s4, nb3, w);
        } else if (nb3 && fi_move_simd_cap != 1 && __builtin_cpu_supports("avx2") && n4 >= 16) {
            w = n4 & ~(ptrdiff_t)15;
            fi_move_t8x16_16_avx2(d, d3, s, s4, nb3, w);
        }
        if (w) {
            for (ptrdiff_t i = 0; i < nb3; i += 8)
                for (ptrdiff_t j = w; j < nb4; j += 8)
                    fi_move_t8x8_16(d + i * d3 + j * 2, d3, s + i * 2 + j * s4, s4);
            done = nb3;
        }
#endif
        for (ptrdiff_t i0 = done; i0 < nb3; i0 += FI_MOVE_TI)
            for (ptrdiff_t j0 = 0; j0 < nb4; j0 += FI_MOVE_TJ) {
                ptrdiff_t e0 = i0 + FI_MOVE_TI < nb3 ? i0 + FI_MOVE_TI : nb3;
                ptrdiff_t e1 = j0 + FI_MOVE_TJ < nb4 ? j0 + FI_MOVE_TJ : nb4;
                for (ptrdiff_t j = j0; j < e1; j += 8)
                    for (ptrdiff_t i = i0; i < e0; i += 8)
                        fi_move_t8x8_16(d + i * d3 + j * 2, d3, s + i * 2 + j * s4, s4);
            }
        for (ptrdiff_t i = nb3; i < n3; i++)                         /* row tail */
            fi_move_line(d + i * d3, 2, s + i * 2, s4, nb4, 2);
        if (nb4 < n4)                                                /* column tail */
            for (ptrdiff_t i = 0; i < n3; i++)
                fi_move_line(d + i * d3 + nb4 * 2, 2, s + i * 2 + nb4 * s4, s4, n4 - nb4, 2);
        return;
    }
#endif
    const ptrdiff_t B = 32;
    for (ptrdiff_t i0 = 0; i0 < n3; i0 += B) {
        ptrdiff_t e0 = i0 + B < n3 ? i0 + B : n3;
        for (ptrdiff_t j0 = 0; j0 < n4; j0 += B) {
            ptrdiff_t e1 = j0 + B < n4 ? j0 + B : n4;
            for (ptrdiff_t i = i0; i < e0; i++)
                fi_move_line(d + i * d3 + j0 * d4, d4, s + i * s3 + j0 * s4, s4, e1 - j0, itemsize);
        }
    }
}

/* dst[i] = src[i] over shape[5]; strides in bytes.  dst and src must not overlap unless
 * they are the same view (the caller copies src first otherwise). */
static inline void fi_move_strided(char *dst, const ptrdiff_t *ds, const char *src,
                                   const ptrdiff_t *ss, const ptrdiff_t *shape, int itemsize) {
    int tile = (shape[3] >= 8 && shape[4] >= 8 && ss[3] == itemsize && ds[4] == itemsize &&
                ss[4] != itemsize);
    for (ptrdiff_t a = 0; a < shape[0]; a++)
        for (ptrdiff_t b = 0; b < shape[1]; b++)
            for (ptrdiff_t c = 0; c < shape[2]; c++) {
                char *d = dst + a * ds[0] + b * ds[1] + c * ds[2];
                const char *s = src + a * ss[0] + b * ss[1] + c * ss[2];
                if (tile) {
                    fi_move_tile2(d, ds[3], ds[4], s, ss[3], ss[4], shape[3], shape[4], itemsize);
                } else {
                    for (ptrdiff_t e = 0; e < shape[3]; e++)
                        fi_move_line(d + e * ds[3], ds[4], s + e * ss[3], ss[4], shape[4], itemsize);
                }
            }
}

/* fi_move_strided over fastisa's worker pool (par.h): the outermost dimension of more
 * than one element split into contiguous pieces, two per thread, for a copy of >= 256 KiB
 * (nt 1: serial; 0: every CPU).  Each element is copied once, by one thread: the same
 * bytes whoever copies it. */
typedef struct {
    char *dst;
    const ptrdiff_t *ds;
    const char *src;
    const ptrdiff_t *ss, *shape;
    int itemsize, dim, ntasks;
} fi_move_copy_job_t;

static void fi_move_copy_task(void *ctx, int t) {
    const fi_move_copy_job_t *j = (const fi_move_copy_job_t *)ctx;
    ptrdiff_t n = j->shape[j->dim];
    ptrdiff_t lo = n * t / j->ntasks, hi = n * (t + 1) / j->ntasks;
    ptrdiff_t sh[5];
    if (lo >= hi) return;
    for (int k = 0; k < 5; k++) sh[k] = j->shape[k];
    sh[j->dim] = hi - lo;
    fi_move_strided(j->dst + lo * j->ds[j->dim], j->ds, j->src + lo * j->ss[j->dim], j->ss, sh,
                    j->itemsize);
}

static inline void fi_move_copy(char *dst, const ptrdiff_t *ds, const char *src,
                                const ptrdiff_t *ss, const ptrdiff_t *shape, int itemsize,
                                int nt) {
    ptrdiff_t total = itemsize;
    int dim = -1;
    for (int k = 0; k < 5; k++) {
        total *= shape[k];
        if (dim < 0 && shape[k] > 1) dim = k;
    }
    int T = nt == 1 ? 1 : fi_par_threads(nt);
    if (T > 1 && dim >= 0 && total >= ((ptrdiff_t)1 << 18)) {
        int ntasks = (ptrdiff_t)2 * T < shape[dim] ? 2 * T : (int)shape[dim];
        fi_move_copy_job_t job = {dst, ds, src, ss, shape, itemsize, dim, ntasks};
        fi_par_for(T, ntasks, fi_move_copy_task, &job);
        return;
    }
    fi_move_strided(dst, ds, src, ss, shape, itemsize);
}

/* Row r of dst (F elements, free stride dsf) = row map[r] of src; map[r] < 0 skips.  At
 * least 256 KiB: rows split over nt threads of the worker pool (nt 1: one; 0: all);
 * dst and src do not overlap (the caller copies src first), so the order is free. */
typedef struct {
    char *dst;
    ptrdiff_t dsp, dsf;
    const char *src;
    ptrdiff_t ssp, ssf;
    const int32_t *map;
    int R, itemsize, ntasks;
    ptrdiff_t F;
} fi_move_rows_job_t;

/* Rows [r0, r1) of fi_move_rows. */
static void fi_move_rows_range(const fi_move_rows_job_t *j, int r0, int r1) {
    const int32_t *map = j->map;
    ptrdiff_t dsp = j->dsp, ssp = j->ssp;
    if (j->dsf == j->itemsize && j->ssf == j->itemsize && dsp == j->F * j->itemsize && ssp == dsp) {
        /* rows back to back on both sides: a run of dst rows whose source rows are
         * consecutive too is one memcpy (a quadrant rotation is two runs, not 32 rows) */
        for (int r = r0; r < r1;) {
            if (map[r] < 0) { r++; continue; }
            int e = r + 1;
            while (e < r1 && map[e] == map[e - 1] + 1) e++;
            memcpy(j->dst + r * dsp, j->src + (ptrdiff_t)map[r] * ssp, (size_t)(e - r) * (size_t)dsp);
            r = e;
        }
        return;
    }
    for (int r = r0; r < r1; r++)
        if (map[r] >= 0)
            fi_move_line(j->dst + r * dsp, j->dsf, j->src + (ptrdiff_t)map[r] * ssp, j->ssf, j->F,
                         j->itemsize);
}

static void fi_move_rows_task(void *ctx, int t) {
    const fi_move_rows_job_t *j = (const fi_move_rows_job_t *)ctx;
    fi_move_rows_range(j, (int)((long)j->R * t / j->ntasks), (int)((long)j->R * (t + 1) / j->ntasks));
}

static inline void fi_move_rows(char *dst, ptrdiff_t dsp, ptrdiff_t dsf, const char *src,
                                ptrdiff_t ssp, ptrdiff_t ssf, const int32_t *map, int R,
                                ptrdiff_t F, int itemsize, int nt) {
    fi_move_rows_job_t job = {dst, dsp, dsf, src, ssp, ssf, map, R, itemsize, 1, F};
    if ((ptrdiff_t)R * F >= (1 << 16) && nt != 1 && R > 1) {
        /* blocks of rows over the shared pool (par.h), four per thread */
        int T = fi_par_threads(nt);
        job.ntasks = 4 * T < R ? 4 * T : R;
        fi_par_for(T, job.ntasks, fi_move_rows_task, &job);
        return;
    }
    fi_move_rows_range(&job, 0, R);
}

/* ---- speed14b branch (issue 14): in-place row maps ---------------------------------
 * fi_move_rows_inplace: nc_stream_shuffle with dst and src the same rows.  Row r becomes
 * the old row map[r] (map[r] in [0, R), or < 0: row r untouched) without a copy of the
 * array: the map is a functional graph (each row reads one row), so the moves are
 * ordered so that each row is read by all its readers before it is overwritten -- first
 * the rows no pending move still reads (a tree of the graph, leaves first), then each
 * remaining cycle through one saved row.  Every row moves once (one pass, as the
 * out-of-place copy).  Large arrays (>= 2^16 elements, nt != 1): the columns split into
 * one block per thread, each running the same moves on its block (bit copies: the result
 * is the same for every thread count).  Returns 0, or 1 when scratch memory could not be
 * allocated (then nothing was written). */
#include <stdlib.h>

/* The move order of an in-place row map: ops[2k], ops[2k+1] = (dst row, src row), dst -1 =
 * save the src row, src -1 = restore the saved row; returns the number of moves.  work:
 * 2R ints of scratch; ops: room for 3R ints (R moves and at most R/2 saves). */
static inline int fi_move_rows_order(const int32_t *map, int R, int *work, int *ops) {
    int *pend = work, *stack = work + R, top = 0, n = 0;
    /* pend[r]: the number of pending moves that read row r, plus a flag bit (1 << 30) while
     * row r itself is still to be written */
    for (int r = 0; r < R; r++) pend[r] = 0;
    for (int r = 0; r < R; r++)
        if (map[r] >= 0 && map[r] != r) { pend[map[r]]++; pend[r] |= 1 << 30; }
    for (int r = 0; r < R; r++)
        if (pend[r] == 1 << 30) stack[top++] = r;
    while (top) {
        int r = stack[--top], s = map[r];
        ops[2 * n] = r; ops[2 * n + 1] = s; n++;
        pend[r] &= ~(1 << 30);
        if (--pend[s] == 1 << 30) stack[top++] = s;
    }
    /* what is left is pending rows with one pending reader each: disjoint cycles */
    for (int c0 = 0; c0 < R; c0++) {
        if (!(pend[c0] & (1 << 30))) continue;
        ops[2 * n] = -1; ops[2 * n + 1] = c0; n++;
        for (int cur = c0;;) {
            int s = map[cur];
            pend[cur] &= ~(1 << 30);
            ops[2 * n] = cur; ops[2 * n + 1] = s == c0 ? -1 : s; n++;
            if (s == c0) break;
            cur = s;
        }
    }
    return n;
}

static inline void fi_move_rows_ops(char *base, ptrdiff_t sp, ptrdiff_t sf, const int *ops,
                                    int n, char *buf, ptrdiff_t f0, ptrdiff_t f1, int itemsize) {
    char *b = base + f0 * sf;
    char *k = buf + f0 * itemsize;
    ptrdiff_t w = f1 - f0;
    for (int j = 0; j < n; j++) {
        int d = ops[2 * j], s = ops[2 * j + 1];
        if (d < 0)
            fi_move_line(k, itemsize, b + s * sp, sf, w, itemsize);
        else if (s < 0)
            fi_move_line(b + d * sp, sf, k, itemsize, w, itemsize);
        else
            fi_move_line(b + d * sp, sf, b + s * sp, sf, w, itemsize);
    }
}

typedef struct {
    char *base;
    ptrdiff_t sp, sf;
    const int *ops;
    int n;
    char *buf;
    ptrdiff_t F;
    int itemsize, T;
} fi_move_inplace_job_t;

static void fi_move_inplace_task(void *ctx, int t) {
    /* column block t on 16-element boundaries */
    const fi_move_inplace_job_t *j = (const fi_move_inplace_job_t *)ctx;
    ptrdiff_t F = j->F;
    ptrdiff_t f0 = t ? (F * t / j->T) & ~(ptrdiff_t)15 : 0;
    ptrdiff_t f1 = t == j->T - 1 ? F : (F * (t + 1) / j->T) & ~(ptrdiff_t)15;
    if (f0 < f1) fi_move_rows_ops(j->base, j->sp, j->sf, j->ops, j->n, j->buf, f0, f1, j->itemsize);
}

static inline int fi_move_rows_inplace(char *base, ptrdiff_t sp, ptrdiff_t sf,
                                       const int32_t *map, int R, ptrdiff_t F, int itemsize,
                                       int nt) {
    if (R <= 0 || F <= 0) return 0;       /* nothing to move */
    int local[5 * 256];
    int *work = R <= 256 ? local : (int *)malloc(sizeof(int) * 5 * (size_t)R);
    if (!work) return 1;
    int *ops = work + 2 * R;
    int n = fi_move_rows_order(map, R, work, ops), cyc = 0;
    for (int j = 0; j < n; j++) cyc |= ops[2 * j] < 0;
    char *buf = NULL;
    if (cyc && !(buf = (char *)malloc((size_t)F * (size_t)itemsize))) {
        if (work != local) free(work);
        return 1;
    }
    if ((ptrdiff_t)R * F >= (1 << 16) && nt != 1 && F >= 64) {
        int T = fi_par_threads(nt);
        if (T > F / 32) T = (int)(F / 32);
        fi_move_inplace_job_t job = {base, sp, sf, ops, n, buf, F, itemsize, T};
        fi_par_for(T, T, fi_move_inplace_task, &job);   /* column blocks over the pool */
    } else
        fi_move_rows_ops(base, sp, sf, ops, n, buf, 0, F, itemsize);
    free(buf);
    if (work != local) free(work);
    return 0;
}

static inline int fi_move_nz(const char *p, int pwidth) {
    switch (pwidth) {
    case 1: return *(const uint8_t *)p != 0;
    case 2: { uint16_t v; memcpy(&v, p, 2); return v != 0; }
    default: { uint32_t v; memcpy(&v, p, 4); return v != 0; }
    }
}

/* dst[p,i] = src[p,i] (src free/partition strides 0: a scalar) where the predicate
 * (an unsigned integer of pwidth bytes) is nonzero XOR rev. */
static inline void fi_move_predicated(char *dst, ptrdiff_t dsp, ptrdiff_t dsf,
                                      const char *src, ptrdiff_t ssp, ptrdiff_t ssf,
                                      const char *pred, ptrdiff_t psp, ptrdiff_t psf, int pwidth,
                                      int rev, int P, ptrdiff_t F, int itemsize) {
    for (int p = 0; p < P; p++) {
        char *d = dst + p * dsp;
        const char *s = src + p * ssp;
        const char *q = pred + p * psp;
        if (itemsize == 4 && pwidth == 1 && dsf == 4 && ssf == 4 && psf == 1) {
            uint32_t *d4 = (uint32_t *)(void *)d;
            const uint32_t *s4 = (const uint32_t *)(const void *)s;
            const uint8_t *q1 = (const uint8_t *)q;
            for (ptrdiff_t i = 0; i < F; i++) {
                uint32_t m = (uint32_t)0 - (uint32_t)((q1[i] != 0) != rev);
                d4[i] = (s4[i] & m) | (d4[i] & ~m);
            }
            continue;
        }
        for (ptrdiff_t i = 0; i < F; i++)
            if (fi_move_nz(q + i * psf, pwidth) != rev)
                fi_move_elem(d + i * dsf, s + i * ssf, itemsize);
    }
}

/* dst[p,j] = data[p, idx[p,j]] for j < J; returns 1 (and writes nothing) when an index
 * is >= n (the number of data elements per partition).  data rows are contiguous. */
static inline int fi_move_gather(char *dst, ptrdiff_t dsp, ptrdiff_t dsf, const char *data,
                                 ptrdiff_t dtsp, const uint32_t *idx, ptrdiff_t isp, ptrdiff_t isf,
                                 int P, ptrdiff_t J, uint32_t n, int itemsize) {
    for (int p = 0; p < P; p++)
        for (ptrdiff_t j = 0; j < J; j++)
            if (idx[p * isp + j * isf] >= n) return 1;
    for (int p = 0; p < P; p++) {
        const char *row = data + p * dtsp;
        for (ptrdiff_t j = 0; j < J; j++)
            fi_move_elem(dst + p * dsp + j * dsf, row + (ptrdiff_t)idx[p * isp + j * isf] * itemsize,
                         itemsize);
    }
    return 0;
}

/* One row: out[0..n) = offset + indices of nonzero src elements (float32 when is_float:
 * x != 0, so -0 is zero and NaN is nonzero; else int32 x != 0), then pad, then the count
 * at out[n].  Arithmetic on the indices wraps modulo 2^32. */
static inline void fi_move_nonzero(int32_t *out, ptrdiff_t osf, const char *src, ptrdiff_t ssf,
                                   int is_float, ptrdiff_t n, int32_t offset, int32_t pad) {
    ptrdiff_t k = 0;
    for (ptrdiff_t i = 0; i < n; i++) {
        int nz;
        if (is_float) { float v; memcpy(&v, src + i * ssf, 4); nz = v != 0.0f; }
        else { int32_t v; memcpy(&v, src + i * ssf, 4); nz = v != 0; }
        if (nz) out[(k++) * osf] = (int32_t)((uint32_t)i + (uint32_t)offset);
    }
    for (ptrdiff_t i = k; i < n; i++) out[i * osf] = pad;
    out[n * osf] = (int32_t)k;
}

#endif /* FASTISA_MOVE_H */
