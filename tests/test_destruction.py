"""Dropping deep graphs never recurses: every graph shape is freed with an explicit stack.

Each case runs in a child process, so a stack overflow shows as a failed exit code instead of
killing the test run."""

import subprocess
import sys
import textwrap

import pytest

from _impl import IS_MLX

pytestmark = pytest.mark.skipif(IS_MLX, reason="nuvec's destruction of graphs")

N = 100_000

CASES = {
    # The crash: each node uses the same input twice.
    "duplicate_inputs": """
        x = mx.array([1.0, 2.0])
        for _ in range(N):
            x = x + x
        del x
    """,
    "three_uses_of_one_input": """
        x = mx.array([1.0, 2.0])
        for _ in range(N):
            x = mx.where(x > 0, x, x * x)
        del x
    """,
    # Multi-output primitives: siblings of a split, joined again.
    "split_concatenate_chain": """
        x = mx.arange(4.0)
        for _ in range(N // 4):
            a, b = mx.split(x, 2)
            x = mx.concatenate([b, a])
        del a, b, x
    """,
    # One sibling kept, the other dropped before anything is evaluated.
    "dropped_sibling_chain": """
        x = mx.arange(4.0)
        for _ in range(N // 4):
            x = mx.split(x + 1, 2)[0]
            x = mx.concatenate([x, x])
        del x
    """,
    # A chain partly evaluated in its middle, then dropped.
    "partly_evaluated_chain": """
        x = mx.array([1.0])
        for i in range(N):
            x = x + x * 0.5
            if i == N // 2:
                mx.eval(x)
        del x
    """,
    # Graphs traced by transforms, and their backward passes, dropped unevaluated.
    "traced_graphs": """
        def f(x):
            for _ in range(N // 10):
                x = x * 1.0 + x
            return x.sum()
        g = mx.grad(f)(mx.array([1.0, 2.0]))
        out, vjps = mx.vjp(lambda x: f(x), [mx.array([1.0])], [mx.array(1.0)])
        out, jvps = mx.jvp(lambda x: f(x), [mx.array([1.0])], [mx.array([1.0])])
        del g, out, vjps, jvps
    """,
    "vmapped_graph": """
        def f(x):
            for _ in range(N // 10):
                x = x + x
            return x
        y = mx.vmap(f)(mx.ones((3, 2)))
        del y
    """,
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_deep_graph_is_freed_without_recursion(name):
    code = f"import nuvec as mx\nN = {N}\n" + textwrap.dedent(CASES[name]) + "print('freed')\n"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, f"exit {proc.returncode}: {proc.stderr[-2000:]}"
    assert proc.stdout.strip() == "freed"
