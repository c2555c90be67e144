"""nki-isa family: nc_matmul transpose mode and double_row perf mode; MX matmul/quantize."""

import ml_dtypes
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import reference as ref
from fastisa import cost
from fastisa.errors import ConstraintError
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl
from test_nki_compute import ALL, T, assert_bits, empty, random_values

MM_IN = ["float8_e4m3", "float8_e5m2", "float8_e4m3fn", "bfloat16", "float16", "tfloat32",
         "float32"]


def eye(K, fmt):
    return T(np.eye(K, dtype=np.float32), fmt)


@pytest.mark.parametrize("fmt", ALL)
def test_transpose_mode_bit_exact_every_dtype(fmt, rng):
    x = T(random_values(rng, fmt, (96, 40)), fmt)          # NaN / inf included
    d = empty((40, 96), fmt, nl.psum)
    nisa.nc_matmul(d, x, eye(96, "bfloat16"), is_transpose=True)
    assert_bits(d.data, np.ascontiguousarray(x.data.T))


@settings(max_examples=30)
@given(K=st.integers(1, 128), M=st.integers(1, 128), seed=st.integers(0, 2**31),
       fin=st.sampled_from(["bfloat16", "float32", "float8_e4m3"]))
def test_transpose_mode_convert_hypothesis(K, M, seed, fin):
    rng = np.random.default_rng(seed)
    x = T(random_values(rng, fin, (K, M)), fin)
    d = empty((M, K), "float32", nl.psum)
    nisa.nc_matmul(d, x, eye(K, fin), is_transpose=True)
    assert_bits(d.data, ref.nki_to_f32(x.data, fin).T)


def test_transpose_mode_then_matmul_group_and_cost(rng):
    x = T(rng.standard_normal((32, 16)).astype(np.float32), "float32")
    d = empty((16, 32), "float32", nl.psum)
    with cost.profiling() as p:
        nisa.nc_matmul(d, x, eye(32, "float32"), is_transpose=True)
    assert p.totals() == {"Tensor": 32}
    assert_bits(d.data, np.ascontiguousarray(x.data.T))


def test_transpose_mode_errors():
    x = empty((8, 4), "bfloat16")
    with pytest.raises(ConstraintError, match="identity"):
        nisa.nc_matmul(empty((4, 8), "bfloat16", nl.psum), x, empty((8, 4), "bfloat16"),
                       is_transpose=True)
    with pytest.raises(ConstraintError, match="identity matrix"):
        nisa.nc_matmul(empty((4, 8), "bfloat16", nl.psum), x, T(np.ones((8, 8)), "bfloat16"),
                       is_transpose=True)
    with pytest.raises(ConstraintError, match="shape"):
        nisa.nc_matmul(empty((8, 4), "bfloat16", nl.psum), x, eye(8, "bfloat16"),
                       is_transpose=True)
    with pytest.raises(ConstraintError, match="psum"):
        nisa.nc_matmul(empty((4, 8), "bfloat16"), x, eye(8, "bfloat16"), is_transpose=True)


def test_transpose_flag_on_trn1_is_an_ordinary_matmul(rng):
    x = T(rng.standard_normal((8, 4)).astype(np.float32), "bfloat16")
    y = T(rng.standard_normal((8, 6)).astype(np.float32), "bfloat16")
    d = empty((4, 6), "float32", nl.psum)
    with nl.use_target("trn1"):
        nisa.nc_matmul(d, x, y, is_transpose=True, accumulate=False)
    assert_bits(d.data, ref.nki_matmul(ref.nki_to_f32(x.data, "bfloat16"),
                                       ref.nki_to_f32(y.data, "bfloat16"), np.zeros((4, 6))))


@pytest.mark.parametrize("fs", ["float8_e4m3", "float8_e5m2", "float8_e4m3fn"])
@pytest.mark.parametrize("fm", ["float8_e5m2", "float8_e4m3fn"])
def test_double_row_perf_mode(fs, fm, rng):
    if {fs, fm} == {"float8_e4m3", "float8_e4m3fn"}:
        pytest.skip("mixing is an error, tested below")
    s = T(rng.standard_normal((128, 2, 24)).astype(np.float32), fs)
    m = T(rng.standard_normal((128, 2, 40)).astype(np.float32), fm)
    d = empty((24, 40), "float32", nl.psum)
    nisa.nc_matmul(d, s, m, perf_mode=nisa.matmul_perf_mode.double_row, accumulate=False)
    w = ref.nki_matmul(ref.nki_to_f32(s.data, fs).reshape(256, 24),
                       ref.nki_to_f32(m.data, fm).reshape(256, 40), np.zeros((24, 40)))
    assert_bits(d.data, w)


def test_perf_mode_errors():
    s = empty((8, 2, 4), "bfloat16")
    m = empty((8, 2, 4), "float8_e5m2")
    d = empty((4, 4), "float32", nl.psum)
    dr = nisa.matmul_perf_mode.double_row
    with pytest.raises(ConstraintError, match="float8"):
        nisa.nc_matmul(d, s, m, perf_mode=dr)
    with pytest.raises(ConstraintError, match=r"\[K, 2, F\]"):
        nisa.nc_matmul(d, empty((8, 4), "float8_e5m2"), m, perf_mode=dr)
    with pytest.raises(ConstraintError, match="cannot be mixed"):
        nisa.nc_matmul(d, empty((8, 2, 4), "float8_e4m3"), empty((8, 2, 4), "float8_e4m3fn"),
                       perf_mode=dr)
    with pytest.raises(ConstraintError, match="column tiling"):
        nisa.nc_matmul(d, m, m, perf_mode=dr, tile_position=(0, 0), tile_size=(128, 64))
    with pytest.raises(ConstraintError, match="perf_mode must be"):
        nisa.nc_matmul(d, m, m, perf_mode="quad")
    with nl.use_target("trn1"):
        with pytest.raises(ConstraintError, match="NeuronCore-v3"):
            nisa.nc_matmul(d, m, m, perf_mode=dr)
    nisa.nc_matmul(empty((4, 4), "float32", nl.psum), empty((8, 4), "bfloat16"),
                   empty((8, 4), "bfloat16"), perf_mode=nisa.matmul_perf_mode.none)
