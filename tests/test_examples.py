"""The shipped examples run and reach what they promise (the README's main job among them)."""

import subprocess
import sys

import pytest

from _impl import IS_MLX

pytestmark = [pytest.mark.nuvec_only, pytest.mark.skipif(IS_MLX, reason="nuvec's own examples")]


def run(module):
    res = subprocess.run(
        [sys.executable, "-m", module], capture_output=True, text=True, timeout=300
    )
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_digits_trains_to_95_percent():
    pytest.importorskip("sklearn")
    out = run("nuvec.examples.digits")
    lines = [line for line in out.splitlines() if line.startswith("epoch")]
    assert len(lines) == 20
    accuracy = float(out.split("held-out accuracy ")[1].split()[0])
    assert accuracy >= 0.95


def test_mandelbrot_demo_agrees_with_numpy():
    out = run("nuvec.examples.demo")
    assert "of points agree with NumPy" in out
