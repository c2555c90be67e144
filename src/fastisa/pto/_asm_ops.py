"""PTO-AS dialect op table: operand signature of every instruction the runner executes."""

from __future__ import annotations

# kind: "unary" ins(src); "binary" ins(a, b); "scalar" ins(src, s) (tdivs also (s, src));
# "expands" ins(s); "reduce" ins(src[, tmp]); "expand" ins(src); "expand2" ins(a, b[, tmp]);
# "colexpand2" ins(a, b);
# "cvt" ins(src{rmode}); "trans" ins(src[, tmp]); "load" / "store".

INSTRUCTIONS = {}
for _n in ("tabs", "tneg", "texp", "tlog", "tsqrt", "trsqrt", "trecip", "trelu", "tmov"):
    INSTRUCTIONS[_n] = "unary"
for _n in ("tadd", "tsub", "tmul", "tdiv", "tmax", "tmin", "tmatmul"):
    INSTRUCTIONS[_n] = "binary"
for _n in ("tadds", "tsubs", "tmuls", "tdivs", "tmaxs", "tmins"):
    INSTRUCTIONS[_n] = "scalar"
INSTRUCTIONS["texpands"] = "expands"
for _n in ("trowmax", "trowmin", "trowsum", "tcolmax", "tcolmin", "tcolsum"):
    INSTRUCTIONS[_n] = "reduce"
for _n in ("trowexpand", "tcolexpand"):
    INSTRUCTIONS[_n] = "expand"
for _s in ("add", "sub", "mul", "div", "max", "min", "expdif"):
    INSTRUCTIONS["trowexpand" + _s] = "expand2"
    INSTRUCTIONS["tcolexpand" + _s] = "colexpand2"
INSTRUCTIONS["tcvt"] = "cvt"
INSTRUCTIONS["ttrans"] = "trans"
INSTRUCTIONS["tload"] = "load"
INSTRUCTIONS["tstore"] = "store"

#: (min, max) number of tile/scalar inputs per kind.
_ARITY = {"unary": (1, 1), "binary": (2, 2), "scalar": (2, 2), "expands": (1, 1),
          "reduce": (1, 2), "expand": (1, 1), "expand2": (2, 3), "colexpand2": (2, 2),
          "cvt": (1, 1),
          "trans": (1, 2), "load": (1, 1), "store": (1, 1)}

ARITH_BINARY = {"addi", "subi", "muli", "divsi", "divui", "remsi", "remui", "ceildivsi",
                "floordivsi", "maxsi", "minsi", "maxui", "minui", "andi", "ori", "xori", "shli",
                "shrsi", "shrui", "addf", "subf", "mulf", "divf", "maximumf", "minimumf",
                "maxnumf", "minnumf", "remf", "ceildivui"}
ARITH_UNARY = {"negf"}
ARITH_CMP = {"cmpi", "cmpf"}
ARITH_FLOAT_OPS = {"addf", "subf", "mulf", "divf", "maximumf", "minimumf", "maxnumf",
                   "minnumf", "remf", "negf"}
ARITH_INT_OPS = ARITH_BINARY - ARITH_FLOAT_OPS
_CMPI_PREDICATES = ("eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge")
_CMPF_PREDICATES = ("false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq", "ugt",
                    "uge", "ult", "ule", "une", "uno", "true")
ARITH_CAST = {"index_cast", "index_castui", "extsi", "extui", "trunci", "sitofp", "uitofp",
              "fptosi", "fptoui", "extf", "truncf", "bitcast"}
ARITH_ALL = ARITH_BINARY | ARITH_CAST | ARITH_UNARY | ARITH_CMP | {"select"}

#: Every op of the PTO dialect as PTOAS defines it (op mnemonics of PTOAS
#: include/PTO/IR/PTOOps.td, hw-native-sys/PTOAS); names only.  A name here but not in
#: INSTRUCTIONS parses and raises NotImplementedError when run, unless the runner gives it
#: a meaning (views, scalars, pipes, events ...).
PTOAS_OPS = frozenset("""
addptr aic_initialize_pipe aiv_initialize_pipe alloc_tile alloc_multi_tile barrier barrier_sync
bind_tile bitcast build_async_session declare_eventid_array declare_tile declare_tile_memref
eventid_array_get eventid_array_set get_block_idx get_block_num get_buf get_subblock_idx
get_subblock_num get_tensor_view_dim import_reserved_buffer initialize_l2g2l_pipe
initialize_l2l_pipe load_scalar make_tensor_view mgather mscatter partition_view pointer_cast
print record_event reserve_buffer rls_buf section.cube section.vector set_ffts set_flag
set_flag_dyn set_validshape store_scalar subset subview sync.set sync.wait tabs tadd taddc tadds
taddsc tand tands tassign taxpy tci tcmp tcmps tcolargmax tcolargmin tcolexpand tcolexpandadd
tcolexpanddiv tcolexpandexpdif tcolexpandmax tcolexpandmin tcolexpandmul tcolexpandsub tcolmax
tcolmin tcolprod tcolsum tconcat tconcatidx tcvt tdequant tdiv tdivs test_async_event texp texpands
textract textract_fp tfillpad tfillpad_expand tfillpad_inplace tfmod tfmods tfree
tfree_from_aic tfree_from_aiv tgather tgatherb tgemv tgemv.acc tgemv.bias tgemv.mx tgemv.mx.acc
tgemv.mx.bias tget_async tget_scale_addr tgetval thistogram tinsert tinsert_fp tload tlog
tlrelu tmatmul tmatmul.acc tmatmul.bias tmatmul.mx tmatmul.mx.acc tmatmul.mx.bias tmax tmaxs
tmin tmins tmov tmov.fp tmrgsort tmul tmuls tneg tnot tor tors tpack tpartadd tpartmax tpartmin
tpartmul tpop tpop_from_aic tpop_from_aiv tprefetch tprelu tprint tpush tpush_to_aic
tpush_to_aiv tput_async tquant trandom trap trecip trelu trem trems treshape trowargmax
trowargmin trowexpand trowexpandadd trowexpanddiv trowexpandexpdif trowexpandmax trowexpandmin
trowexpandmul trowexpandsub trowmax trowmin trowprod trowsum trsqrt tscatter tsel tsels tsetval
tshl tshls tshr tshrs tsort32 tsqrt tstore tstore_fp tsub tsubc tsubs tsubsc tsync ttrans ttri
txor txors wait_async_event wait_event wait_flag wait_flag_dyn
store_dps textract_dps tcolexpand_dps tadds_dps tabs_dps
""".split())

#: Operations of the builtin MLIR dialects a PTOAS program may contain.
KNOWN_OPS = frozenset("""
scf.if scf.for scf.while scf.yield scf.condition scf.execute_region scf.index_switch
func.call func.return func.call_indirect memref.alloc memref.alloca memref.dealloc
memref.subview memref.reinterpret_cast memref.cast memref.load memref.store memref.dim
affine.apply affine.min affine.max index.castu index.casts arith.constant
math.exp math.sqrt math.absf math.rsqrt llvm.intr.assume ub.poison emitc.verbatim
""".split())

_SYNC_OPS = {"set_flag", "wait_flag", "barrier", "pipe_barrier", "record_event", "wait_event",
             "sync_set", "sync_wait", "get_buf", "rls_buf"}


# ---- issue 13 families (pto-isa helper): runner calls P.<NAME>(dst, *ins) ----
for _n in ("tand", "tor", "txor", "tshl", "tshr", "trem", "tfmod", "tprelu", "tpow",
           "tsubrelu", "tfusedmuladd", "tfusedmuladdrelu", "tmuladddst", "tpartadd",
           "tpartmul", "tpartmax", "tpartmin", "tgather", "tscatter", "tsort32", "tconcat"):
    INSTRUCTIONS[_n] = "binary"
for _n in ("tands", "tors", "txors", "tshls", "tshrs", "trems", "tfmods", "tlrelu", "tpows",
           "taxpy"):
    INSTRUCTIONS[_n] = "scalar"
INSTRUCTIONS["tnot"] = "unary"
INSTRUCTIONS["tfillpad"] = "unary"
INSTRUCTIONS["treshape"] = "unary"
for _n in ("trowprod", "tcolprod", "trowargmax", "trowargmin", "tcolargmax", "tcolargmin"):
    INSTRUCTIONS[_n] = "reduce"
for _n in ("taddc", "tsubc"):
    INSTRUCTIONS[_n] = "ternary"
INSTRUCTIONS["tsel"] = "sel"
INSTRUCTIONS["tgather"] = "gather"   # index form (src, indices) or compare form (src, k, tmp)
_ARITY["gather"] = (2, 3)
_ARITY["ternary"] = (3, 3)
_ARITY["sel"] = (3, 4)


# ---- PTO-AS registrations (ptoas helper): the API's instructions with PTOAS's operand
# forms (include/PTO/IR/PTOOps.td, hw-native-sys/PTOAS); the runner maps operands and
# attributes with fastisa.pto._asm_calls ----
for _n in ("tcmp", "tinterleave", "tdeinterleave"):
    INSTRUCTIONS[_n] = "binary"
for _n in ("tcmps",):
    INSTRUCTIONS[_n] = "scalar"
for _n in ("tci", "ttri"):
    INSTRUCTIONS[_n] = "expands"
for _n in ("taddsc", "tsubsc"):
    INSTRUCTIONS[_n] = "scalar"
for _n in ("textract", "tinsert"):
    INSTRUCTIONS[_n] = "scalar"
INSTRUCTIONS["tsels"] = "sels"
INSTRUCTIONS["tmrgsort"] = "any"
INSTRUCTIONS["tconcatidx"] = "any"      # ptoacc2: _asm_calls._tconcatidx
# fastisa's own DPS spellings of API instructions PTOAS does not define (the C++ operand
# order after dst): pto.tpairreducesum ins(%src) outs(%dst), pto.tadddeqrelu ins(%src0,
# %src1, %deqScale : T, T, f32[, %tmp : T]) outs(%dst)
INSTRUCTIONS["tpairreducesum"] = "any"
INSTRUCTIONS["tadddeqrelu"] = "any"
_ARITY["sels"] = (4, 4)
_ARITY["any"] = (0, 99)

#: Per-instruction (min, max) input counts where PTOAS's form has optional operands:
#: the ``tmp`` scratch tile of trsqrt/tcvt/trem/trems/tsort32, tgather's three forms
#: (mask: src; index: src, indices[, tmp]; compare: src, k, tmp), tstore/tmov's optional
#: quantisation operands.
_ARITY_BY_NAME = {"trsqrt": (1, 2), "tcvt": (1, 2), "trem": (2, 3), "trems": (2, 3),
                  "tsort32": (2, 3), "tgather": (1, 3), "textract": (3, 3),
                  "tinsert": (3, 3), "taddsc": (3, 3), "tsubsc": (3, 3),
                  "tinterleave": (2, 2), "tdeinterleave": (1, 2),
                  # TStoreOp's optional preQuantScalar, TMovOp's optional fp tile /
                  # preQuantScalar (the runner raises NotImplementedError for them)
                  "tstore": (1, 2), "tmov": (1, 2)}
#: Per-instruction (min, max) output counts (default exactly 1).
_OUTS_BY_NAME = {"tgather": (1, 2), "tmrgsort": (1, 2), "tinterleave": (2, 2),
                 "tdeinterleave": (2, 2)}

# ---- ptocomm helper: API instructions PTO-AS lacked.  PTOAS forms (PTOOps.td): tgatherb
# ins(src, offsets), tget_scale_addr ins(src), tgemv ins(lhs, rhs), tgemv.acc ins(acc_in, lhs,
# rhs), tgemv.bias ins(a, b, bias), thistogram ins(src, idx) {isMSB}, tfillpad_expand /
# tfillpad_inplace ins(src), tdequant ins(src, scale, offset), trandom ins(k0, k1, c0..c3).
# fastisa's own spellings (no PTOAS op): tpartargmax / tpartargmin ins(%src0Val, %src1Val,
# %src0Idx, %src1Idx) outs(%dstVal, %dstIdx); tsubview ins(%src, %row, %col : T, index,
# index) outs(%dst) ----
for _n in ("tgatherb", "tget_scale_addr", "tgemv", "tgemv.acc", "tgemv.bias", "thistogram",
           "tfillpad_expand", "tfillpad_inplace", "tdequant", "trandom", "tpartargmax",
           "tpartargmin", "tsubview"):
    INSTRUCTIONS[_n] = "any"
_ARITY_BY_NAME.update({"tgatherb": (2, 2), "tget_scale_addr": (1, 1), "tgemv": (2, 2),
                       "tgemv.acc": (3, 3), "tgemv.bias": (3, 3), "thistogram": (2, 2),
                       "tfillpad_expand": (1, 1), "tfillpad_inplace": (1, 1),
                       "tdequant": (3, 3), "trandom": (6, 6), "tpartargmax": (4, 4),
                       "tpartargmin": (4, 4), "tsubview": (1, 3)})
_OUTS_BY_NAME.update({"tpartargmax": (2, 2), "tpartargmin": (2, 2)})

# ---- ptoseek: the optional/required scratch operands of the 2026-07 PTOAS forms
# (include/PTO/IR/PTOOps.td: TXorOp / TXorSOp / TPReluOp ins(src0, src1|scalar, tmp), TPowOp
# / TPowSOp / TCIOp an Optional tmp).  The tmp tile is scratch: the APIs take it and the
# result does not depend on it (pto-isa docs/isa/TXOR.md, TPRELU.md, TPOW.md, TCI.md) ----
_ARITY_BY_NAME.update({"txor": (2, 3), "txors": (2, 3), "tprelu": (2, 3), "tpow": (2, 3),
                       "tpows": (2, 3), "tci": (1, 2)})
PTOAS_OPS = PTOAS_OPS | {"multi_tile_get"}       # ptoseek: PTOOps.td MultiTileGetOp
# ptoseek: PTOOps.td GetValidShapeOp, DeclareLocalArrayOp / LocalArraySetOp / GetOp; MLIR's
# builtin.unrealized_conversion_cast
PTOAS_OPS = PTOAS_OPS | {"get_validshape", "declare_local_array", "local_array_set",
                         "local_array_get"}
KNOWN_OPS = KNOWN_OPS | {"builtin.unrealized_conversion_cast"}
_ARITY_BY_NAME.update({"textract": (3, 4)})     # ptoseek: TExtractOp's Optional preQuantScalar
PTOAS_OPS = PTOAS_OPS | {"get_tensor_view_stride"}        # ptoseek
_ARITY_BY_NAME.update({"tscatter": (1, 2)})     # ptoseek: the maskPattern form
KNOWN_OPS = KNOWN_OPS | {"pto.comm.tput", "pto.comm.tget", "pto.comm.tnotify", "pto.comm.twait", "pto.comm.ttest"}   # ptoseek
KNOWN_OPS = KNOWN_OPS | {"pto.comm.tbroadcast", "pto.comm.treduce", "pto.comm.tgather",
                         "pto.comm.tscatter", "pto.comm.build_async_session",
                         "pto.comm.tput_async", "pto.comm.tget_async",
                         "pto.comm.wait_async_event", "pto.comm.test_async_event"}  # ptomg
# ptomg: PTOOps.td TQuantMxOp ins(src) outs(dst, exp, max, scaling[, exp_zz])
INSTRUCTIONS["tquant.mx"] = "any"
PTOAS_OPS = PTOAS_OPS | {"tquant.mx"}
_ARITY_BY_NAME.update({"tquant.mx": (1, 1)})
_OUTS_BY_NAME.update({"tquant.mx": (4, 5)})
PTOAS_OPS = PTOAS_OPS | {"talloc_to_aiv", "talloc_to_aic",    # ptomg: TAllocToAiv/AicOp,
                         "declare_global", "talloc"}          # DeclareGlobalOp, TAllocOp
PTOAS_OPS = PTOAS_OPS | {"get_ctrl", "set_ctrl", "sbitset0", "sbitset1"}   # ptoacc: VPTOOps.td
PTOAS_OPS = PTOAS_OPS | {"syncall"}          # ptoacc: PTOOps.td SyncAllOp
PTOAS_OPS = PTOAS_OPS | {"tprefetch_async", "make_prefetch_async_context",   # ptoacc
                         "get_prefetch_async_session"}
KNOWN_OPS = KNOWN_OPS | {"pto.comm.wait_async_event", "pto.comm.test_async_event"}  # ptoacc
