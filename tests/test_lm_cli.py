"""`python -m nuvec.lm` in a subprocess: generate, chat (stdin lines), bench, and the one-line
errors with a non-zero exit for a missing path, an unsupported architecture or a corrupt file."""

import os
import subprocess
import sys

import pytest

import nuvec as mx
from lm_reference import smollm2_path

pytestmark = pytest.mark.nuvec_only

pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def _run(*args, stdin=None):
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(
        [os.path.dirname(os.path.dirname(mx.__file__)), env.get("PYTHONPATH", "")]
    )
    return subprocess.run(
        [sys.executable, "-m", "nuvec.lm", *args],
        input=stdin,
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )


def test_generate_streams_text_and_reports_speeds():
    model = smollm2_path()
    r = _run("generate", "--model", model, "--prompt", "What is the capital of France?")
    assert r.returncode == 0, r.stderr
    assert "Paris" in r.stdout
    for what in ("Prompt:", "Generation:", "tokens-per-sec", "Peak memory:"):
        assert what in r.stderr
    raw = _run("generate", "--prompt", "The capital of France is", "--ignore-chat-template",
               "--max-tokens", "5", "--temp", "0.7", "--top-p", "0.9", "--seed", "1")  # fmt: skip
    again = _run("generate", "--prompt", "The capital of France is", "--ignore-chat-template",
                 "--max-tokens", "5", "--temp", "0.7", "--top-p", "0.9", "--seed", "1")  # fmt: skip
    assert raw.returncode == 0 and raw.stdout == again.stdout and raw.stdout.strip()
    assert "Generation: 5 tokens" in raw.stderr


def test_generate_reads_the_prompt_from_stdin():
    smollm2_path()  # the default model: skipped without it
    r = _run(
        "generate", "--prompt", "-", "--max-tokens", "20", stdin="What is the capital of France?"
    )
    assert r.returncode == 0 and "Paris" in r.stdout, r.stderr


def test_chat_keeps_the_history():
    smollm2_path()  # the default model: skipped without it
    r = _run(
        "chat", "--max-tokens", "40", stdin="What is the capital of France?\nAnd of Germany?\n"
    )
    assert r.returncode == 0, r.stderr
    first, second = r.stdout.strip().split("\n", 1)
    assert "Paris" in first and "Berlin" in second
    assert r.stderr.count("Prompt:") == 2


def test_bench_prints_a_table():
    smollm2_path()  # the default model: skipped without it
    r = _run("bench", "--prompt-tokens", "16", "--generation-tokens", "4", "--trials", "1")
    assert r.returncode == 0, r.stderr
    assert "| prompt (16 tokens), tok/s |" in r.stdout and "| peak memory, GB |" in r.stdout


def test_bench_decodes_after_the_depth(monkeypatch):
    """--depth N (llama-bench's -d): the timed decode follows a prompt of N tokens; the CLI says so."""
    from nuvec.lm import bench, load

    model, _ = load(smollm2_path())
    prompts = []
    real = bench.generate_step

    def spy(prompt, model, **kwargs):
        prompts.append(prompt.size)
        return real(prompt, model, **kwargs)

    monkeypatch.setattr(bench, "generate_step", spy)
    bench.measure(model, 16, 2, depth=40)
    bench.measure(model, 16, 2)
    assert prompts == [16, 40, 16, 1]
    r = _run("bench", "--prompt-tokens", "16", "--generation-tokens", "4", "--trials", "1",
             "--depth", "40")  # fmt: skip
    assert r.returncode == 0 and "| decode (4 tokens after 40), tok/s |" in r.stdout, r.stderr


def test_int8_activations_flag():
    """--int8-activations (nuvec's own, tests/test_qmm_int8.py): the fixed question's answer
    starts as the float path's; bench takes the flag too."""
    model = smollm2_path()
    args = ("generate", "--model", model, "--prompt", "What is gravity?", "--max-tokens", "12")
    plain, int8 = _run(*args), _run(*args, "--int8-activations")
    assert int8.returncode == 0, int8.stderr
    assert int8.stdout == plain.stdout and int8.stdout.startswith("Gravity is")
    r = _run("bench", "--prompt-tokens", "16", "--generation-tokens", "4", "--trials", "1",
             "--int8-activations")  # fmt: skip
    assert r.returncode == 0 and "| decode (4 tokens), tok/s |" in r.stdout, r.stderr


def test_kv_dtype_flag():
    """--kv-dtype float16 (nuvec's own): half caches; the fixed question's answer starts as with
    float32 caches."""
    model = smollm2_path()
    args = ("generate", "--model", model, "--prompt", "What is gravity?", "--max-tokens", "12")
    plain, half = _run(*args), _run(*args, "--kv-dtype", "float16")
    assert half.returncode == 0, half.stderr
    assert half.stdout.startswith("Gravity is") and plain.stdout.startswith("Gravity is")
    assert _run(*args, "--kv-dtype", "int8").returncode != 0


@pytest.mark.parametrize("kind", ["missing", "corrupt", "architecture", "directory"])
def test_bad_models_fail_with_one_line(tmp_path, kind):
    path = tmp_path / "m.gguf"
    if kind == "corrupt":
        path.write_bytes(b"GGUF\x03\x00\x00\x00" + b"\xff" * 40)
    elif kind == "architecture":
        mx.save_gguf(str(path), {"w": mx.ones((2,))}, {"general.architecture": "mamba"})
    elif kind == "directory":
        path = tmp_path
    r = _run("generate", "--model", str(path), "--prompt", "hi")
    assert r.returncode == 1 and r.stdout == ""
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: ")
    assert {"missing": "no such model", "corrupt": str(path), "architecture": "'mamba'",
            "directory": "config.json"}[kind] in lines[0]  # fmt: skip


def test_bad_arguments_exit_non_zero():
    smollm2_path()  # the default model: skipped without it
    assert _run("generate", "--max-tokens", "x").returncode == 2
    assert _run("nonsense").returncode == 2
    r = _run("generate", "--temp", "-1", "--prompt", "hi")
    assert r.returncode == 1 and "temp" in r.stderr
