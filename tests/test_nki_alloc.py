"""Explicit SBUF / PSUM allocators (NKI Beta 1 ``nki.compiler.sbuf.alloc`` / ``mod_alloc``,
``nki.compiler.psum.alloc`` / ``mod_alloc``, and the ``nl.sbuf.mod_alloc`` spelling): each
block of a tensor is placed at the address its allocator gives, so blocks and tensors alias
exactly where those addresses overlap.  Kernels of our own in the patterns of the SDK's
modulo-allocation tests and nki-samples' allocated kernels (double-buffered inputs, PSUM
blocks folded onto one bank); results bit-exact against reference.nki_matmul."""

import numpy as np
import pytest

import reference as ref
from fastisa import nki
from fastisa.errors import AccessError, ConstraintError
from fastisa.nki import compiler as ncc
from fastisa.nki import isa as nisa
from fastisa.nki import language as nl

RNG = np.random.default_rng(1111)


def _addr(t):
    """(partition, byte) of t's first element in its buffer's memory."""
    mem = nl._machine().memory(t.buffer.name)
    off = t.data.__array_interface__["data"][0] - mem.__array_interface__["data"][0]
    return divmod(off, mem.strides[0])


def test_modulo_allocation_k_loop_with_psum_blocks_on_one_bank():
    K, M, N = 512, 128, 512
    KT = K // 128
    lhsT = ref.nki_round(RNG.standard_normal((K, M)), "bfloat16").astype(np.float32)
    rhs = ref.nki_round(RNG.standard_normal((K, N)), "bfloat16").astype(np.float32)

    @nki.jit
    def kernel(lhsT, rhs):
        out = nl.ndarray((M, N), nl.float32, buffer=nl.shared_hbm)
        lbuf = nl.ndarray((KT, nl.par_dim(128), M), nl.float32,
                          buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(KT,)))
        rbuf = nl.ndarray((2, nl.par_dim(128), N), nl.float32,      # double buffer
                          buffer=ncc.sbuf.mod_alloc(base_addr=KT * M * 4, num_free_tiles=(2,)))
        # both PSUM blocks on bank 3: acc[1] is acc[0]'s bytes, so the K loop accumulates
        # across them (with separate blocks each would hold half of the sum)
        acc = nl.ndarray((2, nl.par_dim(M), N), nl.float32,
                         buffer=ncc.psum.mod_alloc(base_bank=3, num_bank_tiles=(1,)))
        for k in nl.affine_range(KT):
            nisa.dma_copy(dst=lbuf[k], src=lhsT[k * 128:(k + 1) * 128, :])
            nisa.dma_copy(dst=rbuf[k % 2], src=rhs[k * 128:(k + 1) * 128, :])
            nisa.nc_matmul(dst=acc[k % 2], stationary=lbuf[k], moving=rbuf[k % 2])
        res = nl.ndarray((M, N), nl.float32, buffer=nl.sbuf)
        nisa.tensor_copy(dst=res, src=acc[1])
        nisa.dma_copy(dst=out, src=res)
        return out

    got = nki.simulate(kernel)(lhsT, rhs)
    want = np.zeros((M, N), np.float32)
    for k in range(KT):
        want = ref.nki_matmul(lhsT[k * 128:(k + 1) * 128], rhs[k * 128:(k + 1) * 128], want)
    assert (got.view(np.uint32) == want.view(np.uint32)).all()


def test_mod_alloc_block_addresses_and_aliasing():
    with nl.use_target("trn2"):
        t = nl.ndarray((3, nl.par_dim(128), 64), nl.bfloat16,
                       buffer=ncc.sbuf.mod_alloc(base_addr=4096, num_free_tiles=(3,)))
        assert [_addr(t[i]) for i in range(3)] == [(0, 4096), (0, 4224), (0, 4352)]
        alias = nl.ndarray((128, 64), nl.bfloat16, address=(0, 4224))
        nisa.memset(t[1], 2.0)
        assert (alias.data.view(np.uint16) == 0x4000).all()
        # no num_free_tiles: every block at the base (modulo 1)
        one = nl.ndarray((4, nl.par_dim(128), 8), nl.float32,
                         buffer=nl.sbuf.mod_alloc(base_addr=256))
        assert {_addr(one[i]) for i in range(4)} == {(0, 256)}
        nisa.memset(one[3], 5.0)
        assert (one[0].data == 5.0).all()
        # two block dims, partition tiles: block (i, j) at partition 64 i, byte 64 (i 3 + j)
        g = nl.ndarray((2, 3, nl.par_dim(64), 16), nl.float32,
                       buffer=nl.sbuf.mod_alloc(base_addr=0, num_par_tiles=(2, 1),
                                                num_free_tiles=(2, 3)))
        assert [[_addr(g[i, j]) for j in range(3)] for i in range(2)] == \
            [[(0, 0), (0, 64), (0, 128)], [(64, 192), (64, 256), (64, 320)]]
        # a plain tile (no block dims) is at the allocator's address for idx ()
        p = nl.ndarray((nl.par_dim(128), 128), nl.float32,
                       buffer=ncc.psum.mod_alloc(base_bank=2))
        assert _addr(p) == (0, 2 * 2048)


def test_custom_alloc_functions():
    seen = []

    def sb(idx, pdim_size, fdim_size):
        seen.append((idx, pdim_size, fdim_size))
        return (32, 1024 + idx[0] * 2 * fdim_size)

    def ps(idx, pdim_size, fdim_size):
        return (7 - idx[0], 0, 512)

    with nl.use_target("trn2"):
        a = nl.ndarray((2, nl.par_dim(64), 48), nl.float32, buffer=ncc.sbuf.alloc(sb))
        assert seen == [((0,), 64, 192), ((1,), 64, 192)]
        assert [_addr(a[i]) for i in range(2)] == [(32, 1024), (32, 1408)]
        d = nl.ndarray((3, nl.par_dim(16), 4), nl.float32, buffer=ncc.psum.alloc(ps))
        assert [_addr(d[i]) for i in range(3)] == [(0, (7 - i) * 2048 + 512) for i in range(3)]
        b = nl.ndarray((1, nl.par_dim(16), 4), nl.float32, buffer=nl.psum.alloc(ps))
        assert _addr(b[0]) == (0, 7 * 2048 + 512)
        alias = nl.ndarray((16, 4), nl.float32, buffer=nl.psum, address=(0, 7 * 2048 + 512))
        assert np.shares_memory(alias.data, b.data)


def test_allocator_argument_errors():
    with nl.use_target("trn2"):
        with pytest.raises(ConstraintError, match="sbuf.mod_alloc: base_addr must be an integer"):
            ncc.sbuf.mod_alloc(base_addr=1.5)
        with pytest.raises(ConstraintError, match="base_addr must be >= 0, got -4"):
            ncc.sbuf.mod_alloc(base_addr=-4)
        with pytest.raises(ConstraintError, match="num_free_tiles must be a tuple of positive"):
            ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(0,))
        with pytest.raises(ConstraintError, match="psum.mod_alloc: base_bank must be >= 0"):
            ncc.psum.mod_alloc(base_bank=-1)
        with pytest.raises(ConstraintError, match="psum.mod_alloc: .*unexpected keyword"):
            ncc.psum.mod_alloc(bank=1)
        with pytest.raises(ConstraintError, match="sbuf.alloc: func must be a callable"):
            ncc.sbuf.alloc(5)
        with pytest.raises(ConstraintError, match="hbm.alloc: explicit allocation"):
            nl.shared_hbm.alloc(lambda *a: (0, 0))
        with pytest.raises(AccessError, match=r"bank of block \(\) .* must be in \[0, 7\]"):
            nl.ndarray((128, 8), nl.float32, buffer=ncc.psum.mod_alloc(base_bank=8))
        with pytest.raises(AccessError, match="partial bank allocation"):
            nl.ndarray((128, 256), nl.float32, buffer=ncc.psum.mod_alloc(base_addr=1028))
        with pytest.raises(AccessError, match=r"bytes \[229372, 229380\) of block \(1,\)"):
            nl.ndarray((2, nl.par_dim(128), 2), nl.float32,
                       buffer=ncc.sbuf.mod_alloc(base_addr=229364, num_free_tiles=(2,)))
        with pytest.raises(AccessError, match=r"partitions \[128, 256\) of block \(1,\)"):
            nl.ndarray((2, nl.par_dim(128), 2), nl.float32,
                       buffer=ncc.sbuf.mod_alloc(base_addr=0, num_par_tiles=(2,)))
        with pytest.raises(ConstraintError, match="multiple of the item size 4, got 2"):
            nl.ndarray((8, 2), nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=2))
        with pytest.raises(ConstraintError, match=r"must return \(partition, byte\)"):
            nl.ndarray((8, 2), nl.float32, buffer=ncc.sbuf.alloc(lambda i, p, f: 0))
        with pytest.raises(ConstraintError, match="address= cannot be combined"):
            nl.ndarray((8, 2), nl.float32, buffer=ncc.sbuf.mod_alloc(base_addr=0),
                       address=(0, 0))
        with pytest.raises(NotImplementedError, match="affine"):    # modulo 2 over 3 blocks
            nl.ndarray((3, nl.par_dim(8), 2), nl.float32,
                       buffer=ncc.sbuf.mod_alloc(base_addr=0, num_free_tiles=(2,)))


def test_beta1_psum_iadd_of_a_matmul_tile_overwrites_first():
    """``acc[0] += nisa.nc_matmul(...)`` (Beta 1 tile-returning form) into an explicitly
    allocated, never-written PSUM block: the K loop's first matmul overwrites (the PSUM
    bytes start 0xFF = NaN), later ones add, bit-exact against reference.nki_matmul."""
    from fastisa.nki import legacy_isa as lisa
    K, M, N = 384, 64, 128
    a = ref.nki_round(RNG.standard_normal((K, M)), "bfloat16").astype(np.float32)
    b = ref.nki_round(RNG.standard_normal((K, N)), "bfloat16").astype(np.float32)
    with nl.use_target("trn2"):
        acc = nl.ndarray((1, nl.par_dim(M), N), nl.float32,
                         buffer=ncc.psum.mod_alloc(base_bank=5, num_bank_tiles=(1,)))
        assert np.isnan(acc.data).all()
        want = np.zeros((M, N), np.float32)
        for k in range(K // 128):
            lt = nl.ndarray((128, M), nl.float32)
            lt.data[...] = a[k * 128:(k + 1) * 128]
            rt = nl.ndarray((128, N), nl.float32)
            rt.data[...] = b[k * 128:(k + 1) * 128]
            acc[0] += lisa.nc_matmul(lt, rt)
            want = ref.nki_matmul(a[k * 128:(k + 1) * 128], b[k * 128:(k + 1) * 128], want)
        assert (acc.data[0].view(np.uint32) == want.view(np.uint32)).all()
        # a tile written by a memset first (Beta 1's nl.zeros then +=): the product added
        z = nl.zeros((M, N), nl.float32, buffer=nl.psum)
        z += lisa.nc_matmul(lt, rt)
        z += lisa.nc_matmul(lt, rt)
        one = ref.nki_matmul(a[-128:], b[-128:], np.zeros((M, N), np.float32))
        assert (z.data.view(np.uint32) == (one + one).view(np.uint32)).all()


def test_beta1_psum_iadd_of_an_element_masked_matmul_tile_is_refused():
    """``psum += nisa.nc_matmul(..., mask=<element mask>)``: fastisa has no exact form for
    it (nc_matmul(dst=psum) takes no element mask), so it raises NotImplementedError and
    leaves the PSUM tile as it was, instead of rounding differently."""
    from fastisa.nki import legacy_isa as lisa
    with nl.use_target("trn2"):
        lt = nl.ndarray((128, 32), nl.float32)
        lt.data[...] = 1.0
        rt = nl.ndarray((128, 64), nl.float32)
        rt.data[...] = 2.0
        acc = nl.ndarray((32, 64), nl.float32, buffer=nl.psum)
        acc += lisa.nc_matmul(lt, rt)                         # unmasked: the exact path
        before = acc.data.copy()
        i_f = nl.arange(64)[None, :]
        with pytest.raises(NotImplementedError, match="element mask"):
            acc += lisa.nc_matmul(lt, rt, mask=(i_f < 40))
        assert (acc.data.view(np.uint32) == before.view(np.uint32)).all()
