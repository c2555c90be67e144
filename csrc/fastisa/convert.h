/* fastisa format conversion: the per-format traits table, scalar encode/decode of every
 * format through float32, and the one-pass array conversion loops.
 *
 * Python-free, header-only, static inline, fi_ prefix.  Every conversion goes through
 * float32 (spec 000 "Type Casting"):
 *
 *   decode:  code of format F  -> float32   exact for every float format (NaN codes of the
 *            8-bit formats decode to the canonical quiet NaN with the code's sign;
 *            bf16/f16 keep the payload); integers convert with (float)v, i.e. RNE.
 *   encode:  float32 -> code of format F   round to nearest, ties to even, subnormals
 *            kept, +-0 kept; overflow and NaN as selected by the mode:
 *
 *   FI_SAT_NONE   (default)  exactly ml_dtypes' astype (numpy's astype for float16):
 *                 overflow -> +-inf where the format has inf, NaN for e4m3fn, +-max for
 *                 fp4; e8m0 as ml_dtypes (see fi__enc_e8m0).  NaN -> the format's
 *                 canonical NaN with the input's sign; fp4 (no NaN) gives a zero of the
 *                 OPPOSITE sign (ml_dtypes' quirk); float16 keeps the payload as numpy.
 *   FI_SAT_MAX    (saturate=True) every non-NaN value, +-inf included, is clamped to
 *                 [-max, +max] before rounding (OCP OFP8 saturating mode); NaN as default.
 *                 e8m0: zero and negatives -> 0x00 (2^-127), +inf/overflow -> 0xfe.
 *   FI_SAT_ASCEND (Ascend saturation mode, reference/tik.md 1.8) as FI_SAT_MAX but
 *                 NaN -> code 0 (+0; 2^-127 for e8m0, which has no zero).
 *
 * Integer destinations always round to nearest even, saturate and map NaN to 0 (the mode
 * does not change them); bool_ is the integer range [0, 1] (RNE, saturate, NaN -> 0).
 *
 * Codes are returned zero-extended in a uint32_t: the storage bit pattern of one element
 * (int8 -128 is 0x80; a float8 code is 0..255; float4 0..15; tfloat32 and float32 are the
 * float32 bits).  For packed x4 formats the scalar functions work on one ELEMENT code;
 * the array functions pack/unpack the containers:
 *   float8_e5m2_x4 / float8_e4m3fn_x4: uint32, element i in bits 8i..8i+7;
 *   float4_e2m1fn_x4:                  uint16, element i in bits 4i..4i+3.
 *
 * The loops are branchless (selects only) so gcc -O3 vectorises them on plain SSE2;
 * they rely on the default IEEE environment (RNE, no FTZ/DAZ) like formats.h.
 */
#ifndef FASTISA_CONVERT_H
#define FASTISA_CONVERT_H

#include <stddef.h>
#include <stdint.h>

#include "formats.h"

/* The array loops are compiled twice on x86-64 Linux gcc builds, for AVX2 and for the
 * baseline, and picked at load time (ifunc): the same C, the same bits (no FMA, no
 * -ffast-math), about twice the throughput where AVX2 exists.  Wheels stay portable. */
#if defined(__GNUC__) && !defined(__clang__) && defined(__x86_64__) && defined(__linux__) && \
    defined(__GLIBC__) && !defined(__AVX2__) && !defined(FASTISA_NO_MULTIVERSION)
#define FI__MULTIVERSION static __attribute__((target_clones("avx2", "default"), unused))
#else
#define FI__MULTIVERSION static inline
#endif

/* Format kinds, overflow rules and conversion modes (mirrored by fastisa.dtypes). */
enum { FI_KIND_INT = 0, FI_KIND_FLOAT = 1, FI_KIND_PACKED = 2, FI_KIND_BOOL = 3 };
enum { FI_OVF_INF = 0, FI_OVF_NAN = 1, FI_OVF_SATURATE = 2, FI_OVF_NONE = 3 };
enum { FI_SAT_NONE = 0, FI_SAT_MAX = 1, FI_SAT_ASCEND = 2 };

typedef struct {
    const char *name;       /* spec name, as fastisa.dtypes */
    int code;               /* fi_format */
    int kind;               /* FI_KIND_* */
    int bits;               /* bits per element (per packed element for x4 formats) */
    int exp_bits, man_bits, bias;
    int is_signed;
    double max_finite;      /* ints: the maximum value */
    double min_normal;      /* 0 for ints */
    double min_subnormal;   /* 0 when the format has none */
    int has_inf;
    int n_nan_codes;        /* every NaN code for <= 8-bit formats; canonical qNaNs otherwise */
    uint32_t nan_codes[14];
    int overflow;           /* default (ml_dtypes) overflow rule: FI_OVF_* */
    int container_bits;     /* bits of one stored array item */
    int lanes;              /* elements per stored item (4 for x4 formats) */
    int element;            /* element format of a packed format; else the format itself */
} fi_format_traits_t;

#define FI__E4M3_NANS {0x79, 0x7a, 0x7b, 0x7c, 0x7d, 0x7e, 0x7f, 0xf9, 0xfa, 0xfb, 0xfc, 0xfd, 0xfe, 0xff}
#define FI__E5M2_NANS {0x7d, 0x7e, 0x7f, 0xfd, 0xfe, 0xff}

static const fi_format_traits_t fi_format_traits[FI_NUM_FORMATS] = {
    {"uint8", FI_UINT8, FI_KIND_INT, 8, 0, 0, 0, 0, 255.0, 0, 0, 0, 0, {0}, FI_OVF_SATURATE, 8, 1, FI_UINT8},
    {"int8", FI_INT8, FI_KIND_INT, 8, 0, 0, 0, 1, 127.0, 0, 0, 0, 0, {0}, FI_OVF_SATURATE, 8, 1, FI_INT8},
    {"uint16", FI_UINT16, FI_KIND_INT, 16, 0, 0, 0, 0, 65535.0, 0, 0, 0, 0, {0}, FI_OVF_SATURATE, 16, 1, FI_UINT16},
    {"int16", FI_INT16, FI_KIND_INT, 16, 0, 0, 0, 1, 32767.0, 0, 0, 0, 0, {0}, FI_OVF_SATURATE, 16, 1, FI_INT16},
    {"uint32", FI_UINT32, FI_KIND_INT, 32, 0, 0, 0, 0, 4294967295.0, 0, 0, 0, 0, {0}, FI_OVF_SATURATE, 32, 1, FI_UINT32},
    {"int32", FI_INT32, FI_KIND_INT, 32, 0, 0, 0, 1, 2147483647.0, 0, 0, 0, 0, {0}, FI_OVF_SATURATE, 32, 1, FI_INT32},
    {"float8_e4m3", FI_FLOAT8_E4M3, FI_KIND_FLOAT, 8, 4, 3, 7, 1, 240.0, 0x1p-6, 0x1p-9, 1,
     14, FI__E4M3_NANS, FI_OVF_INF, 8, 1, FI_FLOAT8_E4M3},
    {"float8_e5m2", FI_FLOAT8_E5M2, FI_KIND_FLOAT, 8, 5, 2, 15, 1, 57344.0, 0x1p-14, 0x1p-16, 1,
     6, FI__E5M2_NANS, FI_OVF_INF, 8, 1, FI_FLOAT8_E5M2},
    {"float8_e4m3fn", FI_FLOAT8_E4M3FN, FI_KIND_FLOAT, 8, 4, 3, 7, 1, 448.0, 0x1p-6, 0x1p-9, 0,
     2, {0x7f, 0xff}, FI_OVF_NAN, 8, 1, FI_FLOAT8_E4M3FN},
    {"float8_e8m0fnu", FI_FLOAT8_E8M0FNU, FI_KIND_FLOAT, 8, 8, 0, 127, 0, 0x1p127, 0x1p-127, 0.0, 0,
     1, {0xff}, FI_OVF_NAN, 8, 1, FI_FLOAT8_E8M0FNU},
    {"float16", FI_FLOAT16, FI_KIND_FLOAT, 16, 5, 10, 15, 1, 65504.0, 0x1p-14, 0x1p-24, 1,
     2, {0x7e00, 0xfe00}, FI_OVF_INF, 16, 1, FI_FLOAT16},
    {"bfloat16", FI_BFLOAT16, FI_KIND_FLOAT, 16, 8, 7, 127, 1, 0x1.fep127, 0x1p-126, 0x1p-133, 1,
     2, {0x7fc0, 0xffc0}, FI_OVF_INF, 16, 1, FI_BFLOAT16},
    {"tfloat32", FI_TFLOAT32, FI_KIND_FLOAT, 19, 8, 10, 127, 1, 0x1.ffcp127, 0x1p-126, 0x1p-136, 1,
     2, {0x7fc00000u, 0xffc00000u}, FI_OVF_INF, 32, 1, FI_TFLOAT32},
    {"float32", FI_FLOAT32, FI_KIND_FLOAT, 32, 8, 23, 127, 1, 0x1.fffffep127, 0x1p-126, 0x1p-149, 1,
     2, {0x7fc00000u, 0xffc00000u}, FI_OVF_INF, 32, 1, FI_FLOAT32},
    {"float8_e5m2_x4", FI_FLOAT8_E5M2_X4, FI_KIND_PACKED, 8, 5, 2, 15, 1, 57344.0, 0x1p-14, 0x1p-16, 1,
     6, FI__E5M2_NANS, FI_OVF_INF, 32, 4, FI_FLOAT8_E5M2},
    {"float8_e4m3fn_x4", FI_FLOAT8_E4M3FN_X4, FI_KIND_PACKED, 8, 4, 3, 7, 1, 448.0, 0x1p-6, 0x1p-9, 0,
     2, {0x7f, 0xff}, FI_OVF_NAN, 32, 4, FI_FLOAT8_E4M3FN},
    {"float4_e2m1fn_x4", FI_FLOAT4_E2M1FN_X4, FI_KIND_PACKED, 4, 2, 1, 1, 1, 6.0, 1.0, 0.5, 0,
     0, {0}, FI_OVF_SATURATE, 16, 4, FI_FLOAT4_E2M1FN},
    {"bool_", FI_BOOL, FI_KIND_BOOL, 8, 0, 0, 0, 0, 1.0, 0, 0, 0, 0, {0}, FI_OVF_SATURATE, 8, 1, FI_BOOL},
    {"float4_e2m1fn", FI_FLOAT4_E2M1FN, FI_KIND_FLOAT, 4, 2, 1, 1, 1, 6.0, 1.0, 0.5, 0,
     0, {0}, FI_OVF_SATURATE, 8, 1, FI_FLOAT4_E2M1FN},
};

/* ---- element encoders: float32 bits -> code ------------------------------------ */

/* Generic sign/exponent/mantissa encoder (M mantissa bits, bias B, nb bits in all).
 * Normal results: rebias then integer RNE on the dropped 23-M bits (a carry flows into
 * the exponent).  Subnormal results: |x| + 2^(24-B-M) in float32, whose ulp is the
 * format's smallest subnormal, so the FPU rounds RNE; the code is the bit difference.
 * Results above max_code (finite overflow, ties rounded away from max, +-inf) become
 * ovf_code; NaN becomes nan_pos / nan_neg (full codes, sign included). */
static inline uint32_t fi__enc_fp(uint32_t u, int M, int B, int nb, uint32_t max_code,
                                  uint32_t ovf_code, uint32_t nan_pos, uint32_t nan_neg) {
    const int sh = 23 - M;
    const uint32_t a = u & 0x7fffffffu;
    const uint32_t s = (u >> 31) << (nb - 1);
    const uint32_t m = a - ((uint32_t)(127 - B) << 23);
    const uint32_t rn = (m + (1u << (sh - 1)) - 1u + ((m >> sh) & 1u)) >> sh;
    const uint32_t magic = (uint32_t)(24 - B - M + 127) << 23;
    const uint32_t rs = fi_f32_bits(fi_bits_f32(a) + fi_bits_f32(magic)) - magic;
    /* mask select, not ?:, so gcc keeps the float add unconditional and vectorises */
    const uint32_t sub = 0u - (uint32_t)((int32_t)a < (int32_t)((uint32_t)(128 - B) << 23));
    uint32_t r = (rs & sub) | (rn & ~sub);
    r = ((int32_t)r > (int32_t)max_code) ? ovf_code : r;
    r |= s;
    const uint32_t rnan = nan_pos ^ ((nan_pos ^ nan_neg) & (0u - (u >> 31)));
    return ((int32_t)a > (int32_t)0x7f800000) ? rnan : r;
}

/* bfloat16: Eigen/ml_dtypes (u + 0x7fff + lsb) >> 16 (exact across f32 subnormals too). */
static inline uint32_t fi__enc_bf16(uint32_t u, int mode) {
    const uint32_t a = u & 0x7fffffffu;
    const uint32_t s = (u >> 16) & 0x8000u;
    uint32_t r = (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
    r = ((r & 0x7fffu) > 0x7f7fu) ? (s | (mode ? 0x7f7fu : 0x7f80u)) : (r & 0xffffu);
    const uint32_t rnan = mode == FI_SAT_ASCEND ? 0u : (s | 0x7fc0u);
    return (a > 0x7f800000u) ? rnan : r;
}

/* float32 -> bfloat16 over large arrays: the same formula as fi__enc_bf16, eight lanes
 * at a time in AVX2, with the source prefetched FI__PF_BYTES (4 KiB) ahead and the result
 * written with non-temporal (streaming) stores.  The pass is memory-bound: streaming
 * stores skip the read-for-ownership of dst (96 instead of 128 bytes of traffic per 16
 * elements) and the prefetch keeps enough loads in flight for one core.  Used only from
 * FI__STREAM_MIN elements up (16 MiB in, 8 MiB out, about a server L3: dst would not stay
 * in cache anyway; below it the result stays in cache for the next instruction).
 * Bit-identical to the scalar loop (tests/test_convert.py checks both sides of the
 * threshold). */
#if defined(__GNUC__) && defined(__x86_64__) && !defined(FASTISA_NO_STREAM)
#include <immintrin.h>
#define FI__HAVE_STREAM 1
#define FI__STREAM_MIN ((ptrdiff_t)1 << 22)
#ifndef FI__PF_BYTES
#define FI__PF_BYTES 4096
#endif
#ifndef FI__PF_HINT
#define FI__PF_HINT _MM_HINT_NTA
#endif

static inline __attribute__((target("avx2"))) __m256i fi__enc_bf16_x8(__m256i u, __m256i ovf,
                                                                        __m256i nan) {
    const __m256i s = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x8000));
    const __m256i a = _mm256_and_si256(u, _mm256_set1_epi32(0x7fffffff));
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_srli_epi32(
        _mm256_add_epi32(u, _mm256_add_epi32(_mm256_set1_epi32(0x7fff), lsb)), 16);
    const __m256i big = _mm256_cmpgt_epi32(_mm256_and_si256(r, _mm256_set1_epi32(0x7fff)),
                                           _mm256_set1_epi32(0x7f7f));
    r = _mm256_blendv_epi8(_mm256_and_si256(r, _mm256_set1_epi32(0xffff)),
                           _mm256_or_si256(s, ovf), big);
    const __m256i isnan = _mm256_cmpgt_epi32(a, _mm256_set1_epi32(0x7f800000));
    return _mm256_blendv_epi8(r, _mm256_or_si256(_mm256_and_si256(s, nan), _mm256_andnot_si256(
                                     _mm256_set1_epi32(0x8000), nan)), isnan);
}

static __attribute__((target("avx2"), noinline, unused)) void fi__enc_bf16_stream(const float *src,
                                                                         uint16_t *dst,
                                                                         ptrdiff_t n, int mode) {
    const __m256i ovf = _mm256_set1_epi32(mode ? 0x7f7f : 0x7f80);
    /* nan: low 15 bits are the code, bit 15 says "keep the input's sign" */
    const __m256i nan = _mm256_set1_epi32(mode == FI_SAT_ASCEND ? 0 : 0xffc0);
    const uint32_t *s32 = (const uint32_t *)src;
    ptrdiff_t i = 0;
    for (; i < n && ((uintptr_t)(dst + i) & 31u); i++) dst[i] = (uint16_t)fi__enc_bf16(s32[i], mode);
    for (; i + 16 <= n; i += 16) {
        _mm_prefetch((const char *)(s32 + i) + FI__PF_BYTES, FI__PF_HINT);
        const __m256i r0 = fi__enc_bf16_x8(_mm256_loadu_si256((const __m256i *)(s32 + i)), ovf, nan);
        const __m256i r1 = fi__enc_bf16_x8(_mm256_loadu_si256((const __m256i *)(s32 + i + 8)), ovf, nan);
        _mm256_stream_si256((__m256i *)(dst + i),
                            _mm256_permute4x64_epi64(_mm256_packus_epi32(r0, r1), 0xd8));
    }
    _mm_sfence();
    for (; i < n; i++) dst[i] = (uint16_t)fi__enc_bf16(s32[i], mode);
}

static inline int fi__have_avx2(void) {
    static int have = -1;
    if (have < 0) {
        __builtin_cpu_init();
        have = __builtin_cpu_supports("avx2") ? 1 : 0;
    }
    return have;
}
#endif

/* float16: RNE, IEEE overflow to inf; NaN as numpy's astype (npy_floatbits_to_halfbits):
 * sign | 0x7c00 + (mantissa >> 13), and 0x7c01 if that would read as inf -- the payload's
 * top 10 bits are kept and the quiet bit is NOT forced. */
static inline uint32_t fi__enc_f16(uint32_t u, int mode) {
    const uint32_t a = u & 0x7fffffffu;
    const uint32_t s = (u >> 16) & 0x8000u;
    uint32_t r = fi__enc_fp(u & 0x7fffffffu, 10, 15, 16, 0x7bffu,
                            mode ? 0x7bffu : 0x7c00u, 0, 0) | s;
    uint32_t p = (a & 0x7fffffu) >> 13;
    p = p ? p : 1u;
    const uint32_t rnan = mode == FI_SAT_ASCEND ? 0u : (s | 0x7c00u | p);
    return (a > 0x7f800000u) ? rnan : r;
}

/* tfloat32 in a float32 container: RNE on the low 13 bits, which are then zero.
 * Overflow carries to inf; NaN -> 0x7fc00000 with the input's sign. */
static inline uint32_t fi__enc_tf32(uint32_t u, int mode) {
    const uint32_t a = u & 0x7fffffffu;
    const uint32_t s = u & 0x80000000u;
    uint32_t r = (u + 0xfffu + ((u >> 13) & 1u)) & 0xffffe000u;
    r = ((r & 0x7fffffffu) > 0x7f7fe000u) ? (s | (mode ? 0x7f7fe000u : 0x7f800000u)) : r;
    const uint32_t rnan = mode == FI_SAT_ASCEND ? 0u : (s | 0x7fc00000u);
    return (a > 0x7f800000u) ? rnan : r;
}

/* float32 -> float32: identity by default; saturating modes clamp +-inf to +-FLT_MAX,
 * and FI_SAT_ASCEND also maps NaN to +0 (formats.h fi_f32_saturate). */
static inline uint32_t fi__enc_f32(uint32_t u, int mode) {
    const uint32_t a = u & 0x7fffffffu;
    uint32_t r = (mode && a == 0x7f800000u) ? ((u & 0x80000000u) | 0x7f7fffffu) : u;
    return (mode == FI_SAT_ASCEND && a > 0x7f800000u) ? 0u : r;
}

/* float8_e8m0fnu (ml_dtypes): value 2^(c-127), no sign, no zero, NaN 0xff.
 * Normal inputs round half up on the linear mantissa ((a + 2^22) >> 23: 1.5 -> 2);
 * float32 subnormals give 0x00 up to 2^-127 inclusive and 0x01 above it; 0, negatives,
 * NaN, +inf and values rounding past 2^127 give 0xff.  Saturating: zero/negative ->
 * 0x00, +inf/overflow -> 0xfe; NaN -> 0xff (FI_SAT_ASCEND: 0x00). */
static inline uint32_t fi__enc_e8m0(uint32_t u, int mode) {
    const uint32_t a = u & 0x7fffffffu;
    uint32_t r = (a + 0x400000u) >> 23;
    r = (a < 0x800000u) ? (uint32_t)(a > 0x400000u) : r;
    r = (r > 0xfeu) ? (mode ? 0xfeu : 0xffu) : r;
    r = (u == 0u || (u >> 31)) ? (mode ? 0u : 0xffu) : r;
    const uint32_t rnan = mode == FI_SAT_ASCEND ? 0u : 0xffu;
    return (a > 0x7f800000u) ? rnan : r;
}

/* Mode-dependent overflow / NaN codes of the generic float8/float4 encoders, computed
 * once per call (outside the loops) so the loops stay branch-free. */
typedef struct { uint32_t ovf, nan_pos, nan_neg; } fi__fp_modes;

static inline fi__fp_modes fi__modes(int mode, uint32_t max_code, uint32_t ovf_code,
                                     uint32_t nan_pos, uint32_t nan_neg) {
    fi__fp_modes r;
    r.ovf = mode ? max_code : ovf_code;
    r.nan_pos = mode == FI_SAT_ASCEND ? 0u : nan_pos;
    r.nan_neg = mode == FI_SAT_ASCEND ? 0u : nan_neg;
    return r;
}
#define FI__E4M3_MODES(mode) fi__modes(mode, 0x77u, 0x78u, 0x7cu, 0xfcu)
#define FI__E4M3FN_MODES(mode) fi__modes(mode, 0x7eu, 0x7fu, 0x7fu, 0xffu)
#define FI__E5M2_MODES(mode) fi__modes(mode, 0x7bu, 0x7cu, 0x7eu, 0xfeu)
#define FI__E2M1_MODES(mode) fi__modes(mode, 0x7u, 0x7u, 0x8u, 0x0u)
#define FI__E4M3_ENC(u, p) fi__enc_fp(u, 3, 7, 8, 0x77u, (p).ovf, (p).nan_pos, (p).nan_neg)
#define FI__E4M3FN_ENC(u, p) fi__enc_fp(u, 3, 7, 8, 0x7eu, (p).ovf, (p).nan_pos, (p).nan_neg)
#define FI__E5M2_ENC(u, p) fi__enc_fp(u, 2, 15, 8, 0x7bu, (p).ovf, (p).nan_pos, (p).nan_neg)
#define FI__E2M1_ENC(u, p) fi__enc_fp(u, 1, 1, 4, 0x7u, (p).ovf, (p).nan_pos, (p).nan_neg)

static inline uint32_t fi__enc_e4m3(uint32_t u, int mode) {
    const fi__fp_modes p = FI__E4M3_MODES(mode); return FI__E4M3_ENC(u, p);
}
static inline uint32_t fi__enc_e4m3fn(uint32_t u, int mode) {
    const fi__fp_modes p = FI__E4M3FN_MODES(mode); return FI__E4M3FN_ENC(u, p);
}
static inline uint32_t fi__enc_e5m2(uint32_t u, int mode) {
    const fi__fp_modes p = FI__E5M2_MODES(mode); return FI__E5M2_ENC(u, p);
}
/* float4_e2m1fn: no inf, no NaN: overflow and +-inf -> +-6 in every mode; NaN -> zero of
 * the opposite sign (+NaN -> 0x8, -NaN -> 0x0) as ml_dtypes, or 0 in Ascend mode. */
static inline uint32_t fi__enc_e2m1(uint32_t u, int mode) {
    const fi__fp_modes p = FI__E2M1_MODES(mode); return FI__E2M1_ENC(u, p);
}

/* float32 -> integer, spec 000 "FP32-to-Integer Conversion": round to nearest even,
 * saturate to [lo, hi], NaN -> 0 -- the same results as formats.h fi_f32_to_i8 ...
 * fi_f32_to_u32, but branch-free so the loops vectorise.  RNE(|x|) for |x| < 2^23 is
 * (|x| + 2^23) - 2^23 in float32 (exact integers above).  hi_bits: float32 bits of the
 * largest float <= hi; lo_bits: float32 bits of -lo (exact; 0 for unsigned types).
 * Returns the two's-complement bits (the caller truncates to the type's width). */
static inline uint32_t fi__enc_int(uint32_t u, uint32_t hi, uint32_t hi_bits, uint32_t lo,
                                   uint32_t lo_bits, int is_unsigned, int is_u32) {
    const uint32_t a = u & 0x7fffffffu;
    const uint32_t neg = 0u - (u >> 31);
    const uint32_t small = 0u - (uint32_t)((int32_t)a < 0x4b000000);
    const uint32_t tr = fi_f32_bits((fi_bits_f32(a) + 0x1p23f) - 0x1p23f);
    const uint32_t t = (tr & small) | (a & ~small);          /* bits of RNE(|x|) */
    /* |x| as uint32 for t <= hi_bits (both halves computed on clamped inputs: no UB) */
    const uint32_t t1 = (int32_t)t < 0x4effffff ? t : 0x4effffffu;
    uint32_t mag = (uint32_t)(int32_t)fi_bits_f32(t1);
    if (is_u32) {   /* 2^31 <= |x| < 2^32: exponent 31, so the value is the mantissa << 8 */
        const uint32_t m2 = ((t & 0x7fffffu) | 0x800000u) << 8;
        const uint32_t hi_half = 0u - (uint32_t)((int32_t)t >= 0x4f000000);
        mag = (m2 & hi_half) | (mag & ~hi_half);
    }
    const uint32_t pos_sat = 0u - (uint32_t)((int32_t)t > (int32_t)hi_bits);
    const uint32_t rpos = (hi & pos_sat) | (mag & ~pos_sat);
    uint32_t rneg;
    if (is_unsigned) {
        rneg = 0u;
    } else {
        const uint32_t neg_sat = 0u - (uint32_t)((int32_t)t >= (int32_t)lo_bits);
        rneg = (lo & neg_sat) | ((0u - mag) & ~neg_sat);
    }
    const uint32_t r = (rneg & neg) | (rpos & ~neg);
    return (int32_t)a > 0x7f800000 ? 0u : r;                  /* NaN -> 0 */
}
#define FI__ENC_U8(u) fi__enc_int(u, 255u, 0x437f0000u, 0u, 0u, 1, 0)
#define FI__ENC_I8(u) fi__enc_int(u, 127u, 0x42fe0000u, 0xffffff80u, 0x43000000u, 0, 0)
#define FI__ENC_U16(u) fi__enc_int(u, 65535u, 0x477fff00u, 0u, 0u, 1, 0)
#define FI__ENC_I16(u) fi__enc_int(u, 32767u, 0x46fffe00u, 0xffff8000u, 0x47000000u, 0, 0)
#define FI__ENC_U32(u) fi__enc_int(u, 0xffffffffu, 0x4f7fffffu, 0u, 0u, 1, 1)
#define FI__ENC_I32(u) fi__enc_int(u, 0x7fffffffu, 0x4effffffu, 0x80000000u, 0x4f000000u, 0, 0)

/* bool_ is an integer format with range [0, 1] (spec 000 lists it as "boolean stored as
 * uint8"; its FP32-to-Integer rule applies): RNE, saturate, NaN -> 0.  0.5 -> 0, 0.7 -> 1,
 * 2 -> 1, -3 -> 0, +inf -> 1. */
static inline uint32_t fi__enc_bool(uint32_t u) {
    return fi__enc_int(u, 1u, 0x3f800000u, 0u, 0u, 1, 0);
}

/* Scalar encode of one float32 to format fmt (element code for packed formats).
 * saturate is FI_SAT_NONE / FI_SAT_MAX / FI_SAT_ASCEND (any other non-zero = MAX). */
static inline uint32_t fi_encode_f32(int fmt, float x, int saturate) {
    const uint32_t u = fi_f32_bits(x);
    const int mode = saturate == FI_SAT_ASCEND ? FI_SAT_ASCEND : (saturate ? FI_SAT_MAX : 0);
    switch (fmt) {
    case FI_UINT8: return fi_f32_to_u8(x);
    case FI_INT8: return (uint8_t)fi_f32_to_i8(x);
    case FI_UINT16: return fi_f32_to_u16(x);
    case FI_INT16: return (uint16_t)fi_f32_to_i16(x);
    case FI_UINT32: return fi_f32_to_u32(x);
    case FI_INT32: return (uint32_t)fi_f32_to_i32(x);
    case FI_FLOAT8_E4M3: return fi__enc_e4m3(u, mode);
    case FI_FLOAT8_E5M2: case FI_FLOAT8_E5M2_X4: return fi__enc_e5m2(u, mode);
    case FI_FLOAT8_E4M3FN: case FI_FLOAT8_E4M3FN_X4: return fi__enc_e4m3fn(u, mode);
    case FI_FLOAT8_E8M0FNU: return fi__enc_e8m0(u, mode);
    case FI_FLOAT16: return fi__enc_f16(u, mode);
    case FI_BFLOAT16: return fi__enc_bf16(u, mode);
    case FI_TFLOAT32: return fi__enc_tf32(u, mode);
    case FI_FLOAT32: return fi__enc_f32(u, mode);
    case FI_FLOAT4_E2M1FN: case FI_FLOAT4_E2M1FN_X4: return fi__enc_e2m1(u, mode);
    case FI_BOOL: return fi__enc_bool(u);
    default: return 0;
    }
}

/* ---- element decoders: code -> float32 bits ------------------------------------ */

/* Generic 8-bit-or-less decoder: exact; inf code -> inf; codes >= nan_min (magnitude)
 * -> canonical quiet NaN with the code's sign. */
static inline uint32_t fi__dec_fp(uint32_t c, int M, int B, int nb, uint32_t inf_code,
                                  uint32_t nan_min) {
    const uint32_t s = ((c >> (nb - 1)) & 1u) << 31;
    const uint32_t a = c & ((1u << (nb - 1)) - 1u);
    const uint32_t rn = (a << (23 - M)) + ((uint32_t)(127 - B) << 23);
    const uint32_t rs = fi_f32_bits((float)(int32_t)a * fi_bits_f32((uint32_t)(128 - B - M) << 23));
    const uint32_t sub = 0u - (uint32_t)(a < (1u << M));   /* mask select (see fi__enc_fp) */
    uint32_t r = (rs & sub) | (rn & ~sub);
    const uint32_t inf = 0u - (uint32_t)(a == inf_code);
    r = (0x7f800000u & inf) | (r & ~inf);
    const uint32_t nan = 0u - (uint32_t)(a >= nan_min);
    r = (0x7fc00000u & nan) | (r & ~nan);
    return r | s;
}

static inline uint32_t fi__dec_e4m3(uint32_t c) { return fi__dec_fp(c & 0xffu, 3, 7, 8, 0x78u, 0x79u); }
static inline uint32_t fi__dec_e4m3fn(uint32_t c) { return fi__dec_fp(c & 0xffu, 3, 7, 8, 0x100u, 0x7fu); }
static inline uint32_t fi__dec_e5m2(uint32_t c) { return fi__dec_fp(c & 0xffu, 2, 15, 8, 0x7cu, 0x7du); }
/* float4_e2m1fn in a byte: as ml_dtypes, any bit above bit 2 set reads as the sign
 * (0x17 -> -6.0); the magnitude is the low 3 bits. */
static inline uint32_t fi__dec_e2m1(uint32_t c) {
    const uint32_t a = c & 7u;
    const uint32_t s = ((c & 0xffu) > 7u) ? 0x80000000u : 0u;
    return fi__dec_fp(a, 1, 1, 4, 0x100u, 0x100u) | s;
}
static inline uint32_t fi__dec_e8m0(uint32_t c) {
    c &= 0xffu;
    uint32_t r = c << 23;
    r = (c == 0u) ? 0x00400000u : r;
    return (c == 0xffu) ? 0x7fc00000u : r;
}
/* float16: exact, NaN payload kept (numpy), as formats.h fi_f16_to_f32, branchless. */
static inline uint32_t fi__dec_f16(uint32_t h) {
    const uint32_t s = (h & 0x8000u) << 16;
    const uint32_t a = h & 0x7fffu;
    uint32_t r = (a << 13) + ((uint32_t)(127 - 15) << 23);
    r = (a >= 0x7c00u) ? (r + ((uint32_t)(127 - 15) << 23)) : r;
    const uint32_t rs = fi_f32_bits((float)(int32_t)a * 0x1p-24f);
    const uint32_t sub = 0u - (uint32_t)(a < 0x0400u);
    r = (rs & sub) | (r & ~sub);
    return r | s;
}

/* Scalar decode of one code of format fmt (element code for packed formats) to float32. */
static inline float fi_decode_f32(int fmt, uint32_t code) {
    switch (fmt) {
    case FI_UINT8: return (float)(uint8_t)code;
    case FI_INT8: return (float)(int8_t)(uint8_t)code;
    case FI_UINT16: return (float)(uint16_t)code;
    case FI_INT16: return (float)(int16_t)(uint16_t)code;
    case FI_UINT32: return (float)code;
    case FI_INT32: return (float)(int32_t)code;
    case FI_FLOAT8_E4M3: return fi_bits_f32(fi__dec_e4m3(code));
    case FI_FLOAT8_E5M2: case FI_FLOAT8_E5M2_X4: return fi_bits_f32(fi__dec_e5m2(code));
    case FI_FLOAT8_E4M3FN: case FI_FLOAT8_E4M3FN_X4: return fi_bits_f32(fi__dec_e4m3fn(code));
    case FI_FLOAT8_E8M0FNU: return fi_bits_f32(fi__dec_e8m0(code));
    case FI_FLOAT16: return fi_bits_f32(fi__dec_f16(code & 0xffffu));
    case FI_BFLOAT16: return fi_bits_f32((code & 0xffffu) << 16);
    case FI_TFLOAT32: case FI_FLOAT32: return fi_bits_f32(code);
    case FI_FLOAT4_E2M1FN: case FI_FLOAT4_E2M1FN_X4: return fi_bits_f32(fi__dec_e2m1(code));
    case FI_BOOL: return (code & 0xffu) ? 1.0f : 0.0f;
    default: return 0.0f;
    }
}

/* ---- array loops ----------------------------------------------------------------- */

/* Bytes of storage before logical element i (i a multiple of the format's lanes). */
static inline size_t fi__byte_offset(int fmt, ptrdiff_t i) {
    const fi_format_traits_t *t = &fi_format_traits[fmt];
    return (size_t)(i / t->lanes) * (size_t)(t->container_bits / 8);
}

#define FI__ENC_LOOP(T, EXPR)                                             \
    do {                                                                  \
        T *d_ = (T *)dst;                                                 \
        for (ptrdiff_t i = 0; i < n; i++) {                               \
            const uint32_t u = fi_f32_bits(src[i]);                       \
            d_[i] = (T)(EXPR);                                            \
        }                                                                 \
    } while (0)

/* Encode n float32 values (n = logical elements; a multiple of 4 for packed formats)
 * into dst, which holds format fmt.  One pass, no allocation. */
FI__MULTIVERSION void fi_encode_f32_array(int fmt, const float *src, void *dst, ptrdiff_t n,
                                       int saturate) {
    const int mode = saturate == FI_SAT_ASCEND ? FI_SAT_ASCEND : (saturate ? FI_SAT_MAX : 0);
    switch (fmt) {
    case FI_BFLOAT16:
#ifdef FI__HAVE_STREAM
        if (n >= FI__STREAM_MIN && fi__have_avx2()) {
            fi__enc_bf16_stream(src, (uint16_t *)dst, n, mode);
            break;
        }
#endif
        FI__ENC_LOOP(uint16_t, fi__enc_bf16(u, mode));
        break;
    case FI_FLOAT16: FI__ENC_LOOP(uint16_t, fi__enc_f16(u, mode)); break;
    case FI_TFLOAT32: FI__ENC_LOOP(uint32_t, fi__enc_tf32(u, mode)); break;
    case FI_FLOAT32: FI__ENC_LOOP(uint32_t, fi__enc_f32(u, mode)); break;
    case FI_FLOAT8_E4M3: { const fi__fp_modes p = FI__E4M3_MODES(mode);
        FI__ENC_LOOP(uint8_t, FI__E4M3_ENC(u, p)); break; }
    case FI_FLOAT8_E4M3FN: { const fi__fp_modes p = FI__E4M3FN_MODES(mode);
        FI__ENC_LOOP(uint8_t, FI__E4M3FN_ENC(u, p)); break; }
    case FI_FLOAT8_E5M2: { const fi__fp_modes p = FI__E5M2_MODES(mode);
        FI__ENC_LOOP(uint8_t, FI__E5M2_ENC(u, p)); break; }
    case FI_FLOAT8_E8M0FNU: FI__ENC_LOOP(uint8_t, fi__enc_e8m0(u, mode)); break;
    case FI_FLOAT4_E2M1FN: { const fi__fp_modes p = FI__E2M1_MODES(mode);
        FI__ENC_LOOP(uint8_t, FI__E2M1_ENC(u, p)); break; }
    case FI_BOOL: FI__ENC_LOOP(uint8_t, fi__enc_bool(u)); break;
    case FI_UINT8: FI__ENC_LOOP(uint8_t, FI__ENC_U8(u)); break;
    case FI_INT8: FI__ENC_LOOP(uint8_t, FI__ENC_I8(u)); break;
    case FI_UINT16: FI__ENC_LOOP(uint16_t, FI__ENC_U16(u)); break;
    case FI_INT16: FI__ENC_LOOP(uint16_t, FI__ENC_I16(u)); break;
    case FI_UINT32: FI__ENC_LOOP(uint32_t, FI__ENC_U32(u)); break;
    case FI_INT32: FI__ENC_LOOP(uint32_t, FI__ENC_I32(u)); break;
    case FI_FLOAT8_E5M2_X4: case FI_FLOAT8_E4M3FN_X4: {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        /* little-endian host: element i of a uint32 container is byte i in memory */
        if (fmt == FI_FLOAT8_E5M2_X4) {
            const fi__fp_modes p = FI__E5M2_MODES(mode);
            FI__ENC_LOOP(uint8_t, FI__E5M2_ENC(u, p));
        } else {
            const fi__fp_modes p = FI__E4M3FN_MODES(mode);
            FI__ENC_LOOP(uint8_t, FI__E4M3FN_ENC(u, p));
        }
#else
        const int e5 = fmt == FI_FLOAT8_E5M2_X4;
        uint32_t *d = (uint32_t *)dst;
        for (ptrdiff_t j = 0; j < n / 4; j++) {
            uint32_t w = 0;
            for (int k = 0; k < 4; k++) {
                const uint32_t u = fi_f32_bits(src[4 * j + k]);
                w |= (e5 ? fi__enc_e5m2(u, mode) : fi__enc_e4m3fn(u, mode)) << (8 * k);
            }
            d[j] = w;
        }
#endif
        break;
    }
    case FI_FLOAT4_E2M1FN_X4: {
        uint16_t *d = (uint16_t *)dst;
        for (ptrdiff_t j = 0; j < n / 4; j++) {
            uint32_t w = 0;
            for (int k = 0; k < 4; k++)
                w |= fi__enc_e2m1(fi_f32_bits(src[4 * j + k]), mode) << (4 * k);
            d[j] = (uint16_t)w;
        }
        break;
    }
    default: break;
    }
}

#define FI__DEC_LOOP(T, EXPR)                                             \
    do {                                                                  \
        const T *s_ = (const T *)src;                                     \
        for (ptrdiff_t i = 0; i < n; i++) {                               \
            const uint32_t c = (uint32_t)s_[i];                           \
            (void)c;                                                      \
            dst[i] = (EXPR);                                              \
        }                                                                 \
    } while (0)

/* Decode n logical elements of format fmt (n a multiple of 4 for packed formats) to
 * float32.  One pass, no allocation. */
FI__MULTIVERSION void fi_decode_f32_array(int fmt, const void *src, float *dst, ptrdiff_t n) {
    switch (fmt) {
    case FI_BFLOAT16: FI__DEC_LOOP(uint16_t, fi_bits_f32(c << 16)); break;
    case FI_FLOAT16: FI__DEC_LOOP(uint16_t, fi_bits_f32(fi__dec_f16(c))); break;
    case FI_TFLOAT32: case FI_FLOAT32: FI__DEC_LOOP(uint32_t, fi_bits_f32(c)); break;
    case FI_FLOAT8_E4M3: FI__DEC_LOOP(uint8_t, fi_bits_f32(fi__dec_e4m3(c))); break;
    case FI_FLOAT8_E4M3FN: FI__DEC_LOOP(uint8_t, fi_bits_f32(fi__dec_e4m3fn(c))); break;
    case FI_FLOAT8_E5M2: FI__DEC_LOOP(uint8_t, fi_bits_f32(fi__dec_e5m2(c))); break;
    case FI_FLOAT8_E8M0FNU: FI__DEC_LOOP(uint8_t, fi_bits_f32(fi__dec_e8m0(c))); break;
    case FI_FLOAT4_E2M1FN: FI__DEC_LOOP(uint8_t, fi_bits_f32(fi__dec_e2m1(c))); break;
    case FI_BOOL: FI__DEC_LOOP(uint8_t, c ? 1.0f : 0.0f); break;
    case FI_UINT8: FI__DEC_LOOP(uint8_t, (float)(int32_t)c); break;
    case FI_INT8: FI__DEC_LOOP(int8_t, (float)(int8_t)s_[i]); break;
    case FI_UINT16: FI__DEC_LOOP(uint16_t, (float)(int32_t)c); break;
    case FI_INT16: FI__DEC_LOOP(int16_t, (float)s_[i]); break;
    case FI_UINT32: FI__DEC_LOOP(uint32_t, (float)c); break;
    case FI_INT32: FI__DEC_LOOP(int32_t, (float)s_[i]); break;
    case FI_FLOAT8_E5M2_X4: case FI_FLOAT8_E4M3FN_X4: {
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
        if (fmt == FI_FLOAT8_E5M2_X4)
            FI__DEC_LOOP(uint8_t, fi_bits_f32(fi__dec_e5m2(c)));
        else
            FI__DEC_LOOP(uint8_t, fi_bits_f32(fi__dec_e4m3fn(c)));
#else
        const int e5 = fmt == FI_FLOAT8_E5M2_X4;
        const uint32_t *s = (const uint32_t *)src;
        for (ptrdiff_t j = 0; j < n / 4; j++) {
            const uint32_t w = s[j];
            for (int k = 0; k < 4; k++) {
                const uint32_t c = (w >> (8 * k)) & 0xffu;
                dst[4 * j + k] = fi_bits_f32(e5 ? fi__dec_e5m2(c) : fi__dec_e4m3fn(c));
            }
        }
#endif
        break;
    }
    case FI_FLOAT4_E2M1FN_X4: {
        const uint16_t *s = (const uint16_t *)src;
        for (ptrdiff_t j = 0; j < n / 4; j++) {
            const uint32_t w = s[j];
            for (int k = 0; k < 4; k++)
                dst[4 * j + k] = fi_bits_f32(fi__dec_e2m1((w >> (4 * k)) & 0xfu));
        }
        break;
    }
    default: break;
    }
}

#ifndef FI_CONVERT_CHUNK
#define FI_CONVERT_CHUNK 1024   /* elements per float32 staging block (multiple of 4) */
#endif

/* Convert n logical elements from format sfmt at src to format dfmt at dst through
 * float32 (decode, then encode with the saturate mode).  float32/tfloat32 sources are
 * encoded directly and float32 destinations (default mode) decoded directly; any other
 * pair streams through a FI_CONVERT_CHUNK float32 block on the stack, so the data is
 * read and written once.  src and dst may be the same buffer when both formats store
 * the same number of bytes per element; otherwise they must not overlap. */
static inline void fi_convert_array(int sfmt, const void *src, int dfmt, void *dst, ptrdiff_t n,
                                    int saturate) {
    if (sfmt == FI_FLOAT32 || sfmt == FI_TFLOAT32) {
        fi_encode_f32_array(dfmt, (const float *)src, dst, n, saturate);
        return;
    }
    if (dfmt == FI_FLOAT32 && !saturate) {
        fi_decode_f32_array(sfmt, src, (float *)dst, n);
        return;
    }
    float tmp[FI_CONVERT_CHUNK];
    for (ptrdiff_t off = 0; off < n; off += FI_CONVERT_CHUNK) {
        const ptrdiff_t k = (n - off) < FI_CONVERT_CHUNK ? (n - off) : FI_CONVERT_CHUNK;
        fi_decode_f32_array(sfmt, (const char *)src + fi__byte_offset(sfmt, off), tmp, k);
        fi_encode_f32_array(dfmt, tmp, (char *)dst + fi__byte_offset(dfmt, off), k, saturate);
    }
}

/* Pack n element codes (one per byte: float8 codes, or float4 codes in the low nibble;
 * the high nibble is ignored) into n/4 x4 containers of format fmt. */
static inline void fi_pack_x4(int fmt, const uint8_t *src, void *dst, ptrdiff_t n) {
    if (fmt == FI_FLOAT4_E2M1FN_X4) {
        uint16_t *d = (uint16_t *)dst;
        for (ptrdiff_t j = 0; j < n / 4; j++)
            d[j] = (uint16_t)((src[4 * j] & 0xfu) | ((src[4 * j + 1] & 0xfu) << 4) |
                              ((src[4 * j + 2] & 0xfu) << 8) | ((uint32_t)(src[4 * j + 3] & 0xfu) << 12));
    } else {
        uint32_t *d = (uint32_t *)dst;
        for (ptrdiff_t j = 0; j < n / 4; j++)
            d[j] = (uint32_t)src[4 * j] | ((uint32_t)src[4 * j + 1] << 8) |
                   ((uint32_t)src[4 * j + 2] << 16) | ((uint32_t)src[4 * j + 3] << 24);
    }
}

/* Unpack n/4 x4 containers of format fmt into n element codes, one per byte. */
static inline void fi_unpack_x4(int fmt, const void *src, uint8_t *dst, ptrdiff_t n) {
    if (fmt == FI_FLOAT4_E2M1FN_X4) {
        const uint16_t *s = (const uint16_t *)src;
        for (ptrdiff_t j = 0; j < n / 4; j++)
            for (int k = 0; k < 4; k++) dst[4 * j + k] = (uint8_t)((s[j] >> (4 * k)) & 0xfu);
    } else {
        const uint32_t *s = (const uint32_t *)src;
        for (ptrdiff_t j = 0; j < n / 4; j++)
            for (int k = 0; k < 4; k++) dst[4 * j + k] = (uint8_t)(s[j] >> (8 * k));
    }
}

#endif /* FASTISA_CONVERT_H */
