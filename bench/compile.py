"""Issue 14's speed rows: nuvec.compile beside the uncompiled run, PyTorch eager and torch.compile
(CPU, 2 threads), in one run. Each framework runs in processes of its own, alternating (PyTorch's
OpenMP workers spin after a call and slow nuvec when interleaved in one process); a cell is the
median of the rounds' medians. Every row checks its result against NumPy float64 once before
timing (WRONG in the cell when it differs).

    PYTHONPATH=$PWD/python python bench/compile.py [--quick] [--only GROUP[,GROUP]] [--rounds 3]

Groups: bandwidth (the reference: `a + b` and an in-place add on 16M float32, the best is the
bandwidth of the % columns; it runs from this VM's 480 MiB L3; the `mem` shares divide by the
memory's, STREAM's rule: read + write in place over 4 x the last-level cache), unary_chain,
gelu, layer_norm, dispatch (0-d arrays, per call), mlp_step (bench/nn_step.py's MLP with Adam,
model and optimizer state captured).
Prints markdown tables to paste into bench/RESULTS.md.
"""

import argparse
import datetime
import functools
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time
from importlib.metadata import version
from importlib.util import find_spec
from types import SimpleNamespace

import numpy as np

import compile_mlp
from _common import machine_bandwidth, median_time, median_times_alternating, memory_bandwidth

N, SIDE = 1 << 24, 4096
FRAMEWORKS = {"nuvec": ("nuvec", "nuvec compiled"), "torch": ("torch eager", "torch.compile")}
MLP_ROW = "mlp_train_step (784-1024-1024-10, batch 256, Adam)"
GROUPS = ("bandwidth", "unary_chain", "gelu", "layer_norm", "dispatch", "mlp_step")
# The memory's bandwidth (bench/_common.py): a 16M float32 row's 128 MB do not stay in this VM's
# cache between passes, but the in-place rows' 64 MB do, at about twice the rate.
MEMORY_ROW = "NumPy in place on 2 threads, 4 x the last-level cache (STREAM's rule): memory"


class NotAvailable(Exception):
    """A column that cannot run here (no compile in this build, torch.compile failing)."""


# The rows' functions, written once for every library `L` (nuvec, torch, NumPy float64).


def unary_chain(L, x):
    return L.exp(L.sin(x)) * 2 + 1


def gelu_erf(L, x):
    return x * (1 + L.erf(x / math.sqrt(2))) / 2


def layer_norm(L, x):
    m, v = L.mean(x), L.var(x)
    return (x - m) * L.rsqrt(v + 1e-5)


def layer_norm_affine(L, x, w, b):
    return layer_norm(L, x) * w + b


def ten_ops(L, x):
    y = L.exp((x * 2 + 1) * x - 3)  # 5 ops
    return L.sqrt(L.abs(L.sin(y) * x + 0.5))  # 5 more


def one_op(L, x, y):
    return x + y


def _numpy_lib():
    return SimpleNamespace(
        exp=np.exp,
        sin=np.sin,
        abs=np.abs,
        sqrt=np.sqrt,
        # math.erf is exact in float64; NumPy has no erf (the gelu check runs on a subsample).
        erf=np.frompyfunc(math.erf, 1, 1),
        rsqrt=lambda v: 1 / np.sqrt(v),
        mean=lambda x: x.mean(-1, keepdims=True),
        var=lambda x: x.var(-1, keepdims=True),
    )


def _nuvec_lib():
    import nuvec as mx

    def call(f, *args):
        out = f(*args)
        mx.eval(out)
        return out

    def compile_(f, **kw):
        if not hasattr(mx, "compile"):
            raise NotAvailable("no compile")
        if os.environ.get("NUVEC_DISABLE_COMPILE", "") not in ("", "0", "false", "False"):
            raise NotAvailable("NUVEC_DISABLE_COMPILE is set")  # compile would pass through
        return mx.compile(f, **kw)

    return SimpleNamespace(
        mx=mx,
        array=mx.array,
        call=call,
        compile=compile_,
        numpy=np.array,
        exp=mx.exp,
        sin=mx.sin,
        abs=mx.abs,
        sqrt=mx.sqrt,
        erf=mx.erf,
        rsqrt=mx.rsqrt,
        mean=lambda x: mx.mean(x, axis=-1, keepdims=True),
        var=lambda x: mx.var(x, axis=-1, keepdims=True),
    )


def _torch_lib():
    import torch

    torch.set_num_threads(2)
    probe = {}

    def compile_(f, **kw):
        # Inductor needs a C++ compiler on CPU: try a tiny function once, report why it failed.
        if "error" not in probe:
            try:
                torch.compile(lambda t: t + 1)(torch.ones(4))
                probe["error"] = None
            except Exception as e:  # noqa: BLE001 (any failure means the column is n/a)
                probe["error"] = f"{type(e).__name__}: {str(e).splitlines()[0][:80]}"
        if probe["error"]:
            raise NotAvailable(probe["error"])
        return torch.compile(f, **kw)

    return SimpleNamespace(
        torch=torch,
        array=torch.from_numpy,
        call=lambda f, *args: f(*args),
        compile=compile_,
        numpy=lambda t: t.detach().numpy(),
        exp=torch.exp,
        sin=torch.sin,
        abs=torch.abs,
        sqrt=torch.sqrt,
        erf=torch.erf,
        rsqrt=torch.rsqrt,
        mean=lambda x: x.mean(-1, keepdim=True),
        var=lambda x: x.var(-1, keepdim=True, correction=0),
    )


# Measuring one cell (in a child process).


def _check(out, ref, tol):
    """None when `out` matches the float64 reference, else what is wrong."""
    out = np.asarray(out, dtype=np.float64)
    if out.shape != np.shape(ref):
        return f"shape {out.shape} != {np.shape(ref)}"
    if np.allclose(out, ref, rtol=tol, atol=tol, equal_nan=False):
        return None
    return f"max abs err {np.nanmax(np.abs(out - ref)):.3g}"


def per_call(f, calls):
    """The median wall time of single calls of f (dispatch costs a few microseconds)."""
    for _ in range(calls // 10):
        f()
    ts = []
    for _ in range(calls):
        t = time.perf_counter()
        f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts)


def _cell(measure):
    """Runs measure() -> (seconds, wrong or None) into a JSON cell; failures become the cell."""
    try:
        s, wrong = measure()
        return {"s": s, "wrong": wrong}
    except NotAvailable as e:
        return {"na": str(e)}
    except Exception as e:  # noqa: BLE001 (a failing column must not hide the others)
        return {
            "na": f"error: {type(e).__name__}: {str(e).splitlines()[0][:100] if str(e) else ''}"
        }


def _fn_cells(L, fn, args, ref, tol, timer, check=None, variants=(False, True)):
    """The uncompiled and compiled cells of fn(L, *args): check once, then time."""
    cells = []
    for compiled in variants:

        def measure(compiled=compiled):
            def f(*a):  # a plain function, as a user compiles one
                return fn(L, *a)

            if compiled:
                f = L.compile(f)
            out = L.numpy(L.call(f, *args))
            wrong = _check(check(out) if check else out, ref, tol)
            return timer(lambda: L.call(f, *args)), wrong

        cells.append(_cell(measure))
    return cells


def _bandwidth_rows(L, fw, rng, reps):
    a, b = (rng.standard_normal(N, dtype=np.float32) for _ in range(2))
    A, B = L.array(a), L.array(b)
    rows = {}

    def donated_add():
        # `x = x + 1; eval(x)`: when the add is evaluated the old buffer has no other reference,
        # so the add may write into it (through L.call the argument tuple still held it).
        st = [L.array(a.copy())]

        def step():
            st.append(st.pop() + 1)
            L.mx.eval(st[0])

        return median_time(step, reps), None

    def torch_inplace():
        x = L.array(a.copy())
        return median_time(lambda: x.add_(1), reps), None

    rows["a + b (16M, 3*4*N bytes)"] = [
        _cell(lambda: (median_time(lambda: L.call(lambda: A + B), reps), None))
    ]
    if fw == "nuvec":
        rows["x = x + 1, donated (2*4*N bytes)"] = [_cell(donated_add)]
        copy = machine_bandwidth(4 * N, reps)
        rows["NumPy copy on 2 threads (2*4*N bytes)"] = [{"s": 8 * N / copy / 1e9, "wrong": None}]
        rows[MEMORY_ROW] = [{"s": 8 * N / memory_bandwidth()[1] / 1e9, "wrong": None}]
    else:
        rows["a += 1, in place (2*4*N bytes)"] = [_cell(torch_inplace)]
    return rows


def _group(name, L, fw, rng, quick):
    reps = 5 if quick else 15
    timer = functools.partial(median_time, reps=reps)
    npl = _numpy_lib()
    if name == "bandwidth":
        return _bandwidth_rows(L, fw, rng, reps)
    if name == "unary_chain":
        x = rng.standard_normal(N, dtype=np.float32)
        ref = unary_chain(npl, x.astype(np.float64))
        return {"unary_chain_16M": _fn_cells(L, unary_chain, (L.array(x),), ref, 1e-5, timer)}
    if name == "gelu":
        x = rng.standard_normal(N, dtype=np.float32)
        sub = np.s_[::16]  # math.erf over 16M values takes seconds
        ref = gelu_erf(npl, x[sub].astype(np.float64)).astype(np.float64)
        cells = _fn_cells(L, gelu_erf, (L.array(x),), ref, 1e-5, timer, lambda o: o[sub])
        return {"gelu_erf_16M": cells}
    if name == "layer_norm":
        x = rng.standard_normal((SIDE, SIDE), dtype=np.float32)
        w, b = (rng.standard_normal(SIDE, dtype=np.float32) for _ in range(2))
        x64 = x.astype(np.float64)
        return {
            "layer_norm_4096sq": _fn_cells(
                L, layer_norm, (L.array(x),), layer_norm(npl, x64), 1e-4, timer
            ),
            "layer_norm_affine_4096sq": _fn_cells(
                L,
                layer_norm_affine,
                (L.array(x), L.array(w), L.array(b)),
                layer_norm_affine(npl, x64, w.astype(np.float64), b.astype(np.float64)),
                1e-4,
                timer,
            ),
        }
    if name == "dispatch":
        calls = 2000 if quick else 20000
        x, y = np.float32(0.75), np.float32(-0.25)
        X, Y = L.array(np.array(x)), L.array(np.array(y))
        tick = functools.partial(per_call, calls=calls)
        ref1 = np.float64(x) + np.float64(y)
        return {
            "one op: x + y": _fn_cells(L, one_op, (X, Y), ref1, 1e-6, tick, variants=(False,)),
            "10-op function": _fn_cells(L, ten_ops, (X,), ten_ops(npl, np.float64(x)), 1e-6, tick),
        }
    if name == "mlp_step":
        params, x, y = compile_mlp.problem()
        # MLX's Adam has no bias correction by default, PyTorch's has.
        ref = compile_mlp.reference_losses(params, x, y, bias_correction=fw == "torch")
        make = compile_mlp.nuvec_step if fw == "nuvec" else compile_mlp.torch_step

        def build(compiled):
            run = make(L, params, x, y, compiled)
            losses = [float(L.numpy(run())) for _ in range(2)]  # before and after one step
            return run, _check(losses, ref, 1e-4)

        # Both steps built (a cell holds its step in "s" until timed), then timed in turn: the two
        # differ by a few percent, less than the machine drifts between one timing and the next.
        built = [_cell(lambda c=c: build(c)) for c in (False, True)]
        ready = [b for b in built if "s" in b]
        for b, s in zip(ready, median_times_alternating([b["s"] for b in ready], reps * 2)):
            b["s"] = s
        return {MLP_ROW: built}
    raise ValueError(name)


def _child(fw, groups, quick):
    L = _nuvec_lib() if fw == "nuvec" else _torch_lib()
    out = {}
    for g in groups:
        out[g] = _group(g, L, fw, np.random.default_rng(0), quick)
    return out


# The parent: rounds of child processes, medians, markdown.


def _merge(cells):
    """One cell from the rounds' cells: the median time, the first failure."""
    na = [c["na"] for c in cells if "na" in c]
    if na:
        return {"na": na[0]}
    wrong = [c["wrong"] for c in cells if c["wrong"]]
    return {"s": statistics.median(c["s"] for c in cells), "wrong": wrong[0] if wrong else None}


def _fmt(cell, unit="ms", nbytes=None, bw=None):
    if cell is None:
        return "-"
    if "na" in cell:
        return f"n/a ({cell['na']})"
    scale = {"ms": 1e3, "us": 1e6}[unit]
    text = f"{cell['s'] * scale:.2f} {'µs' if unit == 'us' else unit}"
    if nbytes:
        rate = nbytes / cell["s"] / 1e9
        text += f" · {rate:.1f} GB/s · {rate / bw[0]:.0%}"
        if bw[1]:
            text += f" · {rate / bw[1]:.0%} mem"
    return text + (f" WRONG ({cell['wrong']})" if cell["wrong"] else "")


def _ratio(slow, fast):
    if slow is None or fast is None or "na" in slow or "na" in fast:
        return "n/a"
    return f"{slow['s'] / fast['s']:.2f}"


def _machine():
    out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
    model = next(
        (ln.split(":", 1)[1].strip() for ln in out.splitlines() if "Model name" in ln), "?"
    )
    return f"{model} ({os.cpu_count()} cores)"


def _versions():
    torch = f"PyTorch {version('torch')} (2 threads)" if find_spec("torch") else "no PyTorch"
    rev = subprocess.run(
        ["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True
    ).stdout.strip()
    return (
        f"Python {platform.python_version()}, NumPy {np.__version__}, "
        f"{torch}, nuvec at {rev or '?'}"
    )


BYTES = {
    "unary_chain_16M": 8 * N,
    "gelu_erf_16M": 8 * N,
    "layer_norm_4096sq": 8 * SIDE * SIDE,
    "layer_norm_affine_4096sq": 8 * SIDE * SIDE,
}
TITLES = {
    "unary_chain": "unary chain: exp(sin(x))*2+1 on 16M float32 (bytes 2*4*N)",
    "gelu": "gelu, erf form: x*(1+erf(x/sqrt(2)))/2 on 16M float32 (bytes 2*4*N)",
    "layer_norm": "layer norm with plain ops, mean/var/rsqrt, 4096x4096 float32 (bytes 2*4*4096^2)",
    "dispatch": "dispatch on 0-d float32 arrays, `mx.eval(f(x))` per call (median of calls)",
    "mlp_step": "MLP training step with Adam, model and optimizer state (ms per step)",
}


def _bandwidth_table(res):
    """Prints the reference rows; returns (the best GB/s, the memory row's GB/s or None)."""
    rates = {}
    for fw, rows in res.items():
        for row, cells in rows.get("bandwidth", {}).items():
            if "na" not in cells[0]:
                nbytes = 12 * N if row.startswith("a + b") else 8 * N
                rates[f"{fw}: {row}"] = nbytes / cells[0]["s"] / 1e9
    if not rates:
        return None
    best = max(rates, key=rates.get)
    print(
        "\n**Bandwidth reference** (16M float32; the best row is the bandwidth of the % columns)\n"
    )
    print("| measurement | GB/s | % of best |\n|---|---:|---:|")
    for name, rate in rates.items():
        print(f"| {name} | {rate:.1f} | {rate / rates[best]:.0%} |")
    memory = rates.get(f"nuvec: {MEMORY_ROW}")
    print(
        f"\nBandwidth taken: {rates[best]:.1f} GB/s ({best}); the `mem` shares: {memory or 0:.1f} GB/s."
    )
    return rates[best], memory


def _group_table(group, res, bw):
    rows = {}
    for fw in FRAMEWORKS:
        for row, cells in res.get(fw, {}).get(group, {}).items():
            rows.setdefault(row, {})[fw] = cells
    unit = {"dispatch": "us"}.get(group, "ms")
    print(f"\n**{TITLES[group]}**\n")
    cols = [v for fw in FRAMEWORKS for v in FRAMEWORKS[fw]]
    print(f"| row | {' | '.join(cols)} | nuvec compiled speedup | torch.compile speedup |")
    print("|---|" + "---:|" * (len(cols) + 2))
    for row, by_fw in rows.items():
        cells = [(by_fw.get(fw, []) + [None, None])[:2] for fw in FRAMEWORKS]
        nbytes = BYTES.get(row) if bw else None
        text = [_fmt(c, unit, nbytes, bw) for pair in cells for c in pair]
        speed = [_ratio(*pair) if pair[1] else "-" for pair in cells]
        print(f"| {row} | {' | '.join(text)} | {' | '.join(speed)} |")
    if group == "dispatch" and len(rows) == 2:
        one, ten = rows["one op: x + y"], rows["10-op function"]
        ratios = [
            f"{name} {_ratio(ten[fw][i], one[fw][0])}"
            for fw in FRAMEWORKS
            if fw in one
            for i, name in reversed(list(enumerate(FRAMEWORKS[fw])))
        ]
        print(f"\n10-op function / one op of its framework: {', '.join(ratios)}.")
    if group == "mlp_step" and rows:
        (by_fw,) = rows.values()
        if "torch" in by_fw:
            print(
                f"\ntorch eager / nuvec compiled time (>1: nuvec faster): "
                f"{_ratio(by_fw['torch'][0], by_fw['nuvec'][1])}"
            )


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="one round, fewer reps (development)")
    ap.add_argument("--only", default=",".join(GROUPS), help="comma-separated groups")
    ap.add_argument("--rounds", type=int, default=3, help="alternating processes per framework")
    ap.add_argument("--one", choices=tuple(FRAMEWORKS), help=argparse.SUPPRESS)
    args = ap.parse_args()
    groups = args.only.split(",")
    unknown = set(groups) - set(GROUPS)
    if unknown:
        ap.error(f"unknown groups {sorted(unknown)}; choose from {', '.join(GROUPS)}")
    if args.one:
        print(json.dumps(_child(args.one, groups, args.quick)))
        return
    if (
        any(g in groups for g in ("unary_chain", "gelu", "layer_norm"))
        and "bandwidth" not in groups
    ):
        groups.insert(0, "bandwidth")  # the % columns need the reference
    start = datetime.datetime.now(datetime.timezone.utc)
    runs = {fw: [] for fw in FRAMEWORKS if fw == "nuvec" or find_spec(fw)}
    for _ in range(1 if args.quick else args.rounds):
        for fw in runs:
            cmd = [sys.executable, __file__, "--one", fw, "--only", ",".join(groups)]
            done = subprocess.run(cmd + ["--quick"] * args.quick, capture_output=True, text=True)
            if done.returncode:
                sys.exit(f"{fw} process failed:\n{done.stderr[-3000:]}")
            runs[fw].append(json.loads(done.stdout.splitlines()[-1]))
    res = {
        fw: {
            g: {row: [_merge(c) for c in zip(*(r[g][row] for r in rs))] for row in rs[0][g]}
            for g in groups
        }
        for fw, rs in runs.items()
    }
    print(f"## nuvec.compile (issue 14): {start:%Y-%m-%d %H:%M} UTC\n")
    print(f"Machine: {_machine()}; {_versions()}.")
    print(
        f"`python bench/compile.py{' --quick' if args.quick else ''} --only {','.join(groups)}`: "
        f"{1 if args.quick else args.rounds} round(s) of one process per framework, medians."
    )
    bw = _bandwidth_table(res) if "bandwidth" in groups else None
    for g in groups:
        if g != "bandwidth":
            _group_table(g, res, bw)


if __name__ == "__main__":
    main()
