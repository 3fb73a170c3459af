// The CPU kernel of scaled_dot_product_attention: few query rows go to the decode kernel (key
// blocks as tasks, merged per row in order), more to the prefill kernel (query tiles as tasks).
// Every partition depends on the shapes alone, and no task's bits depend on another's.
#include "backend/cpu/attention.h"

#include <algorithm>
#include <vector>

#include "backend/cpu/backend.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/sort.h"
#include "core/ops/attention.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t KB = kAttentionKeyBlock;

void decode(const AttentionOperands& a) {
  const int64_t heads = a.B * a.Hq, stride = a.Dv + 2;
  // Row i's keys: its causal prefix, or all (masked) when that is empty; its first block's index.
  std::vector<int64_t> keys(size_t(a.Lq)), first(size_t(a.Lq) + 1, 0);
  std::vector<char> masked(size_t(a.Lq), 0);
  for (int64_t i = 0; i < a.Lq; ++i) {
    int64_t n = a.mask == AttentionMask::causal ? a.Lk - a.Lq + i + 1 : a.Lk;
    masked[size_t(i)] = n <= 0;
    keys[size_t(i)] = n > 0 ? n : a.Lk;
    first[size_t(i) + 1] = first[size_t(i)] + (keys[size_t(i)] + KB - 1) / KB;
  }
  const int64_t per_head = first.back(), tasks = heads * per_head;
  std::vector<float> parts(size_t(tasks * stride));
  auto block = NUVEC_FOR_ISA(attention_decode_block);
  auto merge = NUVEC_FOR_ISA(attention_decode_merge);
  int64_t work = std::min(a.Lk, KB) * (a.D + a.Dv);
  parallel_for(tasks, std::max<int64_t>(1, (int64_t(1) << 16) / work), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t bh = t / per_head, w = t % per_head;
      int64_t i = int64_t(std::upper_bound(first.begin(), first.end(), w) - first.begin()) - 1;
      int64_t k0 = (w - first[size_t(i)]) * KB, k1 = std::min(keys[size_t(i)], k0 + KB);
      block(a, bh / a.Hq, bh % a.Hq, i, k0, k1, masked[size_t(i)], parts.data() + t * stride);
    }
  });
  parallel_for(heads * a.Lq, std::max<int64_t>(1, 4096 / (a.Dv * per_head)), [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) {
      int64_t bh = r / a.Lq, i = r % a.Lq;
      merge(a, parts.data() + (bh * per_head + first[size_t(i)]) * stride, first[size_t(i) + 1] - first[size_t(i)],
            bh % a.Hq, a.out + r * a.Dv);
    }
  });
}

void prefill(const AttentionOperands& a) {
  const int64_t tiles = (a.Lq + kAttentionTileQ - 1) / kAttentionTileQ;
  auto tile = NUVEC_FOR_ISA(attention_prefill_tile);
  parallel_for(a.B * a.Hq * tiles, 1, [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      int64_t bh = t / tiles, i0 = t % tiles * kAttentionTileQ;
      tile(a, bh / a.Hq, bh % a.Hq, i0, std::min(a.Lq, i0 + kAttentionTileQ));
    }
  });
}

void eval_attention(const ScaledDotProductAttention& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  const AttentionParams& p = prim.params();
  Array& o = out[0];
  o.allocate_contiguous();
  if (o.size() == 0) return;
  Array q = row_contiguous(in[0]), k = row_contiguous(in[1]), v = row_contiguous(in[2]);
  AttentionOperands a{q.data<float>(), k.data<float>(), v.data<float>(), o.data<float>(),
                      q.shape(0),      q.shape(1),      k.shape(1),      q.shape(2),
                      k.shape(2),      q.shape(3),      v.shape(3),      p.scale,
                      p.mask,          nullptr,         {},              nullptr,
                      &matmul_kernels()};
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

void register_attention_kernels(Backend& b) { b.add<ScaledDotProductAttention, eval_attention>(); }

}  // namespace nuvec::cpu
