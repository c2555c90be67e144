/* fastisa statistics / cross-partition reduce kernels for NKI (bn_stats, bn_aggr,
 * tensor_partition_reduce).
 *
 * Python-free, header-only, static inline, fi_stats_ prefix.  All arithmetic is float32
 * (each operation rounded once, no FMA: the build uses -ffp-contract=off), in the order
 * written below, which is fastisa's definition (the NKI documentation says only "in
 * float32"):
 *
 *   bn_stats (one row x[0..F)), for each half h in {even indices, odd indices}:
 *       n_h = count, s = x_0 + x_2 + ... (left to right), mean = s / n_h,
 *       m2 = sum over the half of (x - mean) * (x - mean), left to right;
 *       out = [n_e, mean_e, m2_e, n_o, mean_o, m2_o]; an empty half gives 0, 0, 0.
 *   bn_aggr (one row of k (count, mean, m2) triples): Chan et al.'s pairwise update,
 *       left to right, skipping count-0 triples:
 *       n = na + nb; d = mb - ma; mean = ma + d * (nb / n);
 *       m2 = (m2a + m2b) + (d * d) * (na * nb / n);   out = [mean, m2 / n] (n = 0: 0, 0)
 *   partition reduce: out[j] = fold over p = 0.. P-1 of x[p, j] (op add/max/min/average
 *       in float32; average = sum / P), or the OR / AND of the uint32 bit patterns.
 */
#ifndef FASTISA_STATS_H
#define FASTISA_STATS_H

#include "nki.h"

#define FI_STATS_CH 512

static inline void fi_stats_bn_row(const float *x, int F, float *out) {
    for (int h = 0; h < 2; h++) {
        int n = 0;
        float s = 0.0f;
        for (int i = h; i < F; i += 2) { s = s + x[i]; n++; }
        if (n == 0) { out[3 * h] = 0.0f; out[3 * h + 1] = 0.0f; out[3 * h + 2] = 0.0f; continue; }
        float mean = s / (float)n, m2 = 0.0f;
        for (int i = h; i < F; i += 2) { float d = x[i] - mean; m2 = m2 + d * d; }
        out[3 * h] = (float)n;
        out[3 * h + 1] = mean;
        out[3 * h + 2] = m2;
    }
}

/* FI_BN_R rows at once, stored interleaved (xt[i * FI_BN_R + r] = element i of row r), so
 * that every step of the two chains of a half is one vector operation over the rows:
 * independent float32 chains, each in its own left-to-right order, so the bits are those
 * of fi_stats_bn_row.  The even and odd halves run in the same loop (two chains in flight). */
#define FI_BN_R 16
#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
__attribute__((target_clones("avx512f", "avx2", "default")))
#endif
static void fi_stats_bn_rowsR(const float *restrict xt, int F, float *restrict out) {
    float se[FI_BN_R] = {0}, so[FI_BN_R] = {0}, me[FI_BN_R], mo[FI_BN_R];
    float qe[FI_BN_R] = {0}, qo[FI_BN_R] = {0};
    int ne = (F + 1) / 2, no = F / 2, i = 0;
    for (; i + 1 < F; i += 2) {
        const float *a = xt + (ptrdiff_t)i * FI_BN_R, *b = a + FI_BN_R;
        for (int r = 0; r < FI_BN_R; r++) { se[r] = se[r] + a[r]; so[r] = so[r] + b[r]; }
    }
    if (i < F)
        for (int r = 0; r < FI_BN_R; r++) se[r] = se[r] + xt[(ptrdiff_t)i * FI_BN_R + r];
    for (int r = 0; r < FI_BN_R; r++) {
        me[r] = se[r] / (float)ne;
        mo[r] = no ? so[r] / (float)no : 0.0f;
    }
    for (i = 0; i + 1 < F; i += 2) {
        const float *a = xt + (ptrdiff_t)i * FI_BN_R, *b = a + FI_BN_R;
        for (int r = 0; r < FI_BN_R; r++) {
            float de = a[r] - me[r], dO = b[r] - mo[r];
            qe[r] = qe[r] + de * de;
            qo[r] = qo[r] + dO * dO;
        }
    }
    if (i < F)
        for (int r = 0; r < FI_BN_R; r++) {
            float de = xt[(ptrdiff_t)i * FI_BN_R + r] - me[r];
            qe[r] = qe[r] + de * de;
        }
    for (int r = 0; r < FI_BN_R; r++) {
        float *o = out + 6 * r;
        o[0] = (float)ne; o[1] = me[r]; o[2] = qe[r];
        if (no) { o[3] = (float)no; o[4] = mo[r]; o[5] = qo[r]; }
        else { o[3] = 0.0f; o[4] = 0.0f; o[5] = 0.0f; }
    }
}

/* xt[i * FI_BN_R + r] = rows[r][i] for r < FI_BN_R, i < F (rows: FI_BN_R pointers to
 * float32 rows).  8 x 8 tiles transposed in AVX2 registers where the CPU has it; a plain
 * copy otherwise (a pure data move: the bits are the same either way). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(FASTISA_DEBUG)
#include <immintrin.h>
static __attribute__((target("avx2"), unused)) void fi__bn_interleave_avx2(
        const float *const *rows, int F, float *xt) {
    int i0 = 0;
    for (; i0 + 8 <= F; i0 += 8)
        for (int r0 = 0; r0 < FI_BN_R; r0 += 8) {
            __m256 a0 = _mm256_loadu_ps(rows[r0 + 0] + i0), a1 = _mm256_loadu_ps(rows[r0 + 1] + i0);
            __m256 a2 = _mm256_loadu_ps(rows[r0 + 2] + i0), a3 = _mm256_loadu_ps(rows[r0 + 3] + i0);
            __m256 a4 = _mm256_loadu_ps(rows[r0 + 4] + i0), a5 = _mm256_loadu_ps(rows[r0 + 5] + i0);
            __m256 a6 = _mm256_loadu_ps(rows[r0 + 6] + i0), a7 = _mm256_loadu_ps(rows[r0 + 7] + i0);
            __m256 t0 = _mm256_unpacklo_ps(a0, a1), t1 = _mm256_unpackhi_ps(a0, a1);
            __m256 t2 = _mm256_unpacklo_ps(a2, a3), t3 = _mm256_unpackhi_ps(a2, a3);
            __m256 t4 = _mm256_unpacklo_ps(a4, a5), t5 = _mm256_unpackhi_ps(a4, a5);
            __m256 t6 = _mm256_unpacklo_ps(a6, a7), t7 = _mm256_unpackhi_ps(a6, a7);
            __m256 u0 = _mm256_shuffle_ps(t0, t2, 0x44), u1 = _mm256_shuffle_ps(t0, t2, 0xEE);
            __m256 u2 = _mm256_shuffle_ps(t1, t3, 0x44), u3 = _mm256_shuffle_ps(t1, t3, 0xEE);
            __m256 u4 = _mm256_shuffle_ps(t4, t6, 0x44), u5 = _mm256_shuffle_ps(t4, t6, 0xEE);
            __m256 u6 = _mm256_shuffle_ps(t5, t7, 0x44), u7 = _mm256_shuffle_ps(t5, t7, 0xEE);
            float *o = xt + (ptrdiff_t)i0 * FI_BN_R + r0;
            _mm256_storeu_ps(o + 0 * FI_BN_R, _mm256_permute2f128_ps(u0, u4, 0x20));
            _mm256_storeu_ps(o + 1 * FI_BN_R, _mm256_permute2f128_ps(u1, u5, 0x20));
            _mm256_storeu_ps(o + 2 * FI_BN_R, _mm256_permute2f128_ps(u2, u6, 0x20));
            _mm256_storeu_ps(o + 3 * FI_BN_R, _mm256_permute2f128_ps(u3, u7, 0x20));
            _mm256_storeu_ps(o + 4 * FI_BN_R, _mm256_permute2f128_ps(u0, u4, 0x31));
            _mm256_storeu_ps(o + 5 * FI_BN_R, _mm256_permute2f128_ps(u1, u5, 0x31));
            _mm256_storeu_ps(o + 6 * FI_BN_R, _mm256_permute2f128_ps(u2, u6, 0x31));
            _mm256_storeu_ps(o + 7 * FI_BN_R, _mm256_permute2f128_ps(u3, u7, 0x31));
        }
    for (; i0 < F; i0++)
        for (int r = 0; r < FI_BN_R; r++) xt[(ptrdiff_t)i0 * FI_BN_R + r] = rows[r][i0];
}
#define FI__BN_AVX2 1
#endif

static inline void fi__bn_interleave(const float *const *rows, int F, float *xt) {
#ifdef FI__BN_AVX2
    static int have = -1;
    if (have < 0) { __builtin_cpu_init(); have = __builtin_cpu_supports("avx2") ? 1 : 0; }
    if (have) { fi__bn_interleave_avx2(rows, F, xt); return; }
#endif
    for (int r = 0; r < FI_BN_R; r++)
        for (int i = 0; i < F; i++) xt[(ptrdiff_t)i * FI_BN_R + r] = rows[r][i];
}

/* out[p, 0..6) (float32, contiguous rows of 6) = bn_stats of row p of a [P, F] view
 * (F <= 512): blocks of FI_BN_R rows decoded (float32 rows with unit stride are read in
 * place) and interleaved, the remaining rows one by one. */
static inline void fi_stats_bn_stats(const void *src, int fmt, int itemsize, ptrdiff_t sp,
                                     ptrdiff_t sf, int P, int F, float *out) {
    static __thread float xt[FI_STATS_CH * FI_BN_R];
    static __thread float x[FI_BN_R][FI_STATS_CH];
    const float *rows[FI_BN_R];
    int direct = fmt == FI_FLOAT32 && sf == 1;
    int p = 0;
    for (; p + FI_BN_R <= P; p += FI_BN_R) {
        for (int r = 0; r < FI_BN_R; r++) {
            const char *row = (const char *)src + (p + r) * sp * itemsize;
            if (direct) rows[r] = (const float *)row;
            else { fi_nki_decode(fmt, row, sf, F, x[r]); rows[r] = x[r]; }
        }
        fi__bn_interleave(rows, F, xt);
        fi_stats_bn_rowsR(xt, F, out + 6 * p);
    }
    for (; p < P; p++) {
        fi_nki_decode(fmt, (const char *)src + p * sp * itemsize, sf, F, x[0]);
        fi_stats_bn_row(x[0], F, out + 6 * p);
    }
}

/* out[p, 0..2) = bn_aggr of row p: k triples, row given as float32 [P, 3k] contiguous. */
static inline void fi_stats_bn_aggr(const float *in, int P, int k, float *out) {
    for (int p = 0; p < P; p++) {
        const float *r = in + (ptrdiff_t)p * 3 * k;
        float n = 0.0f, mean = 0.0f, m2 = 0.0f;
        for (int t = 0; t < k; t++) {
            float nb = r[3 * t], mb = r[3 * t + 1], m2b = r[3 * t + 2];
            if (nb == 0.0f) continue;
            if (n == 0.0f) { n = nb; mean = mb; m2 = m2b; continue; }
            float nn = n + nb, d = mb - mean;
            mean = mean + d * (nb / nn);
            m2 = (m2 + m2b) + (d * d) * ((n * nb) / nn);
            n = nn;
        }
        out[2 * p] = n == 0.0f ? 0.0f : mean;
        out[2 * p + 1] = n == 0.0f ? 0.0f : m2 / n;
    }
}

enum { FI_PRED_ADD = 0, FI_PRED_MAX, FI_PRED_MIN, FI_PRED_AVG, FI_PRED_OR, FI_PRED_AND };

/* out[j] (float32 [F], or uint32 bit patterns for OR / AND) = fold over partitions. */
static inline void fi_stats_partition_reduce(const void *src, int fmt, int itemsize, ptrdiff_t sp,
                                             ptrdiff_t sf, int P, int F, int op, float *out,
                                             uint32_t *out_bits) {
    float x[FI_STATS_CH];
    uint32_t u[FI_STATS_CH];
    for (int c0 = 0; c0 < F; c0 += FI_STATS_CH) {
        int n = F - c0 < FI_STATS_CH ? F - c0 : FI_STATS_CH;
        for (int p = 0; p < P; p++) {
            const char *row = (const char *)src + (p * sp + (ptrdiff_t)c0 * sf) * itemsize;
            if (op == FI_PRED_OR || op == FI_PRED_AND) {
                fi_nki_decode_bits(fmt, row, sf, n, u);
                uint32_t *o = out_bits + c0;
                if (p == 0) memcpy(o, u, (size_t)n * 4);
                else if (op == FI_PRED_OR) for (int i = 0; i < n; i++) o[i] |= u[i];
                else for (int i = 0; i < n; i++) o[i] &= u[i];
                continue;
            }
            fi_nki_decode(fmt, row, sf, n, x);
            float *o = out + c0;
            if (p == 0) { memcpy(o, x, (size_t)n * 4); continue; }
            switch (op) {
            case FI_PRED_MAX: for (int i = 0; i < n; i++) o[i] = fi_nki_max(o[i], x[i]); break;
            case FI_PRED_MIN: for (int i = 0; i < n; i++) o[i] = fi_nki_min(o[i], x[i]); break;
            default: for (int i = 0; i < n; i++) o[i] = o[i] + x[i]; break;
            }
        }
        if (op == FI_PRED_AVG)
            for (int i = 0; i < n; i++) out[c0 + i] = out[c0 + i] / (float)P;
    }
}

#endif /* FASTISA_STATS_H */
