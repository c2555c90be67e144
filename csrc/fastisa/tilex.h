/* fastisa PTO tile kernels, second set: the instruction families added for pto-isa's full tile
 * ISA (issue 13).  Python-free, header-only, static inline, fi_tx_ prefix; built on tile.h's
 * operand struct, loaders and stores.  One kernel per operation shape:
 *   fi_tx_binary     dst = op(a, b)        bitwise, shifts, REM, FMOD, PRELU, POW, SUBRELU
 *   fi_tx_ternary    dst = op(a, b, c)     ADDC, SUBC, fused multiply-add forms
 *   fi_tx_cmp        m[r, c] = a cmp b     0/1 bytes (the front-end packs them into bits)
 *   fi_tx_select     dst = m ? a : b       m a contiguous 0/1 byte matrix
 *   fi_tx_rowprod / fi_tx_colprod          products rounded to T after every step
 *   fi_tx_argreduce  index (and value) of the first max / min of each row or column
 *   fi_tx_iota       dst[c] = start +- c   (TCI)
 * Semantics are pto-isa's CPU simulator's (include/pto/cpu/ElementOp.h, TReduceIdx.hpp,
 * TRowProd.hpp, TColProd.hpp, TCI.hpp) where the ISA docs (docs/isa/*.md) are silent.
 * Floats (float32/float16/bfloat16) are computed in double or float32 and rounded once to T
 * per C++ operation; integers in int64, wrapping to the destination width.  Kernels trust
 * their inputs (Python validated them) and never fail.
 */
#ifndef FASTISA_TILEX_H
#define FASTISA_TILEX_H

#include <math.h>
#include <stdint.h>

#include "tile.h"

typedef enum {
    FI_TX_AND = 0, FI_TX_OR = 1, FI_TX_XOR = 2, FI_TX_SHL = 3, FI_TX_SHR = 4, FI_TX_REM = 5,
    FI_TX_FMOD = 6, FI_TX_PRELU = 7, FI_TX_POW = 8, FI_TX_SUBRELU = 9, FI_TX_NOT = 10
} fi_tx_op;

typedef enum {
    FI_T3_ADDC = 0,        /* a + b + c (float32 intermediate, one final rounding) */
    FI_T3_SUBC = 1,        /* a - b + c */
    FI_T3_FMA = 2,         /* a * b + c (float32 intermediate, one final rounding) */
    FI_T3_MULADD_R = 3,    /* round_T(round_T(a * b) + c) */
    FI_T3_MULADD_R_RELU = 4 /* relu(round_T(round_T(a * b) + c)) */
} fi_t3_op;

/* EQ_EPS / NE_EPS: TCMPS's equality in the CPU simulator (TCmps.hpp): |a - b| < 1e-9 in
 * double; NE_EPS is 1 when either side is NaN. */
typedef enum { FI_CMP_EQ = 0, FI_CMP_NE = 1, FI_CMP_LT = 2, FI_CMP_GT = 3, FI_CMP_GE = 4,
               FI_CMP_LE = 5, FI_CMP_EQ_EPS = 6, FI_CMP_NE_EPS = 7 } fi_cmp_mode;

/* float -> int32 as x86's cvttsd2si (static_cast<int32_t>(double)): truncation, and
 * INT32_MIN for NaN and out-of-range values. */
static inline int64_t fi_tx_d2i32(double x) {
    if (!(x > -2147483649.0 && x < 2147483648.0)) return INT32_MIN;
    return (int64_t)x;
}

static inline void fi_tx_binary_i(int op, int64_t *a, const int64_t *b, int n) {
    int i;
    switch (op) {
    case FI_TX_AND: for (i = 0; i < n; i++) a[i] &= b[i]; break;
    case FI_TX_OR: for (i = 0; i < n; i++) a[i] |= b[i]; break;
    case FI_TX_XOR: for (i = 0; i < n; i++) a[i] ^= b[i]; break;
    case FI_TX_NOT: for (i = 0; i < n; i++) a[i] = ~a[i]; break;
    case FI_TX_SHL:
        for (i = 0; i < n; i++)
            a[i] = (b[i] >= 0 && b[i] < 64) ? (int64_t)((uint64_t)a[i] << b[i]) : 0;
        break;
    case FI_TX_SHR:
        for (i = 0; i < n; i++)
            a[i] = (b[i] >= 0 && b[i] < 64) ? (a[i] >> b[i]) : (a[i] < 0 ? -1 : 0);
        break;
    case FI_TX_REM:
        for (i = 0; i < n; i++) {
            int64_t r = b[i] != 0 ? a[i] % b[i] : 0;
            if (((a[i] >= 0) != (b[i] >= 0)) && r != 0) r += b[i];
            a[i] = r;
        }
        break;
    case FI_TX_FMOD: for (i = 0; i < n; i++) a[i] = b[i] != 0 ? a[i] % b[i] : 0; break;
    case FI_TX_PRELU:
        for (i = 0; i < n; i++) a[i] = a[i] > 0 ? a[i] : (int64_t)((uint64_t)a[i] * (uint64_t)b[i]);
        break;
    case FI_TX_POW:
        for (i = 0; i < n; i++) a[i] = fi_tx_d2i32(pow((double)a[i], (double)b[i]));
        break;
    case FI_TX_SUBRELU:
        for (i = 0; i < n; i++) {
            int64_t d = (int64_t)((uint64_t)a[i] - (uint64_t)b[i]);
            a[i] = d;
        }
        break;
    default: break;
    }
}

/* Floats in double (exact for fmod and the sign fix-up operands; one rounding at the store). */
static inline void fi_tx_binary_d(int op, double *a, const double *b, int n) {
    int i;
    switch (op) {
    case FI_TX_REM:
        for (i = 0; i < n; i++) {
            double r = fmod(a[i], b[i]);
            if (((a[i] >= 0) != (b[i] >= 0)) && r != 0) r += b[i];
            a[i] = r;
        }
        break;
    case FI_TX_FMOD: for (i = 0; i < n; i++) a[i] = fmod(a[i], b[i]); break;
    case FI_TX_PRELU: for (i = 0; i < n; i++) a[i] = a[i] > 0 ? a[i] : a[i] * b[i]; break;
    case FI_TX_POW: for (i = 0; i < n; i++) a[i] = pow(a[i], b[i]); break;
    case FI_TX_SUBRELU:
        for (i = 0; i < n; i++) { double d = a[i] - b[i]; a[i] = d > 0 ? d : 0.0; }
        break;
    default: break;
    }
}

/* Rounds n doubles to T (float32/float16/bfloat16) and back. */
static inline void fi_tx_round_d(int fmt, double *v, int n) {
    int i;
    if (fmt == FI_FLOAT32) for (i = 0; i < n; i++) v[i] = (double)(float)v[i];
    else if (fmt == FI_FLOAT16) for (i = 0; i < n; i++) v[i] = fi_f16_to_f32(fi_f64_to_f16(v[i]));
    else if (fmt == FI_BFLOAT16) for (i = 0; i < n; i++) v[i] = fi_bf16_to_f32(fi_f64_to_bf16(v[i]));
}

/* dst[r, c] = op(a[r, c], b[r, c]) for r < R, c < C (b may be a scalar: rs = cs = 0).
 * A SUBRELU on integers clamps after the wrap to T: relu((T)(a - b)). */
static inline void fi_tx_binary(int op, fi_tile_arg d, fi_tile_arg a, fi_tile_arg b, int R, int C) {
    double da[FI_TILE_CHUNK], db[FI_TILE_CHUNK];
    int64_t ia[FI_TILE_CHUNK], ib[FI_TILE_CHUNK];
    ptrdiff_t r;
    int c0, n, i;
    int isf = fi_tile_is_float(a.fmt);
    for (r = 0; r < R; r++) {
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            char *dp = fi_tile_at(&d, r, c0);
            if (isf) {
                fi_tile_load_d(a.fmt, fi_tile_at(&a, r, c0), a.cs, da, n);
                fi_tile_load_d(b.fmt, fi_tile_at(&b, r, c0), b.cs, db, n);
                fi_tx_binary_d(op, da, db, n);
                fi_tile_store_d(d.fmt, dp, d.cs, da, n);
            } else {
                fi_tile_load_i(a.fmt, fi_tile_at(&a, r, c0), a.cs, ia, n);
                fi_tile_load_i(b.fmt, fi_tile_at(&b, r, c0), b.cs, ib, n);
                fi_tx_binary_i(op, ia, ib, n);
                if (op == FI_TX_SUBRELU) {
                    fi_tile_store_i(d.fmt, dp, d.cs, ia, n);       /* wrap to T ... */
                    fi_tile_load_i(d.fmt, dp, d.cs, ia, n);
                    for (i = 0; i < n; i++) if (ia[i] < 0) ia[i] = 0;  /* ... then relu */
                }
                fi_tile_store_i(d.fmt, dp, d.cs, ia, n);
            }
        }
    }
}

/* dst[r, c] = op(a[r, c], b[r, c], c[r, c]); any operand may be a scalar (rs = cs = 0). */
static inline void fi_tx_ternary(int op, fi_tile_arg d, fi_tile_arg a, fi_tile_arg b,
                                 fi_tile_arg cc, int R, int C) {
    float fa[FI_TILE_CHUNK], fb[FI_TILE_CHUNK], fc[FI_TILE_CHUNK];
    int64_t ia[FI_TILE_CHUNK], ib[FI_TILE_CHUNK], ic[FI_TILE_CHUNK];
    ptrdiff_t r;
    int c0, n, i;
    int isf = fi_tile_is_float(a.fmt);
    for (r = 0; r < R; r++) {
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            char *dp = fi_tile_at(&d, r, c0);
            if (isf) {
                fi_tile_load_f(a.fmt, fi_tile_at(&a, r, c0), a.cs, fa, n);
                fi_tile_load_f(b.fmt, fi_tile_at(&b, r, c0), b.cs, fb, n);
                fi_tile_load_f(cc.fmt, fi_tile_at(&cc, r, c0), cc.cs, fc, n);
                switch (op) {
                case FI_T3_ADDC: for (i = 0; i < n; i++) fa[i] = (fa[i] + fb[i]) + fc[i]; break;
                case FI_T3_SUBC: for (i = 0; i < n; i++) fa[i] = (fa[i] - fb[i]) + fc[i]; break;
                case FI_T3_FMA: for (i = 0; i < n; i++) { volatile float p = fa[i] * fb[i]; fa[i] = p + fc[i]; } break;
                default:
                    for (i = 0; i < n; i++) fa[i] = fa[i] * fb[i];
                    fi_tile_round_in_place(d.fmt, fa, n);
                    for (i = 0; i < n; i++) fa[i] = fa[i] + fc[i];
                    fi_tile_round_in_place(d.fmt, fa, n);
                    if (op == FI_T3_MULADD_R_RELU)
                        for (i = 0; i < n; i++) fa[i] = fa[i] > 0.0f ? fa[i] : 0.0f;
                    break;
                }
                fi_tile_store_f(d.fmt, dp, d.cs, fa, n);
            } else {
                fi_tile_load_i(a.fmt, fi_tile_at(&a, r, c0), a.cs, ia, n);
                fi_tile_load_i(b.fmt, fi_tile_at(&b, r, c0), b.cs, ib, n);
                fi_tile_load_i(cc.fmt, fi_tile_at(&cc, r, c0), cc.cs, ic, n);
                for (i = 0; i < n; i++) {
                    uint64_t x = (uint64_t)ia[i], y = (uint64_t)ib[i], z = (uint64_t)ic[i];
                    switch (op) {
                    case FI_T3_ADDC: ia[i] = (int64_t)(x + y + z); break;
                    case FI_T3_SUBC: ia[i] = (int64_t)(x - y + z); break;
                    default: ia[i] = (int64_t)(x * y + z); break;
                    }
                }
                fi_tile_store_i(d.fmt, dp, d.cs, ia, n);
                if (op == FI_T3_MULADD_R_RELU) {
                    fi_tile_load_i(d.fmt, dp, d.cs, ia, n);
                    for (i = 0; i < n; i++) if (ia[i] < 0) ia[i] = 0;
                    fi_tile_store_i(d.fmt, dp, d.cs, ia, n);
                }
            }
        }
    }
}

/* m[r * C + c] = (a[r, c] mode b[r, c]) ? 1 : 0, compared in the source type (exact in
 * double for every supported format); m is contiguous R x C. */
static inline void fi_tx_cmp(int mode, uint8_t *m, fi_tile_arg a, fi_tile_arg b, int R, int C) {
    double da[FI_TILE_CHUNK], db[FI_TILE_CHUNK];
    ptrdiff_t r;
    int c0, n, i;
    for (r = 0; r < R; r++) {
        for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
            uint8_t *o = m + r * C + c0;
            n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
            fi_tile_load_d(a.fmt, fi_tile_at(&a, r, c0), a.cs, da, n);
            fi_tile_load_d(b.fmt, fi_tile_at(&b, r, c0), b.cs, db, n);
            switch (mode) {
            case FI_CMP_EQ: for (i = 0; i < n; i++) o[i] = da[i] == db[i]; break;
            case FI_CMP_NE: for (i = 0; i < n; i++) o[i] = da[i] != db[i]; break;
            case FI_CMP_LT: for (i = 0; i < n; i++) o[i] = da[i] < db[i]; break;
            case FI_CMP_GT: for (i = 0; i < n; i++) o[i] = da[i] > db[i]; break;
            case FI_CMP_GE: for (i = 0; i < n; i++) o[i] = da[i] >= db[i]; break;
            case FI_CMP_LE: for (i = 0; i < n; i++) o[i] = da[i] <= db[i]; break;
            case FI_CMP_EQ_EPS: for (i = 0; i < n; i++) o[i] = fabs(da[i] - db[i]) < 1e-9; break;
            default:
                for (i = 0; i < n; i++)
                    o[i] = (da[i] != da[i] || db[i] != db[i]) ? 1 : fabs(da[i] - db[i]) > 1e-9;
                break;
            }
        }
    }
}

/* dst[r, c] = m[r * C + c] ? a[r, c] : b[r, c] (a bit copy; b may be a scalar). */
static inline void fi_tx_select(fi_tile_arg d, const uint8_t *m, fi_tile_arg a, fi_tile_arg b,
                                int R, int C) {
    ptrdiff_t r, c;
    size_t isz = fi_tile_itemsize(d.fmt);
    for (r = 0; r < R; r++) {
        for (c = 0; c < C; c++) {
            const fi_tile_arg *s = m[r * C + c] ? &a : &b;
            memcpy(fi_tile_at(&d, r, c), fi_tile_at(s, r, c), isz);
        }
    }
}

/* Product of each row (dst[r * d.rs]) or column (dst[c * d.cs]) of src, left to right /
 * top to bottom from 1, rounded to T after every multiplication (integers wrap). */
static inline void fi_tx_prod(int cols, fi_tile_arg d, fi_tile_arg s, int R, int C) {
    int outer = cols ? C : R, inner = cols ? R : C, o, k;
    int isf = fi_tile_is_float(s.fmt);
    for (o = 0; o < outer; o++) {
        float pf = 1.0f;
        int64_t pi = 1;
        for (k = 0; k < inner; k++) {
            const char *p = cols ? fi_tile_at(&s, k, o) : fi_tile_at(&s, o, k);
            if (isf) {
                float x;
                fi_tile_load_f(s.fmt, p, 1, &x, 1);
                pf = pf * x;
                fi_tile_round_in_place(d.fmt, &pf, 1);
            } else {
                int64_t x;
                fi_tile_load_i(s.fmt, p, 1, &x, 1);
                pi = (int64_t)((uint64_t)pi * (uint64_t)x);
                fi_tile_store_i(d.fmt, (char *)&x, 1, &pi, 1);   /* wrap to T */
                fi_tile_load_i(d.fmt, (const char *)&x, 1, &pi, 1);
            }
        }
        char *dp = cols ? fi_tile_at(&d, 0, o) : fi_tile_at(&d, o, 0);
        if (isf) fi_tile_store_f(d.fmt, dp, 1, &pf, 1);
        else fi_tile_store_i(d.fmt, dp, 1, &pi, 1);
    }
}

/* Index of the first maximum (is_max) or minimum of each row (cols = 0) or column (cols = 1)
 * of src: a later element replaces the best only if strictly greater (less), so NaN never
 * wins and ties keep the first.  idx: int32/uint32 operand (written at (o, 0) for rows,
 * (0, o) for columns); val (has_val): the best value, in src's format. */
static inline void fi_tx_argreduce(int cols, int is_max, fi_tile_arg idx, int has_val,
                                   fi_tile_arg val, fi_tile_arg s, int R, int C) {
    int outer = cols ? C : R, inner = cols ? R : C, o, k;
    size_t isz = fi_tile_itemsize(s.fmt);
    for (o = 0; o < outer; o++) {
        double best, x;
        int bi = 0;
        int64_t bidx;
        const char *bp = cols ? fi_tile_at(&s, 0, o) : fi_tile_at(&s, o, 0);
        fi_tile_load_d(s.fmt, bp, 1, &best, 1);
        for (k = 1; k < inner; k++) {
            const char *p = cols ? fi_tile_at(&s, k, o) : fi_tile_at(&s, o, k);
            fi_tile_load_d(s.fmt, p, 1, &x, 1);
            if (is_max ? (x > best) : (x < best)) { best = x; bi = k; bp = p; }
        }
        bidx = bi;
        fi_tile_store_i(idx.fmt, cols ? fi_tile_at(&idx, 0, o) : fi_tile_at(&idx, o, 0), 1, &bidx, 1);
        if (has_val) memcpy(cols ? fi_tile_at(&val, 0, o) : fi_tile_at(&val, o, 0), bp, isz);
    }
}

/* dst[0, c] = start + c (or start - c when descending) for c < C, wrapping to T. */
static inline void fi_tx_iota(fi_tile_arg d, int64_t start, int descending, int C) {
    int64_t v[FI_TILE_CHUNK];
    int c0, n, i;
    for (c0 = 0; c0 < C; c0 += FI_TILE_CHUNK) {
        n = C - c0 < FI_TILE_CHUNK ? C - c0 : FI_TILE_CHUNK;
        for (i = 0; i < n; i++)
            v[i] = descending ? (int64_t)((uint64_t)start - (uint64_t)(c0 + i))
                              : (int64_t)((uint64_t)start + (uint64_t)(c0 + i));
        fi_tile_store_i(d.fmt, fi_tile_at(&d, 0, c0), d.cs, v, n);
    }
}

/* ---- TCVT with an explicit SaturationMode (the CPU simulator's TCvt.hpp) ------------------
 * sat = 1 (ON): the source value is first clamped to the intersection of the source's and the
 * destination's ranges (NaN becomes the upper limit) and cast back to the source type; then,
 * for ON and OFF alike, C++'s static_cast as compiled for x86-64 by GCC: float -> integer
 * rounds with the mode (RINT ties to even, ROUND half away, FLOOR, CEIL, TRUNC, ODD: nearest
 * with ties to odd) and converts with cvttsd2si (NaN and out-of-range values give the
 * "integer indefinite" INT_MIN of the 32-bit conversion for int32/int16/int8/uint16, of the
 * 64-bit one for uint32/uint8, then wrap to the width); float -> float rounds to nearest even
 * whatever the mode (static_cast ignores it), overflowing to inf; integer -> float rounds to
 * nearest; integer -> integer wraps. */
static inline double fi_tx_lowest(int fmt) {
    switch (fmt) {
    case FI_FLOAT32: return -3.4028234663852886e38;
    case FI_FLOAT16: return -65504.0;
    case FI_BFLOAT16: return -3.3895313892515355e38;
    case FI_INT32: return -2147483648.0;
    case FI_INT16: return -32768.0;
    case FI_INT8: return -128.0;
    default: return 0.0;
    }
}
static inline double fi_tx_highest(int fmt) {
    switch (fmt) {
    case FI_FLOAT32: return 3.4028234663852886e38;
    case FI_FLOAT16: return 65504.0;
    case FI_BFLOAT16: return 3.3895313892515355e38;
    case FI_INT32: return 2147483647.0;
    case FI_UINT32: return 4294967295.0;
    case FI_INT16: return 32767.0;
    case FI_UINT16: return 65535.0;
    case FI_INT8: return 127.0;
    default: return 255.0;          /* uint8 */
    }
}
static inline double fi_tx_round_sim(double v, int mode) {
    double f, frac;
    switch (mode) {
    case FI_RND_ROUND: return round(v);
    case FI_RND_FLOOR: return floor(v);
    case FI_RND_CEIL: return ceil(v);
    case FI_RND_TRUNC: return trunc(v);
    case FI_RND_ODD:
        f = floor(v);
        frac = v - f;
        if (frac > 0.5) return f + 1;
        if (frac < 0.5) return f;
        return ((long long)f & 1) ? f : f + 1;
    case FI_RND_RINT: return nearbyint(v);
    default: return v;
    }
}
static inline int64_t fi_tx_cvtt32(double r) {
    return (r > -2147483649.0 && r < 2147483648.0) ? (int64_t)r : (int64_t)INT32_MIN;
}
static inline int64_t fi_tx_cvtt64(double r) {
    return (r > -9223372036854775808.0 && r < 9223372036854775808.0) ? (int64_t)r : INT64_MIN;
}

static inline void fi_tx_cvt_sat(int mode, int sat, fi_tile_arg d, fi_tile_arg s, int R, int C) {
    ptrdiff_t r, c;
    int sf = fi_tile_is_float(s.fmt), df = fi_tile_is_float(d.fmt);
    double lo = fi_tx_lowest(s.fmt) > fi_tx_lowest(d.fmt) ? fi_tx_lowest(s.fmt) : fi_tx_lowest(d.fmt);
    double hi = fi_tx_highest(s.fmt) < fi_tx_highest(d.fmt) ? fi_tx_highest(s.fmt) : fi_tx_highest(d.fmt);
    for (r = 0; r < R; r++) {
        for (c = 0; c < C; c++) {
            const char *sp = fi_tile_at(&s, r, c);
            char *dp = fi_tile_at(&d, r, c);
            double v;
            int64_t iv;
            fi_tile_load_d(s.fmt, sp, 1, &v, 1);
            if (sat) {
                double m = (v < hi) ? v : hi;          /* std::min(max, v): NaN -> max */
                if (!(v < hi) && !(v >= hi)) m = hi;
                v = (lo > m) ? lo : m;
                if (sf) {                                 /* back to S */
                    char tmp[8];
                    fi_tile_store_d(s.fmt, tmp, 1, &v, 1);
                    fi_tile_load_d(s.fmt, tmp, 1, &v, 1);
                } else {
                    v = trunc(v);
                }
            }
            if (df) { fi_tile_store_d(d.fmt, dp, 1, &v, 1); continue; }
            if (!sf) { iv = (int64_t)v; fi_tile_store_i(d.fmt, dp, 1, &iv, 1); continue; }
            v = fi_tx_round_sim(v, mode);
            iv = (d.fmt == FI_UINT32 || d.fmt == FI_UINT8) ? fi_tx_cvtt64(v) : fi_tx_cvtt32(v);
            fi_tile_store_i(d.fmt, dp, 1, &iv, 1);
        }
    }
}

#endif
