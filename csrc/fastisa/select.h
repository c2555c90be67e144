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
#ifdef FASTISA_OPENMP
#include <omp.h>
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

/* Sort a[0..n) descending (LSD radix, 8-bit digits); tmp has room for n values. */
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
    uint32_t *src = a, *dst = tmp;
    for (int shift = 0; shift < 32; shift += 8) {
        size_t cnt[256];
        memset(cnt, 0, sizeof cnt);
        for (size_t i = 0; i < n; i++)
            cnt[255u - ((src[i] >> shift) & 0xFFu)]++;
        if (cnt[255u - ((src[0] >> shift) & 0xFFu)] == n)
            continue; /* every digit equal: the pass would not move anything */
        size_t pos = 0;
        for (int d = 0; d < 256; d++) {
            size_t c = cnt[d];
            cnt[d] = pos;
            pos += c;
        }
        for (size_t i = 0; i < n; i++)
            dst[cnt[255u - ((src[i] >> shift) & 0xFFu)]++] = src[i];
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

/* Top-k of ONE 16-partition group.  src points at the group's partition 0; partition p is
 * src + p*ps (elements), its snake elements are columns 0..cnt_p-1 (index = col*16 + p).
 * Result j goes to partition j % 16, free position j / 16 of val / idx.  Returns 1 when an
 * active element is NaN.  Returns 0 without writing if scratch memory is unavailable
 * (*oom set). */
static inline int fi__topk_group(const uint16_t *src, ptrdiff_t ps, int n, int k, int sorted,
                                 uint16_t *val, ptrdiff_t vps, ptrdiff_t vfs,
                                 uint32_t *idx, ptrdiff_t ips, ptrdiff_t ifs, int *oom)
{
    int cnt[16];
    for (int p = 0; p < 16; p++)
        cnt[p] = n > p ? (n - p + 15) / 16 : 0;
    const int cols = cnt[0];
    unsigned nan = 0;

    /* Threshold: with at least k blocks, the k-th largest block maximum t is a lower bound
     * of the k-th largest element (k blocks each hold an element >= t), so every element of
     * the top-k has key >= t.  About 4k blocks keep the survivors close to k. */
    int full = (long)k * 8 > (long)n;
    int m = full ? cols : (int)(((long)16 * cols) / (4L * k));
    if (m < 1)
        m = 1;
    int nb_row = (cols + m - 1) / m;
    size_t nbmax = (size_t)16 * nb_row;
    uint32_t *bm = (uint32_t *)malloc((nbmax + 1) * sizeof(uint32_t));
    uint32_t *bm_tmp = (uint32_t *)malloc((nbmax + 1) * sizeof(uint32_t));
    if (!bm || !bm_tmp) {
        free(bm);
        free(bm_tmp);
        *oom = 1;
        return 0;
    }
    size_t nb = 0;
    for (int p = 0; p < 16; p++) {
        const uint16_t *row = src + p * ps;
        for (int j0 = 0; j0 < cnt[p]; j0 += m) {
            int j1 = j0 + m < cnt[p] ? j0 + m : cnt[p];
            int16_t mx = INT16_MIN;
            unsigned nn = 0;
            for (int j = j0; j < j1; j++) {
                uint16_t b = row[j];
                int16_t s = fi_bf16_key(b);
                mx = s > mx ? s : mx;
                nn |= (b & 0x7FFFu) > 0x7F80u;
            }
            nan |= nn;
            bm[nb++] = (uint32_t)((uint16_t)mx ^ 0x8000u) << 16;
        }
    }
    int16_t t = INT16_MIN;
    size_t nsurv_max = (size_t)n;
    if (!full) {
        uint32_t tk = fi__radix_kth_u32(bm, nb, (size_t)k, 16, bm_tmp);
        t = (int16_t)(uint16_t)((tk >> 16) ^ 0x8000u);
        size_t q = 0;
        for (size_t b = 0; b < nb; b++)
            q += bm[b] >= tk;
        nsurv_max = q * (size_t)m;
        if (nsurv_max > (size_t)n)
            nsurv_max = (size_t)n;
    }
    uint32_t *surv = (uint32_t *)malloc((nsurv_max + 1) * sizeof(uint32_t));
    uint32_t *tmp = (uint32_t *)malloc((nsurv_max + 1) * sizeof(uint32_t));
    if (!surv || !tmp) {
        free(bm); free(bm_tmp); free(surv); free(tmp);
        *oom = 1;
        return 0;
    }
    /* filtering pass: only blocks whose maximum reaches t can hold survivors */
    size_t S = 0, b = 0;
    uint32_t tcomp = (uint32_t)((uint16_t)t ^ 0x8000u) << 16;
    for (int p = 0; p < 16; p++) {
        const uint16_t *row = src + p * ps;
        for (int j0 = 0; j0 < cnt[p]; j0 += m, b++) {
            if (bm[b] < tcomp)
                continue;
            int j1 = j0 + m < cnt[p] ? j0 + m : cnt[p];
            for (int j = j0; j < j1; j++) {
                int16_t s = fi_bf16_key(row[j]);
                surv[S] = fi__topk_comp(s, (uint32_t)(j * 16 + p));
                S += s >= t;
            }
        }
    }
    free(bm);
    free(bm_tmp);
    /* exact select among the survivors (all composites are distinct) */
    uint32_t *sel = surv;
    size_t ns = S;
    if (S > (size_t)k) {
        uint32_t kth = fi__radix_kth_u32(surv, S, (size_t)k, 0, tmp);
        size_t w = 0;
        for (size_t i = 0; i < S; i++) {
            uint32_t v = surv[i];
            surv[w] = v;
            w += v >= kth;
        }
        ns = w; /* == k */
    }
    if (sorted)
        fi__sort_desc_u32(sel, ns, tmp);
    for (size_t j = 0; j < ns; j++) {
        uint32_t index = 0xFFFFu - (sel[j] & 0xFFFFu);
        ptrdiff_t pj = (ptrdiff_t)(j % 16), cj = (ptrdiff_t)(j / 16);
        val[pj * vps + cj * vfs] = src[(ptrdiff_t)(index % 16) * ps + (ptrdiff_t)(index / 16)];
        idx[pj * ips + cj * ifs] = index;
    }
    free(surv);
    free(tmp);
    return nan != 0;
}

/* nki.isa.topk on bf16 bits: `groups` 16-partition groups, partition stride ps (elements,
 * rows contiguous), n active elements per snake, k results per group (1 <= k <= n), written
 * in snake layout to val (bf16 bits) / idx (uint32) with partition strides vps/ips and
 * free strides vfs/ifs.  threads <= 0: OpenMP default.  Results do not depend on threads.
 * Returns bit 0: NaN seen among active elements; bit 1: scratch allocation failed. */
static inline int fi_topk_bf16(const uint16_t *src, ptrdiff_t ps, int groups, int n, int k,
                               int sorted, uint16_t *val, ptrdiff_t vps, ptrdiff_t vfs,
                               uint32_t *idx, ptrdiff_t ips, ptrdiff_t ifs, int threads)
{
    int nan = 0, oom = 0;
#ifdef FASTISA_OPENMP
    if (threads <= 0)
        threads = omp_get_max_threads();
    if (threads > groups)
        threads = groups;
    #pragma omp parallel for schedule(dynamic, 1) num_threads(threads) reduction(|: nan, oom) if (threads > 1)
#else
    (void)threads;
#endif
    for (int g = 0; g < groups; g++) {
        int o = 0;
        nan |= fi__topk_group(src + (ptrdiff_t)g * 16 * ps, ps, n, k, sorted,
                              val + (ptrdiff_t)g * 16 * vps, vps, vfs,
                              idx + (ptrdiff_t)g * 16 * ips, ips, ifs, &o);
        oom |= o;
    }
    return (nan ? 1 : 0) | (oom ? 2 : 0);
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
