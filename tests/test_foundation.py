"""The foundation: errors, engine-cycle profiles, the example runner and the CLI."""

import json

import numpy as np
import pytest

import fastisa
from fastisa import cli, cost, errors, examples


def test_error_classes_derive_from_builtins():
    assert issubclass(errors.ConstraintError, ValueError)
    assert issubclass(errors.AccessError, IndexError)
    assert issubclass(errors.OverlapError, ValueError)
    assert issubclass(errors.AlignmentError, ValueError)
    assert issubclass(errors.AsmSyntaxError, SyntaxError)
    for cls in (errors.ConstraintError, errors.AccessError, errors.OverlapError,
                errors.AlignmentError, errors.AsmSyntaxError):
        assert issubclass(cls, errors.FastisaError)


def test_constraint_message_names_instruction_parameter_rule_value():
    e = errors.constraint("vec_adds", "repeat_times", "must be in [0, 255]", 300)
    assert str(e) == "vec_adds: repeat_times must be in [0, 255], got 300"


def test_asm_syntax_error_position():
    e = errors.AsmSyntaxError("expected ':'", 3, 14, "pto.trecip %a")
    assert (e.line, e.column) == (3, 14)
    assert str(e) == "line 3, column 14: expected ':'"


def test_profile_totals_tracks_and_nesting():
    with cost.profiling() as outer:
        cost.record("GpSimd", "topk", 4 * 42 + 8)
        with cost.profiling() as inner:
            cost.record("Vector", "reciprocal", max(cost.MIN_II, 8 * 4))
            cost.record("Vector", "reciprocal", 100)
    cost.record("Vector", "ignored", 5)  # nothing active: dropped
    assert outer.totals() == {"GpSimd": 176, "Vector": 164}
    assert inner.totals() == {"Vector": 164}
    assert inner.by_instruction() == {("Vector", "reciprocal"): (2, 164)}
    assert [e.start for e in inner.events] == [0, 64]
    assert outer.total == 176


def test_chrome_trace_has_one_track_per_engine(tmp_path):
    p = cost.Profile()
    p.add("Scalar", "activation", 64)
    p.add("Vector", "tensor_scalar", 128)
    p.add("Scalar", "activation", 64)
    path = tmp_path / "t.json"
    p.write_chrome_trace(path)
    trace = json.loads(path.read_text())["traceEvents"]
    names = {e["args"]["name"] for e in trace if e.get("name") == "thread_name"}
    assert names == {"Scalar", "Vector"}
    xs = [e for e in trace if e["ph"] == "X"]
    # ts/dur in microseconds (trace-event format); no clock known for domain "": 1 GHz
    assert [(e["name"], e["ts"] * 1000, e["dur"] * 1000) for e in xs] == [
        ("activation", 0, 64), ("tensor_scalar", 0, 128), ("activation", 64, 64)]


def test_report_matches_needs_checks_and_all_ok():
    r = examples.Report("x", "t")
    assert not r.matches
    r.check("a", True)
    assert r.matches
    r.check("b", np.False_)
    assert not r.matches
    assert "MISMATCH" in r.format()


def test_demo_exit_status_follows_mismatch(monkeypatch, capsys):
    good = examples.Report("good", "fine", checks=[("ok", True)])
    bad = examples.Report("bad", "wrong", checks=[("values", False)])
    monkeypatch.setattr(examples, "names", lambda: ["good", "bad"])
    monkeypatch.setattr(examples, "run", lambda n, seed=0: {"good": good, "bad": bad}[n])
    assert cli.main(["demo"]) == 1
    out = capsys.readouterr().out
    assert "1 of 2 examples did not match: bad" in out
    assert cli.main(["demo", "good"]) == 0


def test_demo_reports_an_example_that_raises(monkeypatch, capsys):
    def boom(name, seed=0):
        raise RuntimeError("kernel exploded")
    monkeypatch.setattr(examples, "names", lambda: ["x"])
    monkeypatch.setattr(examples, "run", boom)
    assert cli.main(["demo"]) == 1
    assert "FAILED with RuntimeError: kernel exploded" in capsys.readouterr().out


def test_run_unknown_example_is_an_error(capsys):
    assert cli.main(["run", "no_such_example"]) == 2
    assert "no bundled example named 'no_such_example'" in capsys.readouterr().err


def test_demo_unknown_example_is_an_error(capsys):
    assert cli.main(["demo", "no_such_example"]) == 2
    err = capsys.readouterr().err
    assert "fastisa demo: no bundled example named 'no_such_example'; available:" in err


@pytest.mark.parametrize("name", ["missing.py", "missing.pto", "sub/missing"])
def test_run_missing_file_is_a_clean_error(tmp_path, monkeypatch, capsys, name):
    monkeypatch.chdir(tmp_path)
    assert cli.main(["run", name]) == 2
    assert f"fastisa run: no such file: {name}" in capsys.readouterr().err


def test_run_rejects_what_is_not_a_kernel_file(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.md").write_text("# not a kernel\n")
    assert cli.main(["run", "notes.md"]) == 2
    assert "notes.md is not a kernel file" in capsys.readouterr().err
    assert cli.main(["run", str(tmp_path)]) == 2
    assert "is not a kernel file" in capsys.readouterr().err


def test_run_script_with_profile_and_trace(tmp_path, capsys):
    script = tmp_path / "k.py"
    script.write_text(
        "import sys\n"
        "from fastisa import cost\n"
        "cost.record('DMA', 'dma_copy', 10)\n"
        "print('args', sys.argv[1:])\n")
    trace = tmp_path / "trace.json"
    assert cli.main(["run", "--profile", "--trace", str(trace), str(script), "a", "b"]) == 0
    out = capsys.readouterr().out
    assert "args ['a', 'b']" in out
    assert "dma_copy" in out and "DMA" in out
    assert json.loads(trace.read_text())["traceEvents"]


def test_run_script_exit_code_propagates(tmp_path):
    script = tmp_path / "k.py"
    script.write_text("raise SystemExit(3)\n")
    assert cli.main(["run", str(script)]) == 3


def test_lookup_rejects_unknown_dtype():
    with pytest.raises(errors.ConstraintError, match="dtype"):
        fastisa.dtypes.lookup("float64")
    with pytest.raises(errors.ConstraintError):
        fastisa.dtypes.lookup(np.float64)


def test_run_example_options_after_the_name(monkeypatch, tmp_path, capsys):
    seen = {}

    def fake_run(name, seed=0):
        from fastisa import cost as c
        c.record("Vector", "op", 7)
        seen["seed"] = seed
        return examples.Report(name, "t", checks=[("ok", True)])
    monkeypatch.setattr(examples, "run", fake_run)
    trace = tmp_path / "t.json"
    assert cli.main(["run", "some_example", "--seed", "3", "--profile", "--trace", str(trace)]) == 0
    assert seen["seed"] == 3
    assert "engine-cycle profile" in capsys.readouterr().out
    assert trace.exists()


def test_run_pto_missing_input_file_is_a_clean_error(tmp_path):
    f = tmp_path / "k.pto"
    f.write_text("func.func @k() {\n  return\n}\n")
    with pytest.raises(SystemExit, match="cannot read --input a="):
        cli.main(["run", str(f), "--input", f"a={tmp_path / 'missing.npy'}"])
