/* fastisa's AVX2 matmul microkernel, shared by nc_matmul (nki_matmul.h) and TMATMUL
 * (tile.h): R <= 6 rows x 16 columns of out (+)= a.T-or-a @ b held in 12 ymm accumulators
 * over the whole K loop (the register blocking of the AVX2 BLAS kernels: 2 loads of b and
 * R broadcasts of a per k, 2R independent chains, enough to keep both FMA pipes busy).
 *
 * Each element is one chain in k order 0, 1, ..., K-1 from its start value (+0 or out's
 * value), in one of two forms, chosen by the caller:
 *   fused:   acc = fma(a(i, k), b(k, j), acc)          (one rounding per k)
 *   unfused: acc = acc + a(i, k) * b(k, j)             (a rounded multiply, a rounded add)
 * so the bits are the plain triple loop's in that form, whatever the blocking, ISA or
 * thread split.  a(i, k) = a[i * sai + k * sak] (nc_matmul's stationary [K, M]: sai = 1,
 * sak = M; TMATMUL's A [M, K]: sai = lda, sak = 1); b(k, j) = b[k * sb + j]; out row i at
 * o + i * ldo.  Python-free, never validates (the front-ends check every extent).
 *
 * Compiled only on x86-64 with GCC-compatible compilers, outside the sanitizer build
 * (FI_MM256 is then defined); callers compile their AVX2 functions with
 * target("avx2,fma") and check the CPU first (cpu.h). */
#ifndef FASTISA_MM256_H
#define FASTISA_MM256_H

#include <stddef.h>

#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
#include <immintrin.h>
#define FI_MM256 1

#define FI_MM256_TGT __attribute__((target("avx2,fma")))

/* R rows (a compile-time constant after inlining, 1..6) x 16 columns, k in [0, K).
 * load: start from o's values, else from +0. */
static inline __attribute__((always_inline)) FI_MM256_TGT void fi_mm256_rx16(
        int R, int fused, const float *a, ptrdiff_t sai, ptrdiff_t sak, const float *b,
        ptrdiff_t sb, int K, float *o, ptrdiff_t ldo, int load) {
    __m256 c0[6], c1[6];
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++)
        if (i < R) {
            c0[i] = load ? _mm256_loadu_ps(o + i * ldo) : _mm256_setzero_ps();
            c1[i] = load ? _mm256_loadu_ps(o + i * ldo + 8) : _mm256_setzero_ps();
        }
    for (int k = 0; k < K; k++, a += sak, b += sb) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
#pragma GCC unroll 6
        for (int i = 0; i < 6; i++)
            if (i < R) {
                __m256 av = _mm256_broadcast_ss(a + i * sai);
                if (fused) {
                    c0[i] = _mm256_fmadd_ps(av, b0, c0[i]);
                    c1[i] = _mm256_fmadd_ps(av, b1, c1[i]);
                } else {
                    c0[i] = _mm256_add_ps(c0[i], _mm256_mul_ps(av, b0));
                    c1[i] = _mm256_add_ps(c1[i], _mm256_mul_ps(av, b1));
                }
            }
    }
#pragma GCC unroll 6
    for (int i = 0; i < 6; i++)
        if (i < R) {
            _mm256_storeu_ps(o + i * ldo, c0[i]);
            _mm256_storeu_ps(o + i * ldo + 8, c1[i]);
        }
}

/* rows [mb, me) x one 16-column strip: blocks of 6 rows, then one block of the rest */
static inline __attribute__((always_inline)) FI_MM256_TGT void fi_mm256_strip(
        int fused, const float *a, ptrdiff_t sai, ptrdiff_t sak, const float *b, ptrdiff_t sb,
        int K, float *o, ptrdiff_t ldo, int mb, int me, int load) {
    int m = mb;
    for (; m + 6 <= me; m += 6)
        fi_mm256_rx16(6, fused, a + m * sai, sai, sak, b, sb, K, o + m * ldo, ldo, load);
    const float *am = a + m * sai;
    float *om = o + m * ldo;
    switch (me - m) {
    case 5: fi_mm256_rx16(5, fused, am, sai, sak, b, sb, K, om, ldo, load); break;
    case 4: fi_mm256_rx16(4, fused, am, sai, sak, b, sb, K, om, ldo, load); break;
    case 3: fi_mm256_rx16(3, fused, am, sai, sak, b, sb, K, om, ldo, load); break;
    case 2: fi_mm256_rx16(2, fused, am, sai, sak, b, sb, K, om, ldo, load); break;
    case 1: fi_mm256_rx16(1, fused, am, sai, sak, b, sb, K, om, ldo, load); break;
    default: break;
    }
}

/* rows [mb, me) x columns [0, ncol) of o (+)= the chains above, ncol any; the 16-column
 * strips run one after another (each strip's b stays in L1 while a streams), the last
 * ncol % 16 columns in the same chain element by element (fmaf, or a multiply then an
 * add).  Two instances, so the fused flag is a constant inside each. */
#define FI_MM256_BLOCK(NAME, FUSED)                                                          \
    static __attribute__((noinline, unused)) FI_MM256_TGT void NAME(                         \
            const float *a, ptrdiff_t sai, ptrdiff_t sak, const float *b, ptrdiff_t sb,      \
            int K, float *o, ptrdiff_t ldo, int mb, int me, int ncol, int load) {            \
        int j0 = 0;                                                                          \
        for (; j0 + 16 <= ncol; j0 += 16)                                                    \
            fi_mm256_strip(FUSED, a, sai, sak, b + j0, sb, K, o + j0, ldo, mb, me, load);    \
        if (j0 < ncol)                                                                       \
            for (int m = mb; m < me; m++) {                                                  \
                float *orow = o + m * ldo;                                                   \
                for (int j = j0; j < ncol; j++) {                                            \
                    float acc = load ? orow[j] : 0.0f;                                       \
                    for (int k = 0; k < K; k++) {                                            \
                        float av = a[m * sai + k * sak], bv = b[k * sb + j];                 \
                        acc = FUSED ? __builtin_fmaf(av, bv, acc) : acc + av * bv;           \
                    }                                                                        \
                    orow[j] = acc;                                                           \
                }                                                                            \
            }                                                                                \
    }
FI_MM256_BLOCK(fi_mm256_fma, 1)
FI_MM256_BLOCK(fi_mm256_muladd, 0)
#undef FI_MM256_BLOCK

#endif /* x86-64, GCC, not the sanitizer build */
#endif /* FASTISA_MM256_H */
