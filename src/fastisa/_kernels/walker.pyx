# cython: language_level=3
"""TIK walker drivers: one nogil call into csrc/fastisa/walker.h per instruction.

``params`` is the int64 image of ``fi_tik_instr`` (FI_TIK_NPARAM fields, see walker.h),
filled and validated by :mod:`fastisa.tik`.  As a last line of defence (issue 12) every
driver checks the parameter block once more against the lengths of the buffers it is
given (``fi_tik_check_*``, a few comparisons) and raises
:class:`fastisa.errors.AccessError` instead of calling the kernel when an operand would
reach outside its buffer: no front-end bug can turn into an out-of-bounds write.

The drivers keep no per-call state in shared objects: runtime values (the scalar, the
operands' offsets) go into a ``fi_tik_instr`` on the C stack of the calling thread, so one
recorded instruction may run from several threads at once.
"""
from libc.stdint cimport int64_t, uint8_t
from libc.string cimport memcpy
from fastisa._kernels.capi cimport (fi_tik_instr, FI_TIK_NPARAM, fi_tik_vector,
                                    fi_tik_reduce, fi_tik_dma,
                                    fi_tik_reduce_arg, FI_TIK_OK, FI_TIK_BAD_PARAMS,
                                    FI_TIK_OUT_OF_BOUNDS, fi_tik_check_vector,
                                    fi_tik_check_reduce, fi_tik_check_dma)

from cpython.exc cimport PyErr_CheckSignals

from fastisa.errors import AccessError, ConstraintError

NPARAM = FI_TIK_NPARAM

#: Repeats per nogil call of a long instruction (counter mode reaches 33.5 M repeats):
#: between chunks the driver checks for signals, so Ctrl-C (KeyboardInterrupt) stops an
#: instruction within a fraction of a second.  Repeats run in order, so the chunks give
#: the same bits as one call; an interrupted instruction has written its first chunks.
CHUNK_REPEATS = 1 << 16

_ROLES = ("dst", "src0", "src1")


cdef int _raise(int rc, str kernel) except -1:
    """Map a fi_tik_check_* status to an exception (nothing has been written)."""
    if rc == FI_TIK_BAD_PARAMS:
        raise ConstraintError(f"tik {kernel} kernel: the parameter block has a field outside "
                              f"the ranges any instruction can produce (internal error; "
                              f"nothing was written)")
    raise AccessError(f"tik {kernel} kernel: operand {_ROLES[rc - FI_TIK_OUT_OF_BOUNDS]} "
                      f"would reach outside its scope buffer (internal error: the "
                      f"instruction's bounds check missed it; nothing was written)")


cdef inline int _check_vector(const fi_tik_instr *ins, int64_t dlen, int64_t s0len,
                              int64_t s1len) except -1:
    cdef int64_t length[3]
    length[0] = dlen
    length[1] = s0len
    length[2] = s1len
    cdef int rc = fi_tik_check_vector(ins, length)
    if rc != FI_TIK_OK:
        _raise(rc, "vector")
    return 0


cdef int _walk(const fi_tik_instr *ins, uint8_t *d, const uint8_t *s0,
               const uint8_t *s1) except -1:
    """fi_tik_vector over [0, nrep) in chunks of CHUNK_REPEATS repeats (checked first)."""
    cdef fi_tik_instr sub
    cdef int64_t done = 0, n, total = ins.nrep
    cdef int64_t chunk = CHUNK_REPEATS     # a module attribute: tests shrink it
    cdef int x
    if chunk < 1:
        chunk = 1
    if total <= chunk:
        with nogil:
            fi_tik_vector(ins, d, s0, s1)
        return 0
    while done < total:
        n = total - done
        if n > chunk:
            n = chunk
        sub = ins[0]
        sub.nrep = n
        for x in range(3):
            sub.off[x] = ins.off[x] + done * ins.rep[x] * 32
        if ins.counter and done + n < total:
            sub.tail = ins.par          # a chunk before the last: every repeat full
        with nogil:
            fi_tik_vector(&sub, d, s0, s1)
        done += n
        PyErr_CheckSignals()            # KeyboardInterrupt between chunks
    return 0


def vector(const int64_t[::1] params, double scalar, uint8_t[::1] dbuf,
           const uint8_t[::1] s0buf, const uint8_t[::1] s1buf):
    """Run one vector instruction (op, strides, mask as data) over the scope buffers."""
    cdef fi_tik_instr ins
    if params.shape[0] != FI_TIK_NPARAM:
        raise ConstraintError("tik vector kernel: bad parameter block length")
    memcpy(&ins, &params[0], FI_TIK_NPARAM * sizeof(int64_t))
    ins.scalar = scalar
    _check_vector(&ins, dbuf.shape[0], s0buf.shape[0], s1buf.shape[0])
    if ins.nrep <= 0:
        return
    _walk(&ins, &dbuf[0], &s0buf[0], &s1buf[0])


def reduce(const int64_t[::1] params, uint8_t[::1] dbuf, const uint8_t[::1] sbuf):
    """Per-repeat reduction (vcadd/vcmax/vcmin shape) of src's active lanes."""
    cdef fi_tik_instr ins
    if params.shape[0] != FI_TIK_NPARAM:
        raise ConstraintError("tik reduce kernel: bad parameter block length")
    memcpy(&ins, &params[0], FI_TIK_NPARAM * sizeof(int64_t))
    ins.scalar = 0.0
    cdef int rc = fi_tik_check_reduce(&ins, dbuf.shape[0], sbuf.shape[0], 0)
    if rc != FI_TIK_OK:
        _raise(rc, "reduce")
    if ins.nrep <= 0:
        return
    with nogil:
        fi_tik_reduce(&ins, &dbuf[0], &sbuf[0])


def dma(uint8_t[::1] dbuf, int64_t doff, const uint8_t[::1] sbuf, int64_t soff,
        int64_t nburst, int64_t burst, int64_t src_gap, int64_t dst_gap):
    """data_move: nburst bursts of ``burst`` bytes with tail-to-head gaps (bytes)."""
    cdef int rc = fi_tik_check_dma(dbuf.shape[0], doff, sbuf.shape[0], soff, nburst, burst,
                                   src_gap, dst_gap)
    if rc != FI_TIK_OK:
        _raise(rc, "dma")
    if nburst == 0 or burst == 0:
        return
    with nogil:
        fi_tik_dma(&dbuf[doff], &sbuf[soff], nburst, burst, src_gap, dst_gap)


cdef class Buffers:
    """The three scope buffers (GM, UB, L1) of one run, as raw pointers and lengths.

    Holds references to the numpy uint8 arrays so the pointers stay valid; the arrays
    must not be resized while this object lives."""
    cdef uint8_t *ptr[3]
    cdef int64_t length[3]
    cdef object keep

    def __init__(self, list bufs):
        cdef uint8_t[::1] mv
        cdef int i
        if len(bufs) != 3:
            raise ValueError("Buffers needs the 3 scope buffers (gm, ub, l1)")
        self.keep = list(bufs)
        for i in range(3):
            mv = bufs[i]
            if mv.shape[0] == 0:
                raise ValueError("Buffers: a scope buffer must not be empty")
            self.ptr[i] = &mv[0]
            self.length[i] = mv.shape[0]


cdef class Instr:
    """One fully resolved vector instruction (its fi_tik_instr precomputed at record
    time), run against a Buffers object: dst is in UB, sources in buffers s0/s1.

    The record is never written after construction: ``run_at`` builds the instruction
    with its runtime offsets in a stack copy, so concurrent runs cannot mix values."""
    cdef fi_tik_instr ins
    cdef int s0, s1

    def __init__(self, const int64_t[::1] params, int s0, int s1):
        if params.shape[0] != FI_TIK_NPARAM or not (0 <= s0 < 3 and 0 <= s1 < 3):
            raise ValueError("Instr: bad parameter block")
        memcpy(&self.ins, &params[0], FI_TIK_NPARAM * sizeof(int64_t))
        self.s0 = s0
        self.s1 = s1

    def run(self, Buffers b, double scalar):
        cdef fi_tik_instr ins = self.ins
        ins.scalar = scalar
        _check_vector(&ins, b.length[1], b.length[self.s0], b.length[self.s1])
        _walk(&ins, b.ptr[1], b.ptr[self.s0], b.ptr[self.s1])

    def run_at(self, Buffers b, double scalar, int64_t off0, int64_t off1, int64_t off2):
        """Run with the operands' byte offsets given now (validated by the caller)."""
        cdef fi_tik_instr ins = self.ins
        ins.scalar = scalar
        ins.off[0] = off0
        ins.off[1] = off1
        ins.off[2] = off2
        _check_vector(&ins, b.length[1], b.length[self.s0], b.length[self.s1])
        _walk(&ins, b.ptr[1], b.ptr[self.s0], b.ptr[self.s1])


def reduce_arg(const int64_t[::1] params, uint8_t[::1] dbuf, const uint8_t[::1] sbuf):
    """vcmax/vcmin: per repeat, the [value, lane index] pair of src's active lanes."""
    cdef fi_tik_instr ins
    if params.shape[0] != FI_TIK_NPARAM:
        raise ConstraintError("tik reduce kernel: bad parameter block length")
    memcpy(&ins, &params[0], FI_TIK_NPARAM * sizeof(int64_t))
    ins.scalar = 0.0
    cdef int rc = fi_tik_check_reduce(&ins, dbuf.shape[0], sbuf.shape[0], 1)
    if rc != FI_TIK_OK:
        _raise(rc, "reduce")
    if ins.nrep <= 0:
        return
    with nogil:
        fi_tik_reduce_arg(&ins, &dbuf[0], &sbuf[0])
