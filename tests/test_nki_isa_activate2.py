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


IDENTITY = {"add": 0.0, "maximum": -np.inf, "minimum": np.inf, "abs_max": 0.0,
            "abs_min": np.inf}


@pytest.mark.parametrize("red", list(IDENTITY))
def test_activate2_accumulator(red, rng):
    x = T(rng.standard_normal((32, 40)).astype(np.float32), "float32")
    x.data[3, 5] = np.nan                           # a NaN in one lane
    x.data[4, :] = 0.0                              # signed zeros: -0 from the subtraction
    x.data[5, 7] = -x.data[5, 6]                    # a magnitude tie
    d = empty((32, 40), "float32")
    res = empty((32, 1), "float32")
    regs = np.full(32, IDENTITY[red], np.float32)
    nisa.activate2(d, nl.tanh, x, 0.5, None, nl.multiply, None, reduce_op=getattr(nl, red),
                   reduce_cmd=nisa.reduce_cmd.reset_reduce)
    want = ref.nki_isa_activate2("tanh", x.data, "float32", "float32", 0.5, None, "multiply",
                                 None, reduce_op=red, acc=regs)
    nisa.activate2(d, nl.tanh, x, 0.5, None, nl.subtract, None, reduce_op=getattr(nl, red),
                   reduce_cmd=nisa.reduce_cmd.reduce, reduce_res=res)
    want = ref.nki_isa_activate2("tanh", x.data, "float32", "float32", 0.5, None, "subtract",
                                 None, reduce_op=red, acc=regs)
    assert_bits(d.data, want)
    assert_bits(res.data.reshape(32), regs)


@pytest.mark.parametrize("red", list(IDENTITY))
def test_activate2_reset_loads_the_identity(red, rng):
    x = T(rng.standard_normal((8, 16)).astype(np.float32), "float32")
    res = empty((8, 1), "float32")
    nisa.activate2(empty((8, 16), "float32"), nl.exp, x, 1.0, None, nl.multiply, None,
                   reduce_op=getattr(nl, red), reduce_cmd=nisa.reduce_cmd.reset,
                   reduce_res=res)
    assert_bits(res.data.reshape(8), np.full(8, IDENTITY[red], np.float32))


@pytest.mark.parametrize("fmt", ["float32", "bfloat16"])
@pytest.mark.parametrize("dst_fmt", ["float32", "bfloat16"])
def test_activate2_relu_param_per_partition(fmt, dst_fmt, rng):
    x = T((rng.standard_normal((64, 33)) * 3).astype(np.float32), "float32")
    slopes = T(rng.standard_normal((64, 1)).astype(np.float32), fmt)
    d = empty((64, 33), dst_fmt)
    regs = np.zeros(64, np.float32)
    res = empty((64, 1), "float32")
    nisa.activate2(d, nl.prelu, x, 2.0, -0.5, nl.multiply, nl.add, relu_param=slopes,
                   reduce_op=nl.add, reduce_cmd=nisa.reduce_cmd.reset_reduce, reduce_res=res)
    want = ref.nki_isa_activate2("prelu", x.data, "float32", dst_fmt, 2.0, -0.5, "multiply",
                                 "add", ref.nki_to_f32(slopes.data, fmt).reshape(64),
                                 reduce_op="add", acc=regs)
    assert_bits(d.data, want)
    assert_bits(res.data.reshape(64), regs)
    one = empty((64, 33), dst_fmt)                  # a uniform tensor = the scalar slope
    nisa.activate2(one, nl.prelu, x, 2.0, -0.5, nl.multiply, nl.add,
                   relu_param=T(np.full((64, 1), 0.25, np.float32), "float32"))
    scalar = empty((64, 33), dst_fmt)
    nisa.activate2(scalar, nl.prelu, x, 2.0, -0.5, nl.multiply, nl.add, relu_param=0.25)
    assert_bits(one.data, scalar.data)


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
    with pytest.raises(ConstraintError, match=r"relu_param must be a scalar or a \[4, 1\]"):
        nisa.activate2(d, nl.prelu, x, 1.0, 1.0, nl.add, None,
                       relu_param=T(np.ones((2, 1), np.float32), "float32"))
    with pytest.raises(ConstraintError, match="relu_param must be a float32 scalar"):
        nisa.activate2(d, nl.prelu, x, 1.0, 1.0, nl.add, None, relu_param="0.1")
    before = d.data.copy()
    with nl.use_target("trn2"):
        with pytest.raises(ConstraintError, match="trn3"):
            nisa.activate2(d, nl.exp, x, 1.0, 1.0, nl.add, None)
    assert np.array_equal(d.data, before)          # a call that raises changes nothing
