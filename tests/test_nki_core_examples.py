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


def test_readme_nki_snippet_runs():
    import pathlib
    import re
    readme = pathlib.Path(__file__).resolve().parent.parent / "README.md"
    if not readme.exists():
        pytest.skip("README.md not found (installed package)")
    text = readme.read_text().split("<!-- section: nki -->", 1)[1]
    text = text.split("<!-- end section: nki -->")[0]
    snippets = re.findall(r"```python\n(.*?)```", text, flags=re.S)
    assert snippets
    from fastisa import shim
    was_installed = shim.is_installed()
    try:
        for code in snippets:
            exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
    finally:
        if not was_installed:
            shim.uninstall()
