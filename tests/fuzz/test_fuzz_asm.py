"""PTO-AS fuzzer: mutations of real programs (the bundled softmax, a constants program)
-- spans deleted, lines duplicated or swapped, tokens replaced by hostile ones (hex floats,
huge literals, braces, types) -- must either raise a fastisa error (AsmSyntaxError with a
position, or ConstraintError) or parse into a module whose printed text parses back to
the same module and prints identically."""
from __future__ import annotations

import re

import numpy as np
import pytest

from fastisa import errors
from fastisa.examples import pto_softmax_asm
from fastisa.pto import asm

from conftest import SEED, Case, budgets

CONSTS = """func.func @c() {
  %a = arith.constant 0xFC00 : f16
  %b = arith.constant -65504.0 : f16
  %c = arith.constant 1.5e-7 : f32
  %d = arith.constant 0x7FC00000 : f32
  %e = arith.constant -128 : i8
  %f = arith.constant 4294967295 : i32
  %g = arith.constant true : i1
  %h = arith.constant 7 : index
  return
}
"""
SEEDS = [pto_softmax_asm.PTO_TEXT, CONSTS]
HOSTILE = ["0xFC00", "0xfc00", "-0x1", "0x", "1e999", "-0.0", "nan", "9" * 30, "9" * 500,
           "}", "{", "(", ")", ":", "%", "%x", "%0", "f16", "bf16", "i1", "index", "?",
           "scf.for", "arith.constant", "!pto.tile_buf<vec, 16x16xf32>", "16x16xf32",
           "0x16xf32", "//", "#", "\"", "...", "", " ", "\n"]
TOKEN = re.compile(r"%?[A-Za-z0-9_.$!#]+|\S")


def mutate(rng, text: str) -> str:
    for _ in range(int(rng.integers(1, 4))):
        lines = text.split("\n")
        kind = int(rng.integers(5))
        if kind == 0 and len(text) > 2:                         # delete a span
            i = int(rng.integers(len(text)))
            text = text[:i] + text[i + int(rng.integers(1, 12)):]
        elif kind == 1:                                         # duplicate a line
            i = int(rng.integers(len(lines)))
            lines.insert(i, lines[i])
            text = "\n".join(lines)
        elif kind == 2 and len(lines) > 1:                      # swap two lines
            i, j = rng.integers(len(lines), size=2)
            lines[i], lines[j] = lines[j], lines[i]
            text = "\n".join(lines)
        else:                                                   # replace a token
            toks = list(TOKEN.finditer(text))
            if toks:
                m = toks[int(rng.integers(len(toks)))]
                text = text[:m.start()] + str(rng.choice(HOSTILE)) + text[m.end():]
    return text


@pytest.mark.parametrize("calls", budgets(300, 100000))
def test_asm_mutation_round_trip(calls):
    parsed = 0
    for k in range(calls):
        rng = np.random.default_rng([SEED, 4, k])
        text = mutate(rng, SEEDS[k % len(SEEDS)])
        try:
            m = asm.parse(text)
        except errors.AsmSyntaxError as e:
            assert e.line >= 0 and str(e), Case("asm", k)
            continue
        except errors.FastisaError:
            continue
        except Exception as e:  # noqa: BLE001
            raise AssertionError(f"{Case('asm', k)}: {type(e).__name__}: {e}\n{text}") from None
        parsed += 1
        out = asm.format(m)
        try:
            m2 = asm.parse(out)
        except Exception as e:  # noqa: BLE001
            raise AssertionError(f"{Case('asm', k)}: printed text does not parse: {e}\n"
                                 f"{out}") from None
        assert m2 == m and asm.format(m2) == out, f"{Case('asm', k)}:\n{out}"
    assert parsed > 0
