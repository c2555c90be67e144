"""Kernels of our own written in the patterns nki-library's ``core`` kernels use (branch
nkicore): column views of on-chip running statistics (``buf[:, g]``), Beta 1 block tensors,
``nl.shared_constant`` read from a ``.npy`` file.  Bit-exact against tests/reference.py."""

import numpy as np
import pytest

import reference as ref
from fastisa import nki
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl


def _bits(a):
    a = np.asarray(a)
    return a.view({1: np.uint8, 2: np.uint16, 4: np.uint32}[a.dtype.itemsize])


# A flash-attention style running maximum: each group g of score columns reduces to a
# per-row maximum (a [P, 1] tile), which is copied into column g of the running-max buffer
# (``run_max[:, g]``, a one-column view: SDK 2.33 keeps on-chip views at least 2-D) on the
# first section and folded in with tensor_tensor(maximum) on the later ones.  fastisa once
# made ``run_max[:, g]`` a 1-D [P] view that tensor_copy rejected.
_P, _G, _SECTIONS, _W = 128, 3, 2, 64


@nki.jit
def _running_max(scores):
    out = nl.ndarray((_P, _G), nl.float32, buffer=nl.shared_hbm)
    run_max = nl.ndarray((_P, _G), nl.float32, buffer=nl.sbuf)
    for s in nl.sequential_range(_SECTIONS):
        for g in nl.static_range(_G):
            tile = nl.ndarray((_P, _W), nl.float32, buffer=nl.sbuf)
            nisa.dma_copy(dst=tile, src=scores[s, :, g * _W:(g + 1) * _W])
            sec_max = nl.ndarray((_P, 1), nl.float32, buffer=nl.sbuf)
            nisa.tensor_reduce(dst=sec_max, op=nl.maximum, data=tile, axis=1)
            col = run_max[:, g]
            assert col.shape == (_P, 1)
            if s == 0:
                nisa.tensor_copy(col, sec_max)
            else:
                nisa.tensor_tensor(col, col, sec_max, op=nl.maximum)
    nisa.dma_copy(dst=out, src=run_max)
    return out


def test_running_max_into_column_views_bit_exact(rng):
    x = rng.standard_normal((_SECTIONS, _P, _G * _W)).astype(np.float32)
    x[0, 5, 7] = np.nan
    got = nki.simulate(_running_max)(x)
    want = np.empty((_P, _G), np.float32)
    for g in range(_G):
        cols = x[:, :, g * _W:(g + 1) * _W]
        m = [ref.nki_tensor_reduce(cols[s], "float32", "float32", "maximum")
             for s in range(_SECTIONS)]
        acc = m[0]
        for s in range(1, _SECTIONS):
            acc = ref.nki_maximum(acc, m[s])
        want[:, g] = acc
    assert (_bits(got) == _bits(want)).all()


def test_on_chip_integer_index_keeps_partition_dim_hbm_drops_it():
    s = nl.ndarray((128, 4, 8), nl.bfloat16, buffer=nl.sbuf)
    assert s[0].shape == (1, 4, 8) and s[:, 2].shape == (128, 8) and s[:, 1, 3].shape == (128, 1)
    p = nl.ndarray((64, 16), nl.float32, buffer=nl.psum)
    assert p[:, 5].shape == (64, 1) and p[7, 5].shape == (1, 1)
    h = nl.ndarray((128, 4, 8), nl.bfloat16, buffer=nl.shared_hbm)
    assert h[0].shape == (4, 8) and h[:, 1, 3].shape == (128,)
    # writes through a column view reach the parent
    s2 = nl.ndarray((128, 3), nl.float32, buffer=nl.sbuf)
    s2.data[...] = 0
    nisa.memset(s2[:, 1], value=2.5)
    assert (s2.data[:, 1] == 2.5).all() and (s2.data[:, [0, 2]] == 0).all()


@nki.jit(mode="simulation")
def _block_exp(a):
    B, N, M = a.shape
    loaded = nl.ndarray((B, nl.par_dim(N), M), dtype=a.dtype, buffer=nl.sbuf)
    out = nl.ndarray((B, N, M), dtype=a.dtype, buffer=nl.shared_hbm)
    for b in nl.affine_range(B):
        assert loaded[b].shape == (N, M)            # Beta 1: the block index drops its dim
        loaded[b] = nl.load(a[b])
        nl.store(out[b], value=nl.exp(loaded[b]))
    return out


def test_beta1_block_tensor_index_drops_the_block_dim(rng):
    x = rng.standard_normal((3, 128, 32)).astype(np.float32)
    got = _block_exp(x)
    want = np.stack([ref.nki_activation("exp", x[b], "float32", "float32") for b in range(3)])
    assert (_bits(got) == _bits(want)).all()


def test_shared_constant_from_a_npy_path(tmp_path, rng):
    table = rng.integers(-1000, 1000, (16, 8)).astype(np.int32)
    path = tmp_path / "rot.npy"
    np.save(path, table)

    @nki.jit
    def kernel():
        c = nl.shared_constant(str(path))
        out = nl.ndarray(c.shape, c.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=c)
        return out

    got = nki.simulate(kernel)()
    assert got.dtype == np.int32 and (got == table).all()
    assert (nl.shared_constant(path).data == table).all()     # a PathLike too
    with pytest.raises(OSError):
        nl.shared_constant(str(tmp_path / "missing.npy"))
