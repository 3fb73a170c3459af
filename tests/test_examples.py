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

    import nuvec as mx
    import nuvec.optimizers as optim
    from nuvec.examples.train import ConvNet, load_digits_data
    from nuvec.examples.train import accuracy as measure
    from nuvec.utils import tree_flatten, tree_unflatten

    model = ConvNet(side=8)
    model.load_weights(str(tmp_path / "ck" / "model.safetensors"))
    _, (x_test, y_test) = load_digits_data(0)
    assert round(measure(model, x_test, y_test), 4) == accuracy  # printed with 4 digits
    state = tree_unflatten(list(mx.load(str(tmp_path / "ck" / "optimizer.safetensors")).items()))
    opt = optim.AdamW(learning_rate=1e-3)
    opt.state = state
    assert int(opt.step.item()) == 12 * 23  # 12 epochs of ceil(1437 / 64) steps
    names = {k for k, _ in tree_flatten(state)}
    assert {f"fc1.weight.{m}" for m in ("m", "v")} <= names


def test_main_job_short_run_in_process(tmp_path):
    pytest.importorskip("sklearn")
    pytest.importorskip("tqdm")
    from nuvec.examples.train import main

    assert main(["--epochs", "2", "--out", str(tmp_path), "--min-accuracy", "0.9"]) >= 0.9
    with pytest.raises(SystemExit, match="below"):
        main(["--epochs", "1", "--batch", "512", "--out", str(tmp_path), "--min-accuracy", "1.01"])


def test_mandelbrot_demo_agrees_with_numpy():
    out = run("nuvec.examples.demo")
    assert "of points agree with NumPy" in out
