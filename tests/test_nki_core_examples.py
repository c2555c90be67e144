"""The bundled NKI top-k examples run and match their numpy checks."""

import pytest

from fastisa import examples


@pytest.mark.parametrize("name", ["nki_topk_sorted", "nki_topk_vocab"])
@pytest.mark.parametrize("seed", [0, 1])
def test_example_matches(name, seed):
    rep = examples.run(name, seed=seed)
    assert rep.checks and rep.matches, rep.format()


def test_spec_example_cost_is_4n_plus_k():
    rep = examples.run("nki_topk_sorted")
    assert rep.cycles["GpSimd"] == 4 * 42 + 8


def test_examples_are_listed_first():
    names = examples.names()
    assert names.index("nki_topk_sorted") < names.index("nki_topk_vocab")
