# cython: language_level=3
"""Selection drivers (csrc/fastisa/select.h): NKI topk and the max8 family.

Each driver takes typed memoryviews, passes pointers and strides (in elements) to one
C kernel inside exactly one ``with nogil:`` block, and trusts its inputs: the front-end
(:mod:`fastisa.nki.isa`) has validated every constraint.
"""
from libc.stdint cimport uint16_t, uint32_t
from fastisa._kernels.capi cimport (fi_topk_bf16, fi_max8_f32, fi_find_index8_f32,
                                    fi_match_replace8_f32)
from fastisa._kernels.capi cimport use_shared_pool
use_shared_pool()  # the shared worker pool

# speed15b branch (issue 15): the chunk-maxima code choice of fi_topk_bf16 (declared here,
# not in capi.pxd: only this driver uses it)
cdef extern from "select.h" nogil:
    int fi_select_set_simd(int mode)


def set_simd(int mode):
    """Choose top-k's chunk-maxima pass: 1 AVX-512BW (when the CPU has it; else the
    portable code), 0 the portable code, -1 automatic (the default).  Returns the previous
    choice.  Results do not depend on it (tests/test_topk_simd.py runs both)."""
    return fi_select_set_simd(mode)


def topk_bf16(const uint16_t[:, :] src, int n, bint sorted, uint16_t[:, :] val,
              uint32_t[:, :] idx, int threads=0):
    """Snake-layout top-k per 16-partition group (the NKI docs, page nki.isa.topk (github.com/aws-neuron/aws-neuron-sdk, nki/api/nki.isa.rst)) on bf16 bit patterns.

    src: [P, >= ceil(n/16)] bf16 bits, rows contiguous (inner stride must be 1 element); val: [P, >= ceil(k/16)] bf16 bits;
    idx: [P, >= ceil(k/16)] uint32; k = val.shape[1].  Only the k result slots are written.
    Returns a status: bit 0 = NaN among the active elements, bit 1 = out of memory.
    """
    cdef int P = src.shape[0]
    cdef int k = val.shape[1]
    cdef int status
    cdef Py_ssize_t ps = src.strides[0] // 2
    cdef Py_ssize_t vps = val.strides[0] // 2, vfs = val.strides[1] // 2
    cdef Py_ssize_t ips = idx.strides[0] // 4, ifs = idx.strides[1] // 4
    with nogil:
        status = fi_topk_bf16(&src[0, 0], ps, P // 16, n, k, sorted, &val[0, 0], vps, vfs,
                              &idx[0, 0], ips, ifs, threads)
    return status


def max8_f32(const float[:, ::1] src, float[:, ::1] out_val, uint32_t[:, ::1] out_idx):
    """Per row, the 8 largest values (descending, ties by lower index) and their indices."""
    cdef int P = src.shape[0], N = src.shape[1]
    with nogil:
        fi_max8_f32(&src[0, 0], src.strides[0] // 4, P, N, &out_val[0, 0], &out_idx[0, 0])


def find_index8_f32(const float[:, ::1] data, const float[:, ::1] vals, uint32_t[:, ::1] out):
    """Per row, index of each of the 8 vals in data (0xFFFFFFFF when absent)."""
    cdef int P = data.shape[0], N = data.shape[1]
    with nogil:
        fi_find_index8_f32(&data[0, 0], data.strides[0] // 4, P, N, &vals[0, 0], &out[0, 0])


def match_replace8_f32(float[:, ::1] work, const float[:, ::1] vals, float imm,
                       uint32_t[:, ::1] out_idx):
    """Per row, for i = 7..0 replace the first element equal to vals[i] by imm (in place)."""
    cdef int P = work.shape[0], N = work.shape[1]
    with nogil:
        fi_match_replace8_f32(&work[0, 0], work.strides[0] // 4, P, N, &vals[0, 0], imm,
                              &out_idx[0, 0])
