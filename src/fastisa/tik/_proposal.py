"""TIK region-proposal instructions: the field moves vconcat (16 values into one field of
16 proposals per repeat) and vextract (one field of 16 proposals out into 16 values per
repeat), and the proposal sorts vrpsort16 (16 proposals by score per repeat) and
vmrgsort4 (merge up to four score-sorted proposal lists).

A region proposal is 8 consecutive elements; field ``mode_number`` is 0 x1, 1 y1, 2 x2,
3 y2, 4 score, 5 label.  Repeat r, k < 16 (CANN TIK API reference vconcat/vextract; the
2020 TIK source caffe-huawei-atlas-convertor ``convertor/huawei/te/tik/tik_lib/
tik_proposal_api_.py``: src/dst extents ``repeat_times*16`` values and
``repeat_times*16*8`` proposal elements, both contiguous):

    vconcat:  dst[(16*r + k)*8 + mode_number] = src[16*r + k]
    vextract: dst[16*r + k] = src[(16*r + k)*8 + mode_number]

The other proposal fields keep their contents.  A bit copy of the elements (float16;
float32 not on Ascend 310/910).  The whole source is read before anything is written.
The copy is one strided numpy assignment over the UB bytes (no per-element Python loop).

The sorts (CANN TIK API reference vrpsort16/vmrgsort4, the Ascend C RpSort16/MrgSort4
pages, hiascend.com; the 2020 TIK source ``tik_proposal_api_.py`` and its debugger
``debug/object_detect.py`` VBS16/VMS4 for the checks) order whole 8-element proposals by
field 4 (score), largest first; equal scores keep their input order (the docs: "if the
score values of proposal[i] and proposal[j] are the same and i > j, proposal[j] is selected
first"; for vmrgsort4 list k's proposals before list k+1's).  -0 and +0 are equal.  NaN
scores are not documented: fastisa orders them after every number.  vmrgsort4 is a merge
(the largest head first), which for unsorted lists is not a sort.  One numpy stable
argsort and gather per instruction (per repeat for vmrgsort4).
"""

from __future__ import annotations

import numpy as np

from .. import cost
from ..errors import AccessError, AlignmentError, ConstraintError, OverlapError
from . import _program as P
from ._base import VECTOR_ISSUE_CYCLES, _check_int, _check_repeat, _is_dyn, _Operand
from ._program import Expr, scope_ubuf

import typing as _typing

if _typing.TYPE_CHECKING:
    from collections.abc import Sequence

    from .._types import Int
    from ._annot import IntArg, Operand

__all__ = ["ProposalMixin"]

_UT = {2: np.uint16, 4: np.uint32}
_FT = {2: np.float16, 4: np.float32}
#: vmrgsort4 valid_bit values (TIK VALID_BIT_TUPLE / _V200): lists 0..k-1 valid
_VALID_V100 = (3, 7, 15)
_VALID_V200 = (1, 3, 7, 15)


def _ival(v, env):
    return int(v.fn(env) if isinstance(v, Expr) else v)


class _FieldMove:
    def __init__(self, tik, name, dst, src, repeat_times, mode_number):
        self.name = name
        for pn, x in (("dst", dst), ("src", src), ("repeat_times", repeat_times),
                      ("mode_number", mode_number)):
            P.check_owner(tik, name, pn, x)
        self.d, self.s = _Operand(name, "dst", dst), _Operand(name, "src", src)
        for o in (self.d, self.s):
            if o.t.scope != scope_ubuf:
                raise ConstraintError(f"{name}: {o.role}'s scope must be UB, input scope: "
                                      f"{o.t.scope}")
        if self.d.t.dtype != self.s.t.dtype:
            raise ConstraintError(f"{name}: Intrinsic {name}'s src's dtype should be equal to "
                                  f"dst's dtype, input: {self.s.t.dtype} vs {self.d.t.dtype}")
        tg = tik.target
        if not tg.supports(name, self.d.t.dtype):
            raise ConstraintError(f"{name}: dtype {self.d.t.dtype} is not supported on "
                                  f"{tg.name} (supported: {list(tg.dtypes.get(name, ()))})")
        _check_repeat(name, repeat_times)
        _check_int(name, "mode_number", mode_number, 0, 5)
        self.args = (repeat_times, mode_number)
        self.concat = name == "vconcat"
        self.dyn = any(_is_dyn(a) for a in self.args) or self.d.off is None or \
            self.s.off is None
        self._v = None if self.dyn else self._resolve(None)

    def _resolve(self, env):
        name = self.name
        nrep, mode = (_ival(a, env) for a in self.args)
        if not 0 <= nrep <= 255:
            raise ConstraintError(f"{name}: repeat_times should be in the range of [0, 255], "
                                  f"input repeat_times: {nrep}")
        if not 0 <= mode <= 5:
            raise ConstraintError(f"{name}: mode_number should be in the range of [0, 5], "
                                  f"input value is {mode}")
        n = nrep * 16
        out = []
        for o, need in ((self.d, n * 8 if self.concat else n),
                        (self.s, n if self.concat else n * 8)):
            st = o.off if o.off is not None else int(o.off_fn(env))
            if st < 0:
                raise AccessError(f"{name}: {o.role} start element must be >= 0, got {st}")
            addr = o.t.byte_off + st * o.es
            if addr % 32:
                raise AlignmentError(f"{name}: Address align error! {o.role} ({o.t.name}[{st}])"
                                     f" address {addr} is not 32 align")
            if st + need > o.t.size:
                raise AccessError(f"{name}: `{o.t.name}` tensor overflow, instruction need "
                                  f"{'write' if o is self.d else 'read'} {st + need} elements "
                                  f"but only {o.t.size} elements space")
            out.append(addr)
        return out[0], out[1], n, mode

    def run(self, st):
        v = self._v if self._v is not None else self._resolve(st.env)
        da, sa, n, mode = v
        if n == 0:
            return
        es = self.d.es
        ub = st.bufs[1]
        ut = _UT[es]
        if self.concat:
            src = ub[sa:sa + n * es].view(ut).copy()
            ub[da:da + n * 8 * es].view(ut)[mode::8] = src
        else:
            src = ub[sa:sa + n * 8 * es].view(ut)[mode::8].copy()
            ub[da:da + n * es].view(ut)[:] = src
        if cost._ACTIVE.get():
            cost.record("Vector", self.name, VECTOR_ISSUE_CYCLES + n // 16)


def _check_dtype(tik, name, *ops):
    for o in ops:
        if o.t.scope != scope_ubuf:
            raise ConstraintError(f"{name}: {o.role}'s scope must be UB, input scope: "
                                  f"{o.t.scope}")
    d = ops[0]
    for o in ops[1:]:
        if o.t.dtype != d.t.dtype:
            raise ConstraintError(f"{name}: Intrinsic {name}'s src's dtype should be equal to "
                                  f"dst's dtype, input: {o.t.dtype} vs {d.t.dtype}")
    tg = tik.target
    if not tg.supports(name, d.t.dtype):
        raise ConstraintError(f"{name}: dtype {d.t.dtype} is not supported on {tg.name} "
                              f"(supported: {list(tg.dtypes.get(name, ()))})")


def _addr(name, o, env, need, align, write):
    """Byte address of operand ``o`` (start checked >= 0, aligned, ``need`` elements in)."""
    st = o.off if o.off is not None else int(o.off_fn(env))
    if st < 0:
        raise AccessError(f"{name}: {o.role} start element must be >= 0, got {st}")
    addr = o.t.byte_off + st * o.es
    if addr % align:
        raise AlignmentError(f"{name}: Address align error! {o.role} ({o.t.name}[{st}]) "
                             f"address {addr} is not {align} align")
    if st + need > o.t.size:
        raise AccessError(f"{name}: `{o.t.name}` tensor overflow, instruction need "
                          f"{'write' if write else 'read'} {st + need} elements but only "
                          f"{o.t.size} elements space")
    return addr


def _key(scores):
    """Order-preserving integer keys of float scores: -0 == +0, NaN below every number."""
    es = scores.dtype.itemsize
    u = scores.view(_UT[es]).astype(np.int64)
    sign = np.int64(1) << (8 * es - 1)
    mag = u & (sign - 1)
    k = np.where(u & sign, -mag, mag)
    return np.where(np.isnan(scores), -sign - 1, k)


def _order(keys):
    """Stable descending order of integer ``keys`` (last axis)."""
    return np.argsort(-keys, axis=-1, kind="stable")


class _RpSort16:
    """vrpsort16: per repeat, 16 proposals sorted by score."""

    name = "vrpsort16"

    def __init__(self, tik, dst, src, repeat_times):
        name = self.name
        for pn, x in (("dst", dst), ("src", src), ("repeat_times", repeat_times)):
            P.check_owner(tik, name, pn, x)
        self.d, self.s = _Operand(name, "dst", dst), _Operand(name, "src", src)
        _check_dtype(tik, name, self.d, self.s)
        _check_repeat(name, repeat_times)
        self.nrep = repeat_times
        self.dyn = _is_dyn(repeat_times) or self.d.off is None or self.s.off is None
        self._v = None if self.dyn else self._resolve(None)

    def _resolve(self, env):
        name = self.name
        nrep = _ival(self.nrep, env)
        if not 0 <= nrep <= 255:
            raise ConstraintError(f"{name}: repeat_times should be in the range of [0, 255], "
                                  f"input value is {nrep}")
        n = nrep * 16 * 8
        da = _addr(name, self.d, env, n, 32, True)
        sa = _addr(name, self.s, env, n, 32, False)
        return da, sa, nrep

    def run(self, st):
        da, sa, nrep = self._v if self._v is not None else self._resolve(st.env)
        if nrep == 0:
            return
        es = self.d.es
        ub = st.bufs[1]
        n = nrep * 128 * es
        props = ub[sa:sa + n].view(_UT[es]).reshape(nrep, 16, 8)
        order = _order(_key(props[:, :, 4].view(_FT[es])))
        out = np.take_along_axis(props, order[:, :, None], axis=1)   # a copy: src may be dst
        ub[da:da + n].view(_UT[es])[:] = out.reshape(-1)
        if cost._ACTIVE.get():
            cost.record("Vector", self.name, VECTOR_ISSUE_CYCLES + nrep)


class _MrgSort4:
    """vmrgsort4: merge up to four score-sorted proposal lists into dst."""

    name = "vmrgsort4"

    def __init__(self, tik, dst, src_list, counts, suspend, valid_bit, repeat_times, sr):
        name = self.name
        if not isinstance(src_list, (list, tuple)):
            raise ConstraintError(f"{name}: src_list should be list or tuple, input type of "
                                  f"src_list: {type(src_list)}")
        if len(src_list) != 4:
            raise ConstraintError(f"{name}: the length of src_list should be 4, length of "
                                  f"input src_list: {len(src_list)}.")
        if isinstance(counts, (list, tuple)):
            if len(counts) != 4:
                raise ConstraintError(f"{name}: length of input element_count_list(length: "
                                      f"{len(counts)}) should be equal to length of "
                                      f"src_list(length: 4)")
            counts = list(counts)
        else:
            counts = [counts] * 4
        if not isinstance(suspend, bool):
            raise ConstraintError(f"{name}: if_exhausted_suspension should be bool, input type "
                                  f"of if_exhausted_suspension: {type(suspend)}")
        if sr is not None:
            raise NotImplementedError(f"{name}: vms4_sr_scalar_array (reading the VMS4_SR "
                                      f"counts into Scalars) is not implemented by fastisa")
        for pn, x in [("dst", dst), ("valid_bit", valid_bit), ("repeat_times", repeat_times)] \
                + [(f"src_list[{i}]", x) for i, x in enumerate(src_list)] \
                + [(f"element_count_list[{i}]", c) for i, c in enumerate(counts)]:
            P.check_owner(tik, name, pn, x)
        self.d = _Operand(name, "dst", dst)
        self.s = [_Operand(name, f"src_list[{i}]", x) for i, x in enumerate(src_list)]
        _check_dtype(tik, name, self.d, *self.s)
        for i, c in enumerate(counts):
            _check_int(name, f"element_count_list[{i}]", c, 0, 4095)
        if isinstance(valid_bit, str):
            try:
                valid_bit = int(valid_bit, 2)
            except ValueError:
                raise ConstraintError(f"{name}: valid_bit should be a binary string such as "
                                      f"'1111', got {valid_bit!r}") from None
        _check_int(name, "valid_bit", valid_bit, 0, 15)
        _check_int(name, "repeat_times", repeat_times, 1, 255)
        self.v200 = tik.target.family not in ("v100", "v100mini")
        self.suspend = suspend
        self.counts, self.valid, self.nrep = counts, valid_bit, repeat_times
        self.dyn = any(_is_dyn(a) for a in counts + [valid_bit, repeat_times]) or \
            any(o.off is None for o in [self.d] + self.s)
        self._v = None if self.dyn else self._resolve(None)

    def _resolve(self, env):
        name = self.name
        counts = [_ival(c, env) for c in self.counts]
        valid, nrep = _ival(self.valid, env), _ival(self.nrep, env)
        ok = _VALID_V200 if self.v200 else _VALID_V100
        if valid not in ok:
            raise ConstraintError(f"{name}: valid bits only support "
                                  f"{', '.join(format(v, '04b') for v in reversed(ok))} "
                                  f"// binary, input valid bits: {valid} // decimal")
        for i, c in enumerate(counts):
            if not 0 <= c <= 4095:
                raise ConstraintError(f"{name}: element_count[{i}] should be in the range of "
                                      f"[0, 4095], input value is {c}")
        if not 1 <= nrep <= 255:
            raise ConstraintError(f"{name}: repeat_times should be in the range of [1, 255], "
                                  f"input value is {nrep}")
        if nrep != 1 and (self.suspend or valid != 15 or len(set(counts)) != 1):
            raise ConstraintError(
                f"{name}: When input params cannot meet repeat criterions as follows: 1. "
                f"if_exhuasted_suspension == False, 2. valid_bit in decimal is 15, 3. elements "
                f"of element_count_list are equal to each other, repeat_times should be 1, "
                f"but input repeat_times: {nrep}")
        k = bin(valid).count("1")
        counts = counts[:k]
        total = sum(counts)
        stride = total * 8            # elements each repeat advances (all four lists)
        spans = []
        for o, c in zip(self.s[:k], counts):
            a = _addr(name, o, env, (c + (nrep - 1) * total) * 8, 16 if o.es == 2 else 32,
                      False)
            spans.append((a, c))
        da = _addr(name, self.d, env, (total + (nrep - 1) * total) * 8,
                   16 if self.d.es == 2 else 32, True)
        es = self.d.es
        d0, d1 = da, da + (total + (nrep - 1) * total) * 8 * es
        for (a, c), o in zip(spans, self.s):
            s1 = a + (c + (nrep - 1) * total) * 8 * es
            if c and a < d1 and d0 < s1:
                raise OverlapError(f"{name}: dst and {o.role} address overlapping error: "
                                   f"source and destination may not overlap")
        return da, spans, nrep, stride

    def run(self, st):
        da, spans, nrep, stride = self._v if self._v is not None else self._resolve(st.env)
        es = self.d.es
        ut, ft = _UT[es], _FT[es]
        ub = st.bufs[1]
        for r in range(nrep):      # repeats (<= 255), each one numpy merge
            off = r * stride * es
            lists = [ub[a + off:a + off + c * 8 * es].view(ut).reshape(c, 8)
                     for a, c in spans]
            allp = np.concatenate(lists)
            # the merge takes the head with the largest score (the lowest list on ties);
            # a proposal leaves only after those before it in its list, so its key is
            # the running minimum of its list's keys: then the merge is one stable sort
            # of the concatenated lists (equal to a merge for sorted lists, and to the
            # head-comparison merge for unsorted ones)
            keys = np.concatenate([np.minimum.accumulate(_key(x[:, 4].view(ft)))
                                   for x in lists if len(x)] or [np.zeros(0, np.int64)])
            order = _order(keys)
            merged = allp[order]
            if self.suspend:
                # stop after the last proposal of the first (non-empty) list to run out
                src_id = np.repeat(np.arange(len(spans)), [c for _, c in spans])[order]
                ends = [np.flatnonzero(src_id == i)[-1] for i, (_, c) in enumerate(spans)
                        if c]
                merged = merged[:min(ends) + 1] if ends else merged
            ub[da + off:da + off + merged.size * es].view(ut)[:] = merged.reshape(-1)
        if cost._ACTIVE.get():
            cost.record("Vector", self.name, VECTOR_ISSUE_CYCLES + nrep * max(
                1, sum(c for _, c in spans) // 16))


class ProposalMixin:
    """vconcat / vextract / vrpsort16 / vmrgsort4, mixed into :class:`fastisa.tik.Tik`."""

    def vrpsort16(self, dst: Operand, src: Operand, repeat_times: IntArg) -> None:
        """Per repeat r: the 16 proposals ``src[(16r + k)*8 : (16r + k + 1)*8]``, k < 16,
        sorted by score (field 4) largest first, into ``dst[16r*8 : (16r + 16)*8]``.
        Equal scores keep their input order; NaN scores go after every number (not
        documented).  dst/src: UB, one dtype (float16 on Ascend 310/910; float16, float32
        on Ascend 310P/610), 32-byte aligned, ``repeat_times*128`` elements each; dst may be
        src (the whole repeat is read first).  repeat_times [1, 255] (a Scalar [0, 255]).
        Raises ConstraintError, AccessError, AlignmentError.  (CANN TIK API reference
        vrpsort16; Ascend C RpSort16, hiascend.com.)"""
        self._record(_RpSort16(self, dst, src, repeat_times))

    def vmrgsort4(self, dst: Operand, src_list: Sequence[Operand],
                  element_count_list: IntArg | Sequence[IntArg], if_exhausted_suspension: bool,
                  valid_bit: str | Int, repeat_times: IntArg = 1,
                  vms4_sr_scalar_array: object = None) -> None:
        """Merge the score-sorted proposal lists ``src_list[i]`` (``element_count_list[i]``
        proposals of 8 elements each; lists 0..k-1 with valid_bit '0011' (k=2), '0111' (3),
        '1111' (4), or '0001' (1) off Ascend 310/910) into dst, scores largest first;
        equal scores keep list order, then position (a merge: it takes the largest head).
        With ``if_exhausted_suspension`` the merge stops once a non-empty list runs out
        (dst holds the proposals output up to and including that list's last; an empty
        list does not stop it -- not documented).  ``repeat_times`` > 1 (only with every list valid,
        equal counts, no suspension): repeat r reads every list and writes dst
        ``r*sum(counts)*8`` elements further on.  dst/src: UB, one dtype (float16; float32
        on Ascend 310P/610), 16-byte (float16) / 32-byte (float32) aligned; src and dst
        may not overlap.  element counts [0, 4095].  Returns None
        (``vms4_sr_scalar_array`` raises NotImplementedError).  Raises ConstraintError,
        AccessError, AlignmentError, OverlapError.  (CANN TIK API reference vmrgsort4;
        Ascend C MrgSort4, hiascend.com; checks as the 2020 TIK source
        tik_proposal_api_.py and common_util.check_vms4_repeat_times.)"""
        self._record(_MrgSort4(self, dst, src_list, element_count_list,
                               if_exhausted_suspension, valid_bit, repeat_times,
                               vms4_sr_scalar_array))

    def vconcat(self, dst: Operand, src: Operand, repeat_times: IntArg,
                mode_number: IntArg) -> None:
        """``dst[(16r + k)*8 + mode_number] = src[16r + k]`` for k < 16 of every repeat r.

        Writes field mode_number (0 x1, 1 y1, 2 x2, 3 y2, 4 score, 5 label) of 16
        proposals; the other fields keep their contents; a bit copy.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), src's dtype, repeat_times*128
            elements (8 per proposal).
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 (float32 too except on
            Ascend 310/910), repeat_times*16 elements.
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        mode_number -- [0, 5], the field.

        Raises ConstraintError, AccessError, AlignmentError.  Source: CANN TIK API
        reference, vconcat; TIK 2020 source ``tik_lib/tik_proposal_api_.py`` (vconcat),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._record(_FieldMove(self, "vconcat", dst, src, repeat_times, mode_number))

    def vextract(self, dst: Operand, src: Operand, repeat_times: IntArg,
                 mode_number: IntArg) -> None:
        """``dst[16r + k] = src[(16r + k)*8 + mode_number]`` for k < 16 of every repeat r.

        The inverse of vconcat: field mode_number (0 x1, 1 y1, 2 x2, 3 y2, 4 score, 5
        label) of 16 proposals out into 16 consecutive values; a bit copy; the whole source
        is read before anything is written.

        dst -- UB Tensor or ``t[i]`` start (32-byte aligned), src's dtype, repeat_times*16
            elements.
        src -- UB Tensor or ``t[i]`` start (32-byte aligned), float16 (float32 too except on
            Ascend 310/910), repeat_times*128 elements (8 per proposal).
        repeat_times -- [1, 255]; a Scalar in [0, 255] at run time.
        mode_number -- [0, 5], the field.

        Raises ConstraintError, AccessError, AlignmentError.  Source: CANN TIK API
        reference, vextract; TIK 2020 source ``tik_lib/tik_proposal_api_.py`` (vextract),
        github.com/jizhuoran/caffe-huawei-atlas-convertor convertor/huawei/te/tik/.
        """
        self._record(_FieldMove(self, "vextract", dst, src, repeat_times, mode_number))
