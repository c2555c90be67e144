/* fastisa pseudo-random kernels for NKI (rng, rand2, dropout): per-lane XORWOW.
 *
 * Python-free, header-only, static inline, fi_rand_ prefix.  Each lane (partition) owns
 * `nsub` XORWOW generators of 6 uint32 words (x, y, z, w, v, d) -- Marsaglia, "Xorshift
 * RNGs" (J. Stat. Softw. 8(14), 2003), section 3.1, the form cuRAND also uses:
 *     t = x ^ (x >> 2); x = y; y = z; z = w; w = v; v = (v ^ (v << 4)) ^ (t ^ (t << 1));
 *     d += 362437; output d + v.
 * Element i of a lane (free dims flattened, C order) is drawn from generator i % nsub,
 * in increasing i.  The NKI docs name XORWOW but not how lanes and seeds map onto the
 * hardware's generators, so fastisa's stream is its own: deterministic and seedable, NOT
 * the hardware's stream.
 */
#ifndef FASTISA_RAND_H
#define FASTISA_RAND_H

#include <stddef.h>
#include <stdint.h>

static inline uint32_t fi_rand_next(uint32_t *s) {
    uint32_t t = s[0] ^ (s[0] >> 2);
    s[0] = s[1]; s[1] = s[2]; s[2] = s[3]; s[3] = s[4];
    s[4] = (s[4] ^ (s[4] << 4)) ^ (t ^ (t << 1));
    s[5] += 362437u;
    return s[5] + s[4];
}

/* out[p, i] = the next 32 random bits of lane p (state: [P, 6 * nsub] contiguous). */
static inline void fi_rand_bits(uint32_t *state, int P, int nsub, ptrdiff_t F, uint32_t *out) {
    for (int p = 0; p < P; p++) {
        uint32_t *st = state + (ptrdiff_t)p * 6 * nsub;
        uint32_t *o = out + (ptrdiff_t)p * F;
        if (nsub == 1) {
            uint32_t s[6];
            for (int k = 0; k < 6; k++) s[k] = st[k];
            for (ptrdiff_t i = 0; i < F; i++) o[i] = fi_rand_next(s);
            for (int k = 0; k < 6; k++) st[k] = s[k];
        } else {
            for (ptrdiff_t i = 0; i < F; i++) o[i] = fi_rand_next(st + 6 * (i % nsub));
        }
    }
}

/* u = (bits >> 8) * 2^-24, exactly, in [0, 1). */
static inline float fi_rand_unit(uint32_t b) { return (float)(b >> 8) * (1.0f / 16777216.0f); }

/* out[p, i] = lo[p] + u * (hi[p] - lo[p]) in float32 (lo/hi stride 0 or 1). */
static inline void fi_rand_uniform(uint32_t *state, int P, int nsub, ptrdiff_t F,
                                   const float *lo, const float *hi, ptrdiff_t ls, float *out) {
    uint32_t *bits = (uint32_t *)(void *)out;
    fi_rand_bits(state, P, nsub, F, bits);
    for (int p = 0; p < P; p++) {
        float a = lo[p * ls], w = hi[p * ls] - a;
        for (ptrdiff_t i = 0; i < F; i++) {
            ptrdiff_t j = (ptrdiff_t)p * F + i;
            out[j] = a + fi_rand_unit(bits[j]) * w;
        }
    }
}

/* dropout: keep[p, i] = !(u < prob[p]) (prob stride 0 or 1); one random draw per element. */
static inline void fi_rand_keep(uint32_t *state, int P, int nsub, ptrdiff_t F, const float *prob,
                                ptrdiff_t ps, uint8_t *keep, uint32_t *scratch) {
    fi_rand_bits(state, P, nsub, F, scratch);
    for (int p = 0; p < P; p++) {
        float q = prob[p * ps];
        for (ptrdiff_t i = 0; i < F; i++) {
            ptrdiff_t j = (ptrdiff_t)p * F + i;
            keep[j] = !(fi_rand_unit(scratch[j]) < q);
        }
    }
}

#endif /* FASTISA_RAND_H */
