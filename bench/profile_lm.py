"""Where a decode step of nuvec.lm spends its time: each primitive's total over a run of greedy
decode steps (nuvec._core._profile_start / _profile_stop time every evaluated node), beside the
time spent building the steps' graphs in Python.

    PYTHONPATH=python python bench/profile_lm.py [--model FILE] [--steps 64] [--f32 | --int8-activations] [--plain]

Steps run as generation runs them: compiled (nuvec.lm.decode), or through the model's Python with
``--plain``.

The evaluator runs one node at a time here (each node may use the thread pool inside), so the
totals add up to the evaluation time. The machine may be shared: read shares, not absolutes.
"""

import argparse
import time

import nuvec as mx
from nuvec.lm import load
from nuvec.lm.decode import compiled_decode
from nuvec.lm.models.cache import make_prompt_cache
from nuvec.lm.utils import dequantize_model


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--model", default=None)
    ap.add_argument("--steps", type=int, default=64)
    ap.add_argument("--f32", action="store_true", help="dequantize the model to float32 first")
    ap.add_argument("--int8-activations", action="store_true", help="decode with int8 activations")
    ap.add_argument("--plain", action="store_true", help="steps through the model's Python")
    args = ap.parse_args()
    model, _ = load(args.model, int8_activations=args.int8_activations)
    if args.f32:
        model = dequantize_model(model)
    cache = make_prompt_cache(model)
    decode = compiled_decode(model)

    def logits(y):
        return model(y, cache=cache)[:, -1, :] if args.plain else decode.logits(y, cache)

    y = mx.array([[1]])
    for _ in range(8):  # warm the cache's first block, the trace and the kernels
        y = mx.argmax(logits(y), axis=-1)[None]
        mx.eval(y)
    build = evaluate = 0.0
    mx._core._profile_start()
    for _ in range(args.steps):
        t0 = time.perf_counter()
        y = mx.argmax(logits(y), axis=-1)[None]
        t1 = time.perf_counter()
        mx.eval(y)
        build, evaluate = build + t1 - t0, evaluate + time.perf_counter() - t1
    rows = mx._core._profile_stop()
    n = args.steps
    total = sum(s for _, _, s in rows)
    print(
        f"per step: build {build / n * 1e3:.2f} ms, evaluate {evaluate / n * 1e3:.2f} ms "
        f"({1 / ((build + evaluate) / n):.1f} tok/s serial), nodes timed {total / n * 1e3:.2f} ms"
    )
    print("\n| primitive | nodes/step | ms/step | share | us/node |\n|---|---|---|---|---|")
    for name, count, secs in rows:
        print(
            f"| {name} | {count / n:.1f} | {secs / n * 1e3:.3f} | {secs / total:.1%} | "
            f"{secs / count * 1e6:.1f} |"
        )


if __name__ == "__main__":
    main()
