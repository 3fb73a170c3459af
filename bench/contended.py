"""nuvec's default thread pool against one thread while another process keeps a core busy.

Starts competing busy processes (one by default: `python -c 'while 1: pass'`), then, for each
round, runs in fresh subprocesses with NUVEC_NUM_THREADS unset ("default") and set to 1:
  - the yardstick, `python ../shared/bench/yardstick.py --impl nuvec --json F`, and
  - bench/mlx_examples.py (MLX's linear and logistic regression examples),
and prints one markdown table: row, unit, default, 1 thread, and the speed of the default
relative to one thread (> 1: the default is faster; for us/op rows the ratio is inverted so that
it reads the same way). Rows where the default is more than 3% slower are marked. The
competitors are killed at the end, also on an error or Ctrl-C.

    PYTHONPATH=$PWD/python python bench/contended.py                     # everything, ~10 min
    PYTHONPATH=$PWD/python python bench/contended.py --only 'add*,softmax*' --quick --iters 2000
    PYTHONPATH=$PWD/python python bench/contended.py --competitors 0      # a quiet comparison

The nuvec measured is whichever the subprocesses import (the environment is passed on, so set
PYTHONPATH or install it). With --rounds R the two settings alternate R times (default first in
odd rounds, one thread first in even ones) and each cell is the median over the rounds; use 3 or
more on a noisy machine. --json F writes every round's figures.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
DEFAULT_YARDSTICK = HERE.parent.parent / "shared" / "bench" / "yardstick.py"
SETTINGS = {"default": None, "1 thread": "1"}
SLOWER_BELOW = 0.97  # a default slower than one thread by more than 3% is marked


def env_for(threads):
    env = dict(os.environ)
    env.pop("NUVEC_NUM_THREADS", None)
    if threads is not None:
        env["NUVEC_NUM_THREADS"] = threads
    return env


def run_yardstick(args, threads, out):
    """{row: (unit, throughput or None)} of one yardstick run."""
    cmd = [sys.executable, str(args.yardstick), "--impl", "nuvec", "--json", out]
    if args.only:
        cmd += ["--only", args.only]
    if args.quick:
        cmd.append("--quick")
    subprocess.run(cmd, env=env_for(threads), check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        rows = json.load(f)["rows"]
    return {r["name"]: (r["unit"], r["impls"][0]["throughput"]) for r in rows}


def run_examples(args, threads, out):
    """{example: ("it/s", iterations per second)} of one bench/mlx_examples.py run."""
    cmd = [
        sys.executable,
        str(HERE / "mlx_examples.py"),
        "--impl",
        "nuvec",
        "--iters",
        str(args.iters),
        "--json",
        out,
    ]
    subprocess.run(cmd, env=env_for(threads), check=True, stdout=subprocess.DEVNULL)
    with open(out) as f:
        return {name: ("it/s", rate) for name, rate in json.load(f).items()}


def one_round(args, order, tmp):
    """{setting: {row: (unit, value)}} for the settings in `order`."""
    figures = {}
    for name in order:
        threads = SETTINGS[name]
        rows = {}
        if not args.no_yardstick:
            rows.update(run_yardstick(args, threads, os.path.join(tmp, "yardstick.json")))
        if not args.no_examples:
            rows.update(run_examples(args, threads, os.path.join(tmp, "examples.json")))
        figures[name] = rows
        print(f"# {name}: {len(rows)} rows done", file=sys.stderr, flush=True)
    return figures


def speed_ratio(unit, default, single):
    """How much faster the default is than one thread (us/op is lower-is-better)."""
    if not default or not single:
        return None
    return single / default if unit == "us/op" else default / single


def table(rounds):
    """The markdown table of the medians over the rounds."""
    lines = [
        "| row | unit | default | 1 thread | default/1 thread (speed) |",
        "|---|---|---|---|---|",
    ]
    for row, (unit, _) in rounds[0]["default"].items():
        cells = []
        for name in SETTINGS:
            vals = [r[name][row][1] for r in rounds if r[name].get(row, (0, None))[1] is not None]
            cells.append(statistics.median(vals) if vals else None)
        ratio = speed_ratio(unit, *cells)
        shown = [f"{v:.4g}" if v is not None else "n/a" for v in cells]
        mark = (
            "-"
            if ratio is None
            else f"{ratio:.2f}" + (" **slower**" if ratio < SLOWER_BELOW else "")
        )
        lines.append(f"| {row} | {unit} | {shown[0]} | {shown[1]} | {mark} |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--yardstick",
        type=Path,
        default=DEFAULT_YARDSTICK,
        help="path of shared/bench/yardstick.py",
    )
    ap.add_argument("--only", default=None, help="yardstick rows (names or globs, comma-separated)")
    ap.add_argument("--quick", action="store_true", help="the yardstick's --quick")
    ap.add_argument("--iters", type=int, default=10_000, help="iterations of each MLX example")
    ap.add_argument(
        "--rounds", type=int, default=1, help="alternate the two settings this many times"
    )
    ap.add_argument("--competitors", type=int, default=1, help="busy processes running meanwhile")
    ap.add_argument("--no-yardstick", action="store_true")
    ap.add_argument("--no-examples", action="store_true")
    ap.add_argument("--json", help="write every round's figures to this file")
    args = ap.parse_args()

    busy = [
        subprocess.Popen([sys.executable, "-c", "while 1: pass"]) for _ in range(args.competitors)
    ]
    try:
        rounds = []
        with tempfile.TemporaryDirectory() as tmp:
            for r in range(args.rounds):
                order = list(SETTINGS) if r % 2 == 0 else list(SETTINGS)[::-1]
                rounds.append(one_round(args, order, tmp))
    finally:
        for p in busy:
            p.kill()
            p.wait()
    print(f"{args.competitors} competing busy process(es), {args.rounds} round(s), medians:\n")
    print(table(rounds))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(rounds, f, indent=1)


if __name__ == "__main__":
    main()
