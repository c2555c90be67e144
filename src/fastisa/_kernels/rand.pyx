# cython: language_level=3
"""Per-lane XORWOW drivers over csrc/fastisa/rand.h (rng, rand2, dropout).

``state`` is a contiguous uint32 [P, 6 * nsub] array updated in place; outputs are
contiguous [P, F] arrays.  fastisa.nki._random validates; one ``with nogil:`` per call.
"""
from libc.stdint cimport uint8_t, uint32_t

from fastisa._kernels.capi cimport fi_rand_bits, fi_rand_uniform, fi_rand_keep


def bits(uint32_t[:, ::1] state, int nsub, uint32_t[:, ::1] out):
    cdef int P = out.shape[0]
    cdef Py_ssize_t F = out.shape[1]
    if P == 0 or F == 0:
        return
    with nogil:
        fi_rand_bits(&state[0, 0], P, nsub, F, &out[0, 0])


def uniform(uint32_t[:, ::1] state, int nsub, const float[::1] lo, const float[::1] hi,
            float[:, ::1] out):
    cdef int P = out.shape[0]
    cdef Py_ssize_t F = out.shape[1], ls = 1 if lo.shape[0] > 1 else 0
    if P == 0 or F == 0:
        return
    with nogil:
        fi_rand_uniform(&state[0, 0], P, nsub, F, &lo[0], &hi[0], ls, &out[0, 0])


def keep(uint32_t[:, ::1] state, int nsub, const float[::1] prob, uint8_t[:, ::1] out,
         uint32_t[:, ::1] scratch):
    cdef int P = out.shape[0]
    cdef Py_ssize_t F = out.shape[1], ps = 1 if prob.shape[0] > 1 else 0
    if P == 0 or F == 0:
        return
    with nogil:
        fi_rand_keep(&state[0, 0], P, nsub, F, &prob[0], ps, &out[0, 0], &scratch[0, 0])
