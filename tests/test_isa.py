"""The AVX2 and portable kernel builds agree with NumPy (and so with the AVX-512 build):
each runs in a subprocess forced with NUVEC_CPU_ISA."""

import json
import os
import subprocess
import sys

import numpy as np
import pytest

from _impl import IS_MLX

pytestmark = pytest.mark.nuvec_only

SCRIPT = r"""
import json, sys
import numpy as np
import nuvec as mx
rng = np.random.default_rng(7)
x = rng.uniform(-3, 3, 1037).astype(np.float32)       # not a multiple of any vector width
y = rng.uniform(0.5, 3, 1037).astype(np.float32)
X, Y = mx.array(x), mx.array(y)
out = {"isa": mx._core._cpu_isa()}
for name in ["exp", "sin", "cos", "tanh", "log1p", "erf", "sigmoid", "arctan", "sqrt", "abs", "floor"]:
    arg = Y if name in ("log1p", "sqrt") else X
    out[name] = np.asarray(getattr(mx, name)(arg)).astype(float).tolist()
for name in ["add", "multiply", "divide", "power", "arctan2", "maximum", "remainder", "less_equal"]:
    out[name] = np.asarray(getattr(mx, name)(X, Y)).astype(float).tolist()
i = mx.array(rng.integers(-50, 50, 333).astype(np.int32))
out["floor_divide_int"] = np.asarray(mx.floor_divide(i, 7)).tolist()
out["half"] = np.asarray(mx.array(x, dtype=mx.float16) * 2).astype(float).tolist()
json.dump(out, sys.stdout)
"""

REFERENCE = {
    "exp": np.exp,
    "sin": np.sin,
    "cos": np.cos,
    "tanh": np.tanh,
    "log1p": np.log1p,
    "sigmoid": lambda v: 1 / (1 + np.exp(-v)),
    "arctan": np.arctan,
    "sqrt": np.sqrt,
    "abs": np.abs,
    "floor": np.floor,
}


def run(isa):
    env = dict(os.environ, NUVEC_CPU_ISA=isa)
    res = subprocess.run(
        [sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, timeout=120
    )
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


@pytest.mark.skipif(IS_MLX, reason="nuvec's kernel builds")
@pytest.mark.parametrize("isa", ["portable", "avx2", "avx512"])
def test_kernel_build_matches_numpy(isa):
    import scipy.special

    out = run(isa)
    if isa != "portable" and out["isa"] != isa:
        pytest.skip(f"this processor runs {out['isa']}, not {isa}")
    rng = np.random.default_rng(7)
    x = rng.uniform(-3, 3, 1037).astype(np.float32).astype(np.float64)
    y = rng.uniform(0.5, 3, 1037).astype(np.float32).astype(np.float64)
    for name, f in dict(REFERENCE, erf=scipy.special.erf).items():
        arg = y if name in ("log1p", "sqrt") else x
        np.testing.assert_allclose(out[name], f(arg), rtol=2e-6, atol=1e-6, err_msg=f"{isa} {name}")
    binary = {
        "add": np.add,
        "multiply": np.multiply,
        "divide": np.divide,
        "power": np.power,
        "arctan2": np.arctan2,
        "maximum": np.maximum,
        "remainder": np.remainder,
        "less_equal": np.less_equal,
    }
    for name, f in binary.items():
        np.testing.assert_allclose(
            out[name], f(x, y), rtol=2e-6, atol=1e-6, err_msg=f"{isa} {name}"
        )
    i = rng.integers(-50, 50, 333).astype(np.int32)
    assert out["floor_divide_int"] == (i // 7).tolist()
    np.testing.assert_allclose(out["half"], x.astype(np.float16).astype(np.float64) * 2, rtol=1e-3)
