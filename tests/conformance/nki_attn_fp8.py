"""Why nki-library's FP8 ``attention_block_tkg`` cases fail their comparison on fastisa.

Usage (from the repository root)::

    FASTISA_NKI_LIBRARY=/path/to/nki-library python -m tests.conformance.nki_attn_fp8 [ID ...]

``ID`` is a test id of ``test_attention_block_tkg.py::TestRangeAttnBlk::test_attn_blk_model``
(the part between the brackets; default: the ``MODEL_WIP_GENERALITY_16-1-128-7168`` FP8 case
of S_ctx 1024, a "large shape" because H = 7168).  Single-rank (KVDP = 1) cases only.  Nothing
of the checkout is copied: the script imports the test module, its input generator, its
golden and its tolerances, and runs the kernel on fastisa as the harness does
(``nki.cpu_simulate(kernel)[lnc]``, target trn2).  It prints, per output:

* the comparison the test makes (cosine similarity >= 0.99 and the allclose pass rate with the
  test's rtol/atol) against the test's golden, and
* the same against the test's golden computed with one change: where the torch reference
  models an FP8 E4M3 quantization it only scales and clamps to [-240, 240]
  (``qkv_tkg_torch_ref`` STATIC input, ``output_projection_tkg_torch_ref`` STATIC input,
  ``AttentionBlockTkgTorchRef._quantize_kv_to_fp8``) -- the kernel stores those tensors as
  float8_e4m3, so this golden also rounds them to float8_e4m3 (RNE, ml_dtypes);

then, per batch, the attention stage alone: the kernel's ``attention_tkg`` output against a
float64 softmax attention (this script's, from the torch reference's definition: the active
token replaces the last prior position, masked positions get -inf) of the kernel's own
q / k_active / v_active and caches, the top-2 gap of the float64 scores, and X_out's cosine
against the FP8-rounding golden.  With the scale the test gives K (240 / 2.3, never undone
before QK^T) the scores are O(100) and the softmax is nearly an argmax: in a batch whose two
best scores are closer than what rounding q to bf16 and k to fp8 moves them, the weight shifts
from one V row to another, whichever of two correct implementations computes it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

import numpy as np

DEFAULT_ID = ("MODEL_WIP_GENERALITY_16-1-128-7168-None-1024-1024-1-32-True-False-True-False-False-"
              "True-True-False-False-bfloat16-1-2-False-True-False-False-False-None-True-True-"
              "default-1-1-False")
ROOT = Path(__file__).resolve().parents[2]


def _setup(base: Path):
    sys.path[:0] = [str(ROOT), str(base / "src"), str(base)]
    os.environ["NKI_SIMULATOR"] = "1"
    from tests.conformance import _nki_library_stubs  # noqa: F401  (fastisa.shim, stubs)
    import test.integration.nkilib.experimental.transformer.test_attention_block_tkg as T
    return T


def _copy(d):
    return {k: (np.array(v, copy=True) if isinstance(v, np.ndarray) else v) for k, v in d.items()}


def _golden(T, ki, lnc, fp8_rounding):
    import ml_dtypes
    import torch
    clamp, clip = torch.clamp, torch.Tensor.clip

    def r8(t):
        return torch.from_numpy(t.detach().numpy().astype(np.float32)
                                .astype(ml_dtypes.float8_e4m3).astype(np.float32))

    def fp8(args, kw):
        return any(v in (240, 240.0) for v in list(args) + [kw.get("min"), kw.get("max")])

    if fp8_rounding:
        torch.clamp = lambda x, *a, **k: r8(clamp(x, *a, **k)) if fp8(a, k) else clamp(x, *a, **k)
        torch.Tensor.clip = lambda s, *a, **k: r8(clip(s, *a, **k)) if fp8(a, k) else \
            clip(s, *a, **k)
    try:
        return T._golden_ref_via_torch(_copy(ki), lnc)
    finally:
        torch.clamp, torch.Tensor.clip = clamp, clip


def _run_kernel(T, ki, lnc):
    """The kernel on fastisa; returns its outputs and what attention_tkg saw (program 0)."""
    import nki
    import nkilib_src.nkilib.experimental.transformer.attention_block_tkg as abt
    from fastisa.nki import language
    seen = {}
    orig = abt.attention_tkg

    def attention_tkg(**kw):
        first = language._machine().program_id[0] == 0
        if first:
            seen.update({k: np.array(kw[k].data, copy=True) for k in ("q", "k_active", "v_active")})
            seen["cfg"] = kw["cfg"]
        r = orig(**kw)
        if first:
            seen["out"] = np.array(kw["out"].data, copy=True)
        return r

    abt.attention_tkg = attention_tkg
    os.environ["NKI_NC_VERSION"] = T.Platforms.TRN2.get_nc_gen()
    try:
        res = nki.cpu_simulate(nki.jit(T.attention_block_tkg_kernel_test_wrapper))[lnc](**_copy(ki))
    finally:
        abt.attention_tkg = orig
    return [np.asarray(r) for r in (res if isinstance(res, (list, tuple)) else [res])], seen


def _attention_f64(ki, seen, lnc):
    """[B, N, S, d] float64 attention of the kernel's inputs, and the top-2 score gaps [B, N, S]."""
    import torch
    from nkilib_src.nkilib.core.attention.attention_tkg_utils import \
        resize_cache_block_len_for_attention_tkg_kernel
    cfg = seen["cfg"]
    B, N, S, d, sp = cfg.bs, cfg.q_head, cfg.s_active, cfg.d_head, cfg.curr_sprior
    f = lambda a: np.asarray(a).astype(np.float64)                  # noqa: E731
    q = f(seen["q"]).reshape(d, B, N, S)
    k = f(seen["k_active"]).reshape(d, B, S)
    v = f(seen["v_active"]).reshape(B, S, d)
    kc, vc, m = f(ki["K_cache"]), f(ki["V_cache"]), ki["attention_mask"]
    table = ki.get("active_blocks_table")
    if cfg.block_len:       # the mask is in the harness's block layout (attention_tkg_torch)
        rbl, _ = resize_cache_block_len_for_attention_tkg_kernel(
            sp // cfg.block_len, cfg.block_len, lnc, 128, B, N, S, full_sprior=cfg.full_sprior,
            enable_fa_s_prior_tiling=cfg.enable_fa_s_prior_tiling)
        m = torch.from_numpy(np.ascontiguousarray(m, np.uint8)).permute(1, 2, 3, 0).reshape(
            (-1, rbl, 128)).permute(0, 2, 1).reshape((B, N, S, sp)).permute(3, 0, 1, 2).numpy()
    out = np.zeros((B, N, S, d))
    gap = np.zeros((B, N, S))
    for b in range(B):
        if cfg.block_len:
            kp = kc[table[b]].reshape(-1, d)[:sp].copy()
            vp = vc[table[b]].reshape(-1, d)[:sp].copy()
        else:
            kp = (kc[b, 0].T if not cfg.tp_k_prior else kc[b, 0])[:sp].copy()
            vp = vc[b, 0, :sp].copy()
        kp[sp - S:] = k[:, b].T
        vp[sp - S:] = v[b]
        for n in range(N):
            for s in range(S):
                sc = kp @ q[:, b, n, s]
                sc[m[:, b, n, s] == 0] = -np.inf
                top = np.sort(sc[np.isfinite(sc)])[::-1]
                gap[b, n, s] = top[0] - top[1] if top.size > 1 else np.inf
                p = np.exp(sc - sc.max())
                out[b, n, s] = (p / p.sum()) @ vp
    return out, gap


def _cos(a, b):
    a, b = np.asarray(a, np.float64).ravel(), np.asarray(b, np.float64).ravel()
    return float(a @ b / (np.linalg.norm(a) * np.linalg.norm(b) + 1e-300))


def check(T, case_id):
    cls = T.TestRangeAttnBlk
    cfg = dict(zip(cls._MODEL_IDS, cls._MODEL_PARAMS)).get(case_id)
    if cfg is None:
        raise SystemExit(f"no test_attn_blk_model case {case_id!r}")
    if cfg.KVDP != 1:
        raise SystemExit("single-rank (KVDP = 1) cases only")
    ki = T.generate_kernel_inputs(cfg)
    ref = _golden(T, ki, cfg.lnc, False)
    ref8 = _golden(T, ki, cfg.lnc, True)
    outs, seen = _run_kernel(T, ki, cfg.lnc)
    rtol, atol = T._get_tolerances(cfg.kv_quant, cfg.quantization_type)
    print(f"case {case_id}\n  rtol {rtol}, atol {atol}; the test needs cosine >= 0.99 and the "
          f"allclose pass rate (X_out {0.99 if cfg.kv_quant else 1.0}, others 1.0)")
    for (name, g), g8, o in zip(ref.items(), ref8.values(), outs):
        o = o.astype(np.float32)
        line = f"  {name:16s}"
        for label, gv in (("test's golden", g), ("golden with fp8 rounding", g8)):
            gv = gv.astype(np.float32)
            rate = float(np.mean(np.abs(o - gv) <= atol + rtol * np.abs(gv)))
            line += f" | {label}: cosine {_cos(o, gv):.6f}, pass rate {rate:.5f}"
        print(line)
    att, gap = _attention_f64(ki, seen, cfg.lnc)
    c = seen["cfg"]
    kout = np.asarray(seen["out"], np.float64)
    kout = kout.reshape(c.d_head, c.bs, c.q_head, c.s_active).transpose(1, 2, 3, 0) \
        if c.out_in_sb else kout.reshape(c.bs, c.q_head, c.d_head, c.s_active).transpose(0, 1, 3, 2)
    kx = dict(zip(ref8, outs)).get("X_out")
    per_b = cfg.transposed_out and kx is not None and kx.shape[-1] == cfg.batch * cfg.S_tkg
    print("  batch | attention_tkg out vs float64 of its inputs (cosine) | top-2 gap of those "
          "float64 scores | "
          "X_out vs golden with fp8 rounding (cosine)")
    for b in range(c.bs):
        xb = ""
        if per_b:
            sl = slice(b * cfg.S_tkg, (b + 1) * cfg.S_tkg)
            xb = f"{_cos(kx[..., sl], ref8['X_out'][..., sl]):.5f}"
        print(f"  {b:5d} | {_cos(kout[b], att[b]):.7f} | {gap[b].min():8.3f} | {xb}")


def main(argv=None) -> int:
    base = os.environ.get("FASTISA_NKI_LIBRARY")
    if not base or not (Path(base) / "test" / "integration").is_dir():
        print("nki_attn_fp8: skipped (FASTISA_NKI_LIBRARY is not set to an nki-library checkout)")
        return 0
    T = _setup(Path(base))
    for case_id in (argv if argv is not None else sys.argv[1:]) or [DEFAULT_ID]:
        check(T, case_id)
    return 0


if __name__ == "__main__":
    sys.exit(main())
