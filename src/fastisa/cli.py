"""The ``fastisa`` command: ``fastisa demo`` and ``fastisa run``.

``fastisa demo [NAME ...]``
    Run the bundled example kernels; print each one's inputs, outputs, reference
    checks and estimated engine cycles.  Exit status 1 if any example mismatches.
``fastisa run FILE.py [ARGS ...]``
    Run a kernel script unchanged, with the vendor import shim installed
    (``import nki``, ``from tbe import tik`` resolve to fastisa).
``fastisa run FILE.pto --input NAME=FILE.npy --input NAME=VALUE ...``
    Run a PTO-AS text program (arrays from .npy files, scalars as numbers); print its
    outputs or write them with ``--output-dir``.
``fastisa run NAME`` / ``fastisa run --list``
    Run one bundled example by name / list them.
``--profile`` prints per-instruction and per-engine cycle totals;
``--trace PATH`` writes a Chrome-trace / Perfetto JSON timeline (one track per engine).
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys

__all__ = ["main"]


def _print_profile(profile, trace_path):
    print()
    print("engine-cycle profile (estimates):")
    print(profile.summary())
    if trace_path:
        profile.write_chrome_trace(trace_path)
        print(f"wrote Chrome trace to {trace_path} (open in ui.perfetto.dev or chrome://tracing)")


def _cmd_demo(args) -> int:
    from . import examples

    known = examples.names()
    chosen = args.names or known
    unknown = [n for n in chosen if n not in known]
    if unknown:
        print(f"fastisa demo: no bundled example named {', '.join(map(repr, unknown))}; "
              f"available: {', '.join(known)}", file=sys.stderr)
        return 2
    failed = []
    for i, name in enumerate(chosen):
        if i:
            print()
        try:
            report = examples.run(name, seed=args.seed)
        except Exception as exc:  # report and keep going: the exit status tells
            print(f"== {name}: FAILED with {type(exc).__name__}: {exc}")
            failed.append(name)
            continue
        print(report.format(full=args.full))
        if not report.matches:
            failed.append(name)
    print()
    if failed:
        print(f"{len(failed)} of {len(chosen)} examples did not match: {', '.join(failed)}")
        return 1
    print(f"all {len(chosen)} examples match their references")
    return 0


def _number(text):
    """A scalar --input value: an int (0x.. too), a float, or true/false; else None."""
    low = text.strip().lower()
    if low in ("true", "false"):
        return low == "true"
    try:
        return int(low, 0)
    except ValueError:
        pass
    try:
        return float(low)
    except ValueError:
        return None


def _parse_inputs(items):
    """``--input NAME=FILE.npy`` (an array) or ``--input NAME=VALUE`` (a scalar)."""
    import numpy as np

    out = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"fastisa run: --input expects NAME=FILE.npy or NAME=VALUE, "
                             f"got {item!r}")
        name, value = item.split("=", 1)
        number = None if os.path.exists(value) else _number(value)
        if number is not None:
            out[name.lstrip("%")] = number
            continue
        try:
            out[name.lstrip("%")] = np.load(value)
        except (OSError, ValueError) as exc:
            raise SystemExit(f"fastisa run: cannot read --input {name}={value} (not a number, "
                             f"and not a readable .npy file): {exc}") from None
    return out


def _check_pto_inputs(module, inputs, path):
    """Every problem with the inputs of the program's entry function, reported at once:
    scalar arguments without a value, numbers given for pointer arguments.  Returns the
    message, or None."""
    from .pto._asm_ast import PtrType

    f = module.func()
    missing = [f"%{n} ({ty.name})" for n, ty in f.args
               if not isinstance(ty, PtrType) and n not in inputs]
    numbers = [f"%{n}" for n, ty in f.args if isinstance(ty, PtrType) and n in inputs
               and isinstance(inputs[n], (bool, int, float))]
    problems = []
    if missing:
        problems.append(f"missing {'a value' if len(missing) == 1 else 'values'} for the "
                        f"scalar argument{'s' if len(missing) > 1 else ''} "
                        f"{', '.join(missing)} of @{f.name}: give each as --input NAME=VALUE "
                        f"(e.g. --input {missing[0].split()[0][1:]}=16)")
    if numbers:
        problems.append(f"{', '.join(numbers)} {'is a pointer' if len(numbers) == 1 else 'are pointers'}"
                        f": give an array as --input NAME=FILE.npy, not a number")
    return f"fastisa run: {path}: " + "; ".join(problems) if problems else None


def _run_pto(args) -> int:
    import numpy as np

    from .errors import FastisaError
    from .pto import asm

    with open(args.target) as f:
        text = f.read()
    inputs = _parse_inputs(args.input)
    try:
        module = asm.parse(text)
        problem = _check_pto_inputs(module, inputs, args.target)
        if problem:
            print(problem, file=sys.stderr)
            return 2
        from .pto._asm_runner import PROGRAM_NAME
        token = PROGRAM_NAME.set(os.path.basename(args.target))
        try:
            outputs = asm.run(module, inputs)
        finally:
            PROGRAM_NAME.reset(token)
    except FastisaError as exc:
        # syntax/type errors and instruction errors, reported compiler-style with the line
        print(asm.format_error(exc, args.target), file=sys.stderr)
        return 1
    for name, arr in outputs.items():
        if args.output_dir:
            os.makedirs(args.output_dir, exist_ok=True)
            path = os.path.join(args.output_dir, f"{name}.npy")
            np.save(path, arr)
            print(f"{name}: shape {arr.shape}, dtype {arr.dtype} -> {path}")
        else:
            print(f"{name}: shape {arr.shape}, dtype {arr.dtype}")
            print(np.array2string(arr, max_line_width=100, threshold=400, edgeitems=4))
    return 0


#: fastisa run's own options; after a .py file they go to the script (warned about)
_RUN_OPTIONS = ("--profile", "--trace", "--input", "--output-dir", "--seed", "--full", "--list")


def _warn_options_after_script(script, rest):
    own = [a for a in rest if a.split("=", 1)[0] in _RUN_OPTIONS]
    if own:
        print(f"fastisa run: warning: {', '.join(own)} after {script} "
              f"{'is' if len(own) == 1 else 'are'} passed to the script (its sys.argv), not "
              f"used by fastisa; put fastisa's options before the file, e.g. "
              f"fastisa run {own[0]}{' ...' if own[0] not in ('--profile', '--full', '--list') else ''} "
              f"{script}", file=sys.stderr)


def _cmd_run(args) -> int:
    from . import cost, examples, shim

    if args.list:
        for name in examples.names():
            print(f"{name:<28} {examples.load(name).TITLE}")
        return 0
    if not args.target:
        print("fastisa run: give a kernel file (.py or .pto) or an example name "
              "(see fastisa run --list)", file=sys.stderr)
        return 2
    target = args.target
    looks_like_file = target.endswith((".py", ".pto")) or os.sep in target or (
        os.path.exists(target) and target not in examples.names())
    if looks_like_file:
        if not os.path.exists(target):
            print(f"fastisa run: no such file: {target}", file=sys.stderr)
            return 2
        if not os.path.isfile(target) or not target.endswith((".py", ".pto")):
            print(f"fastisa run: {target} is not a kernel file (give a .py script or a .pto "
                  f"program, or an example name: see fastisa run --list)", file=sys.stderr)
            return 2
    is_script = target.endswith(".py")
    if not is_script and args.args:
        # options written after a .pto file or an example name (fastisa run k.pto --input
        # x=x.npy); after a .py file they belong to the script.
        extra = argparse.ArgumentParser(prog=f"fastisa run {args.target}")
        extra.add_argument("--input", action="append", default=[])
        extra.add_argument("--output-dir")
        extra.add_argument("--profile", action="store_true")
        extra.add_argument("--trace")
        extra.add_argument("--seed", type=int)
        extra.add_argument("--full", action="store_true")
        more = extra.parse_args(args.args)
        args.input = (args.input or []) + more.input
        args.output_dir = more.output_dir or args.output_dir
        args.profile = args.profile or more.profile
        args.trace = more.trace or args.trace
        args.seed = args.seed if more.seed is None else more.seed
        args.full = args.full or more.full
    with cost.profiling() as profile:
        if args.target.endswith(".pto"):
            rc = _run_pto(args)
        elif is_script:
            _warn_options_after_script(args.target, args.args)
            old_argv = sys.argv
            sys.argv = [args.target] + list(args.args)
            sys.path.insert(0, os.path.dirname(os.path.abspath(args.target)))
            try:
                with shim.installed():
                    runpy.run_path(args.target, run_name="__main__")
                rc = 0
            except SystemExit as exc:
                rc = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            finally:
                sys.argv = old_argv
                sys.path.pop(0)
        else:
            try:
                report = examples.run(args.target, seed=args.seed)
            except KeyError as exc:
                print(f"fastisa run: {exc.args[0]}", file=sys.stderr)
                return 2
            print(report.format(full=args.full))
            rc = 0 if report.matches else 1
    if args.profile or args.trace:
        _print_profile(profile, args.trace)
    return rc


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="fastisa", description="Fast, bit-exact CPU simulator of "
                                "NKI, TIK and PTO accelerator instructions.")
    from . import __version__
    p.add_argument("--version", action="version", version=f"fastisa {__version__}")
    sub = p.add_subparsers(dest="command", required=True)

    d = sub.add_parser("demo", help="run the bundled example kernels and check them")
    d.add_argument("names", nargs="*", help="examples to run (default: all)")
    d.add_argument("--seed", type=int, default=0, help="random seed for the inputs")
    d.add_argument("--full", action="store_true", help="print whole arrays")
    d.set_defaults(func=_cmd_demo)

    r = sub.add_parser("run", help="run a kernel file (.py, .pto) or a bundled example")
    r.add_argument("target", nargs="?", help="FILE.py, FILE.pto or an example name")
    r.add_argument("args", nargs=argparse.REMAINDER, help="arguments passed to FILE.py")
    r.add_argument("--list", action="store_true", help="list the bundled examples")
    r.add_argument("--profile", action="store_true",
                   help="print per-instruction and per-engine estimated cycles")
    r.add_argument("--trace", metavar="PATH", help="write a Chrome-trace/Perfetto JSON timeline")
    r.add_argument("--input", action="append", metavar="NAME=FILE.npy|NAME=VALUE",
                   help="(.pto) the function argument NAME: an array from a .npy file, or "
                        "a number for a scalar argument")
    r.add_argument("--output-dir", metavar="DIR", help="(.pto) write outputs as DIR/NAME.npy")
    r.add_argument("--seed", type=int, default=0, help="(example) random seed")
    r.add_argument("--full", action="store_true", help="(example) print whole arrays")
    r.set_defaults(func=_cmd_run)
    return p


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    return args.func(args)


if __name__ == "__main__":
    sys.exit(main())
