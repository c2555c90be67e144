"""Every ```python snippet in the README runs as written."""

import pathlib
import re

import pytest

README = pathlib.Path(__file__).resolve().parent.parent / "README.md"


def _snippets():
    if not README.exists():  # tests run from an installed package without the source tree
        return []
    text = README.read_text()
    return re.findall(r"```python\n(.*?)```", text, flags=re.S)


@pytest.mark.parametrize("code", _snippets() or [pytest.param("", marks=pytest.mark.skip(
    reason="README.md not found"))])
def test_readme_snippet_runs(code, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # snippets that write files (traces) write them here
    exec(compile(code, "README.md", "exec"), {"__name__": "readme"})
