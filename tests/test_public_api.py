"""Public modules list their API in __all__ and dir() shows only it (issue 16)."""

import importlib
import types

import pytest

PUBLIC = ["fastisa", "fastisa.nki", "fastisa.nki.isa", "fastisa.nki.language", "fastisa.tik",
          "fastisa.pto", "fastisa.dtypes", "fastisa.cost", "fastisa.shim", "fastisa.testing",
          "fastisa.numerics"]


@pytest.mark.parametrize("name", PUBLIC)
def test_all_resolves_and_dir_has_no_internals(name):
    mod = importlib.import_module(name)
    assert mod.__all__, name
    missing = [n for n in mod.__all__ if not hasattr(mod, n)]
    assert not missing, missing
    shown = dir(mod)
    for internal in ("np", "os", "math", "importlib", "contextlib", "annotations", "dataclass"):
        assert internal not in shown, (name, internal)
    assert not [n for n in mod.__all__ if isinstance(getattr(mod, n), types.ModuleType)
                and n not in ("isa", "language", "platform", "dtypes", "errors", "nki", "tik",
                              "pto", "shim", "cost")]


def test_nl_and_nisa_list_every_instruction():
    from fastisa.nki import isa as nisa, language as nl
    for n in ("ndarray", "sbuf", "bfloat16", "add", "exp", "program_id", "tile_size"):
        assert n in nl.__all__ and n in dir(nl)
    for n in ("dma_copy", "topk", "tensor_scalar", "activation", "nc_matmul"):
        assert n in nisa.__all__
    assert not [n for n in nisa.__all__ if n.startswith("require_")]


def test_lazy_front_ends_in_dir_fastisa():
    import fastisa
    assert {"nki", "tik", "pto", "convert", "__version__"} <= set(dir(fastisa))
