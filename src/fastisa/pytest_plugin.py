"""fastisa's pytest plugin (registered through the ``pytest11`` entry point, so it is
active wherever fastisa is installed; ``-p no:fastisa`` turns it off).

Fixtures (each undoes what it did when the test ends, however it ends):

* ``fastisa_shim`` -- installs :mod:`fastisa.shim` for the test: ``import nki``,
  ``import nki.isa``, ``import nki.language``, ``from tbe import tik`` and
  ``from te import tik`` resolve to fastisa; the previous import state comes back after.
* ``tik_target`` -- the test runs inside ``with tik.target(name)``; yields the
  ``Target`` (default ``"Ascend910"``).
* ``pto_target`` -- inside ``with pto.target(name)``; yields ``"A2A3"`` (default) or
  ``"A5"``.
* ``nki_target`` -- inside ``with nki.target(name)``: ``nki.simulate`` runs without
  ``target=`` use it; yields the name (default ``"trn2"``).

Markers parametrise a test over targets (one test item per target, the matching fixture
set for each)::

    @pytest.mark.tik_targets("Ascend910", "Ascend910B")
    def test_adds(tik_target): ...           # test_adds[Ascend910], test_adds[Ascend910B]

    @pytest.mark.pto_targets("A2A3", "A5")
    @pytest.mark.nki_targets("trn2", "trn3")

A marked test gets the fixture even if it does not name it.  ``@pytest.mark.parametrize(
"tik_target", [...], indirect=True)`` works too.  ``tests/test_pytest_plugin.py`` in the
fastisa repository is a worked example.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

_DEFAULTS = {"tik_target": "Ascend910", "pto_target": "A2A3", "nki_target": "trn2"}
_MARKERS = {"tik_targets": "tik_target", "pto_targets": "pto_target",
            "nki_targets": "nki_target"}


def pytest_configure(config: pytest.Config) -> None:
    for marker, fixture in _MARKERS.items():
        front = fixture.split("_")[0]
        config.addinivalue_line(
            "markers", f"{marker}(*names): run the test once per {front.upper()} target, "
                       f"with the {fixture} fixture set (fastisa plugin)")


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    for marker, fixture in _MARKERS.items():
        names: list = []
        for m in metafunc.definition.iter_markers(marker):
            names.extend(m.args)
        if not names:
            continue
        if fixture not in metafunc.fixturenames:
            metafunc.fixturenames.append(fixture)
        metafunc.parametrize(fixture, names, indirect=True, ids=[str(n) for n in names])


@pytest.fixture(autouse=True)
def _fastisa_marked_targets(request: pytest.FixtureRequest) -> None:
    """A test marked ``*_targets`` gets its target fixture even when it does not name it."""
    node = getattr(request, "node", None)
    if node is None or not hasattr(node, "iter_markers"):
        return
    for marker, fixture in _MARKERS.items():
        if next(iter(node.iter_markers(marker)), None) is not None:
            request.getfixturevalue(fixture)


def _name(request: pytest.FixtureRequest, fixture: str) -> Any:
    return getattr(request, "param", _DEFAULTS[fixture])


@pytest.fixture
def fastisa_shim() -> Iterator[None]:
    """The vendor import names resolve to fastisa during the test (fastisa.shim)."""
    from fastisa import shim
    with shim.installed():
        yield


@pytest.fixture
def tik_target(request: pytest.FixtureRequest) -> Iterator[Any]:
    """``with tik.target(name)`` around the test; yields the Target."""
    from fastisa import tik
    with tik.target(_name(request, "tik_target")) as tg:
        yield tg


@pytest.fixture
def pto_target(request: pytest.FixtureRequest) -> Iterator[str]:
    """``with pto.target(name)`` around the test; yields the canonical name."""
    from fastisa import pto
    with pto.target(_name(request, "pto_target")) as name:
        yield name


@pytest.fixture
def nki_target(request: pytest.FixtureRequest) -> Iterator[str]:
    """``with nki.target(name)`` around the test; yields the target's name."""
    from fastisa import nki
    with nki.target(_name(request, "nki_target")) as name:
        yield name
