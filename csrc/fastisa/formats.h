/* fastisa number formats: scalar encode/decode primitives shared by every kernel.
 *
 * Python-free, header-only, static inline.  Every name carries the fi_ prefix.
 * Rounding is round-to-nearest-even (RNE) everywhere unless a name says otherwise;
 * subnormals are kept (never flushed); NaN handling is stated per function.
 * These helpers rely on the default IEEE environment (RNE, no FTZ/DAZ) and must be
 * compiled without -ffast-math.
 *
 * The per-format traits table (fi_format_traits) and the vectorised conversion
 * kernels live in convert.h; this file holds the format codes and the scalar
 * primitives that instruction kernels round through.
 */
#ifndef FASTISA_FORMATS_H
#define FASTISA_FORMATS_H

#include <math.h>
#include <stdint.h>
#include <string.h>

/* Format codes: mirrored by fastisa.dtypes (Format.code).  Never renumber. */
typedef enum {
    FI_UINT8 = 0,
    FI_INT8 = 1,
    FI_UINT16 = 2,
    FI_INT16 = 3,
    FI_UINT32 = 4,
    FI_INT32 = 5,
    FI_FLOAT8_E4M3 = 6,
    FI_FLOAT8_E5M2 = 7,
    FI_FLOAT8_E4M3FN = 8,
    FI_FLOAT8_E8M0FNU = 9,
    FI_FLOAT16 = 10,
    FI_BFLOAT16 = 11,
    FI_TFLOAT32 = 12,
    FI_FLOAT32 = 13,
    FI_FLOAT8_E5M2_X4 = 14,
    FI_FLOAT8_E4M3FN_X4 = 15,
    FI_FLOAT4_E2M1FN_X4 = 16,
    FI_BOOL = 17,
    FI_FLOAT4_E2M1FN = 18,
    FI_NUM_FORMATS = 19
} fi_format;

/* ---- bit casts ------------------------------------------------------------ */

static inline uint32_t fi_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }
static inline float fi_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint64_t fi_f64_bits(double d) { uint64_t u; memcpy(&u, &d, 8); return u; }
static inline double fi_bits_f64(uint64_t u) { double d; memcpy(&d, &u, 8); return d; }

/* ---- bfloat16 ------------------------------------------------------------- */

/* float32 -> bfloat16, RNE; NaN -> canonical quiet NaN 0x7fc0 with the input's
 * sign (ml_dtypes / Eigen float_to_bfloat16_rtne); subnormals rounded, not flushed. */
static inline uint16_t fi_f32_to_bf16(float f) {
    uint32_t u = fi_f32_bits(f);
    if ((u & 0x7fffffffu) > 0x7f800000u) return (uint16_t)(((u >> 16) & 0x8000u) | 0x7fc0u);
    return (uint16_t)((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}

/* bfloat16 -> float32: exact (NaN payload kept). */
static inline float fi_bf16_to_f32(uint16_t h) { return fi_bits_f32((uint32_t)h << 16); }

/* float64 -> bfloat16 with a single RNE rounding (no double rounding through f32). */
static inline uint16_t fi_f64_to_bf16(double d) {
    uint64_t u = fi_f64_bits(d);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    uint64_t a = u & 0x7fffffffffffffffull;
    uint16_t r;
    if (a > 0x7ff0000000000000ull) return (uint16_t)(sign | 0x7fc0u);
    if (a >= 0x47eff00000000000ull) {            /* >= max + ulp/2 (tie goes to inf) */
        r = 0x7f80u;
    } else if (a >= 0x3810000000000000ull) {     /* >= 2^-126: normal */
        uint64_t m = a - ((uint64_t)(1023 - 127) << 52);
        r = (uint16_t)((m + (1ull << 44) - 1 + ((m >> 45) & 1)) >> 45);
    } else {                                      /* subnormal: ulp 2^-133 */
        double t = fi_bits_f64(a) + 0x1p-81;
        r = (uint16_t)(fi_f64_bits(t) - 0x3ae0000000000000ull);
    }
    return (uint16_t)(sign | r);
}

/* ---- float16 (IEEE binary16) ---------------------------------------------- */

/* float16 -> float32: exact; NaN payload kept. */
static inline float fi_f16_to_f32(uint16_t h) {
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t a = h & 0x7fffu;
    uint32_t r;
    if (a >= 0x7c00u) {
        r = 0x7f800000u | ((a & 0x3ffu) << 13);
    } else if (a >= 0x0400u) {
        r = (a << 13) + ((uint32_t)(127 - 15) << 23);
    } else {
        r = fi_f32_bits((float)a * 0x1p-24f);      /* exact: a < 2^10 */
    }
    return fi_bits_f32(sign | r);
}

/* float32 -> float16, RNE, IEEE overflow to inf; NaN stays NaN with the input's sign
 * and the top 10 payload bits, exactly as numpy's astype (npy_floatbits_to_halfbits):
 * 0x7c00 | (mantissa >> 13), or 0x7c01 when those bits are all zero.  The quiet bit is
 * NOT forced (a signalling NaN stays signalling), unlike x86 F16C. */
static inline uint16_t fi_f32_to_f16(float f) {
    uint32_t u = fi_f32_bits(f);
    uint16_t sign = (uint16_t)((u >> 16) & 0x8000u);
    uint32_t a = u & 0x7fffffffu;
    uint16_t r;
    if (a > 0x7f800000u) {
        uint32_t p = (a >> 13) & 0x3ffu;
        r = (uint16_t)(0x7c00u | (p ? p : 1u));
    } else if (a >= 0x477ff000u) {               /* >= 65520: rounds to inf */
        r = 0x7c00u;
    } else if (a >= 0x38800000u) {               /* >= 2^-14: normal */
        uint32_t m = a - ((uint32_t)(127 - 15) << 23);
        r = (uint16_t)((m + 0xfffu + ((m >> 13) & 1u)) >> 13);
    } else {                                      /* subnormal: ulp 2^-24 */
        float t = fi_bits_f32(a) + 0.5f;
        r = (uint16_t)(fi_f32_bits(t) - 0x3f000000u);
    }
    return (uint16_t)(sign | r);
}

/* float64 -> float16 with a single RNE rounding; NaN as numpy's astype
 * (npy_doublebits_to_halfbits): sign | 0x7c00 | top 10 payload bits, 0x7c01 if zero. */
static inline uint16_t fi_f64_to_f16(double d) {
    uint64_t u = fi_f64_bits(d);
    uint16_t sign = (uint16_t)((u >> 48) & 0x8000u);
    uint64_t a = u & 0x7fffffffffffffffull;
    uint16_t r;
    if (a > 0x7ff0000000000000ull) {
        uint16_t p = (uint16_t)((a >> 42) & 0x3ffu);
        r = (uint16_t)(0x7c00u | (p ? p : 1u));
    } else if (a >= 0x40effe0000000000ull) {     /* >= 65520 */
        r = 0x7c00u;
    } else if (a >= 0x3f10000000000000ull) {     /* >= 2^-14 */
        uint64_t m = a - ((uint64_t)(1023 - 15) << 52);
        r = (uint16_t)((m + (1ull << 41) - 1 + ((m >> 42) & 1)) >> 42);
    } else {
        double t = fi_bits_f64(a) + 0x1p28;
        r = (uint16_t)(fi_f64_bits(t) - 0x41b0000000000000ull);
    }
    return (uint16_t)(sign | r);
}

/* Ascend saturation mode for float16 results (Atlas training / 310P class chips):
 * +-inf -> +-65504 (0x7bff / 0xfbff), NaN -> +0. */
static inline uint16_t fi_f16_saturate(uint16_t h) {
    uint16_t a = h & 0x7fffu;
    if (a > 0x7c00u) return 0;
    if (a == 0x7c00u) return (uint16_t)((h & 0x8000u) | 0x7bffu);
    return h;
}

/* The same rule for float32 results: +-inf -> +-FLT_MAX, NaN -> +0. */
static inline float fi_f32_saturate(float f) {
    uint32_t u = fi_f32_bits(f);
    uint32_t a = u & 0x7fffffffu;
    if (a > 0x7f800000u) return 0.0f;
    if (a == 0x7f800000u) return fi_bits_f32((u & 0x80000000u) | 0x7f7fffffu);
    return f;
}

/* ---- integers (spec 000 "Type Casting") ----------------------------------- */
/* float -> integer: round to nearest even, saturate to the destination range,
 * NaN -> 0.  Integer -> float32: (float)v, which rounds RNE (2^24+1 -> 2^24). */

static inline double fi_rne_clamp(double x, double lo, double hi) {
    if (x != x) return 0.0;
    if (x <= lo) return lo;
    if (x >= hi) return hi;
    return nearbyint(x);
}
static inline int8_t fi_f32_to_i8(float f) { return (int8_t)fi_rne_clamp(f, -128.0, 127.0); }
static inline uint8_t fi_f32_to_u8(float f) { return (uint8_t)fi_rne_clamp(f, 0.0, 255.0); }
static inline int16_t fi_f32_to_i16(float f) { return (int16_t)fi_rne_clamp(f, -32768.0, 32767.0); }
static inline uint16_t fi_f32_to_u16(float f) { return (uint16_t)fi_rne_clamp(f, 0.0, 65535.0); }
static inline int32_t fi_f32_to_i32(float f) { return (int32_t)fi_rne_clamp(f, -2147483648.0, 2147483647.0); }
static inline uint32_t fi_f32_to_u32(float f) { return (uint32_t)fi_rne_clamp(f, 0.0, 4294967295.0); }

#endif /* FASTISA_FORMATS_H */
