"""The ``fastisa`` command: ``fastisa demo`` and ``fastisa run``.

``fastisa demo [NAME ...]``
    Run the bundled example kernels; print each one's inputs, outputs, reference
    checks and estimated engine cycles.  Exit status 1 if any example mismatches.
``fastisa run FILE.py [ARGS ...]``
    Run a kernel script unchanged, with the vendor import shim installed
    (``import nki``, ``from tbe import tik`` resolve to fastisa).
``fastisa run FILE.pto --input NAME=FILE.npy ...``
    Run a PTO-AS text program; print its outputs or write them with ``--output-dir``.
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


def _parse_inputs(items):
    import numpy as np

    out = {}
    for item in items or []:
        if "=" not in item:
            raise SystemExit(f"fastisa run: --input expects NAME=FILE.npy, got {item!r}")
        name, path = item.split("=", 1)
        try:
            out[name.lstrip("%")] = np.load(path)
        except (OSError, ValueError) as exc:
            raise SystemExit(f"fastisa run: cannot read --input {name}={path}: {exc}") from None
    return out


def _run_pto(args) -> int:
    import numpy as np

    from .errors import FastisaError
    from .pto import asm

    with open(args.target) as f:
        text = f.read()
    try:
        outputs = asm.run(text, _parse_inputs(args.input))
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
    r.add_argument("--input", action="append", metavar="NAME=FILE.npy",
                   help="(.pto) an input array for the function argument NAME")
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
