"""The chunked-prefill contract on the real SmolLM2 model (docs/lm.md, "Chunked prefill"): a
prompt prefilled in the same chunks gives the same bits, and resuming at a chunk boundary from a
copied cache snapshot gives the bits of the uninterrupted run."""

import numpy as np
import pytest

import nuvec as mx
from lm_reference import smollm2_path
from nuvec.lm import generate_step, load, make_prompt_cache

pytestmark = pytest.mark.nuvec_only

pytest.importorskip("tokenizers")
pytest.importorskip("jinja2")

CHUNK = 4


@pytest.fixture(scope="module")
def loaded():
    model, tokenizer = load(smollm2_path())
    prompt = tokenizer.apply_chat_template([{"role": "user", "content": "Hi"}], True)[:12]
    return model, mx.array(prompt)


def _prefill(model, cache, prompt, start=0):
    """Feeds ``prompt[start:]`` in chunks of CHUNK; the last chunk's logits and the caches' bits."""
    out = None
    for i in range(start, prompt.size, CHUNK):
        out = model(prompt[None, i : i + CHUNK], cache=cache)
    return np.array(out).tobytes(), [np.array(x).tobytes() for c in cache for x in c.state[:2]]


def _snapshot(cache):
    """A copy whose arrays share nothing with ``cache``'s."""
    return [
        type(c).from_state(
            tuple(mx.array(np.array(x)) if isinstance(x, mx.array) else x for x in c.state)
        )
        for c in cache
    ]


def test_same_chunks_same_bits(loaded):
    model, prompt = loaded
    first = _prefill(model, make_prompt_cache(model), prompt)
    assert _prefill(model, make_prompt_cache(model), prompt) == first


def test_resuming_from_a_snapshot_equals_the_uninterrupted_run(loaded):
    model, prompt = loaded
    whole = _prefill(model, make_prompt_cache(model), prompt)
    cache = make_prompt_cache(model)
    _prefill(model, cache, prompt[: 2 * CHUNK])
    snapshot = _snapshot(cache)
    model(mx.array([[5, 6, 7]]), cache=cache)  # the original goes on elsewhere
    assert _prefill(model, snapshot, prompt, 2 * CHUNK) == whole
    # generate_step resumes the same way: its chunks of CHUNK from a snapshot at a boundary
    # (it holds the last prompt token back for its first step)
    cache = make_prompt_cache(model)
    _prefill(model, cache, prompt[:CHUNK])
    resumed = generate_step(
        prompt[CHUNK:], model, max_tokens=4, prompt_cache=_snapshot(cache), prefill_step_size=CHUNK
    )
    plain = generate_step(prompt, model, max_tokens=4, prefill_step_size=CHUNK)
    assert [(t, np.array(lp).tobytes()) for t, lp in resumed] == [
        (t, np.array(lp).tobytes()) for t, lp in plain
    ]
