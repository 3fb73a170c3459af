"""nuvec.lm on SmolLM2-135M-Instruct: prompt processing (512 tokens) and decode (128 tokens)
speeds, Q4_1 as the GGUF holds it (with float and with int8 activations in decode steps:
``--int8-activations``, docs/lm.md) and dequantized to float32, against PyTorch running the same
float32 weights (torch.set_num_threads(2)) and llama.cpp's figures measured on this machine type.

    PYTHONPATH=python python bench/lm.py [--trials 3]

pp512 is one 512-token prompt into an empty cache, tg128 128 greedy tokens after a one-token prompt
(llama-bench's tests); medians of the trials. The bandwidth limit is the memory's read bandwidth
(STREAM's rule: two threads over 4 x the last-level cache, bench/_common.py) over the bytes of
weights one decode step reads; for F32, the median over the trials of the rule's mean just before
and just after each (it moves 29-36 GB/s between minutes; before 2026-12-05, the reading before
the trial alone). The two-core copy of 64 MiB (the limit before 2026-12-03) is printed beside it:
this VM's 480 MiB L3 holds part of it, so it moved 27-50 GB/s between runs.
The machine may be shared: read ratios.

``--llama-bench PATH`` also runs llama.cpp's ``llama-bench`` on the same GGUF file in the same run
(2 threads, the same token counts and trials) and puts its Q4_1 figures in the last column instead
of the issue's anchors: each trial of llama.cpp's runs just before nuvec's (float and int8
activations; at each depth, plain and float16 caches), since this machine's speed drifts by 10-20%
within minutes, and the round-by-round ratios are printed too. One way to build it offline: the
``llama-cpp-python`` sdist on PyPI vendors llama.cpp's source (``vendor/llama.cpp``); ``cmake -B
build -DGGML_NATIVE=ON -DLLAMA_CURL=OFF -DCMAKE_BUILD_TYPE=Release && cmake --build build --target
llama-bench`` there (docs/lm.md).

``--llama-f32 FILE`` (with ``--llama-bench``) runs llama.cpp on an F32 GGUF of the same model too,
each trial just before nuvec's F32 trial, and puts its figures in the F32 rows' last column.
``llama-quantize --allow-requantize Q4_1.gguf OUT.gguf F32`` (built beside llama-bench, target
``llama-quantize``) writes it: the Q4_1 weights dequantized, as ``dequantize_model`` makes them.

``--depths 512,2048`` adds a table of Q4_1 decode speeds after prompts of those lengths (tg128 at
llama-bench's depth ``-d``: the context's attention is read every step), beside llama-bench's at
the same depths when ``--llama-bench`` is given.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import nuvec as mx
from nuvec.lm import load
from nuvec.lm.bench import measure
from nuvec.lm.utils import default_model_path, dequantize_model, set_int8_activations

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from _common import machine_bandwidth, memory_bandwidth  # noqa: E402

LLAMA_CPP = {"Q4_1": (360.0, 167.0), "F32": (900.0, 78.0)}  # (pp512, tg128) tok/s, 2 threads


def weight_bytes(model):
    from nuvec.utils import tree_flatten

    return sum(v.nbytes for _, v in tree_flatten(model.parameters()))


def torch_llama(torch, model, device="cpu", dtype=None):
    """The same forward in PyTorch from the nuvec model's dequantized weights (float32, or `dtype`),
    on `device`."""
    a = model.args
    dtype = dtype or torch.float32
    w = {
        k: torch.from_numpy(np.array(v.astype(mx.float32))).to(device, dtype)
        for k, v in _flat(model)
    }
    hd, nh, nkv = a.head_dim, a.num_attention_heads, a.num_key_value_heads
    inv = (1.0 / a.rope_theta ** (torch.arange(0, hd, 2, dtype=torch.float64) / hd)).to(device)

    def rope(x, pos):  # x (H, T, D), halves rotated (Hugging Face's layout)
        ang = (pos[:, None].double() * inv[None]).to(dtype)
        c, s = torch.cos(ang), torch.sin(ang)
        x1, x2 = x[..., : hd // 2], x[..., hd // 2 :]
        return torch.cat([x1 * c - x2 * s, x2 * c + x1 * s], -1)

    def norm(x, g):
        return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + a.rms_norm_eps) * g

    def forward(tokens, cache):
        T, start = tokens.shape[0], cache[0][0].shape[1] if cache[0][0] is not None else 0
        pos = torch.arange(start, start + T, device=device)
        h = w["model.embed_tokens.weight"][tokens]
        for i in range(a.num_hidden_layers):
            p = f"model.layers.{i}."
            x = norm(h, w[p + "input_layernorm.weight"])
            q = (x @ w[p + "self_attn.q_proj.weight"].T).view(T, nh, hd).transpose(0, 1)
            k = (x @ w[p + "self_attn.k_proj.weight"].T).view(T, nkv, hd).transpose(0, 1)
            v = (x @ w[p + "self_attn.v_proj.weight"].T).view(T, nkv, hd).transpose(0, 1)
            q, k = rope(q, pos), rope(k, pos)
            if cache[i][0] is not None:
                k, v = torch.cat([cache[i][0], k], 1), torch.cat([cache[i][1], v], 1)
            cache[i] = (k, v)
            o = torch.nn.functional.scaled_dot_product_attention(
                q[None], k[None], v[None], is_causal=T > 1, enable_gqa=True
            )[0]
            h = h + o.transpose(0, 1).reshape(T, -1) @ w[p + "self_attn.o_proj.weight"].T
            x = norm(h, w[p + "post_attention_layernorm.weight"])
            g, u = x @ w[p + "mlp.gate_proj.weight"].T, x @ w[p + "mlp.up_proj.weight"].T
            h = h + (torch.nn.functional.silu(g) * u) @ w[p + "mlp.down_proj.weight"].T
        return norm(h[-1:], w["model.norm.weight"]) @ w["model.embed_tokens.weight"].T

    return forward


def _flat(model):
    from nuvec.utils import tree_flatten

    return tree_flatten(model.parameters())


def torch_measure(torch, forward, layers, vocab, prompt_tokens, generation_tokens, device="cpu"):
    sync = torch.cuda.synchronize if device == "cuda" else (lambda: None)
    with torch.inference_mode():
        prompt = (torch.arange(prompt_tokens, device=device) * 7919 + 17) % vocab
        sync()
        tic = time.perf_counter()
        forward(prompt, [(None, None)] * layers)
        sync()
        pp = prompt_tokens / (time.perf_counter() - tic)
        cache = [(None, None)] * layers
        y = forward(torch.tensor([17], device=device), cache).argmax(-1)
        sync()
        tic = time.perf_counter()
        for _ in range(generation_tokens):
            y = forward(y, cache).argmax(-1)
            y.item()  # greedy decoding reads each token, as nuvec.lm's loop does
        return {"pp": pp, "tg": generation_tokens / (time.perf_counter() - tic)}


def llama_bench_runs(path, model_file, trials, *options):
    """llama-bench's tests on `model_file` at 2 threads, measured now: its JSON records."""
    out = subprocess.run(
        [path, "-m", model_file, "-t", "2", "-r", str(trials), "-o", "json", *options],
        capture_output=True, text=True, check=True,
    ).stdout  # fmt: skip
    return json.loads(out)


def llama_bench(path, model_file, n_pp, n_tg, trials):
    """llama.cpp's (pp, tg) tok/s on `model_file`."""
    runs = llama_bench_runs(path, model_file, trials, "-p", str(n_pp), "-n", str(n_tg))
    speed = {(r["n_prompt"], r["n_gen"]): r["avg_ts"] for r in runs}
    return speed[(n_pp, 0)], speed[(0, n_tg)]


def llama_bench_depths(path, model_file, n_tg, depths, trials):
    """llama.cpp's tg tok/s after each depth's tokens of context (llama-bench's -d)."""
    depth_list = ",".join(map(str, depths))
    runs = llama_bench_runs(path, model_file, trials, "-p", "0", "-n", str(n_tg), "-d", depth_list)
    return {r["n_depth"]: r["avg_ts"] for r in runs}


def depth_rows(args, n_tg):
    """(depth, nuvec Q4_1 tg, the same with float16 caches, llama.cpp tg or None) for each of
    --depths (llama.cpp's caches are float16 by default), each a median over rounds that run
    llama.cpp's trial and nuvec's two one after another (the machine's speed drifts)."""
    depths = [int(d) for d in args.depths.split(",") if d]
    if not depths:
        return []
    model, _ = load()
    measure(model, 16, 4)  # warm-up
    rows = []
    for d in depths:
        tg = {None: [], mx.float16: [], "llama": []}
        for _ in range(args.trials):
            if args.llama_bench:
                theirs = llama_bench_depths(args.llama_bench, default_model_path(), n_tg, [d], 1)
                tg["llama"].append(theirs[d])
            for kv in (None, mx.float16):
                tg[kv].append(measure(model, 16, n_tg, depth=d, kv_dtype=kv)["tg"])
        theirs = statistics.median(tg["llama"]) if tg["llama"] else None
        rows.append((d, statistics.median(tg[None]), statistics.median(tg[mx.float16]), theirs))
    return rows


def median(trials):
    return {k: statistics.median(t[k] for t in trials) for k in trials[0]}


def median_pair(runs):
    """The medians of llama-bench's (pp, tg) runs."""
    return tuple(statistics.median(r[i] for r in runs) for i in (0, 1))


def by_round(ours, theirs):
    """nuvec's tg over llama.cpp's, round by round."""
    return " ".join(f"{t['tg'] / l[1]:.2f}" for t, l in zip(ours, theirs))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--generation-tokens", type=int, default=128)
    ap.add_argument(
        "--llama-bench", help="llama.cpp's llama-bench, run beside nuvec on the same file"
    )
    ap.add_argument(
        "--llama-f32",
        help="an F32 GGUF of the same model (llama-quantize --allow-requantize IN OUT F32), for "
        "llama-bench's F32 figures beside nuvec's (with --llama-bench)",
    )
    ap.add_argument("--depths", default="", help="Q4_1 decode after these context lengths too")
    args = ap.parse_args()
    n_pp, n_tg = args.prompt_tokens, args.generation_tokens
    copy = machine_bandwidth()
    bandwidth = memory_bandwidth()[0]
    rows = []
    anchors = dict(LLAMA_CPP)
    model, _ = load()
    # The Q4_1 rows in rounds: llama.cpp's trial (when given), then nuvec's with float and with
    # int8 activations, so that each round's figures come from the same minute.
    trials = {"Q4_1": [], "Q4_1 int8": [], "llama": []}
    measure(model, 16, 4)  # warm-up
    for _ in range(args.trials):
        if args.llama_bench:
            trials["llama"].append(
                llama_bench(args.llama_bench, default_model_path(), n_pp, n_tg, 1)
            )
        for kind in ("Q4_1", "Q4_1 int8"):
            set_int8_activations(model, kind == "Q4_1 int8")
            trials[kind].append(measure(model, n_pp, n_tg))
    if args.llama_bench:
        anchors["Q4_1"] = median_pair(trials["llama"])
    set_int8_activations(model, False)
    limits = {"Q4_1": bandwidth * 1e9 / weight_bytes(model)}
    dequantize_model(model)
    # The quantized products' interleaved copies hold their weights until clear_cache (their
    # cache keeps what it copied: docs/quantization.md); F32's peak is the float model's alone.
    mx.clear_cache()
    measure(model, 16, 4)  # warm-up
    # Each F32 trial between two readings of the rule, its limit from their mean: the memory's
    # rate during the trial (the readings around one trial differed by up to 20%: the rule moves
    # 29-36 GB/s between minutes). (llama.cpp's F32 trial, when given, just before: the same
    # minute too.)
    rules, trials["F32"], trials["llama F32"] = [], [], []
    for _ in range(args.trials):
        if args.llama_bench and args.llama_f32:
            trials["llama F32"].append(llama_bench(args.llama_bench, args.llama_f32, n_pp, n_tg, 1))
        before = memory_bandwidth()[0]
        trials["F32"].append(measure(model, n_pp, n_tg))
        rules.append((before, memory_bandwidth()[0]))
    rule_means = [statistics.mean(r) for r in rules]
    limits["F32"] = statistics.median(rule_means) * 1e9 / weight_bytes(model)
    if trials["llama F32"]:
        anchors["F32"] = median_pair(trials["llama F32"])
    for kind in ("Q4_1", "Q4_1 int8", "F32"):
        r = median(trials[kind])
        limit = limits[kind.split()[0]]
        anchor = anchors[kind.split()[0]]
        rows.append((f"nuvec {kind}", r["pp"], r["tg"], r["peak"], limit, anchor))
    try:
        import torch
    except ImportError:
        torch = None
    if torch is not None:
        torch.set_num_threads(2)
        fwd = torch_llama(torch, model)
        a = model.args
        r = median(
            [torch_measure(torch, fwd, a.num_hidden_layers, a.vocab_size, n_pp, n_tg)
             for _ in range(args.trials)]
        )  # fmt: skip
        rows.append(("PyTorch F32", r["pp"], r["tg"], float("nan"), rows[-1][4], anchors["F32"]))
    print(
        f"memory read bandwidth (STREAM's rule, 2 threads): {bandwidth:.1f} GB/s; two-core copy of "
        f"64 MiB: {copy:.1f} GB/s; {mx.__name__} threads: default"
    )
    source = "measured now" if args.llama_bench else "the issue's anchors"
    which = "Q4_1 and F32" if trials["llama F32"] else "Q4_1"
    print(f"| run | pp{n_pp} tok/s | tg{n_tg} tok/s | peak GB | decode bandwidth limit tok/s "
          f"| llama.cpp pp / tg (same weights; {which} {source}) |")  # fmt: skip
    print("|---|---|---|---|---|---|")
    for name, pp, tg, peak, limit, (lpp, ltg) in rows:
        print(
            f"| {name} | {pp:.1f} | {tg:.1f} | {peak:.3f} | {limit:.0f} | {lpp:.0f} / {ltg:.0f} |"
        )
    shares = " ".join(
        f"{t['tg'] * weight_bytes(model) / (m * 1e9):.0%} ({r[0]:.1f} / {r[1]:.1f} GB/s)"
        for t, r, m in zip(trials["F32"], rules, rule_means)
    )
    print(
        f"F32 tg{n_tg} / its limit, trial by trial (the rule read just before / just after): "
        f"{shares}"
    )
    if trials["llama F32"]:
        f32 = by_round(trials["F32"], trials["llama F32"])
        print(f"F32 tg{n_tg} / llama.cpp's F32, round by round: {f32}")
    if trials["llama"]:
        ratios = {kind: by_round(trials[kind], trials["llama"]) for kind in ("Q4_1", "Q4_1 int8")}
        print(
            f"tg{n_tg} / llama.cpp's, round by round: Q4_1 {ratios['Q4_1']}; int8 {ratios['Q4_1 int8']}"
        )
    deep = depth_rows(args, n_tg)
    if deep:
        print(
            f"\n| context before tg{n_tg} | nuvec Q4_1 tok/s | nuvec, float16 caches | "
            "llama.cpp Q4_1 tok/s (float16 caches) | nuvec / llama.cpp | float16 caches / llama.cpp |"
        )
        print("|---|---|---|---|---|---|")
        for d, tg, half, theirs in deep:
            other = (
                f"{theirs:.1f} | {tg / theirs:.2f} | {half / theirs:.2f}" if theirs else "- | - | -"
            )
            print(f"| {d} | {tg:.1f} | {half:.1f} | {other} |")


if __name__ == "__main__":
    main()
