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
                "floordivsi", "maxsi", "minsi", "addf", "subf", "mulf", "divf", "maximumf",
                "minimumf"}
ARITH_CAST = {"index_cast", "index_castui", "extsi", "extui", "trunci", "sitofp", "uitofp",
              "fptosi", "fptoui", "extf", "truncf"}

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
_ARITY["ternary"] = (3, 3)
_ARITY["sel"] = (3, 4)
