"""Per-op overhead: record and evaluate `add` on two scalars (100k calls, median of 5 runs).

    python bench/op_overhead.py

The C ABI made the core a shared library; this measures that calls stayed as cheap.
"""

import statistics
import timeit

import nuvec as mx


def main():
    a, b = mx.array(1.0), mx.array(2.0)
    mx.eval(a, b)
    n = 100_000
    stmt = lambda: mx.eval(mx.add(a, b))
    runs = [timeit.timeit(stmt, number=n) / n * 1e6 for _ in range(5)]
    print("| op | us per call (median of 5) |\n|---|---|")
    print(f"| add + eval, scalars | {statistics.median(runs):.3f} |")


if __name__ == "__main__":
    main()
