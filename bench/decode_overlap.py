"""Decode speed of nuvec.lm's default model with each step evaluated at once, and overlapped with
building the next (``nuvec.lm.overlap``): queued by plain ``async_eval`` (the walk on the worker)
or ordered first by nuvec.schedule (``overlap.ORDER_AHEAD``); and a sampled (temperature, top-p)
decode under the default policy whose sampler is compiled or not. The variants interleave in each
round, every other round in reverse order (the machine is shared and noisy: medians over the
rounds).

    PYTHONPATH=python python bench/decode_overlap.py [--rounds 7] [--tokens 128]

PyTorch has no counterpart to this loop (it is nuvec.lm's own), so it is not run here.
"""

import argparse
import importlib
import statistics
import time

import nuvec as mx
from nuvec.lm import bench, load
from nuvec.lm.sample_utils import make_sampler

generate = importlib.import_module(
    "nuvec.lm.generate"
)  # the module (nuvec.lm.generate is the function)
overlap = importlib.import_module("nuvec.lm.overlap")


def _decode(model, tokens, sampler=None):
    """Decode tok/s after a one-token prompt (bench.measure's tg128 with a chosen sampler)."""
    if sampler is None:
        return bench.measure(model, 2, tokens)["tg"]
    steps = generate.generate_step(mx.array([17]), model, max_tokens=tokens + 1, sampler=sampler)
    next(steps)
    tic = time.perf_counter()
    for _ in steps:
        pass
    return tokens / (time.perf_counter() - tic)


def _step_costs(model, reps=20):
    """Median ms to build one decode step's graph, to order it (nuvec.schedule: the walk moved off
    the worker) and to run it, after a 16-token prompt."""
    from nuvec.lm import make_prompt_cache

    cache = make_prompt_cache(model)
    mx.eval(model(mx.arange(16)[None], cache=cache))
    y = mx.array([[17]])
    build, order, run = [], [], []
    for _ in range(reps):
        t0 = time.perf_counter()
        y = mx.argmax(model(y, cache=cache)[:, -1, :], axis=-1)[None]
        t1 = time.perf_counter()
        s = mx.schedule(y, [c.state for c in cache])
        t2 = time.perf_counter()
        s.eval()
        t3 = time.perf_counter()
        build.append(t1 - t0)
        order.append(t2 - t1)
        run.append(t3 - t2)
    return {
        k: 1e3 * statistics.median(v) for k, v in (("build", build), ("order", order), ("run", run))
    }, s.nodes


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=7)
    ap.add_argument("--tokens", type=int, default=128)
    args = ap.parse_args()
    model, _ = load(None)
    plain = make_sampler(temp=0.7, top_p=0.9)
    compiled = mx.compile(plain, inputs=mx.random.state, outputs=mx.random.state)
    # name: (overlap.OVERLAP, overlap.ORDER_AHEAD, sampler)
    variants = {
        "greedy, each step evaluated at once": (False, True, None),
        "greedy, overlapped, async_eval": (True, False, None),
        "greedy, overlapped, schedule + async_eval": (True, True, None),
        "temp 0.7 top-p 0.9, default policy": (None, True, plain),
        "temp 0.7 top-p 0.9, default policy, compiled sampler": (None, True, compiled),
    }
    for over, order_ahead, sampler in variants.values():  # warm-up (and compile) once each
        overlap.OVERLAP, overlap.ORDER_AHEAD = over, order_ahead
        _decode(model, 8, sampler)
    speeds = {name: [] for name in variants}
    for r in range(
        args.rounds
    ):  # every other round backwards: a variant's place in the round counts
        for name, (over, order_ahead, sampler) in list(variants.items())[
            :: 1 if r % 2 == 0 else -1
        ]:
            overlap.OVERLAP, overlap.ORDER_AHEAD = over, order_ahead
            speeds[name].append(_decode(model, args.tokens, sampler))
    overlap.OVERLAP, overlap.ORDER_AHEAD = None, True
    print(f"default policy here: {'overlapped' if overlap.overlaps() else 'at once'}\n")
    print(
        f"| decode of the default model ({args.tokens} tokens, {args.rounds} rounds) | median tok/s | min | max |"
    )
    print("|---|---|---|---|")
    for name, s in speeds.items():
        print(f"| {name} | {statistics.median(s):.1f} | {min(s):.1f} | {max(s):.1f} |")
    costs, nodes = _step_costs(model)
    print(f"\n| one greedy decode step ({nodes} nodes), median of 20 | ms |\n|---|---|")
    for k, what in (("build", "build the graph (Python)"), ("order", "order it (nuvec.schedule)"),
                    ("run", "run it (Schedule.eval)")):  # fmt: skip
        print(f"| {what} | {costs[k]:.3f} |")


if __name__ == "__main__":
    main()
