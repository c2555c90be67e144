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
#ifdef FASTISA_OPENMP
#include <omp.h>
#endif

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
 * FI_MOVE_TI is a multiple of 32 (the AVX-512 pass). */
#define FI_MOVE_TI 64
#define FI_MOVE_TJ 32

#if defined(__GNUC__)
#include <immintrin.h>
/* The same unpacks on 256-bit registers: each works within its two 128-bit lanes, so one
 * pass transposes two 8 x 8 blocks at once -- src elements i..i+15 of 8 rows give dst rows
 * i..i+7 (low lanes) and i+8..i+15 (high lanes).  Chosen at run time on CPUs with AVX2. */
static __attribute__((target("avx2"), noinline)) void fi_move_t16x8_16_avx2(
        char *d, ptrdiff_t d3, ptrdiff_t d4, const char *s, ptrdiff_t s4, ptrdiff_t n3,
        ptrdiff_t n4) {
    (void)d4;
    for (ptrdiff_t i0 = 0; i0 < n3; i0 += FI_MOVE_TI)
    for (ptrdiff_t j0 = 0; j0 < n4; j0 += FI_MOVE_TJ) {
        ptrdiff_t e0 = i0 + FI_MOVE_TI < n3 ? i0 + FI_MOVE_TI : n3;
        ptrdiff_t e1 = j0 + FI_MOVE_TJ < n4 ? j0 + FI_MOVE_TJ : n4;
        for (ptrdiff_t j = j0; j < e1; j += 8)
            for (ptrdiff_t i = i0; i < e0; i += 16) {
                const char *p = s + i * 2 + j * s4;
                char *q = d + i * d3 + j * 2;
                __m256i a0 = _mm256_loadu_si256((const __m256i *)(const void *)(p));
                __m256i a1 = _mm256_loadu_si256((const __m256i *)(const void *)(p + s4));
                __m256i a2 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 2 * s4));
                __m256i a3 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 3 * s4));
                __m256i a4 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 4 * s4));
                __m256i a5 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 5 * s4));
                __m256i a6 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 6 * s4));
                __m256i a7 = _mm256_loadu_si256((const __m256i *)(const void *)(p + 7 * s4));
                __m256i t0 = _mm256_unpacklo_epi16(a0, a1), t1 = _mm256_unpackhi_epi16(a0, a1);
                __m256i t2 = _mm256_unpacklo_epi16(a2, a3), t3 = _mm256_unpackhi_epi16(a2, a3);
                __m256i t4 = _mm256_unpacklo_epi16(a4, a5), t5 = _mm256_unpackhi_epi16(a4, a5);
                __m256i t6 = _mm256_unpacklo_epi16(a6, a7), t7 = _mm256_unpackhi_epi16(a6, a7);
                __m256i u0 = _mm256_unpacklo_epi32(t0, t2), u1 = _mm256_unpackhi_epi32(t0, t2);
                __m256i u2 = _mm256_unpacklo_epi32(t1, t3), u3 = _mm256_unpackhi_epi32(t1, t3);
                __m256i u4 = _mm256_unpacklo_epi32(t4, t6), u5 = _mm256_unpackhi_epi32(t4, t6);
                __m256i u6 = _mm256_unpacklo_epi32(t5, t7), u7 = _mm256_unpackhi_epi32(t5, t7);
                __m256i r[8] = {_mm256_unpacklo_epi64(u0, u4), _mm256_unpackhi_epi64(u0, u4),
                                _mm256_unpacklo_epi64(u1, u5), _mm256_unpackhi_epi64(u1, u5),
                                _mm256_unpacklo_epi64(u2, u6), _mm256_unpackhi_epi64(u2, u6),
                                _mm256_unpacklo_epi64(u3, u7), _mm256_unpackhi_epi64(u3, u7)};
                for (int k = 0; k < 8; k++) {
                    _mm_storeu_si128((__m128i *)(void *)(q + k * d3), _mm256_castsi256_si128(r[k]));
                    _mm_storeu_si128((__m128i *)(void *)(q + (8 + k) * d3),
                                     _mm256_extracti128_si256(r[k], 1));
                }
            }
    }
}
#define FI_MOVE_T16_AVX2 1

/* The same on 512-bit registers (AVX-512BW unpacks, also lane by lane): four 8 x 8
 * blocks per pass -- src elements i..i+31 of 8 rows give dst rows i..i+31. */
static __attribute__((target("avx512f,avx512bw"), noinline)) void fi_move_t32x8_16_avx512(
        char *d, ptrdiff_t d3, const char *s, ptrdiff_t s4, ptrdiff_t n3, ptrdiff_t n4) {
    for (ptrdiff_t i0 = 0; i0 < n3; i0 += FI_MOVE_TI)
    for (ptrdiff_t j0 = 0; j0 < n4; j0 += FI_MOVE_TJ) {
        ptrdiff_t e0 = i0 + FI_MOVE_TI < n3 ? i0 + FI_MOVE_TI : n3;
        ptrdiff_t e1 = j0 + FI_MOVE_TJ < n4 ? j0 + FI_MOVE_TJ : n4;
        for (ptrdiff_t j = j0; j < e1; j += 8)
            for (ptrdiff_t i = i0; i < e0; i += 32) {
                const char *p = s + i * 2 + j * s4;
                char *q = d + i * d3 + j * 2;
                __m512i a0 = _mm512_loadu_si512((const void *)(p));
                __m512i a1 = _mm512_loadu_si512((const void *)(p + s4));
                __m512i a2 = _mm512_loadu_si512((const void *)(p + 2 * s4));
                __m512i a3 = _mm512_loadu_si512((const void *)(p + 3 * s4));
                __m512i a4 = _mm512_loadu_si512((const void *)(p + 4 * s4));
                __m512i a5 = _mm512_loadu_si512((const void *)(p + 5 * s4));
                __m512i a6 = _mm512_loadu_si512((const void *)(p + 6 * s4));
                __m512i a7 = _mm512_loadu_si512((const void *)(p + 7 * s4));
                __m512i t0 = _mm512_unpacklo_epi16(a0, a1), t1 = _mm512_unpackhi_epi16(a0, a1);
                __m512i t2 = _mm512_unpacklo_epi16(a2, a3), t3 = _mm512_unpackhi_epi16(a2, a3);
                __m512i t4 = _mm512_unpacklo_epi16(a4, a5), t5 = _mm512_unpackhi_epi16(a4, a5);
                __m512i t6 = _mm512_unpacklo_epi16(a6, a7), t7 = _mm512_unpackhi_epi16(a6, a7);
                __m512i u0 = _mm512_unpacklo_epi32(t0, t2), u1 = _mm512_unpackhi_epi32(t0, t2);
                __m512i u2 = _mm512_unpacklo_epi32(t1, t3), u3 = _mm512_unpackhi_epi32(t1, t3);
                __m512i u4 = _mm512_unpacklo_epi32(t4, t6), u5 = _mm512_unpackhi_epi32(t4, t6);
                __m512i u6 = _mm512_unpacklo_epi32(t5, t7), u7 = _mm512_unpackhi_epi32(t5, t7);
                __m512i r[8] = {_mm512_unpacklo_epi64(u0, u4), _mm512_unpackhi_epi64(u0, u4),
                                _mm512_unpacklo_epi64(u1, u5), _mm512_unpackhi_epi64(u1, u5),
                                _mm512_unpacklo_epi64(u2, u6), _mm512_unpackhi_epi64(u2, u6),
                                _mm512_unpacklo_epi64(u3, u7), _mm512_unpackhi_epi64(u3, u7)};
                for (int k = 0; k < 8; k++) {
                    _mm_storeu_si128((__m128i *)(void *)(q + k * d3), _mm512_castsi512_si128(r[k]));
                    _mm_storeu_si128((__m128i *)(void *)(q + (8 + k) * d3),
                                     _mm512_extracti32x4_epi32(r[k], 1));
                    _mm_storeu_si128((__m128i *)(void *)(q + (16 + k) * d3),
                                     _mm512_extracti32x4_epi32(r[k], 2));
                    _mm_storeu_si128((__m128i *)(void *)(q + (24 + k) * d3),
                                     _mm512_extracti32x4_epi32(r[k], 3));
                }
            }
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
static inline void fi_move_tile2(char *d, ptrdiff_t d3, ptrdiff_t d4, const char *s,
                                 ptrdiff_t s3, ptrdiff_t s4, ptrdiff_t n3, ptrdiff_t n4,
                                 int itemsize) {
#if FI_MOVE_T16
    if (itemsize == 2 && d4 == 2 && s3 == 2) {
        /* 8 x 8 blocks (16 x 8 with AVX2), 8 source rows at a time within each tile. */
        ptrdiff_t nb3 = n3 & ~(ptrdiff_t)7, nb4 = n4 & ~(ptrdiff_t)7, done = 0;
#ifdef FI_MOVE_T16_AVX2
        if (__builtin_cpu_supports("avx512bw")) {           /* 32 dst rows per pass */
            done = n3 & ~(ptrdiff_t)31;
            if (done) fi_move_t32x8_16_avx512(d, d3, s, s4, done, nb4);
        }
        if (__builtin_cpu_supports("avx2")) {               /* 16 dst rows per pass */
            ptrdiff_t e = n3 & ~(ptrdiff_t)15;
            if (e > done)
                fi_move_t16x8_16_avx2(d + done * d3, d3, d4, s + done * 2, s4, e - done, nb4);
            done = e;
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

/* Row r of dst (F elements, free stride dsf) = row map[r] of src; map[r] < 0 skips.  At
 * least 256 KiB: rows split across nt OpenMP threads (nt 1: one; 0: OpenMP's default);
 * dst and src do not overlap (the caller copies src first), so the order is free. */
static inline void fi_move_rows(char *dst, ptrdiff_t dsp, ptrdiff_t dsf, const char *src,
                                ptrdiff_t ssp, ptrdiff_t ssf, const int32_t *map, int R,
                                ptrdiff_t F, int itemsize, int nt) {
#ifdef FASTISA_OPENMP
    if ((ptrdiff_t)R * F * itemsize >= (1 << 18) && nt != 1 && R > 1) {
#pragma omp parallel for schedule(static) num_threads(nt > 0 ? nt : omp_get_max_threads())
        for (int r = 0; r < R; r++)
            if (map[r] >= 0)
                fi_move_line(dst + r * dsp, dsf, src + (ptrdiff_t)map[r] * ssp, ssf, F, itemsize);
        return;
    }
#else
    (void)nt;
#endif
    for (int r = 0; r < R; r++) {
        if (map[r] < 0) continue;
        fi_move_line(dst + r * dsp, dsf, src + (ptrdiff_t)map[r] * ssp, ssf, F, itemsize);
    }
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
