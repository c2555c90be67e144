"""docs/ reference pages match the docstrings; README and docstrings cite public sources.

After adding or changing an instruction: ``python -m fastisa._docgen`` (rewrites docs/);
after writing "spec 00N" or "reference/x.md": ``python -m fastisa._docgen --fix-refs``."""

import os

import pytest

from fastisa import _docgen

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


@pytest.mark.parametrize("frontend", sorted(_docgen.FRONTENDS))
def test_reference_page_matches_the_docstrings(frontend):
    path = os.path.join(ROOT, "docs", f"{frontend}.md")
    with open(path, encoding="utf-8") as f:
        page = f.read()
    assert page == _docgen.generate(frontend), (
        f"docs/{frontend}.md is out of date: run python -m fastisa._docgen")


@pytest.mark.parametrize("path", sorted(_docgen.STUBS))
def test_type_stubs_match_the_modules(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as f:
        assert f.read() == _docgen.generate_stub(_docgen.STUBS[path]), (
            f"{path} is out of date: run python -m fastisa._docgen")


def test_pages_list_known_instructions_with_formula_and_status():
    nki, tik, pto = (_docgen.generate(f) for f in ("nki", "tik", "pto"))
    assert "| `nki.isa.topk` |" in nki and "| `Tik.vec_adds` |" in tik
    assert "| `pto.TRECIP` |" in pto and "| implemented |" in pto
    for page in (nki, tik, pto):
        assert not _docgen.internal_refs(page)


def test_readme_and_docstrings_cite_public_sources():
    files = [f for f in _docgen._doc_files() if os.path.exists(f)]
    if not any(f.endswith("README.md") for f in files):
        pytest.skip("not a source checkout")
    left = []
    for f in files:
        with open(f, encoding="utf-8") as fh:
            for ref in _docgen.internal_refs(fh.read()):
                left.append(f"{os.path.relpath(f, ROOT)}: {ref}")
    assert not left, "run python -m fastisa._docgen --fix-refs:\n" + "\n".join(left)


def test_fix_refs_maps_every_form():
    text = ("see spec 002 and reference/tik.md §1.7; specs 003 and 004; `reference/pto.md` "
            "section 8; spec 000 \"Type Casting\"; reference/numerics.md 2.4")
    fixed = _docgen.fix_refs(text)
    assert not _docgen.internal_refs(fixed), fixed
    assert "hw-native-sys/pto-isa" in fixed and "caffe-huawei-atlas-convertor" in fixed
    assert "§1.7" not in fixed and '"Type Casting"' in fixed
