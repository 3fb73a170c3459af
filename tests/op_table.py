"""THE table of element-wise ops: one entry per op drives test_ops_elementwise.py and
test_mlx_diff.py.

Each `Op` has: the framework function name, arity, a NumPy reference (computed in float64 /
complex128 for inexact results, in the input's own dtype for integer results, so wrap-around
matches), the dtypes it accepts, an input domain per argument, tolerances per result dtype and a
result-dtype rule. The name, arity, reference, accepted dtypes and result rule come from the op
registry's element-wise rows (python/nuvec/_registry.py); TESTS below adds the test concerns by
name (domains, tolerances, narrower dtypes), so a new registry row is tested with the defaults.
"""

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np

from helpers import (
    ALL,
    BOOL_INT,
    COMPLEX,
    FLOATS,
    FMAX,
    INEXACT,
    INTS,
    NO_COMPLEX,
    NP,
    UINTS,
    at_least_float,
    np_values,
    promote,
)
from op_registry import registry, resolve


# ----------------------------------------------------------------------------- domains
@dataclass(frozen=True)
class Domain:
    """Where one input's values are drawn from.

    kind:
      "real"    floats uniform in (lo, hi); ints uniform in [int_lo, int_hi] (default
                [ceil(lo), floor(hi)]) clipped to the dtype; bool random; complex parts in cplx.
      "nonzero" |x| in [lo, hi] with a random sign (ints: [max(1, int_lo), int_hi]; bool: True).
      "pow2"    +-2**k, k in [-2, 3] (ints: nonzero in [1, 8] with sign; bool: True), so that
                quotients are exact in every precision.
      "full"    ints over the dtype's whole range (floats as "real").
      "shift"   shift amounts in [0, bits - 1].
      "bool"    always bool (where's condition).
      "decimals2" floats whose value*100 is never near a rounding tie.
    zero_frac / special_frac: fraction of elements replaced by 0 / by nan, inf, -inf (complex
    values get them only with special_complex: the ordering of complex NaNs is not pinned down).
    """

    kind: str = "real"
    lo: float = -5.0
    hi: float = 5.0
    int_lo: int | None = None
    int_hi: int | None = None
    cplx: tuple = (-2.0, 2.0)
    zero_frac: float = 0.0
    special_frac: float = 0.0
    special_complex: bool = False

    def _int_bounds(self, name):
        info = np.iinfo(NP[name])
        if self.kind == "full":
            return int(info.min), int(info.max)
        lo = self.int_lo if self.int_lo is not None else math.ceil(self.lo)
        hi = self.int_hi if self.int_hi is not None else math.floor(self.hi)
        lo, hi = max(lo, int(info.min)), min(hi, int(info.max))
        if lo > hi:
            raise ValueError(f"empty integer domain {self} for {name}")
        return lo, hi

    def sample(self, rng, shape, name):
        """NumPy values (held in helpers.NP[name]) exactly representable in dtype `name`."""
        n = int(np.prod(shape, dtype=np.int64))
        if self.kind == "bool" or name == "bool":
            if self.kind in ("nonzero", "pow2"):
                v = np.ones(n, dtype=bool)
            else:
                v = rng.random(n) < 0.5
            return v.reshape(shape)
        if name in INTS:
            v = self._sample_int(rng, n, name)
        elif name in COMPLEX:
            lo, hi = self.cplx
            v = rng.uniform(lo, hi, n) + 1j * rng.uniform(lo, hi, n)
            if self.kind in ("nonzero", "pow2"):
                small = np.abs(v) < 0.25
                v[small] = 0.5 + 0.5j
        else:
            v = self._sample_float(rng, n, name)
        if self.zero_frac:
            v[rng.random(n) < self.zero_frac] = 0
        v = np_values(v, name)
        if self.special_frac and (name in FLOATS or (self.special_complex and name in COMPLEX)):
            mask = rng.random(n) < self.special_frac
            specials = np.array([np.nan, np.inf, -np.inf])[rng.integers(0, 3, n)]
            if name in COMPLEX:
                re_or_im = rng.random(n) < 0.5
                v = v.astype(np.complex64)
                v.real[mask & re_or_im] = specials[mask & re_or_im]
                v.imag[mask & ~re_or_im] = specials[mask & ~re_or_im]
            else:
                v[mask] = specials[mask]
        return v.reshape(shape)

    def _sample_int(self, rng, n, name):
        dt = NP[name]
        if self.kind == "shift":
            return rng.integers(0, np.dtype(dt).itemsize * 8, n).astype(dt)
        lo, hi = self._int_bounds(name)
        if self.kind in ("nonzero", "pow2"):
            hi = 8 if self.kind == "pow2" else hi
            mag = rng.integers(max(1, lo if lo > 0 else 1), max(hi, 1) + 1, n)
            if name in UINTS:
                return mag.astype(dt)
            return (mag * rng.choice([-1, 1], n)).astype(dt)
        return rng.integers(lo, hi, n, dtype=dt, endpoint=True)

    def _sample_float(self, rng, n, name):
        if self.kind == "nonzero":
            return rng.uniform(self.lo, self.hi, n) * rng.choice([-1.0, 1.0], n)
        if self.kind == "pow2":
            return rng.choice([-1.0, 1.0], n) * 2.0 ** rng.integers(-2, 4, n)
        v = rng.uniform(self.lo, self.hi, n)
        if self.kind == "decimals2":
            v = np_values(v, name).astype(np.float64)
            frac = np.abs(v * 100) % 1.0
            v[np.abs(frac - 0.5) < 0.05] = 0.25
        return v


REAL = Domain()
WIDE = Domain(lo=-10.0, hi=10.0, int_lo=-100, int_hi=100)
POS = Domain(lo=0.1, hi=10.0, int_lo=1, int_hi=10)
NONNEG = Domain(lo=0.0, hi=10.0, int_lo=0, int_hi=10)
UNIT = Domain(lo=-0.99, hi=0.99, int_lo=-1, int_hi=1)
INNER = Domain(lo=-0.9, hi=0.9, int_lo=0, int_hi=0)
FULL = Domain(kind="full", lo=-100.0, hi=100.0)
SPECIAL = Domain(lo=-10.0, hi=10.0, int_lo=-100, int_hi=100, special_frac=0.3, zero_frac=0.1)
SPECIAL_C = Domain(
    lo=-10.0,
    hi=10.0,
    int_lo=-100,
    int_hi=100,
    special_frac=0.3,
    zero_frac=0.1,
    special_complex=True,
)
SPARSE = Domain(lo=-5.0, hi=5.0, zero_frac=0.4)
BOOLS = Domain(kind="bool")


# ----------------------------------------------------------------------------- result rules
def same(*names):
    return promote(*names)


def floatish(*names):
    return at_least_float(promote(*names))


def boolean(*names):
    return "bool"


def real_part(*names):
    p = promote(*names)
    return "float32" if p == "complex64" else p


def shift_rule(*names):
    p = promote(*names)
    return "uint8" if p == "bool" else p


# ----------------------------------------------------------------------------- tolerances
BASE_TOL = {
    "float16": (2e-3, 1e-3),
    "bfloat16": (1.6e-2, 1e-2),
    "float32": (1e-5, 1e-6),
    "float64": (1e-12, 1e-13),
    "complex64": (1e-5, 1e-6),
}


def tol(**overrides):
    t = dict(BASE_TOL)
    t.update(overrides)
    return t


# ----------------------------------------------------------------------------- references
# The registry's "op_table.<name>" references (NumPy lacks these, or lacks their bool loops).
def _bool_via_int(f):
    """NumPy lacks bool loops for some ufuncs (sign, subtract): compute on ints and cast."""

    def ref(*args):
        if all(np.asarray(a).dtype == np.bool_ for a in args):
            return f(*[np.asarray(a).astype(np.int64) for a in args]).astype(bool)
        return f(*args)

    return ref


sign = _bool_via_int(np.sign)
subtract = _bool_via_int(np.subtract)


def sigmoid(x):
    return 1.0 / (1.0 + np.exp(-x))


def rsqrt(x):
    return 1.0 / np.sqrt(x)


def nan_to_num(x, dt):
    if dt in FLOATS:
        return np.nan_to_num(x, nan=0.0, posinf=FMAX[dt], neginf=-FMAX[dt])
    return x


def degrees(x):
    return x * (180.0 / np.pi)


def radians(x):
    return x * (np.pi / 180.0)


def clip(x, lo, hi):
    return np.minimum(np.maximum(x, lo), hi)


def identity(x):
    return x


def equal_nan(a, b):
    return (a == b) | (np.isnan(a) & np.isnan(b))


@dataclass(frozen=True)
class Op:
    name: str
    arity: int
    ref: Callable
    dtypes: tuple = ALL
    domains: tuple = (REAL,)
    result: Callable = same
    tol: dict = field(default_factory=tol)
    kwargs: dict = field(default_factory=dict)
    id: str | None = None
    # Fraction of the second input's elements copied from the first (so comparisons see ties).
    pair: float = 0.0
    # Input slots whose dtype is fixed (e.g. where's condition) rather than the test dtype.
    fixed: dict = field(default_factory=dict)
    n_out: int = 1
    ref_wants_dtype: bool = False
    # The result is a scalar (allclose, array_equal): no broadcasting shape checks.
    reduces: bool = False
    # MLX 0.32 computes this op's float64 case in single precision; nuvec computes it in double
    # (COMPAT.md), so the float64 case is nuvec_only when checked against NumPy.
    mlx_f64_lowp: bool = False

    @property
    def test_id(self):
        return self.id or self.name

    def domain(self, i):
        return self.domains[i] if i < len(self.domains) else self.domains[-1]

    def slot_dtypes(self, dt):
        return tuple(self.fixed.get(i, dt) for i in range(self.arity))

    def result_dtype(self, dt):
        names = [d for i, d in enumerate(self.slot_dtypes(dt)) if i not in self.fixed]
        return self.result(*names)

    def sample(self, rng, shapes, dt):
        """NumPy inputs for dtype `dt`, one per argument, of the given shapes."""
        names = self.slot_dtypes(dt)
        xs = [self.domain(i).sample(rng, shapes[i], names[i]) for i in range(self.arity)]
        if self.pair and self.arity >= 2 and shapes[0] == shapes[1]:
            mask = rng.random(shapes[1]) < self.pair
            xs[1] = np.where(mask, xs[0], xs[1]).astype(xs[1].dtype)
        return xs

    def call(self, mx, *xs, **extra):
        kw = dict(self.kwargs)
        kw.update(extra)
        return getattr(mx, self.name)(*xs, **kw)

    def reference(self, xs, dt):
        """The NumPy oracle: a list of n_out arrays of the expected result values."""
        res = self.result_dtype(dt)
        names = self.slot_dtypes(dt)
        ins = []
        for i, (x, name) in enumerate(zip(xs, names)):
            if i in self.fixed:
                ins.append(np.asarray(x))
            elif name in COMPLEX or res in COMPLEX:
                ins.append(np.asarray(x).astype(np.complex128))
            elif name in FLOATS or res in FLOATS:
                ins.append(np.asarray(x).astype(np.float64))
            else:
                ins.append(np.asarray(x))
        with np.errstate(all="ignore"):
            kw = dict(self.kwargs)
            if self.ref_wants_dtype:
                kw["dt"] = dt
            out = self.ref(*ins, **kw)
        outs = list(out) if self.n_out > 1 else [out]
        result = []
        for o in outs:
            o = np.asarray(o)
            if res in INEXACT:
                o = o.astype(np.complex128 if res in COMPLEX else np.float64)
            else:
                with np.errstate(all="ignore"):
                    o = o.astype(NP[res])
            result.append(o)
        return result

    def tolerance(self, dt):
        res = self.result_dtype(dt)
        return self.tol.get(res, (0.0, 0.0))


TRANSC_TOL = tol(float32=(2e-5, 1e-6), complex64=(5e-5, 5e-6))
FLOAT_NOT_F64 = tuple(d for d in ALL if d not in ("float64", "complex64"))
SHIFTED = (Domain(lo=-20.0, hi=20.0, int_lo=-100, int_hi=100), Domain(kind="pow2"))

# The registry's result rules and dtype sets as the tests spell them.
RESULT_RULES = {
    "same": same,
    "float": floatish,
    "bool": boolean,
    "logical": boolean,
    "real_part": real_part,
    "shift": shift_rule,
}
DTYPE_SETS = {
    "all": ALL,
    "no_bool": tuple(d for d in ALL if d != "bool"),
    "no_complex": NO_COMPLEX,
    "integers": BOOL_INT,
}

# Test concerns by registry name: input domains, tolerances, and dtypes narrower than the registry's
# (where NumPy or MLX lacks a case). Any other Op field may be given too.
TESTS = {
    # ---------------------------------------------------------------- unary
    "abs": dict(domains=(WIDE,)),
    "negative": dict(domains=(WIDE,)),
    "sign": dict(domains=(SPARSE,)),
    "sqrt": dict(domains=(NONNEG,), tol=TRANSC_TOL),
    "rsqrt": dict(domains=(POS,), tol=TRANSC_TOL),
    "square": dict(domains=(WIDE,)),
    "reciprocal": dict(domains=(Domain(kind="nonzero", lo=0.5, hi=10.0, int_lo=1, int_hi=10),)),
    "exp": dict(mlx_f64_lowp=True, tol=TRANSC_TOL),
    "expm1": dict(domains=(Domain(lo=-3.0, hi=3.0),), tol=TRANSC_TOL),
    "log": dict(domains=(POS,), tol=TRANSC_TOL),
    "log1p": dict(domains=(Domain(lo=-0.9, hi=10.0, int_lo=0, int_hi=10),), tol=TRANSC_TOL),
    "log2": dict(domains=(POS,), tol=TRANSC_TOL),
    "log10": dict(domains=(POS,), tol=TRANSC_TOL),
    "sin": dict(mlx_f64_lowp=True, tol=TRANSC_TOL),
    "cos": dict(mlx_f64_lowp=True, tol=TRANSC_TOL),
    "tan": dict(domains=(Domain(lo=-1.2, hi=1.2, cplx=(-1.0, 1.0)),), tol=TRANSC_TOL),
    "arcsin": dict(domains=(UNIT,), tol=TRANSC_TOL),
    "arccos": dict(domains=(UNIT,), tol=TRANSC_TOL),
    "arctan": dict(tol=TRANSC_TOL),
    "sinh": dict(tol=TRANSC_TOL),
    "cosh": dict(tol=TRANSC_TOL),
    "tanh": dict(tol=TRANSC_TOL),
    "arcsinh": dict(tol=TRANSC_TOL),
    "arccosh": dict(domains=(Domain(lo=1.0, hi=10.0, int_lo=1, int_hi=10),), tol=TRANSC_TOL),
    "arctanh": dict(domains=(INNER,), tol=TRANSC_TOL),
    "erf": dict(domains=(Domain(lo=-3.0, hi=3.0),), mlx_f64_lowp=True, tol=TRANSC_TOL),
    "erfinv": dict(
        domains=(INNER,), mlx_f64_lowp=True, tol=tol(float32=(1e-4, 1e-6), float64=(1e-6, 1e-7))
    ),
    "sigmoid": dict(domains=(Domain(lo=-10.0, hi=10.0),), mlx_f64_lowp=True, tol=TRANSC_TOL),
    "floor": dict(domains=(WIDE,)),
    "ceil": dict(domains=(WIDE,)),
    "round": dict(domains=(WIDE,)),
    "isnan": dict(domains=(SPECIAL_C,)),
    "isinf": dict(domains=(SPECIAL_C,)),
    "isposinf": dict(dtypes=NO_COMPLEX, domains=(SPECIAL,)),  # NumPy's takes no complex
    "isneginf": dict(dtypes=NO_COMPLEX, domains=(SPECIAL,)),
    "isfinite": dict(domains=(SPECIAL_C,)),
    "logical_not": dict(domains=(SPARSE,)),
    "bitwise_invert": dict(domains=(FULL,)),
    "conjugate": dict(domains=(WIDE,)),
    "real": dict(domains=(WIDE,)),
    "imag": dict(domains=(WIDE,)),
    "degrees": dict(tol=TRANSC_TOL),
    "radians": dict(tol=TRANSC_TOL),
    "stop_gradient": dict(domains=(WIDE,)),
    "positive": dict(domains=(WIDE,)),
    "trunc": dict(domains=(SPECIAL,)),
    # MLX's nan_to_num takes no float64 or complex64.
    "nan_to_num": dict(dtypes=FLOAT_NOT_F64, domains=(SPECIAL,), ref_wants_dtype=True),
    # ---------------------------------------------------------------- binary
    "add": dict(domains=(WIDE,)),
    "subtract": dict(domains=(WIDE,)),
    "multiply": dict(domains=(WIDE,)),
    "divide": dict(domains=(WIDE, Domain(kind="nonzero", lo=0.5, hi=10.0, int_lo=1, int_hi=10))),
    "floor_divide": dict(domains=SHIFTED),
    "remainder": dict(domains=SHIFTED),
    "divmod": dict(domains=SHIFTED, n_out=2),
    "power": dict(
        domains=(
            Domain(lo=0.1, hi=3.0, int_lo=-3, int_hi=3, cplx=(-1.5, 1.5)),
            Domain(lo=-3.0, hi=3.0, int_lo=0, int_hi=4, cplx=(-1.0, 1.0)),
        ),
        tol=tol(float32=(5e-5, 1e-6), complex64=(2e-4, 1e-5)),
    ),
    "maximum": dict(domains=(SPECIAL,), pair=0.3),
    "minimum": dict(domains=(SPECIAL,), pair=0.3),
    **{
        name: dict(domains=(SPECIAL,), pair=0.5)
        for name in (
            "equal",
            "not_equal",
            "less",
            "less_equal",
            "greater",
            "greater_equal",
            "isclose",
        )
    },
    "logical_and": dict(domains=(SPARSE,)),
    "logical_or": dict(domains=(SPARSE,)),
    "logical_xor": dict(domains=(SPARSE,)),
    "bitwise_and": dict(domains=(FULL,)),
    "bitwise_or": dict(domains=(FULL,)),
    "bitwise_xor": dict(domains=(FULL,)),
    "left_shift": dict(domains=(FULL, Domain(kind="shift"))),
    "right_shift": dict(domains=(FULL, Domain(kind="shift"))),
    "arctan2": dict(tol=TRANSC_TOL),
    # NumPy's logaddexp takes no complex: test_op_corners.py compares complex with MLX.
    "logaddexp": dict(
        dtypes=NO_COMPLEX, domains=(Domain(lo=-10.0, hi=10.0),), mlx_f64_lowp=True, tol=TRANSC_TOL
    ),
    "allclose": dict(pair=1.0, reduces=True),
    "array_equal": dict(pair=1.0, reduces=True),
    # ---------------------------------------------------------------- ternary
    "where": dict(domains=(BOOLS, WIDE, WIDE), fixed={0: "bool"}),
    "clip": dict(dtypes=NO_COMPLEX, domains=(WIDE,)),  # MLX's clip takes no complex
}


def _from_registry(row, **overrides):
    """The test entry of an element-wise registry row, with TESTS' concerns (and `overrides`)."""
    kw = dict(TESTS.get(row.name, {}), **overrides)
    dtypes = kw.pop("dtypes", DTYPE_SETS[row.accepts])
    return Op(
        row.name,
        row.arity,
        resolve(row.reference),
        dtypes,
        kw.pop("domains", (REAL,)),
        RESULT_RULES[row.dtype],
        **kw,
    )


ELEMENTWISE_ROWS = [op for op in registry.OPS if op.family == "elementwise" and op.public]
_ROWS = {op.name: op for op in ELEMENTWISE_ROWS}

OPS = [_from_registry(row) for row in ELEMENTWISE_ROWS] + [
    # More cases of one op (their own id).
    _from_registry(
        _ROWS["round"],
        dtypes=("float32", "float64"),
        domains=(Domain(kind="decimals2", lo=-5.0, hi=5.0),),
        kwargs={"decimals": 2},
        id="round_decimals2",
        mlx_f64_lowp=True,
    ),
]

OPS_BY_ID = {op.test_id: op for op in OPS}
assert len(OPS_BY_ID) == len(OPS), "duplicate op ids"

UNARY = [op for op in OPS if op.arity == 1]
BINARY = [op for op in OPS if op.arity == 2]
TERNARY = [op for op in OPS if op.arity == 3]

# Every op name the foundation must provide.
REQUIRED_NAMES = sorted({op.name for op in OPS})


def cases(ops=OPS):
    """(op, dtype) parameters with readable ids; float64 cases that MLX computes in single
    precision are marked nuvec_only."""
    import pytest

    out = []
    for op in ops:
        for dt in op.dtypes:
            marks = [pytest.mark.nuvec_only] if (op.mlx_f64_lowp and dt == "float64") else []
            out.append(pytest.param(op, dt, id=f"{op.test_id}-{dt}", marks=marks))
    return out


def dtypes_checked(op, is_mlx):
    """The dtypes whose values are checked against NumPy for `op` under this implementation."""
    if is_mlx and op.mlx_f64_lowp:
        return tuple(d for d in op.dtypes if d != "float64")
    return op.dtypes


def case_id(val):
    if isinstance(val, Op):
        return val.test_id
    return None
