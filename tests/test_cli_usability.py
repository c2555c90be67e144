"""The CLI's traps from issue 16: options after the script, scalar .pto inputs, every
missing input at once, --version, one time unit in traces."""

import json

import numpy as np
import pytest

import fastisa
from fastisa import cli, cost
from fastisa.examples import pto_softmax_asm


def test_version(capsys):
    with pytest.raises(SystemExit) as e:
        cli.main(["--version"])
    assert e.value.code == 0
    assert capsys.readouterr().out.strip() == f"fastisa {fastisa.__version__}"


def test_own_option_after_the_script_warns_and_goes_to_the_script(tmp_path, capsys):
    script = tmp_path / "k.py"
    script.write_text("import sys\nprint('args', sys.argv[1:])\n")
    trace = tmp_path / "t.json"
    assert cli.main(["run", str(script), "--trace", str(trace), "--n", "3"]) == 0
    out, err = capsys.readouterr()
    assert f"args ['--trace', '{trace}', '--n', '3']" in out
    assert "warning: --trace after" in err and "passed to the script" in err
    assert f"fastisa run --trace ... {script}" in err
    assert not trace.exists()


def test_script_arguments_that_are_not_fastisa_options_do_not_warn(tmp_path, capsys):
    script = tmp_path / "k.py"
    script.write_text("pass\n")
    assert cli.main(["run", "--profile", str(script), "--size", "4", "x"]) == 0
    assert "warning" not in capsys.readouterr().err


def _softmax_file(tmp_path):
    f = tmp_path / "softmax.pto"
    f.write_text(pto_softmax_asm.PTO_TEXT)
    return f


def test_pto_scalar_inputs_as_values(tmp_path, capsys):
    f = _softmax_file(tmp_path)
    x = np.random.default_rng(0).standard_normal((20, 100)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    assert cli.main(["run", str(f), "--input", f"x={tmp_path / 'x.npy'}", "--input", "rows=20",
                     "--input", "scale=0.5", "--output-dir", str(tmp_path / "out")]) == 0
    y = np.load(tmp_path / "out" / "y.npy").reshape(-1, 100)[:20]
    ref = pto_softmax_asm.reference(x, 0.5)
    assert np.abs(y - ref).max() < 1e-6


def test_pto_every_missing_scalar_reported_at_once(tmp_path, capsys):
    f = _softmax_file(tmp_path)
    assert cli.main(["run", str(f)]) == 2
    err = capsys.readouterr().err
    assert "missing values for the scalar arguments %rows (index), %scale (f32)" in err
    assert "--input NAME=VALUE" in err


def test_pto_number_for_a_pointer_is_named(tmp_path, capsys):
    f = _softmax_file(tmp_path)
    assert cli.main(["run", str(f), "--input", "x=3", "--input", "rows=16"]) == 2
    err = capsys.readouterr().err
    assert "missing a value for the scalar argument %scale (f32)" in err
    assert "%x is a pointer" in err


def test_input_value_that_is_neither_file_nor_number(tmp_path):
    f = _softmax_file(tmp_path)
    with pytest.raises(SystemExit, match="not a number, and not a readable .npy file"):
        cli.main(["run", str(f), "--input", "rows=sixteen"])


def test_trace_has_one_stated_unit(tmp_path):
    p = cost.Profile()
    with cost.profiling(p):
        cost.record("Vector", "op", 10, domain="pto")    # AI Core clock 1 GHz: 10 ns
        cost.record("Vector", "op", 5, domain="pto")
    t = p.to_chrome_trace()
    assert "displayTimeUnit" not in t           # it would relabel the axis in another unit
    assert t["otherData"]["time_unit"].startswith("ts and dur in microseconds")
    events = [e for e in t["traceEvents"] if e["ph"] == "X"]
    assert [(e["ts"], e["dur"]) for e in events] == [(0, 0.01), (0.01, 0.005)]
    assert [e["args"]["cycles"] for e in events] == [10, 5]
    assert [e["args"]["dur_ns"] for e in events] == [10, 5]
    p.write_chrome_trace(tmp_path / "t.json")
    assert json.loads((tmp_path / "t.json").read_text()) == t


# --- argument-naming errors (issue 16 rough edges) -------------------------------------------

def _nki_copy():
    from fastisa import nki
    from fastisa.nki import isa as nisa, language as nl

    @nki.jit
    def copy(a, b):
        t = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.sbuf)
        nisa.dma_copy(dst=t, src=a)
        out = nl.ndarray(a.shape, dtype=a.dtype, buffer=nl.shared_hbm)
        nisa.dma_copy(dst=out, src=t)
        return out
    return nki, copy


def test_nki_int64_input_names_the_argument():
    nki, copy = _nki_copy()
    with pytest.raises(fastisa.ConstraintError,
                       match=r"simulate: argument 'a': unsupported dtype int64 \(NKI's types"):
        nki.simulate(copy)(np.zeros((2, 2), np.int64), np.zeros((2, 2), np.float32))


def test_nki_list_input_used_as_tensor_names_the_argument():
    nki, copy = _nki_copy()
    with pytest.raises(fastisa.ConstraintError,
                       match=r"simulate: argument 'a' is a list, .*np.asarray\(a, np.float32\)"):
        nki.simulate(copy)([[1.0, 2.0]], np.zeros((1, 2), np.float32))


def test_tik_every_missing_input_at_once():
    from fastisa import tik
    t = tik.Tik()
    xs = [t.Tensor("float16", (16,), name=n, scope=tik.scope_gm) for n in ("a", "b", "c")]
    t.BuildCCE(kernel_name="k", inputs=xs, outputs=[])
    with pytest.raises(fastisa.ConstraintError,
                       match="start_debug: inputs 'b', 'c' are missing from feed_dict"):
        t.tikdb.start_debug(feed_dict={"a": np.zeros(16, np.float16)}, interactive=False)
