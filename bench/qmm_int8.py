"""One-row transposed 4-bit products (SmolLM2-135M's shapes, group 32, float16 scales and biases
as its GGUF holds them): microseconds per call with float activations (MLX's arithmetic) and with
int8 activations (``activation_bits=8``), hot (one weight, in cache) and cold (distinct weights
cycled through, more than the last-level cache share), and the packed bytes read per second.

    PYTHONPATH=python python bench/qmm_int8.py [--rounds 5] [--cold-mb 160]

Medians over interleaved rounds (drift hits every row alike); default thread count.
"""

import argparse
import statistics
import time

import numpy as np

import nuvec as mx

SHAPES = [(576, 1536), (1536, 576)]  # (n, k): the MLP's down projection, then gate / up


def weights(rng, n, k, count):
    out = []
    for _ in range(count):
        w = mx.array(rng.standard_normal((n, k)).astype(np.float32))
        wq, s, b = mx.quantize(w, 32, 4)
        out.append((wq, s.astype(mx.float16), b.astype(mx.float16)))
    mx.eval(out)
    return out


def per_call(x, ws, activation_bits, calls):
    tic = time.perf_counter()
    done = 0
    while done < calls:
        for wq, s, b in ws:
            mx.eval(mx.quantized_matmul(x, wq, s, b, True, 32, 4, activation_bits=activation_bits))
        done += len(ws)
    return (time.perf_counter() - tic) / done


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--cold-mb", type=float, default=160.0)
    args = ap.parse_args()
    rng = np.random.default_rng(0)
    print(f"threads: {mx.get_num_threads()}")
    print("| product | weights | float us | int8 us | float GB/s | int8 GB/s | speed-up |")
    print("|---|---|---|---|---|---|---|")
    for n, k in SHAPES:
        nbytes = n * k // 2 + 2 * (n * k // 32) * 2  # codes, float16 scales and biases
        x = mx.array(rng.standard_normal((1, k)).astype(np.float32))
        for label, count in (("hot", 1), ("cold", max(1, int(args.cold_mb * 1e6 / nbytes)))):
            ws = weights(rng, n, k, count)
            calls = max(200, count)
            times = {None: [], 8: []}
            for bits in times:
                per_call(x, ws, bits, count)  # warm-up
            for _ in range(args.rounds):
                for bits in times:
                    times[bits].append(per_call(x, ws, bits, calls))
            f, q = (statistics.median(times[b]) for b in (None, 8))
            print(
                f"| 1x{k} @ ({n}x{k}).T | {label} | {f * 1e6:.1f} | {q * 1e6:.1f} | "
                f"{nbytes / f / 1e9:.1f} | {nbytes / q / 1e9:.1f} | {f / q:.2f} |"
            )


if __name__ == "__main__":
    main()
