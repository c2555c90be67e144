"""nki-isa family: activate2 (NeuronCore-v4) against reference.nki_isa_activate2, every
documented (op0, op1) combination, reversal, PReLU's relu_param, the add / maximum
accumulator, and the documented constraints as errors."""

import numpy as np
import pytest

import reference as ref
from fastisa.errors import ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from test_nki_compute import ALL, T, assert_bits, empty, random_values

COMBOS = [("multiply", "add"), ("multiply", "subtract"), ("multiply", None), ("add", None),
          ("subtract", None), (None, None)]
ACTS = ["exp", "gelu", "sigmoid", "prelu", "copy", "square", "tanh"]


def _op(name):
    return "bypass" if name is None else getattr(nl, name)


@pytest.fixture(autouse=True)
def _trn3():
    with nl.use_target("trn3"):
        yield


@pytest.mark.parametrize("combo", COMBOS)
@pytest.mark.parametrize("act", ACTS)
@pytest.mark.parametrize("rev", [(False, False), (True, True)])
def test_activate2_stages_then_activation(combo, act, rev, rng):
    op0, op1 = combo
    r0, r1 = (rev[0] and op0 is not None), (rev[1] and op1 is not None)
    x = T((rng.standard_normal((16, 48)) * 2).astype(np.float32), "float32")
    imm0 = T(rng.standard_normal((16, 1)).astype(np.float32), "float32")
    d = empty((16, 48), "bfloat16")
    nisa.activate2(dst=d, op=getattr(nl, act), data=x, imm0=imm0, imm1=0.75, op0=_op(op0),
                   op1=_op(op1), relu_param=0.125, reverse0=r0, reverse1=r1)
    want = ref.nki_isa_activate2(act, x.data, "float32", "bfloat16", imm0.data.reshape(16),
                                 0.75, op0, op1, 0.125, r0, r1)
    assert_bits(d.data, want)


@pytest.mark.parametrize("fmt", ALL)
def test_activate2_every_dtype(fmt, rng):
    x = T(random_values(rng, fmt, (8, 20)), fmt)
    d = empty((8, 20), fmt)
    nisa.activate2(d, nl.copy, x, 2.0, -1.0, nl.multiply, nl.add)
    want = ref.nki_isa_activate2("copy", x.data, fmt, fmt, 2.0, -1.0, "multiply", "add")
    assert_bits(d.data, want, nan_either=np.ones(want.shape, bool))


@pytest.mark.parametrize("red", ["add", "maximum"])
def test_activate2_accumulator(red, rng):
    x = T(rng.standard_normal((32, 40)).astype(np.float32), "float32")
    d = empty((32, 40), "float32")
    res = empty((32, 1), "float32")
    regs = np.zeros(32, np.float32) if red == "add" else np.full(32, -np.inf, np.float32)
    nisa.activate2(d, nl.exp, x, 0.5, None, nl.multiply, None, reduce_op=getattr(nl, red),
                   reduce_cmd=nisa.reduce_cmd.reset_reduce)
    want = ref.nki_isa_activate2("exp", x.data, "float32", "float32", 0.5, None, "multiply",
                                 None, reduce_op=red, acc=regs)
    nisa.activate2(d, nl.exp, x, 0.5, None, nl.subtract, None, reduce_op=getattr(nl, red),
                   reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=res)
    want = ref.nki_isa_activate2("exp", x.data, "float32", "float32", 0.5, None, "subtract",
                                 None, reduce_op=red, acc=regs)
    assert_bits(d.data, want)
    assert_bits(res.data.reshape(32), regs)


def test_activate2_errors(rng):
    x = T(rng.standard_normal((4, 8)).astype(np.float32), "float32")
    d = empty((4, 8), "float32")
    with pytest.raises(ConstraintError, match=r"\(op0, op1\) must be one of"):
        nisa.activate2(d, nl.exp, x, 1.0, 1.0, nl.add, nl.add)
    with pytest.raises(ConstraintError, match="op1 requires op0"):
        nisa.activate2(d, nl.exp, x, 1.0, 1.0, "bypass", nl.add)
    with pytest.raises(ConstraintError, match="reverse0 requires op0"):
        nisa.activate2(d, nl.exp, x, 1.0, 1.0, None, None, reverse0=True)
    with pytest.raises(ConstraintError, match="reverse1 requires op1"):
        nisa.activate2(d, nl.exp, x, 1.0, 1.0, nl.add, None, reverse1=True)
    with pytest.raises(ConstraintError, match="same dtype"):
        nisa.activate2(d, nl.exp, x, T(np.ones((4, 1), np.float32), "float32"),
                       T(np.ones((4, 1), np.float16), "float16"), nl.multiply, nl.add)
    with pytest.raises(ConstraintError, match="reduce_op"):
        nisa.activate2(d, nl.exp, x, 1.0, 1.0, nl.add, None, reduce_op=nl.multiply)
    with pytest.raises(NotImplementedError, match="abs_max"):
        nisa.activate2(d, nl.exp, x, 1.0, 1.0, nl.add, None, reduce_op=nl.abs_max)
    with pytest.raises(NotImplementedError, match="relu_param"):
        nisa.activate2(d, nl.prelu, x, 1.0, 1.0, nl.add, None,
                       relu_param=T(np.ones((4, 1), np.float32), "float32"))
    before = d.data.copy()
    with nl.use_target("trn2"):
        with pytest.raises(ConstraintError, match="trn3"):
            nisa.activate2(d, nl.exp, x, 1.0, 1.0, nl.add, None)
    assert np.array_equal(d.data, before)          # a call that raises changes nothing
