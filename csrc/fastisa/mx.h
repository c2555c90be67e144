/* fastisa OCP microscaling (MX) kernels for NKI quantize_mx / nc_matmul_mx.
 *
 * Python-free, header-only, static inline, fi_mx_ prefix.
 *
 * A scaling group is 8 partitions x 4 consecutive free elements (32 values); its shared
 * scale is one float8_e8m0fnu byte s meaning 2^(s - 127) (s = 255: NaN).
 *
 * fi_mx_quantize (quantize_mx, SDK 2.33 docstring "Scale calculation"):
 *     amax = max |x| over the group (x: bf16 / fp16 decoded exactly);
 *     s = floor(log2(amax)) - (Emax - 1) + 127, clamped to [0, 254]; an all-zero group
 *     gives s = 0 (2^-127); a group holding Inf or NaN gives s = 255 and NaN elements
 *     (fastisa's choice: the docs are silent);
 *     element = RNE(x / 2^(s - 127)) in the fp8 format, saturated to +-max finite (OCP
 *     saturating conversion; with this scale |x / X| < 2^Emax, so it never saturates).
 *     Emax = 15 for float8_e5m2, 8 for float8_e4m3fn.
 * fi_mx_dequant (nc_matmul_mx): element q of x4 container [k, j] times 2^(s - 127) of the
 *     group (k / 8, j), in float32 (exact unless it overflows to inf), written to row
 *     4k + q of a float32 [4K, J] matrix, so the contraction order is k, then q.
 * Kernels never validate (fastisa.nki._mx does).
 */
#ifndef FASTISA_MX_H
#define FASTISA_MX_H

#include "nki.h"
#include "convert.h"

static inline float fi_mx_fp4_decode(unsigned c) {
    static const float mag[8] = {0.0f, 0.5f, 1.0f, 1.5f, 2.0f, 3.0f, 4.0f, 6.0f};
    float v = mag[c & 7u];
    return (c & 8u) ? -v : v;
}

/* src: [P, F] bf16 (is_bf16) or fp16 codes, element strides sp / sf; P % 8 == 0, F % 4 == 0.
 * codes: [P, F] contiguous uint8 fp8 codes out; scales: [P/8, F/4] contiguous bytes out. */
static inline void fi_mx_quantize(const uint16_t *src, int is_bf16, ptrdiff_t sp, ptrdiff_t sf,
                                  int P, int F, int dst_fmt, uint8_t *codes, uint8_t *scales) {
    const fi_nki_fp8_traits *t = fi_nki_fp8(dst_fmt);
    const int emax = dst_fmt == FI_FLOAT8_E5M2 ? 15 : 8;
    const double maxv = t->max_finite;
    const int G = F / 4;
    float v[32];
    for (int gp = 0; gp < P / 8; gp++) {
        for (int g = 0; g < G; g++) {
            float amax = 0.0f;
            int bad = 0;
            for (int r = 0; r < 8; r++)
                for (int e = 0; e < 4; e++) {
                    uint16_t c = src[(ptrdiff_t)(8 * gp + r) * sp + (ptrdiff_t)(4 * g + e) * sf];
                    float x = is_bf16 ? fi_bits_f32((uint32_t)c << 16) : fi_f16_to_f32(c);
                    v[4 * r + e] = x;
                    float a = fabsf(x);
                    if (!(a <= 3.4028234663852886e38f)) bad = 1;
                    else if (a > amax) amax = a;
                }
            int s;
            if (bad) s = 255;
            else if (amax == 0.0f) s = 0;
            else {
                int ex;
                frexpf(amax, &ex);                 /* amax = m * 2^ex, m in [0.5, 1) */
                s = (ex - 1) - (emax - 1) + 127;
                if (s < 0) s = 0;
                if (s > 254) s = 254;
            }
            scales[(ptrdiff_t)gp * G + g] = (uint8_t)s;
            /* x / 2^(s - 127) in float32: exact, except below 2^-126 where a float32
             * rounding cannot change the fp8 result (fp8's smallest step is 2^-16). */
            const float k = s == 255 ? 0.0f : s == 254 ? fi_bits_f32(0x00400000u)   /* 2^-127 */
                                                  : fi_bits_f32((uint32_t)(254 - s) << 23);
            for (int r = 0; r < 8; r++)
                for (int e = 0; e < 4; e++) {
                    uint8_t code;
                    if (s == 255) code = t->nan_code;
                    else code = (uint8_t)fi_encode_f32(dst_fmt, v[4 * r + e] * k, FI_SAT_MAX);
                    codes[(ptrdiff_t)(8 * gp + r) * F + 4 * g + e] = code;
                }
        }
    }
    (void)maxv;
}

/* x4: [K, J] containers (uint32 for fp8 x4, uint16 for fp4 x4), container strides sp / sf;
 * elem_fmt: FI_FLOAT8_E5M2, FI_FLOAT8_E4M3FN or FI_FLOAT4_E2M1FN; scale: logical [K/8, J]
 * bytes with row stride ssp and column stride ssf; out: contiguous float32 [4K, J]. */
static inline void fi_mx_dequant(const void *x4, int elem_fmt, ptrdiff_t sp, ptrdiff_t sf,
                                 int K, int J, const uint8_t *scale, ptrdiff_t ssp, ptrdiff_t ssf,
                                 float *out) {
    const float *lut = elem_fmt == FI_FLOAT4_E2M1FN ? NULL : fi_nki_fp8_table[elem_fmt - FI_FLOAT8_E4M3];
    for (int k = 0; k < K; k++) {
        for (int j = 0; j < J; j++) {
            unsigned s = scale[(ptrdiff_t)(k / 8) * ssp + (ptrdiff_t)j * ssf];
            float f = s == 255u ? fi_nki_qnan() : ldexpf(1.0f, (int)s - 127);
            ptrdiff_t off = (ptrdiff_t)k * sp + (ptrdiff_t)j * sf;
            for (int q = 0; q < 4; q++) {
                float e;
                if (lut == NULL) {
                    uint16_t c = ((const uint16_t *)x4)[off];
                    e = fi_mx_fp4_decode((c >> (4 * q)) & 15u);
                } else {
                    uint32_t c = ((const uint32_t *)x4)[off];
                    e = lut[(c >> (8 * q)) & 255u];
                }
                out[(ptrdiff_t)(4 * k + q) * J + j] = (float)((double)e * (double)f);
            }
        }
    }
}

#endif /* FASTISA_MX_H */
