// The CPU kernel of scaled_dot_product_attention: few query rows go to the decode kernel (key
// blocks as tasks, merged per row in order), more to the prefill kernel (query tiles as tasks).
// Every partition depends on the shapes alone, and no task's bits depend on another's.
#include "backend/cpu/attention.h"

#include <algorithm>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/sort.h"
#include "backend/cpu/thread_buffer.h"
#include "core/allocator.h"
#include "core/ops/attention.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t KB = kAttentionKeyBlock;

// The keys a boolean mask shows row i, where it shows a prefix [0, n) (n >= 1) to every batch row
// and head alike; else 0.
int64_t shown_prefix(const AttentionOperands& a, int64_t i) {
  const int64_t* st = a.mask_strides;
  int64_t shown = -1;
  for (int64_t b = 0; b < (st[0] ? a.B : 1); ++b)
    for (int64_t h = 0; h < (st[1] ? a.Hq : 1); ++h) {
      const char* row = a.mask_data + b * st[0] + h * st[1] + i * st[2];
      int64_t n = 0;
      while (n < a.Lk && row[n * st[3]]) ++n;
      for (int64_t j = n; j < a.Lk; ++j)
        if (row[j * st[3]]) return 0;
      if (n == 0 || (shown >= 0 && n != shown)) return 0;
      shown = n;
    }
  return shown;
}

void decode(AttentionOperands a) {
  const int64_t heads = a.B * a.Hq, stride = a.Dv + 2;
  // A boolean mask that shows each row a prefix of the keys (a decode step over a key buffer
  // longer than what it holds) runs as the unmasked call over those keys: the same bits, and no
  // work for the hidden ones.
  std::vector<int64_t> shown(size_t(a.Lq), 0);
  bool prefixes = a.mask == AttentionMask::boolean;
  for (int64_t i = 0; i < a.Lq && prefixes; ++i) prefixes = (shown[size_t(i)] = shown_prefix(a, i)) > 0;
  if (prefixes) a.mask = AttentionMask::none;
  // Row i's keys: its causal prefix, or all (masked) when that is empty; its first block's index.
  std::vector<int64_t> keys(size_t(a.Lq)), first(size_t(a.Lq) + 1, 0);
  std::vector<char> masked(size_t(a.Lq), 0);
  for (int64_t i = 0; i < a.Lq; ++i) {
    int64_t n = prefixes ? shown[size_t(i)] : a.mask == AttentionMask::causal ? a.Lk - a.Lq + i + 1 : a.Lk;
    masked[size_t(i)] = n <= 0;
    keys[size_t(i)] = n > 0 ? n : a.Lk;
    first[size_t(i) + 1] = first[size_t(i)] + (keys[size_t(i)] + KB - 1) / KB;
  }
  // Each key head's group in chunks of at most kDecodeHeads query heads, each chunk's keys read once.
  const int64_t per_head = first.back(), rep = a.Hq / a.Hkv, chunks = decode_chunks(rep);
  const int64_t tasks = a.B * a.Hkv * chunks * per_head;
  std::vector<std::pair<int64_t, int64_t>> pieces;  // (row, block), block by block
  for (int64_t blk = 0; pieces.size() < size_t(per_head); ++blk)
    for (int64_t i = 0; i < a.Lq; ++i)
      if (blk < first[size_t(i) + 1] - first[size_t(i)]) pieces.emplace_back(i, blk);
  struct Parts;
  float* parts = thread_buffer<Parts, float>(size_t(heads * per_head * stride));
  auto block = NUVEC_FOR_ISA(attention_decode_block);
  auto merge = NUVEC_FOR_ISA(attention_decode_merge);
  // A task's multiply-adds, from the keys its rows read (a decode step's prefix, not the buffer).
  // Handing tasks to a worker costs about as much as 2^15 of them on the 2-core machine measured:
  // with the keys cached, a step's nine heads over 17-70 keys took 1.4-1.6x as long on two threads
  // as on one, but in a decode step the keys come from memory (the products stream ~100 MB between
  // attention calls), and from ~43 keys two threads read them faster (SmolLM2's 96 steps from 8
  // positions: 12.0-12.3 -> 10.7-11.2 us a call against a 2^17 threshold).
  const int64_t most = *std::max_element(keys.begin(), keys.end());
  const int64_t work = std::min(most, KB) * (a.D + a.Dv) * decode_chunk_heads(rep, 0);
  parallel_for(tasks, std::max<int64_t>(1, (int64_t(1) << 15) / work), [&](int64_t t0, int64_t t1) {
    // Task order (b, key head, block, row, chunk of the group's query heads): a key block is read
    // by the group's rows one after another, from cache.
    for (int64_t t = t0; t < t1; ++t) {
      int64_t c = t % chunks, w = t / chunks % per_head, bg = t / chunks / per_head;
      int64_t b = bg / a.Hkv, h = bg % a.Hkv * rep + c * kDecodeHeads, bh = b * a.Hq + h;
      auto [i, blk] = pieces[size_t(w)];
      int64_t k0 = blk * KB, k1 = std::min(keys[size_t(i)], k0 + KB);
      block(a, b, h, decode_chunk_heads(rep, c), i, k0, k1, masked[size_t(i)],
            parts + (bh * per_head + first[size_t(i)] + blk) * stride, per_head * stride);
    }
  });
  parallel_for(heads * a.Lq, std::max<int64_t>(1, 4096 / (a.Dv * per_head)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t bh = r / a.Lq, i = r % a.Lq;
      merge(a, parts + (bh * per_head + first[size_t(i)]) * stride, first[size_t(i) + 1] - first[size_t(i)], bh % a.Hq,
            a.out + r * a.Dv);
    }
  });
}

void prefill(const AttentionOperands& a) {
  // Every key tile packed once (shared by the query heads of its key head), then the query tiles.
  const int64_t mr = a.mm->f32_shape.mr, TK = kAttentionTileK;
  const int64_t kt = (a.Lk + TK - 1) / TK, kheads = a.B * a.Hkv;
  const int64_t ksize = prefill_k_floats(mr, a.D), vsize = prefill_v_floats(mr, a.Dv);
  // From the caching allocator: a call's packs are the next call's, without new pages.
  auto kbuf = Buffer::allocate(size_t(kheads * kt * ksize) * 4),
       vbuf = Buffer::allocate(size_t(kheads * kt * vsize) * 4);
  float *kpack = static_cast<float*>(kbuf->data()), *vpack = static_cast<float*>(vbuf->data());
  auto pack = NUVEC_FOR_ISA(attention_prefill_pack);
  parallel_for(kheads * kt, std::max<int64_t>(1, 16384 / ksize), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t)
      pack(a, t / kt / a.Hkv, t / kt % a.Hkv, t % kt * TK, kpack + t * ksize, vpack + t * vsize);
  });
  const int64_t tiles = (a.Lq + kAttentionTileQ - 1) / kAttentionTileQ, rep = a.Hq / a.Hkv;
  auto tile = NUVEC_FOR_ISA(attention_prefill_tile);
  parallel_for(a.B * a.Hq * tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      // The heaviest (last) tiles of a head first, so no thread is left with one at the end.
      int64_t bh = t / tiles, i0 = (tiles - 1 - t % tiles) * kAttentionTileQ, b = bh / a.Hq, h = bh % a.Hq;
      int64_t kh = b * a.Hkv + h / rep;
      tile(a, kpack + kh * kt * ksize, vpack + kh * kt * vsize, b, h, i0, std::min(a.Lq, i0 + kAttentionTileQ));
    }
  });
}

void eval_attention(const ScaledDotProductAttention& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const AttentionParams& p = prim.params();
  Array& o = out[0];
  o.allocate_contiguous();
  if (o.size() == 0) return;
  // Any layout whose rows have unit stride is read in place (a slice of a key cache, heads
  // transposed out of (B, L, H, D)); others are copied.
  auto rows = [](const Array& x) { return x.shape(3) == 1 || x.strides()[3] == 1 ? x : row_contiguous(x); };
  Array q = rows(in[0]), k = rows(in[1]), v = rows(in[2]);
  AttentionOperands a{q.data<float>(), k.data_bytes(),   v.data_bytes(), o.data<float>(), q.shape(0),
                      q.shape(1),      k.shape(1),       q.shape(2),     k.shape(2),      q.shape(3),
                      v.shape(3),      p.scale,          p.mask,         nullptr,         {},
                      nullptr,         &matmul_kernels()};
  for (auto [x, st] : {std::pair{&q, a.qst}, {&k, a.kst}, {&v, a.vst}}) std::copy_n(x->strides().begin(), 3, st);
  a.kv = k.dtype();
  if (p.mask == AttentionMask::additive || p.mask == AttentionMask::boolean) {
    a.mask_data = in[3].data_bytes();
    std::copy(in[3].strides().begin(), in[3].strides().end(), a.mask_strides);
  }
  Array sinks;
  if (p.sinks) {
    sinks = row_contiguous(in.back());
    a.sinks = sinks.data<float>();
  }
  if (a.Lq <= kAttentionDecodeRows)
    decode(a);
  else
    prefill(a);
}

}  // namespace

void register_attention_kernels(Backend& b) {
  b.add<ScaledDotProductAttention, eval_attention>();
  register_paged_kernels(b);
}

}  // namespace nuvec::cpu
