"""``python -m nuvec.lm {generate,chat,bench,convert}``: mlx-lm's commands on nuvec.

Tokens stream to stdout; speeds and peak memory go to stderr. A missing path, an unsupported
architecture or a corrupt file ends with one line ``error: ...`` on stderr and exit status 1."""

from __future__ import annotations

import argparse
import sys
from typing import Any

from .. import _core as mx
from .. import random
from .convert import RECIPES
from .generate import stream_generate
from .models.cache import make_prompt_cache
from .sample_utils import make_sampler
from .utils import load

__all__ = ["main"]


def _int8_flag(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--int8-activations", action="store_true",
        help="decode steps with int8 activations (nuvec's own: faster, ~1e-2 relative error)",
    )  # fmt: skip


def _common(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--model", default=None, help="a GGUF file or model directory (default: SmolLM2-135M)"
    )
    _int8_flag(p)
    p.add_argument("--max-tokens", "-m", type=int, default=256)
    p.add_argument("--temp", type=float, default=0.0, help="sampling temperature (0: greedy)")
    p.add_argument("--top-p", type=float, default=1.0)
    p.add_argument("--top-k", type=int, default=0)
    p.add_argument("--min-p", type=float, default=0.0)
    p.add_argument("--seed", type=int, default=None, help="seed of nuvec.random for sampling")


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m nuvec.lm", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="generate text from a prompt")
    _common(g)
    g.add_argument("--prompt", "-p", default="Hello", help="the prompt ('-': read stdin)")
    g.add_argument("--system-prompt", default=None)
    g.add_argument("--ignore-chat-template", action="store_true", help="use the prompt as is")
    g.add_argument("--draft-model", default=None, help="a draft model for speculative decoding")
    g.add_argument("--num-draft-tokens", type=int, default=2, help="tokens the draft proposes")
    g.add_argument("--max-kv-size", type=int, default=None, help="rotating caches of this size")
    g.add_argument("--kv-bits", type=int, default=None, help="quantize the caches to these bits")
    g.add_argument("--kv-group-size", type=int, default=64)
    g.add_argument("--quantized-kv-start", type=int, default=0)
    g.add_argument(
        "--kv-dtype", choices=["float32", "float16", "bfloat16"], default=None,
        help="the caches' dtype (nuvec's own; default: the model's activations')",
    )  # fmt: skip
    c = sub.add_parser("chat", help="an interactive chat (reads stdin lines)")
    _common(c)
    c.add_argument("--system-prompt", default=None)
    b = sub.add_parser("bench", help="prompt and decode tokens per second")
    b.add_argument("--model", default=None)
    _int8_flag(b)
    b.add_argument("--prompt-tokens", type=int, default=512)
    b.add_argument("--generation-tokens", type=int, default=128)
    b.add_argument("--trials", type=int, default=3)
    b.add_argument(
        "--depth",
        type=int,
        default=0,
        help="decode after this many tokens of context (llama-bench's -d)",
    )
    v = sub.add_parser("convert", help="write a model in MLX's format (quantized with -q)")
    v.add_argument("--model", "--hf-path", required=True, help="a GGUF file or model directory")
    v.add_argument("--out", "--mlx-path", default="mlx_model", help="the new directory")
    v.add_argument("-q", "--quantize", action="store_true", help="quantize the weights")
    v.add_argument("--q-bits", type=int, default=None, help="bits per weight (default: 4)")
    v.add_argument("--q-group-size", type=int, default=None, help="group size (default: 64)")
    v.add_argument("--q-mode", default="affine", choices=["affine", "mxfp4", "nvfp4", "mxfp8"])
    v.add_argument("--quant-predicate", default=None, choices=sorted(RECIPES),
                   help="a mixed-bit recipe (low and high bits)")  # fmt: skip
    v.add_argument("--dtype", default=None, choices=["float16", "bfloat16", "float32"])
    v.add_argument("-d", "--dequantize", action="store_true", help="dequantize a quantized model")
    return parser


def _convert(args: argparse.Namespace) -> None:
    from .convert import convert

    convert(
        args.model, args.out, quantize=args.quantize, q_group_size=args.q_group_size,
        q_bits=args.q_bits, q_mode=args.q_mode, dtype=args.dtype, dequantize=args.dequantize,
        quant_predicate=args.quant_predicate,
    )  # fmt: skip
    print(f"wrote {args.out}", file=sys.stderr)


def _sampler(args: argparse.Namespace) -> Any:
    if args.seed is not None:
        random.seed(args.seed)
    return make_sampler(args.temp, args.top_p, args.min_p, top_k=args.top_k)


def _stream(model: Any, tokenizer: Any, prompt: Any, args: argparse.Namespace, **kw: Any) -> Any:
    response, text, tokens = None, "", []
    for response in stream_generate(
        model, tokenizer, prompt, max_tokens=args.max_tokens, sampler=_sampler(args), **kw
    ):
        print(response.text, end="", flush=True)
        text += response.text
        tokens.append(response.token)
    print(flush=True)
    return response, text, tokens


def _report(r: Any) -> None:
    if r is None:
        return
    print(
        f"Prompt: {r.prompt_tokens} tokens, {r.prompt_tps:.3f} tokens-per-sec\n"
        f"Generation: {r.generation_tokens} tokens, {r.generation_tps:.3f} tokens-per-sec\n"
        f"Peak memory: {r.peak_memory:.3f} GB",
        file=sys.stderr,
        flush=True,
    )


def _generate(args: argparse.Namespace) -> None:
    model, tokenizer = load(args.model, int8_activations=args.int8_activations)
    prompt = sys.stdin.read() if args.prompt == "-" else args.prompt
    if not args.ignore_chat_template and tokenizer.has_chat_template:
        messages = [{"role": "system", "content": args.system_prompt}] if args.system_prompt else []
        messages.append({"role": "user", "content": prompt})
        prompt = tokenizer.apply_chat_template(messages, add_generation_prompt=True)
    kw: dict[str, Any] = {
        "kv_bits": args.kv_bits, "kv_group_size": args.kv_group_size,
        "quantized_kv_start": args.quantized_kv_start,
        "kv_dtype": getattr(mx, args.kv_dtype) if args.kv_dtype else None,
    }  # fmt: skip
    if args.draft_model is not None:  # (speculative decoding takes no max_kv_size, as mlx-lm)
        kw.update(
            draft_model=load(args.draft_model, int8_activations=args.int8_activations)[0],
            num_draft_tokens=args.num_draft_tokens,
        )
    else:
        kw["max_kv_size"] = args.max_kv_size
    response, _, _ = _stream(model, tokenizer, prompt, args, **kw)
    _report(response)


def _chat(args: argparse.Namespace) -> None:
    """Each stdin line is a user turn. The cache keeps the conversation: a turn prefills only the
    tokens after the longest prefix the cache already holds (trimming what the template renders
    differently, such as a reply that re-tokenizes otherwise)."""
    model, tokenizer = load(args.model, int8_activations=args.int8_activations)
    cache = make_prompt_cache(model)
    history = [{"role": "system", "content": args.system_prompt}] if args.system_prompt else []
    seen: list[int] = []
    interactive = sys.stdin.isatty()
    while True:
        if interactive:
            print(">> ", end="", flush=True)
        line = sys.stdin.readline()
        if not line:
            break
        if not line.strip():
            continue
        history.append({"role": "user", "content": line.rstrip("\n")})
        ids = tokenizer.apply_chat_template(history, add_generation_prompt=True)
        common = 0
        while common < min(len(seen), len(ids) - 1) and seen[common] == ids[common]:
            common += 1
        for c in cache:
            c.trim(len(seen) - common)
        response, text, tokens = _stream(model, tokenizer, ids[common:], args, prompt_cache=cache)
        history.append({"role": "assistant", "content": text})
        seen = (ids + tokens)[: cache[0].offset]  # what the cache holds now
        _report(response)


def _bench(args: argparse.Namespace) -> None:
    from .bench import run

    model, _ = load(args.model, int8_activations=args.int8_activations)
    run(model, args.prompt_tokens, args.generation_tokens, args.trials, args.depth)


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    commands = {"generate": _generate, "chat": _chat, "bench": _bench, "convert": _convert}
    command = commands[args.command]
    try:
        command(args)
    except (OSError, ValueError, RuntimeError) as e:
        print(f"error: {e}".splitlines()[0], file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130
    return 0
