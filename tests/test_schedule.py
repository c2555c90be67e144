"""The dependency-aware engine schedule (fastisa.schedule, fastisa.cost): hand-built
programs with known answers, then the three front-ends' instructions."""

import json

import ml_dtypes
import numpy as np
import pytest

from fastisa import cost, schedule, shim
from fastisa.nki import isa as nisa, language as nl
from fastisa import nki


def _prof():
    return cost.Profile()


def _buf(n=1024):
    return np.zeros(n, np.uint8)


# ---- hand-built programs ----------------------------------------------------------------
def test_serial_chain_adds_up():
    a, b, c = _buf(), _buf(), _buf()
    p = _prof()
    p.add("Vector", "x", 100, domain="t", dur_ns=100, reads=[schedule.span_of(a)],
          writes=[schedule.span_of(b)])
    p.add("Scalar", "y", 50, domain="t", dur_ns=50, reads=[schedule.span_of(b)],
          writes=[schedule.span_of(c)])
    p.add("GpSimd", "z", 25, domain="t", dur_ns=25, reads=[schedule.span_of(c)],
          writes=[schedule.span_of(a)])
    s = p.schedule.slots
    assert [(x.start_ns, x.end_ns) for x in s] == [(0, 100), (100, 150), (150, 175)]
    assert [x.why for x in s] == ["", "RAW", "RAW"]
    assert p.latency().ns == 175
    assert [x.index for x in p.critical_path()] == [0, 1, 2]


def test_independent_engines_overlap():
    a, b, c, d = _buf(), _buf(), _buf(), _buf()
    p = _prof()
    p.add("Vector", "x", 100, domain="t", dur_ns=100, reads=[schedule.span_of(a)],
          writes=[schedule.span_of(b)])
    p.add("Scalar", "y", 80, domain="t", dur_ns=80, reads=[schedule.span_of(c)],
          writes=[schedule.span_of(d)])
    assert [x.start_ns for x in p.schedule.slots] == [0, 0]
    assert p.latency().ns == 100
    assert p.utilization() == {"Scalar": 0.8, "Vector": 1.0}
    assert p.verdict().startswith("compute-bound on Vector")


def test_same_engine_issues_in_program_order():
    a, b = _buf(), _buf()
    p = _prof()
    p.add("Vector", "x", 10, domain="t", dur_ns=10, reads=[], writes=[schedule.span_of(a)])
    p.add("Vector", "y", 10, domain="t", dur_ns=10, reads=[], writes=[schedule.span_of(b)])
    assert [(x.start_ns, x.why) for x in p.schedule.slots] == [(0, ""), (10, "engine")]


def test_war_hazard_waits_for_the_reader():
    src, out, other = _buf(), _buf(), _buf()
    p = _prof()
    p.add("Scalar", "long_read", 500, domain="t", dur_ns=500, reads=[schedule.span_of(src)],
          writes=[schedule.span_of(out)])
    # Vector overwrites what Scalar is still reading: it must wait for the read to finish
    p.add("Vector", "overwrite", 10, domain="t", dur_ns=10, reads=[schedule.span_of(other)],
          writes=[schedule.span_of(src)])
    w = p.schedule.slots[1]
    assert (w.start_ns, w.why, w.pred) == (500, "WAR", 0)


def test_slices_of_one_tile_are_independent():
    t = np.zeros((128, 4, 256), np.float32)
    p = _prof()
    p.add("DMA", "load0", 1, domain="t", dur_ns=100, reads=[], writes=[schedule.span_of(t[:, 0])])
    p.add("Vector", "use1", 1, domain="t", dur_ns=10, reads=[schedule.span_of(t[:, 1])],
          writes=[schedule.span_of(t[:, 2])])
    p.add("Scalar", "use0", 1, domain="t", dur_ns=10, reads=[schedule.span_of(t[0:64, 0])],
          writes=[schedule.span_of(t[:, 3])])
    s = p.schedule.slots
    assert s[1].start_ns == 0            # column 1 does not touch column 0
    assert (s[2].start_ns, s[2].why) == (100, "RAW")   # rows 0-63 of column 0 do


def test_double_buffering_hides_the_load():
    """load(i+1) overlaps compute(i) with two buffers; with one buffer the load of i+1 must
    wait for compute(i) to finish reading it (WAR), so nothing overlaps."""
    def run(nbuf):
        bufs = [_buf() for _ in range(nbuf)]
        outs = [_buf() for _ in range(8)]
        p = _prof()
        for i in range(8):
            b = bufs[i % nbuf]
            p.add("DMA", "load", 1, domain="t", dur_ns=100, reads=[],
                  writes=[schedule.span_of(b)])
            p.add("Vector", "compute", 1, domain="t", dur_ns=100,
                  reads=[schedule.span_of(b)], writes=[schedule.span_of(outs[i])])
        return p
    single, double = run(1), run(2)
    assert single.latency().ns == 1600
    assert double.latency().ns == 900
    assert "WAR" in {s.why for s in single.schedule.slots}


def test_flags_and_barrier():
    a, b = _buf(), _buf()
    s = schedule.Schedule()
    s.add("t", "MTE2", "load", 1, 100, [], [schedule.span_of(a)])
    s.set_flag("t", "MTE2", "Vector", 0)
    s.wait_flag("t", "MTE2", "Vector", 0)
    # no data dependency, but the flag orders it after the load
    v = s.add("t", "Vector", "op", 1, 10, [schedule.span_of(b)], [])
    assert v.start_ns == 100
    s.add("t", "Scalar", "x", 1, 500, [], [])
    s.barrier("t")
    w = s.add("t", "Vector", "after_barrier", 1, 10, [], [])
    assert w.start_ns == 500


def test_dma_in_flight_overlaps_its_latency():
    p = _prof()
    with cost.profiling(p):
        for _ in range(4):
            cost.record("DMA", "dma_copy", 1, reads=[_buf(4096)], writes=[_buf(4096)],
                        nbytes=4096, partitions=128, domain="nki", shared="nki.dma")
    lat, occ = cost.transfer_ns("nki", "DMA", 4096, 128)
    assert occ < lat
    starts = [s.start_ns for s in p.schedule.slots]
    assert starts == pytest.approx([0, occ, 2 * occ, 3 * occ])
    assert p.latency().ns == pytest.approx(3 * occ + lat)


def test_trace_has_real_start_times_flows_and_sources(tmp_path):
    a, b = _buf(), _buf()
    p = _prof()
    p.add("Vector", "x", 96, domain="nki", reads=[schedule.span_of(a)],
          writes=[schedule.span_of(b)], source="k.py:3")
    p.add("Scalar", "y", 120, domain="nki", reads=[schedule.span_of(b)], writes=[],
          source="k.py:4")
    path = tmp_path / "t.json"
    p.write_chrome_trace(path)
    tr = json.loads(path.read_text())
    xs = [e for e in tr["traceEvents"] if e["ph"] == "X"]
    assert xs[0]["ts"] == 0 and xs[0]["dur"] == pytest.approx(0.1)   # 96 cycles @ 0.96 GHz
    assert xs[1]["ts"] == pytest.approx(0.1)                         # after x, in us
    assert xs[1]["args"]["source"] == "k.py:4"
    flows = [e for e in tr["traceEvents"] if e["ph"] in "sf"]
    assert {e["ph"] for e in flows} == {"s", "f"} and flows[0]["name"] == "RAW"
    assert "microseconds" in tr["otherData"]["time_unit"]


# ---- the front-ends ---------------------------------------------------------------------
def test_nki_kernel_dependencies_and_source_lines():
    @nki.jit
    def k(a):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        u = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.tensor_scalar(dst=u, data=t, op0=nl.multiply, operand0=2.0)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=u)
        return out

    with cost.profiling() as p:
        nki.simulate(k)(np.ones((128, 512), np.float32))
    s = p.schedule.slots
    assert [x.engine for x in s] == ["DMA", "Vector", "DMA-out"]
    assert [x.why for x in s] == ["", "RAW", "RAW"]
    assert all(x.source.startswith(__file__) for x in s)
    assert p.latency().ns == pytest.approx(s[-1].end_ns)
    assert "Vector" in p.latency().cycles and "DMA" not in p.latency().cycles


def test_tik_pipes_and_dependencies():
    from fastisa import tik
    tk = tik.Tik()
    g = tk.Tensor("float16", (256,), name="g", scope=tik.scope_gm)
    u = tk.Tensor("float16", (256,), name="u", scope=tik.scope_ubuf)
    v = tk.Tensor("float16", (256,), name="v", scope=tik.scope_ubuf)
    o = tk.Tensor("float16", (256,), name="o", scope=tik.scope_gm)
    tk.data_move(u, g, 0, 1, 16, 0, 0)
    tk.vec_adds(128, v, u, 1.0, 2, 8, 8)
    tk.data_move(o, v, 0, 1, 16, 0, 0)
    tk.BuildCCE("k", [g], [o])
    with cost.profiling() as p:
        tk.tikdb.start_debug({"g": np.zeros(256, np.float16)}, interactive=False)
    s = p.schedule.slots
    assert [x.engine for x in s] == ["MTE2", "Vector", "MTE3"]
    assert [x.why for x in s] == ["", "RAW", "RAW"]
    assert all(x.source.startswith(__file__) for x in s)


def test_pto_pipes_and_dependencies():
    from fastisa import pto
    x = np.arange(256, dtype=np.float32).reshape(16, 16)
    y = np.zeros_like(x)
    gx, gy = pto.GlobalTensor(x), pto.GlobalTensor(y)
    a = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)
    b = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)
    c = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)
    with cost.profiling() as p:
        pto.TLOAD(a, gx)
        pto.TEXP(b, a)
        pto.TADDS(c, a, 1.0)       # independent of TEXP: both only read a
        pto.TADD(b, b, c)
        pto.TSTORE(gy, b)
    s = p.schedule.slots
    assert [x.engine for x in s] == ["MTE2", "Vector", "Vector", "Vector", "MTE3"]
    assert [x.why for x in s] == ["", "RAW", "engine", "RAW", "RAW"]   # tie: the data dependency is named
    assert s[3].deps == (1, 2)


def test_matmul_tutorial_steps_get_faster_and_end_compute_bound():
    with shim.installed():
        from fastisa.examples import nki_matmul_steps as m
    rng = np.random.default_rng(0)
    bf = ml_dtypes.bfloat16
    lhsT = rng.standard_normal((1024, 2048)).astype(bf)
    rhs = rng.standard_normal((1024, 2048)).astype(bf)
    lat, verdicts, outs = [], [], []
    for _, k in m.STEPS:
        out, prof = m.timed(k, lhsT, rhs)
        lat.append(prof.latency().ns)
        verdicts.append(prof.verdict())
        outs.append(out)
    assert all(b < a for a, b in zip(lat, lat[1:])), lat
    assert verdicts[0].startswith("memory-bound on DMA"), verdicts[0]
    assert verdicts[-1].startswith("compute-bound on Tensor"), verdicts[-1]
    ref = lhsT.astype(np.float32).T @ rhs.astype(np.float32)
    for o in outs:
        assert np.all(np.abs(o.astype(np.float32) - ref) <= np.abs(ref) * 2.0 ** -7 + 2.0 ** -6)


def test_no_profile_records_nothing_and_costs_nothing():
    p = cost.Profile()
    cost.record("Vector", "x", 10, reads=[_buf()], writes=[_buf()])
    assert p.schedule.slots == []


def test_pto_flags_order_independent_pipes():
    from fastisa import pto
    x = np.ones((16, 16), np.float32)
    gx = pto.GlobalTensor(x)
    a = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)
    b = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)
    c = pto.Tile(pto.TileType.Vec, np.float32, 16, 16)

    def run(sync):
        with cost.profiling() as p:
            pto.TLOAD(a, gx)
            if sync:
                pto.set_flag("PIPE_MTE2", "PIPE_V", 0)
                pto.wait_flag("PIPE_MTE2", "PIPE_V", 0)
            pto.TEXP(b, c)          # reads nothing the load writes
        return p.schedule.slots[1]
    assert run(False).start_ns == 0
    s = run(True)
    assert s.start_ns > 0 and s.why == "engine"
    with pytest.raises(Exception, match="set_flag: src must be one of"):
        pto.set_flag("PIPE_X", "PIPE_V")


def test_pto_asm_sync_ops_reach_the_schedule():
    from fastisa.pto import _sync
    with cost.profiling() as p:
        cost.record("MTE2", "TLOAD", 100, reads=[], writes=[_buf()], domain="pto")
        _sync.apply_sync_text("set_flag", '["PIPE_MTE2", "PIPE_V", "EVENT_ID0"]')
        _sync.apply_sync_text("wait_flag", '["PIPE_MTE2", "PIPE_V", "EVENT_ID0"]')
        cost.record("Vector", "TEXP", 10, reads=[_buf()], writes=[_buf()], domain="pto")
    assert p.schedule.slots[1].start_ns == 100


def test_bundled_examples_report_their_own_source_lines():
    from fastisa import examples
    with cost.profiling() as p:
        examples.run("nki_softmax")
    assert all("examples/nki_softmax.py:" in s.source for s in p.critical_path())
