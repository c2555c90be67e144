"""TIK fuzzer: one random vector instruction per program (random op, dtype, mask form,
repeat count, block/repeat strides, start offsets immediate or runtime, tensors sized
exactly to the extent, or short by a few elements), run through start_debug, with the
WHOLE UB (every tensor copied out) compared byte for byte against the lane formula:
written lanes hold the op's value, every other byte its old value.  A tensor too short
must give AccessError, one just long enough must run."""
from __future__ import annotations

import numpy as np
import pytest

from fastisa import errors, tik
from fastisa.tik import platform

from conftest import SEED, Case, budgets

OPS = {"vadds": ("vs", np.add), "vmuls": ("vs", np.multiply), "vmaxs": ("vs", np.maximum),
       "vmins": ("vs", np.minimum), "vabs": ("un", np.abs), "vrelu": ("un", None),
       "vadd": ("bin", np.add), "vsub": ("bin", np.subtract), "vmul": ("bin", np.multiply),
       "vmax": ("bin", np.maximum), "vmin": ("bin", np.minimum), "vector_dup": ("dup", None)}


def _lanes(rng, par, counter):
    """(active lanes per full repeat, mask argument, lanes of the last repeat or None)."""
    if counter:
        return None
    form = rng.integers(3)
    if form == 0:
        m = int(rng.integers(1, par + 1))
        return np.arange(m), m
    bits = rng.random(par) < rng.choice([0.1, 0.5, 0.9])
    if not bits.any():
        bits[rng.integers(par)] = True
    lo = sum(1 << i for i in range(min(par, 64)) if bits[i])
    hi = sum(1 << (i - 64) for i in range(64, par) if bits[i])
    return np.nonzero(bits)[0], [hi, lo]


def _addr(lanes, start, r, blk, rep, B):
    return start + r * rep * B + (lanes // B) * blk * B + lanes % B


def one_case(rng):
    name = str(rng.choice(list(OPS)))
    fam, f = OPS[name]
    dt = np.dtype(rng.choice([np.float16, np.float32]))
    es = dt.itemsize
    B, par = 32 // es, 256 // es
    counter = bool(rng.random() < 0.3) and fam == "vs"   # the forms with mask_mode
    target = "Ascend910B1" if counter else "Ascend910"
    platform.set_target(target)
    nrep = int(rng.integers(1, 9 if rng.random() < 0.8 else 40))
    nops = {"vs": 2, "un": 2, "bin": 3, "dup": 1}[fam]
    blks = [int(rng.integers(1, 4)) for _ in range(nops)]
    reps = [int(rng.integers(0, 12)) for _ in range(nops)]
    starts = [int(rng.integers(0, 4)) * B for _ in range(nops)]
    if counter:
        count = int(rng.integers(1, nrep * par + 1))
        nrep = -(-count // par)
        full, last = np.arange(par), np.arange(count - (nrep - 1) * par)
        mask = count
    else:
        full, mask = _lanes(rng, par, False)
        last = full
    # element indices each operand touches, repeat by repeat
    touched = []
    for x in range(nops):
        per = [_addr(full if r < nrep - 1 else last, starts[x], r, blks[x], reps[x], B)
               for r in range(nrep)]
        touched.append(per)
    need = [max(int(p.max()) for p in per) + 1 for per in touched]
    short = rng.random() < 0.1
    sizes = [(-(-n // B)) * B + int(rng.integers(0, 3)) * B for n in need]
    if short:
        x = int(rng.integers(nops))
        short = need[x] > 1          # a tensor has at least one element
        if short:
            sizes[x] = need[x] - 1
    runtime = rng.random() < 0.35

    tk = tik.Tik()
    vals = []
    gins, ubs = [], []
    for x in range(nops):
        n = max(sizes[x], 1)
        nb = -(-n // B) * B
        a = (rng.standard_normal(nb) * 8).astype(dt)
        a[a == 0] = 1
        vals.append(a)
        gins.append(tk.Tensor(dt.name, (nb,), name=f"g{x}", scope=tik.scope_gm))
        ubs.append(tk.Tensor(dt.name, (n,), name=f"u{x}", scope=tik.scope_ubuf))
        tk.data_move(ubs[-1], gins[-1], 0, 1, nb // B, 0, 0)
    feed = {f"g{x}": vals[x] for x in range(nops)}
    opnds = []
    inputs = list(gins)
    for x in range(nops):
        if runtime and x == 0:
            s = tk.InputScalar("int32", name="s0")
            inputs.append(s)
            feed["s0"] = starts[0]
            opnds.append(ubs[0][s])
        else:
            opnds.append(ubs[x][starts[x]])
    scalar = float(dt.type(rng.standard_normal() * 4) or 1)
    mm = {"mask_mode": "counter"} if counter else {}
    outs = []
    try:
        if fam == "vs":
            getattr(tk, name)(mask, opnds[0], opnds[1], scalar, nrep, blks[0], blks[1],
                              reps[0], reps[1], **mm)
        elif fam == "un":
            getattr(tk, name)(mask, opnds[0], opnds[1], nrep, blks[0], blks[1], reps[0],
                              reps[1])
        elif fam == "bin":
            getattr(tk, name)(mask, opnds[0], opnds[1], opnds[2], nrep, *blks, *reps)
        else:
            tk.vector_dup(mask, opnds[0], scalar, nrep, blks[0], reps[0])
        for x in range(nops):
            nb = vals[x].size
            outs.append(tk.Tensor(dt.name, (nb,), name=f"o{x}", scope=tik.scope_gm))
            tk.data_move(outs[-1], ubs[x], 0, 1, nb // B, 0, 0)
        tk.BuildCCE("k", inputs, outs)
        got = tk.tikdb.start_debug(feed, interactive=False)
    except (errors.AccessError,) as e:
        assert short, f"AccessError for an operand that fits: {e}"
        return "short"
    except (errors.ConstraintError, NotImplementedError) as e:
        if fam in ("un", "vs") and not platform.get_target().supports(name, dt.name):
            return "unsupported"
        raise AssertionError(f"{name} {dt}: unexpected {e!r}")
    assert not short, "a tensor one element too short was accepted"
    # the oracle: repeats in order, sources read from their old contents (distinct tensors)
    want = [v.copy() for v in vals]
    for r in range(nrep):
        d = touched[0][r]
        if fam == "vs":
            s = vals[1][touched[1][r]]
            res = f(s.astype(np.float32), np.float32(scalar)) if f is not np.multiply else \
                s.astype(np.float32) * np.float32(scalar)
        elif fam == "un":
            s = vals[1][touched[1][r]].astype(np.float32)
            res = np.abs(s) if name == "vabs" else np.where(s > 0, s, np.float32(0))
        elif fam == "bin":
            res = f(vals[1][touched[1][r]].astype(np.float32),
                    vals[2][touched[2][r]].astype(np.float32))
        else:
            res = np.full(d.size, scalar, np.float32)
        want[0][d] = res.astype(dt)
    for x in range(nops):
        np.testing.assert_array_equal(got[x].view(f"u{es}"), want[x].view(f"u{es}"),
                                      err_msg=f"operand {x} of {name} {dt} (whole tensor)")
    return "ran"


@pytest.mark.parametrize("calls", budgets(600, 100000))
def test_tik_record_run_full_memory(calls):
    seen = {}
    try:
        for k in range(calls):
            rng = np.random.default_rng([SEED, k])
            try:
                how = one_case(rng)
            except AssertionError as e:
                raise AssertionError(f"{Case('tik', k)}: {e}") from None
            seen[how] = seen.get(how, 0) + 1
    finally:
        platform.set_target("Ascend910")
    assert seen.get("ran", 0) > calls // 2, seen
    assert seen.get("short", 0) > 0, seen
