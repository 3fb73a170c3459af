"""The paged cache and batch_generate (docs/lm.md, "Paged cache and batch generation"): on tiny
models of several architectures, each sequence's logits in a paged batch are bit for bit those of
its plain-cache run; on the real SmolLM2, a prompt's greedy tokens inside a batch of prompts of
different lengths (one of them at most 8 tokens) are those it gets alone; the page bookkeeping
and bad inputs."""

import numpy as np
import pytest

import nuvec as mx
from lm_arch_models import VOCAB, tiny
from nuvec.lm.batch import batch_generate, prefill_into_pages
from nuvec.lm.models.cache import make_prompt_cache
from nuvec.lm.models.paged_cache import PageAllocator, PageTable, make_paged_cache

# nuvec.lm is mlx-lm's counterpart (mlx.core has no lm). The CPU: paged attention has no GPU kernel,
# so on a GPU its bits are not the GPU attention's (docs/cuda.md).
pytestmark = [pytest.mark.nuvec_only, pytest.mark.cpu_backend]


def _prompt(n, seed):
    return list(np.random.RandomState(seed).randint(0, VOCAB, n))


def _alone(model, prompt, nxt):
    """Logits of the last prompt token and of each token of `nxt`, decoded one by one after a
    one-chunk prefill of the rest (generate_step's way)."""
    cache = make_prompt_cache(model)
    if len(prompt) > 1:
        model(mx.array([prompt[:-1]]), cache=cache)
    out = []
    for t in [prompt[-1], *nxt]:
        out.append(np.array(model(mx.array([[t]]), cache=cache)[0, -1]))
    return out


@pytest.mark.parametrize("name", ["llama", "qwen3", "phi3", "qwen3_moe"])
@pytest.mark.parametrize("page_size", [16, 256])
def test_paged_batch_rows_have_their_plain_cache_bits(name, page_size):
    model = tiny(name)
    prompts = [_prompt(n, n) for n in (13, 1, 7, 40)]
    nxt = [_prompt(4, 100 + i) for i in range(len(prompts))]
    cache = make_paged_cache(model, num_pages=20, page_size=page_size)
    seqs = [prefill_into_pages(model, p, cache) for p in prompts]
    table = cache[0].table
    got = []
    for step in range(5):
        table.step(seqs)
        x = [[p[-1]] if step == 0 else [n[step - 1]] for p, n in zip(prompts, nxt)]
        got.append(np.array(model(mx.array(x), cache=cache)[:, -1]))
    for b, (p, n) in enumerate(zip(prompts, nxt)):
        for step, want in enumerate(_alone(model, p, n)):
            np.testing.assert_array_equal(got[step][b].view(np.uint32), want.view(np.uint32))


def test_sequences_leave_and_give_their_pages_back():
    model = tiny("qwen2")
    cache = make_paged_cache(model, num_pages=6, page_size=16)
    table = cache[0].table
    a, b = (prefill_into_pages(model, _prompt(n, n), cache) for n in (20, 5))
    assert table.allocator.free_pages == 3
    table.step([a, b])
    model(mx.array([[1], [2]]), cache=cache)
    table.remove(a)
    assert table.allocator.free_pages == 5
    pc = _prompt(30, 3)
    c = prefill_into_pages(model, pc, cache)  # reuses a's pages
    assert table.pages[c] == [0, 1]
    table.step([b, c])
    out = np.array(model(mx.array([[3], [pc[-1]]]), cache=cache)[:, -1])
    want = _alone(model, pc, [])[0]
    np.testing.assert_array_equal(out[1], want)


def test_bad_inputs():
    with pytest.raises(ValueError, match="divide 256"):
        PageTable(4, page_size=48)
    alloc = PageAllocator(2)
    with pytest.raises(MemoryError, match="full"):
        alloc.allocate(3)
    with pytest.raises(ValueError, match="not allocated"):
        alloc.free([0])
    with pytest.raises(ValueError, match="sliding"):
        make_paged_cache(tiny("mistral"), 4)
    model = tiny("llama")
    cache = make_paged_cache(model, 4, 16)
    seq = prefill_into_pages(model, _prompt(5, 1), cache)
    cache[0].table.step([seq])
    with pytest.raises(ValueError, match="one new position"):
        model(mx.array([[1, 2]]), cache=cache)


@pytest.fixture(scope="module")
def smollm2():
    pytest.importorskip("tokenizers")
    pytest.importorskip("jinja2")
    from lm_reference import smollm2_path
    from nuvec.lm import load

    return load(smollm2_path())


def test_a_prompt_in_a_paged_batch_gets_the_tokens_it_gets_alone(smollm2):
    """Prompts of 5 to 40-odd tokens (the shortest under the prefill kernel's 8 rows, which the
    left-padded batch cannot match): greedy tokens equal the prompt's solo run."""
    from nuvec.lm import generate_step

    model, tokenizer = smollm2
    chat = [
        tokenizer.apply_chat_template([{"role": "user", "content": m}], True)
        for m in ("Hi", "Write a short poem about the sea, please.", "What is 2+2?")
    ]
    prompts = [*chat, tokenizer.encode("The capital of France is")]
    result = batch_generate(model, tokenizer, prompts, max_tokens=10, page_size=32)
    assert result.texts == [tokenizer.decode(t) for t in result.tokens]
    for p, tokens in zip(prompts, result.tokens):
        alone = []
        for t, _ in generate_step(p, model, max_tokens=10):
            if t in tokenizer.eos_token_ids:
                break
            alone.append(t)
        assert tokens == alone
    with pytest.raises(ValueError, match="non-empty"):
        batch_generate(model, tokenizer, [[1], []])
