"""The shipped examples run and reach what they promise (the README's main job among them)."""

import subprocess
import sys

import pytest

from _impl import IS_MLX

pytestmark = [pytest.mark.nuvec_only, pytest.mark.skipif(IS_MLX, reason="nuvec's own examples")]


def run(module, *args):
    res = subprocess.run(
        [sys.executable, "-m", module, *args], capture_output=True, text=True, timeout=600
    )
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def run_code(code):
    res = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout + res.stderr
    return res.stdout


def test_main_job_trains_to_98_percent_and_its_checkpoint_restores(tmp_path):
    """The README's main job as it is run, then its checkpoint read back into fresh objects."""
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    out = run(
        "nuvec.examples.train", "--out", str(tmp_path / "ck"), "--plot", str(tmp_path / "c.png")
    )
    lines = [line for line in out.splitlines() if line.startswith("epoch")]
    assert len(lines) == 12
    accuracy = float(out.split("held-out accuracy ")[-1].split()[0])
    assert accuracy >= 0.98
    assert (tmp_path / "c.png").read_bytes()[:4] == b"\x89PNG"

    # Read back in a fresh process (importing nuvec.examples here would add it to nuvec's names).
    restored = run_code(
        f"""
import nuvec as mx, nuvec.optimizers as optim
from nuvec.examples.train import ConvNet, accuracy, load_digits_data
from nuvec.utils import tree_flatten, tree_unflatten
model = ConvNet(side=8)
model.load_weights({str(tmp_path / "ck" / "model.safetensors")!r})
_, (x, y) = load_digits_data(0)
opt = optim.AdamW(learning_rate=1e-3)
opt.state = tree_unflatten(list(mx.load({str(tmp_path / "ck" / "optimizer.safetensors")!r}).items()))
names = {{k for k, _ in tree_flatten(opt.state)}}
print(round(accuracy(model, x, y), 4), opt.step.item(), "fc1.weight.m" in names, "fc1.weight.v" in names)
"""
    )
    assert restored.split() == [str(accuracy), str(12 * 23), "True", "True"]  # 23 steps an epoch


def test_main_job_compiled_step_gives_the_uncompiled_bits(tmp_path):
    """The main job compiles its step (model, optimizer and random state captured): its
    checkpoint after two epochs is bit for bit the one --no-compile writes."""
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    for name, extra in (("compiled", ()), ("plain", ("--no-compile",))):
        run("nuvec.examples.train", "--epochs", "2", "--out", str(tmp_path / name), *extra)
    same = run_code(
        f"""
import numpy as np, nuvec as mx
for f in ("model.safetensors", "optimizer.safetensors"):
    a, b = mx.load({str(tmp_path / "compiled")!r} + "/" + f), mx.load({str(tmp_path / "plain")!r} + "/" + f)
    print(sorted(a) == sorted(b) and all(np.array_equal(np.array(a[k]), np.array(b[k])) for k in a))
"""
    )
    assert same.split() == ["True", "True"]


def test_main_job_fails_below_its_floor(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    args = ["--epochs", "1", "--batch", "512", "--out", str(tmp_path), "--min-accuracy", "1.01"]
    res = subprocess.run(
        [sys.executable, "-m", "nuvec.examples.train", *args],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert res.returncode != 0 and "below 1.01" in res.stderr


def test_mandelbrot_demo_agrees_with_numpy():
    out = run("nuvec.examples.demo")
    assert "of points agree with NumPy" in out
