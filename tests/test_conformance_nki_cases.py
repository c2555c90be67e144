"""The NKI conformance harness's case selection (``tests/conformance/_nki_cases.py``): the
large-shape rule and the shards, whose union must be every runnable case exactly once."""

import pytest

from conformance._nki_cases import large_dims, shard_spec

pytest_plugins = ["pytester"]


def test_large_dims_counts_integers_only():
    assert large_dims("test_x[1024x4096-bf16]") == [4096]
    assert large_dims("test_x[87000000.0-128]") == []
    assert large_dims("test_x") == []


def test_shard_spec_parses_k_of_n():
    assert shard_spec("") is None
    assert shard_spec("0/2") == (0, 2)
    assert shard_spec(" 3 / 4 ") == (3, 4)


@pytest.mark.parametrize("bad", ["2/2", "1", "a/b", "-1/2", "1/0"])
def test_shard_spec_rejects(bad):
    with pytest.raises(ValueError, match="K/N"):
        shard_spec(bad)


def test_shards_cover_each_runnable_case_once(pytester, monkeypatch):
    pytester.makepyfile(test_m="""
        import pytest
        @pytest.mark.parametrize("i", range(7))
        def test_a(i):
            pass
        @pytest.mark.skip(reason="own skip")
        def test_b():
            pass
    """)
    ran = []
    for k in range(3):
        monkeypatch.setenv("FASTISA_NKI_SHARD", f"{k}/3")
        res = pytester.runpytest("-p", "conformance._nki_cases", "-rA")
        res.assert_outcomes(passed=len(range(k, 7, 3)), skipped=8 - len(range(k, 7, 3)))
        ran += [ln.split("::")[1] for ln in res.outlines if ln.startswith("PASSED")]
    assert sorted(ran) == sorted(f"test_a[{i}]" for i in range(7))
