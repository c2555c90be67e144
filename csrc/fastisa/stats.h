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

/* Eight rows at once (independent float32 chains, each in its own left-to-right order,
 * so the bits are those of fi_stats_bn_row; the loops over r vectorise). */
static inline void fi_stats_bn_rows8(const float (*x)[FI_STATS_CH], int F, float *out) {
    for (int h = 0; h < 2; h++) {
        int n = (F - h + 1) / 2;
        float s[8] = {0}, m2[8] = {0}, mean[8];
        for (int i = h; i < F; i += 2)
            for (int r = 0; r < 8; r++) s[r] = s[r] + x[r][i];
        if (n == 0) {
            for (int r = 0; r < 8; r++) { out[6 * r + 3 * h] = 0.0f; out[6 * r + 3 * h + 1] = 0.0f;
                                          out[6 * r + 3 * h + 2] = 0.0f; }
            continue;
        }
        for (int r = 0; r < 8; r++) mean[r] = s[r] / (float)n;
        for (int i = h; i < F; i += 2)
            for (int r = 0; r < 8; r++) { float d = x[r][i] - mean[r]; m2[r] = m2[r] + d * d; }
        for (int r = 0; r < 8; r++) {
            out[6 * r + 3 * h] = (float)n;
            out[6 * r + 3 * h + 1] = mean[r];
            out[6 * r + 3 * h + 2] = m2[r];
        }
    }
}

/* out[p, 0..6) (float32, contiguous rows of 6) = bn_stats of row p of a [P, F] view
 * (F <= 512). */
static inline void fi_stats_bn_stats(const void *src, int fmt, int itemsize, ptrdiff_t sp,
                                     ptrdiff_t sf, int P, int F, float *out) {
    static __thread float x[8][FI_STATS_CH];
    int p = 0;
    for (; p + 8 <= P; p += 8) {
        for (int r = 0; r < 8; r++)
            fi_nki_decode(fmt, (const char *)src + (p + r) * sp * itemsize, sf, F, x[r]);
        fi_stats_bn_rows8((const float (*)[FI_STATS_CH])x, F, out + 6 * p);
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
