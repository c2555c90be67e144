/* Selection kernels for NKI: snake-layout top-k on bf16 (nki.isa.topk, spec 001) and the
 * VectorE max8 family (max8, nc_find_index8, nc_match_replace8; reference/nki.md 2.2-2.4).
 *
 * Python-free, static inline, no error paths: the front-end (fastisa.nki.isa) validates
 * every constraint before calling.  Nothing here allocates more than scratch memory.
 *
 * Ordering used by every kernel (documented in the README):
 *   - values compare as numbers: -0 == +0; ties are broken by the LOWER source index first;
 *   - top-k (bf16): NaN input is undefined behaviour in the spec; here a NaN ranks by its
 *     bit pattern (positive-sign NaNs above +inf, negative-sign NaNs below -inf), and the
 *     kernel reports that it saw one so the front-end can warn;
 *   - max8 (float32 keys): every NaN ranks above +inf (ties between NaNs by index).
 */
#ifndef FASTISA_SELECT_H
#define FASTISA_SELECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "par.h"
#if !defined(_WIN32)
#define FI_SELECT_THREADS 1     /* threads on: the shared pool (par.h) */
#endif
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#define FI_IDX_NONE 0xFFFFFFFFu

/* bf16 bits -> signed 16-bit key, monotone in value, with -0 and +0 mapped to the same key. */
static inline int16_t fi_bf16_key(uint16_t b)
{
    int16_t s = (int16_t)b;
    int16_t k = (int16_t)(b ^ ((uint16_t)(s >> 15) & 0x7FFFu));
    return (int16_t)(k + (k == -1));
}

/* float32 -> signed 32-bit key, monotone in value, -0 == +0, every NaN above +inf. */
static inline int32_t fi_f32_key(float f)
{
    uint32_t b;
    memcpy(&b, &f, 4);
    if ((b & 0x7FFFFFFFu) > 0x7F800000u)
        return INT32_MAX;
    int32_t s = (int32_t)b;
    int32_t k = (int32_t)(b ^ ((uint32_t)(s >> 31) & 0x7FFFFFFFu));
    return k + (k == -1);
}

/* Radix select: the k-th largest (1-based) of a[0..n) (uint32), looking only at the bits
 * at and above lo_shift (a multiple of 8).  `tmp` has room for n values; `a` is not changed.
 * Requires 1 <= k <= n. */
static inline uint32_t fi__radix_kth_u32(const uint32_t *a, size_t n, size_t k, int lo_shift,
                                         uint32_t *tmp)
{
    uint32_t prefix = 0, mask = 0;
    const uint32_t *cur = a;
    size_t m = n, need = k;
    for (int shift = 24; shift >= lo_shift; shift -= 8) {
        size_t hist[256];
        memset(hist, 0, sizeof hist);
        for (size_t i = 0; i < m; i++)
            hist[(cur[i] >> shift) & 0xFFu]++;
        size_t acc = 0;
        int d = 255;
        for (; d > 0; d--) {
            if (acc + hist[d] >= need)
                break;
            acc += hist[d];
        }
        need -= acc;
        prefix |= (uint32_t)d << shift;
        mask |= 0xFFu << shift;
        if (shift == lo_shift)
            break;
        /* keep the candidates whose digit is d (compaction into tmp) */
        size_t w = 0;
        for (size_t i = 0; i < m; i++) {
            uint32_t v = cur[i];
            tmp[w] = v;
            w += ((v >> shift) & 0xFFu) == (uint32_t)d;
        }
        cur = tmp;
        m = w;
    }
    (void)mask;
    return prefix;
}

/* Sort a[0..n) descending (LSD radix, 8-bit digits, the four histograms taken in one
 * pass; passes whose digit is the same everywhere are skipped); tmp has room for n. */
static inline void fi__sort_desc_u32(uint32_t *a, size_t n, uint32_t *tmp)
{
    if (n <= 32) {
        for (size_t i = 1; i < n; i++) {
            uint32_t v = a[i];
            size_t j = i;
            while (j > 0 && a[j - 1] < v) {
                a[j] = a[j - 1];
                j--;
            }
            a[j] = v;
        }
        return;
    }
    uint32_t cnt[4][256];
    memset(cnt, 0, sizeof cnt);
    for (size_t i = 0; i < n; i++) {
        uint32_t v = ~a[i];   /* ascending order of ~v is descending order of v */
        cnt[0][v & 0xFFu]++;
        cnt[1][(v >> 8) & 0xFFu]++;
        cnt[2][(v >> 16) & 0xFFu]++;
        cnt[3][v >> 24]++;
    }
    uint32_t *src = a, *dst = tmp;
    for (int d = 0; d < 4; d++) {
        int shift = 8 * d;
        uint32_t *c = cnt[d];
        if (c[(~src[0] >> shift) & 0xFFu] == n)
            continue;
        uint32_t pos = 0;
        for (int b = 0; b < 256; b++) {
            uint32_t x = c[b];
            c[b] = pos;
            pos += x;
        }
        for (size_t i = 0; i < n; i++) {
            uint32_t v = src[i];
            dst[c[(~v >> shift) & 0xFFu]++] = v;
        }
        uint32_t *t = src;
        src = dst;
        dst = t;
    }
    if (src != a)
        memcpy(a, src, n * sizeof *a);
}

/* composite: key (high 16 bits, unsigned order) then lower index first */
static inline uint32_t fi__topk_comp(int16_t key, uint32_t index)
{
    return ((uint32_t)((uint16_t)key ^ 0x8000u) << 16) | (0xFFFFu - index);
}

/* Maximum key of the 16-element chunk x; ORs a NaN flag into *nan. */
static inline int16_t fi__chunk_max(const uint16_t *x, unsigned *nan)
{
#if defined(__SSE2__)
    const __m128i m7 = _mm_set1_epi16(0x7FFF), ones = _mm_set1_epi16(-1);
    const __m128i inf = _mm_set1_epi16(0x7F80);
    __m128i b0 = _mm_loadu_si128((const __m128i *)x);
    __m128i b1 = _mm_loadu_si128((const __m128i *)(x + 8));
    __m128i a0 = _mm_and_si128(b0, m7), a1 = _mm_and_si128(b1, m7);
    __m128i k0 = _mm_xor_si128(b0, _mm_and_si128(_mm_srai_epi16(b0, 15), m7));
    __m128i k1 = _mm_xor_si128(b1, _mm_and_si128(_mm_srai_epi16(b1, 15), m7));
    k0 = _mm_sub_epi16(k0, _mm_cmpeq_epi16(k0, ones));
    k1 = _mm_sub_epi16(k1, _mm_cmpeq_epi16(k1, ones));
    __m128i nn = _mm_or_si128(_mm_cmpgt_epi16(a0, inf), _mm_cmpgt_epi16(a1, inf));
    *nan |= (unsigned)_mm_movemask_epi8(nn);
    __m128i m = _mm_max_epi16(k0, k1);
    m = _mm_max_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(1, 0, 3, 2)));
    m = _mm_max_epi16(m, _mm_shuffle_epi32(m, _MM_SHUFFLE(2, 3, 0, 1)));
    m = _mm_max_epi16(m, _mm_shufflelo_epi16(m, _MM_SHUFFLE(2, 3, 0, 1)));
    return (int16_t)_mm_extract_epi16(m, 0);
#else
    int16_t mx = INT16_MIN;
    unsigned nn = 0;
    for (int j = 0; j < 16; j++) {
        int16_t s = fi_bf16_key(x[j]);
        mx = s > mx ? s : mx;
        nn |= (x[j] & 0x7FFFu) > 0x7F80u;
    }
    *nan |= nn;
    return mx;
#endif
}

/* The k-th largest (1-based, 1 <= k <= n) of n int16 keys: two byte-histogram passes
 * (four interleaved histograms, so runs of equal bytes do not serialise on one counter). */
static inline int16_t fi__kth_largest_i16(const int16_t *a, size_t n, size_t k)
{
    uint32_t h[4][256];
    memset(h, 0, sizeof h);
    size_t i = 0;
    for (; i + 4 <= n; i += 4) {
        h[0][((uint16_t)a[i] ^ 0x8000u) >> 8]++;
        h[1][((uint16_t)a[i + 1] ^ 0x8000u) >> 8]++;
        h[2][((uint16_t)a[i + 2] ^ 0x8000u) >> 8]++;
        h[3][((uint16_t)a[i + 3] ^ 0x8000u) >> 8]++;
    }
    for (; i < n; i++)
        h[0][((uint16_t)a[i] ^ 0x8000u) >> 8]++;
    size_t acc = 0;
    unsigned hb = 255;
    for (;; hb--) {
        size_t c = (size_t)h[0][hb] + h[1][hb] + h[2][hb] + h[3][hb];
        if (acc + c >= k || hb == 0)
            break;
        acc += c;
    }
    k -= acc;
    memset(h, 0, sizeof h);
    for (i = 0; i + 4 <= n; i += 4) {
        for (int u = 0; u < 4; u++) {
            unsigned v = (uint16_t)a[i + u] ^ 0x8000u;
            h[u][v & 0xFFu] += (v >> 8) == hb;
        }
    }
    for (; i < n; i++) {
        unsigned v = (uint16_t)a[i] ^ 0x8000u;
        h[0][v & 0xFFu] += (v >> 8) == hb;
    }
    acc = 0;
    unsigned lb = 255;
    for (;; lb--) {
        size_t c = (size_t)h[0][lb] + h[1][lb] + h[2][lb] + h[3][lb];
        if (acc + c >= k || lb == 0)
            break;
        acc += c;
    }
    return (int16_t)(uint16_t)(((hb << 8) | lb) ^ 0x8000u);
}

/* Bit j set when element j of the 16-element chunk x has key >= t. */
static inline unsigned fi__chunk_ge_mask(const uint16_t *x, int16_t t)
{
#if defined(__SSE2__)
    const __m128i m7 = _mm_set1_epi16(0x7FFF), ones = _mm_set1_epi16(-1), tv = _mm_set1_epi16(t);
    __m128i b0 = _mm_loadu_si128((const __m128i *)x);
    __m128i b1 = _mm_loadu_si128((const __m128i *)(x + 8));
    __m128i k0 = _mm_xor_si128(b0, _mm_and_si128(_mm_srai_epi16(b0, 15), m7));
    __m128i k1 = _mm_xor_si128(b1, _mm_and_si128(_mm_srai_epi16(b1, 15), m7));
    k0 = _mm_sub_epi16(k0, _mm_cmpeq_epi16(k0, ones));
    k1 = _mm_sub_epi16(k1, _mm_cmpeq_epi16(k1, ones));
    __m128i lt = _mm_packs_epi16(_mm_cmpgt_epi16(tv, k0), _mm_cmpgt_epi16(tv, k1));
    return (~(unsigned)_mm_movemask_epi8(lt)) & 0xFFFFu;
#else
    unsigned m = 0;
    for (int j = 0; j < 16; j++)
        m |= (unsigned)(fi_bf16_key(x[j]) >= t) << j;
    return m;
#endif
}

/* speed15b branch (issue 15): the maxima of 16 consecutive 16-element chunks (256 bf16
 * elements) at once with AVX-512BW; the same keys as fi__chunk_max, element for element. */
#if defined(__GNUC__) && defined(__x86_64__)
#include <immintrin.h>
#define FI_SELECT_AVX512 1
__attribute__((target("avx512f,avx512bw,avx512vl")))
static inline void fi__chunk_max16_avx512(const uint16_t *x, int16_t *out, __m512i *nanacc)
{
    const __m512i m7 = _mm512_set1_epi16(0x7FFF), one = _mm512_set1_epi16(1);
    const __m512i ones = _mm512_set1_epi16(-1);
    __m512i z[8];
    for (int i = 0; i < 8; i++) {
        __m512i b = _mm512_loadu_si512((const void *)(x + 32 * i));
        __m512i a = _mm512_and_si512(b, m7);
        *nanacc = _mm512_max_epu16(*nanacc, a);
        __m512i k = _mm512_xor_si512(b, _mm512_and_si512(_mm512_srai_epi16(b, 15), m7));
        __mmask32 e = _mm512_cmpeq_epi16_mask(k, ones);
        z[i] = _mm512_mask_add_epi16(k, e, k, one);   /* -1 (from -0) -> 0 */
    }
    /* z[i] holds chunks 2i (low 256 bits) and 2i+1 (high 256 bits) */
    __m512i y[4];
    for (int i = 0; i < 4; i++) {
        __m512i A = _mm512_shuffle_i64x2(z[2 * i], z[2 * i + 1], _MM_SHUFFLE(2, 0, 2, 0));
        __m512i B = _mm512_shuffle_i64x2(z[2 * i], z[2 * i + 1], _MM_SHUFFLE(3, 1, 3, 1));
        y[i] = _mm512_max_epi16(A, B);  /* 128-bit lane l: chunk 4i + l, 8 partial maxima */
    }
    __m512i u0 = _mm512_max_epi16(_mm512_unpacklo_epi64(y[0], y[1]),
                                  _mm512_unpackhi_epi64(y[0], y[1]));
    __m512i u1 = _mm512_max_epi16(_mm512_unpacklo_epi64(y[2], y[3]),
                                  _mm512_unpackhi_epi64(y[2], y[3]));
    /* u0 lane l: [chunk l (4 partials) | chunk 4 + l]; u1 lane l: [chunk 8 + l | 12 + l] */
    __m512 p = _mm512_shuffle_ps(_mm512_castsi512_ps(u0), _mm512_castsi512_ps(u1),
                                 _MM_SHUFFLE(2, 0, 2, 0));
    __m512 q = _mm512_shuffle_ps(_mm512_castsi512_ps(u0), _mm512_castsi512_ps(u1),
                                 _MM_SHUFFLE(3, 1, 3, 1));
    __m512i v = _mm512_max_epi16(_mm512_castps_si512(p), _mm512_castps_si512(q));
    /* v lane l, 32-bit element j: chunk l + 4j (2 partials) */
    v = _mm512_max_epi16(v, _mm512_srli_epi32(v, 16));
    __m256i r = _mm512_cvtepi32_epi16(v);      /* position 4l + j: chunk l + 4j */
    const __m256i perm = _mm256_setr_epi16(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14,
                                           3, 7, 11, 15);
    r = _mm256_permutexvar_epi16(perm, r);    /* position c: chunk c */
    _mm256_storeu_si256((__m256i *)out, r);
}

__attribute__((target("avx512f,avx512bw,avx512vl")))
static inline int fi__chunk_max_row_avx512(const uint16_t *row, int full, int16_t *b,
                                           unsigned *nan)
{
    __m512i acc = _mm512_setzero_si512();
    int c = 0;
    for (; c + 16 <= full; c += 16)
        fi__chunk_max16_avx512(row + 16 * c, b + c, &acc);
    if (_mm512_cmpgt_epu16_mask(acc, _mm512_set1_epi16(0x7F80)))
        *nan |= 1u;
    return c;
}

/* -1: decide from the CPU on first use; 0: the portable code; 1: AVX-512BW */
static int fi__select_simd = -1;
static inline int fi__select_use_simd(void)
{
    if (fi__select_simd < 0) {
        __builtin_cpu_init();
        fi__select_simd = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw")
                          && __builtin_cpu_supports("avx512vl");
    }
    return fi__select_simd;
}
#endif

/* Choose the chunk-maxima code of fi_topk_bf16: 1 AVX-512BW (where the CPU has it), 0 the
 * portable code, -1 automatic.  Returns the previous choice.  The results are the same. */
static inline int fi_select_set_simd(int mode)
{
#ifdef FI_SELECT_AVX512
    int old = fi__select_simd;
    if (mode > 0) {
        fi__select_simd = -1;
        mode = fi__select_use_simd();
    }
    fi__select_simd = mode;
    return old;
#else
    (void)mode;
    return 0;
#endif
}

/* Top-k of ONE 16-partition group.  src points at the group's partition 0; partition p is
 * src + p*ps (elements), its snake elements are columns 0..cnt_p-1 (index = col*16 + p).
 * Result j goes to partition j % 16, free position j / 16 of val / idx.  Returns 1 when an
 * active element is NaN.  Returns 0 without writing if scratch memory is unavailable
 * (*oom set).
 *
 * Method (rows are read contiguously, partition by partition):
 *  1. one pass computes the maximum key of every 16-element chunk of every row;
 *  2. chunks are grouped into about 4k superblocks (within a row); the k-th largest
 *     superblock maximum t is a lower bound of the k-th largest element (k superblocks
 *     each hold an element >= t), so every element of the top-k has key >= t;
 *  3. the chunks whose maximum reaches t are scanned and their elements >= t kept as
 *     distinct 32-bit composites (key, then lower index first);
 *  4. an exact radix select on the survivors keeps the k largest composites;
 *     sorted=True then radix-sorts them descending.
 * When k is large relative to n (2k > number of chunks) every element is a survivor. */
static inline int fi__topk_group(const uint16_t *src, ptrdiff_t ps, int n, int k, int sorted,
                                 uint16_t *val, ptrdiff_t vps, ptrdiff_t vfs,
                                 uint32_t *idx, ptrdiff_t ips, ptrdiff_t ifs, int *oom)
{
    int cnt[16];
    for (int p = 0; p < 16; p++)
        cnt[p] = n > p ? (n - p + 15) / 16 : 0;
    const int cols = cnt[0];
    const int nch = (cols + 15) / 16;        /* chunks per row */
    const size_t B1 = (size_t)16 * nch;
    unsigned nan = 0;

    int16_t *bm1 = (int16_t *)malloc((B1 + 1) * sizeof(int16_t));
    int16_t *bm2 = (int16_t *)malloc((B1 + 1) * sizeof(int16_t));
    uint32_t *ql = (uint32_t *)malloc((B1 + 1) * sizeof(uint32_t));
    if (!bm1 || !bm2 || !ql) {
        free(bm1); free(bm2); free(ql);
        *oom = 1;
        return 0;
    }
    /* 1. chunk maxima (and the NaN flag) */
    for (int p = 0; p < 16; p++) {
        const uint16_t *row = src + p * ps;
        int16_t *b = bm1 + (size_t)p * nch;
        int full = cnt[p] / 16, c = 0;
#ifdef FI_SELECT_AVX512
        if (fi__select_use_simd())
            c = fi__chunk_max_row_avx512(row, full, b, &nan);   /* 16 chunks at a time */
#endif
        for (; c < full; c++)
            b[c] = fi__chunk_max(row + 16 * c, &nan);
        if (16 * c < cnt[p]) {
            int16_t mx = INT16_MIN;
            for (int j = 16 * c; j < cnt[p]; j++) {
                int16_t s = fi_bf16_key(row[j]);
                mx = s > mx ? s : mx;
                nan |= (row[j] & 0x7FFFu) > 0x7F80u;
            }
            b[c++] = mx;
        }
        for (; c < nch; c++)
            b[c] = INT16_MIN;   /* empty chunk */
    }
    /* 2. threshold from superblock maxima */
    int16_t t = INT16_MIN;
    int s = 1, nsb = nch;
    if (2 * (size_t)k <= B1) {
        s = (int)(B1 / (4 * (size_t)k));
        if (s < 1)
            s = 1;
        nsb = (nch + s - 1) / s;
        const int16_t *sb = bm1;
        size_t nb = B1;
        if (s > 1) {
            nb = 0;
            for (int p = 0; p < 16; p++) {
                const int16_t *b = bm1 + (size_t)p * nch;
                for (int c0 = 0; c0 < nch; c0 += s) {
                    int c1 = c0 + s < nch ? c0 + s : nch;
                    int16_t mx = INT16_MIN;
                    for (int c = c0; c < c1; c++)
                        mx = b[c] > mx ? b[c] : mx;
                    bm2[nb++] = mx;
                }
            }
            sb = bm2;
        }
        t = fi__kth_largest_i16(sb, nb, (size_t)k);
    }
    /* 3. filter: only chunks whose maximum reaches t can hold survivors.  A branch-free
     * pass lists them (reusing bm2's memory), then their masks of elements >= t are taken
     * (the exact survivor count), then the survivors themselves. */
    /* list entries: partition << 16 | chunk (chunk < 4096) */
    size_t nq = 0;
    for (int p = 0; p < 16; p++) {
        const int16_t *b1 = bm1 + (size_t)p * nch;
        if (s == 1) {
            for (int c = 0; c < nch; c++) {
                ql[nq] = ((uint32_t)p << 16) | (uint32_t)c;
                nq += b1[c] >= t;
            }
            continue;
        }
        const int16_t *b2 = bm2 + (size_t)p * nsb;
        for (int q = 0; q < nsb; q++) {
            if (b2[q] < t)
                continue;
            int c1 = (q + 1) * s < nch ? (q + 1) * s : nch;
            for (int c = q * s; c < c1; c++) {
                ql[nq] = ((uint32_t)p << 16) | (uint32_t)c;
                nq += b1[c] >= t;
            }
        }
    }
    uint16_t *mk = (uint16_t *)bm2;   /* superblock maxima are no longer needed */
    size_t S = 0;
    for (size_t i = 0; i < nq; i++) {
        uint32_t c = ql[i];
        int p = (int)(c >> 16), j0 = 16 * (int)(c & 0xFFFFu);
        const uint16_t *row = src + p * ps;
        unsigned m = 0;
        if (j0 + 16 <= cnt[p]) {
            m = fi__chunk_ge_mask(row + j0, t);
        } else {
            for (int j = j0; j < cnt[p]; j++)
                m |= (unsigned)(fi_bf16_key(row[j]) >= t) << (j - j0);
        }
        S += (size_t)__builtin_popcount(m);
        mk[i] = (uint16_t)m;
    }
    uint32_t *surv = (uint32_t *)malloc((S + 1) * sizeof(uint32_t));
    uint32_t *tmp = (uint32_t *)malloc((2 * S + 1) * sizeof(uint32_t));
    if (!surv || !tmp) {
        free(bm1); free(bm2); free(ql); free(surv); free(tmp);
        *oom = 1;
        return 0;
    }
    S = 0;
    for (size_t i = 0; i < nq; i++) {
        uint32_t c = ql[i];
        int p = (int)(c >> 16), j0 = 16 * (int)(c & 0xFFFFu);
        const uint16_t *row = src + p * ps;
        unsigned m = mk[i];
        while (m) {
            int j = j0 + __builtin_ctz(m);
            m &= m - 1;
            surv[S++] = fi__topk_comp(fi_bf16_key(row[j]), (uint32_t)(j * 16 + p));
        }
    }
    free(bm1);
    free(bm2);
    free(ql);
    /* 4. exact select among the survivors (all composites are distinct): the k-th largest
     * key T by histogram (keys are the composites' high halves), then every survivor with
     * key > T and, among those with key == T, the lowest indices. */
    size_t ns = S;
    if (S > (size_t)k) {
        int16_t *keys = (int16_t *)tmp;   /* S int16 fit in tmp's S uint32 */
        for (size_t i = 0; i < S; i++)
            keys[i] = (int16_t)(uint16_t)((surv[i] >> 16) ^ 0x8000u);
        int16_t T = fi__kth_largest_i16(keys, S, (size_t)k);
        uint32_t Tc = (uint32_t)((uint16_t)T ^ 0x8000u) << 16;
        size_t w = 0, nt = 0;
        for (size_t i = 0; i < S; i++) {      /* key > T first (in place), ties to tmp */
            uint32_t v = surv[i];
            surv[w] = v;
            w += (v >> 16) > (Tc >> 16);
            tmp[nt] = v;
            nt += (v & 0xFFFF0000u) == Tc;
        }
        size_t r = (size_t)k - w;
        if (nt > r) {
            uint32_t kth = fi__radix_kth_u32(tmp, nt, r, 0, tmp + nt);
            size_t w2 = 0;
            for (size_t i = 0; i < nt; i++) {
                uint32_t v = tmp[i];
                tmp[w2] = v;
                w2 += v >= kth;
            }
            nt = w2;
        }
        memcpy(surv + w, tmp, nt * sizeof(uint32_t));
        ns = w + nt; /* == k */
    }
    if (sorted)
        fi__sort_desc_u32(surv, ns, tmp);
    for (size_t j = 0; j < ns; j++) {
        uint32_t index = 0xFFFFu - (surv[j] & 0xFFFFu);
        ptrdiff_t pj = (ptrdiff_t)(j % 16), cj = (ptrdiff_t)(j / 16);
        val[pj * vps + cj * vfs] = src[(ptrdiff_t)(index % 16) * ps + (ptrdiff_t)(index / 16)];
        idx[pj * ips + cj * ifs] = index;
    }
    free(surv);
    free(tmp);
    return nan != 0;
}

typedef struct {
    const uint16_t *src;
    ptrdiff_t ps;
    int groups, n, k, sorted;
    uint16_t *val;
    ptrdiff_t vps, vfs;
    uint32_t *idx;
    ptrdiff_t ips, ifs;
    int nan, oom;
} fi__topk_job;

/* One 16-partition group g (a task of the shared pool). */
static void fi__topk_task(void *ctx, int g)
{
    fi__topk_job *J = (fi__topk_job *)ctx;
    int o = 0;
    int nn = fi__topk_group(J->src + (ptrdiff_t)g * 16 * J->ps, J->ps, J->n, J->k, J->sorted,
                            J->val + (ptrdiff_t)g * 16 * J->vps, J->vps, J->vfs,
                            J->idx + (ptrdiff_t)g * 16 * J->ips, J->ips, J->ifs, &o);
    if (nn)
        __atomic_fetch_or(&J->nan, 1, __ATOMIC_RELAXED);
    if (o)
        __atomic_fetch_or(&J->oom, 1, __ATOMIC_RELAXED);
}

/* nki.isa.topk on bf16 bits: `groups` 16-partition groups, partition stride ps (elements,
 * rows contiguous), n active elements per snake, k results per group (1 <= k <= n), written
 * in snake layout to val (bf16 bits) / idx (uint32) with partition strides vps/ips and
 * free strides vfs/ifs.
 *
 * Threads: the groups are the tasks of one job of fastisa's worker pool (par.h), the
 * calling thread among them (threads <= 0: fi_par_threads(0), i.e. OMP_NUM_THREADS or the
 * core count).  The caller only waits for groups a
 * worker has actually taken, never for a worker the OS has not scheduled yet.  (Until
 * the pool, the count was lowered to the cores the load average and the run queue left
 * idle; the pool's own spinning worker counts as runnable, so that rule now mostly chose
 * one thread.)  Each group is computed by one thread with the same code: results do not
 * depend on the thread count.
 * Returns bit 0: NaN seen among active elements; bit 1: scratch allocation failed. */
static inline int fi_topk_bf16(const uint16_t *src, ptrdiff_t ps, int groups, int n, int k,
                               int sorted, uint16_t *val, ptrdiff_t vps, ptrdiff_t vfs,
                               uint32_t *idx, ptrdiff_t ips, ptrdiff_t ifs, int threads)
{
    fi__topk_job J = {src, ps, groups, n, k, sorted, val, vps, vfs, idx, ips, ifs, 0, 0};
#ifdef FI_SELECT_THREADS
    if (threads <= 0)
        threads = fi_par_threads(0);
    if ((long)n * groups < 32768L)
        threads = 1;   /* too little work to pay for a thread */
#else
    threads = 1;
#endif
    fi_par_for(threads, groups, fi__topk_task, &J);
    return (J.nan ? 1 : 0) | (J.oom ? 2 : 0);
}

/* max8: per partition, the 8 largest of src[p][0..N) (N >= 8) in descending order, ties by
 * lower index, as float32 values and their indices. */
static inline void fi_max8_f32(const float *src, ptrdiff_t ps, int P, int N,
                               float *out_val, uint32_t *out_idx)
{
    for (int p = 0; p < P; p++) {
        const float *row = src + p * ps;
        int32_t key[8];
        uint32_t at[8];
        int cnt = 0;
        for (int i = 0; i < N; i++) {
            int32_t kk = fi_f32_key(row[i]);
            if (cnt == 8 && kk <= key[7])
                continue;
            int j = cnt < 8 ? cnt++ : 7;
            while (j > 0 && key[j - 1] < kk) {
                key[j] = key[j - 1];
                at[j] = at[j - 1];
                j--;
            }
            key[j] = kk;
            at[j] = (uint32_t)i;
        }
        for (int j = 0; j < 8; j++) {
            out_val[p * 8 + j] = row[at[j]];
            out_idx[p * 8 + j] = at[j];
        }
    }
}

/* nc_find_index8: per partition, for each of the 8 vals the index of its first occurrence
 * in data (float equality: -0 == +0, NaN never matches); a value repeated in vals takes the
 * next occurrence after the one its previous copy took; no occurrence -> FI_IDX_NONE. */
static inline void fi_find_index8_f32(const float *data, ptrdiff_t ps, int P, int N,
                                      const float *vals, uint32_t *out)
{
    for (int p = 0; p < P; p++) {
        const float *row = data + p * ps;
        const float *v = vals + p * 8;
        uint32_t *o = out + p * 8;
        for (int j = 0; j < 8; j++) {
            long start = 0;
            int prev = -1;
            for (int i = j - 1; i >= 0; i--)
                if (v[i] == v[j]) {
                    prev = i;
                    break;
                }
            if (prev >= 0) {
                if (o[prev] == FI_IDX_NONE) {
                    o[j] = FI_IDX_NONE;
                    continue;
                }
                start = (long)o[prev] + 1;
            }
            uint32_t found = FI_IDX_NONE;
            for (long i = start; i < N; i++)
                if (row[i] == v[j]) {
                    found = (uint32_t)i;
                    break;
                }
            o[j] = found;
        }
    }
}

/* nc_match_replace8 on a float32 working copy: for i = 7 down to 0, the first element of
 * the row equal to vals[i] is replaced by imm and its index stored in out_idx[i]
 * (FI_IDX_NONE when there is none).  Sequential find-and-replace: a later search sees
 * earlier replacements. */
static inline void fi_match_replace8_f32(float *work, ptrdiff_t ps, int P, int N,
                                         const float *vals, float imm, uint32_t *out_idx)
{
    for (int p = 0; p < P; p++) {
        float *row = work + p * ps;
        for (int i = 7; i >= 0; i--) {
            float v = vals[p * 8 + i];
            uint32_t found = FI_IDX_NONE;
            for (int e = 0; e < N; e++)
                if (row[e] == v) {
                    found = (uint32_t)e;
                    row[e] = imm;
                    break;
                }
            out_idx[p * 8 + i] = found;
        }
    }
}

#endif /* FASTISA_SELECT_H */
