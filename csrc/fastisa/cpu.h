/* The instruction-set levels of fastisa's matmul kernels (NKI nc_matmul in nki.h, PTO
 * TMATMUL in tile.h), one definition for both: the level the CPU supports, read once at
 * run time, and the level in use given a forced one (tests, FASTISA_MATMUL_ISA).
 *
 *   FI_MM_ISA_SCALAR  the portable build
 *   FI_MM_ISA_AVX2    AVX2 (with FMA when the kernel needs it: need_fma)
 *   FI_MM_ISA_AVX512  AVX-512F and FMA
 *
 * A forced level the CPU lacks is lowered to the best it has.  Every level of a kernel
 * computes each element with the same operations in the same order: the same bits. */
#ifndef FASTISA_CPU_H
#define FASTISA_CPU_H

#define FI_MM_ISA_AUTO (-1)
#define FI_MM_ISA_SCALAR 0
#define FI_MM_ISA_AVX2 1
#define FI_MM_ISA_AVX512 2

/* the best level this CPU runs (debug builds: the portable one) */
static inline int fi_cpu_mm_level(int need_fma) {
    static int have[2] = {-1, -1};
    int *h = &have[need_fma ? 1 : 0];
    if (*h < 0) {
#if defined(__x86_64__) && defined(__GNUC__) && !defined(FASTISA_DEBUG)
        __builtin_cpu_init();
        int fma = __builtin_cpu_supports("fma");
        *h = (__builtin_cpu_supports("avx512f") && fma) ? FI_MM_ISA_AVX512
             : (__builtin_cpu_supports("avx2") && (fma || !need_fma)) ? FI_MM_ISA_AVX2
             : FI_MM_ISA_SCALAR;
#else
        *h = FI_MM_ISA_SCALAR;
#endif
    }
    return *h;
}

/* the level in use: the forced one capped at the CPU's, else the CPU's */
static inline int fi_cpu_mm_use(int forced, int cpu) {
    return forced >= 0 && forced < cpu ? forced : cpu;
}

/* a level to force: FI_MM_ISA_AUTO for anything out of range */
static inline int fi_cpu_mm_force(int level) {
    return level < FI_MM_ISA_AUTO || level > FI_MM_ISA_AVX512 ? FI_MM_ISA_AUTO : level;
}

/* One kernel family's setting: its forced level (FI_MM_ISA_AUTO: none) and whether its
 * AVX2 kernel needs FMA. */
typedef struct { int forced, need_fma; } fi_mm_isa_t;

/* the family's level in use */
static inline int fi_mm_isa_get(const fi_mm_isa_t *f) {
    return fi_cpu_mm_use(f->forced, fi_cpu_mm_level(f->need_fma));
}

/* force a level (FI_MM_ISA_AUTO restores the automatic choice); the level now in use */
static inline int fi_mm_isa_set(fi_mm_isa_t *f, int level) {
    f->forced = fi_cpu_mm_force(level);
    return fi_mm_isa_get(f);
}

#endif /* FASTISA_CPU_H */
