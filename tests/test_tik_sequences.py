"""Random TIK programs (sequences of vector instructions on three UB tensors, including
in-place ones) against the oracle applied instruction by instruction: the simulator is a
state machine, and later instructions must see earlier ones' writes."""
from __future__ import annotations

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import errors
from tik_helpers import run_program, same_bits

N = 2048
OPS = ["vadds", "vmuls", "vadd", "vmul", "vmax", "vector_dup", "vexp", "vabs"]


@st.composite
def instruction(draw):
    op = draw(st.sampled_from(OPS))
    nsrc = {"vector_dup": 0, "vadd": 2, "vmul": 2, "vmax": 2}.get(op, 1)
    dst = draw(st.integers(0, 2))
    srcs = [draw(st.integers(0, 2)) for _ in range(nsrc)]
    if draw(st.booleans()):
        mask = draw(st.integers(1, 128))
    else:
        mask = [draw(st.integers(0, 2**64 - 1)), draw(st.integers(1, 2**64 - 1))]
    nrep = draw(st.integers(1, 4))
    blk = draw(st.integers(0, 3))
    rep = draw(st.sampled_from([0, 2, 8, 12]))
    start = 16 * draw(st.integers(0, 2))
    scalar = draw(st.sampled_from([0.5, -2.0, 3.25, 1000.0]))
    return op, dst, srcs, mask, nrep, blk, rep, start, scalar


@settings(max_examples=40, deadline=None)
@given(prog=st.lists(instruction(), min_size=1, max_size=8), seed=st.integers(0, 2**32 - 1))
def test_random_programs_match_oracle(prog, seed):
    rng = np.random.default_rng(seed)
    init = [(rng.standard_normal(N) * 4).astype(np.float16) for _ in range(3)]
    accepted = []

    def body(tk, ub):
        for ins in prog:
            op, dst, srcs, mask, nrep, blk, rep, start, scalar = ins
            # every operand uses the same start and strides: sources equal to dst are
            # then either 100 % overlapping (allowed) or rejected by the overlap rules
            d = ub[dst][start]
            s = [ub[k][start] for k in srcs]
            try:
                if op == "vector_dup":
                    tk.vector_dup(mask, d, scalar, nrep, blk, rep)
                elif op in ("vadds", "vmuls"):
                    getattr(tk, op)(mask, d, s[0], scalar, nrep, blk, blk, rep, rep)
                elif len(s) == 2:
                    getattr(tk, op)(mask, d, s[0], s[1], nrep, blk, blk, blk, rep, rep, rep)
                else:
                    getattr(tk, op)(mask, d, s[0], nrep, blk, blk, rep, rep)
            except (errors.OverlapError, NotImplementedError):
                continue  # rejected when recorded: not part of the program
            accepted.append(ins)

    got = run_program("Ascend910", init, body, out_index="all")
    state = [a.copy() for a in init]
    for op, dst, srcs, mask, nrep, blk, rep, start, scalar in accepted:
        k = 1 + len(srcs)
        state[dst] = ref.tik_vector(op, state[dst], start, [state[i] for i in srcs],
                                    [start] * len(srcs), scalar=np.float16(scalar),
                                    mask=mask, nrep=nrep, blks=[blk] * k, reps=[rep] * k,
                                    sat=True, src_is_dst=[i == dst for i in srcs])
    for g, w in zip(got, state):
        assert same_bits(g, w)
