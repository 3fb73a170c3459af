// The CPU kernels of paged_write and paged_attention (core/primitives/paged.h). Attention runs the
// decode kernel's key blocks (backend/cpu/simd/attention.cpp) with rows read through the block
// table, and merges them as the decode kernel does: each row has its contiguous call's bits.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/attention.h"
#include "backend/cpu/backend.h"
#include "backend/cpu/copy.h"
#include "backend/cpu/kernels.h"
#include "backend/cpu/sort.h"
#include "core/primitives/paged.h"
#include "core/threads.h"

namespace nuvec::cpu {

namespace {

constexpr int64_t KB = kAttentionKeyBlock;

[[noreturn]] void out_of_range(const std::string& why) { throw KernelError(EvalErrorKind::index, why); }

void eval_paged_write(const PagedWrite&, const std::vector<Array>& in, std::vector<Array>& out) {
  for (size_t j = 0; j < 2; ++j) donate_or_copy(in[j], out[j], holders(in[j], out));
  Array slots = row_contiguous(in[4]);
  const int32_t* slot = slots.data<int32_t>();
  const int64_t n = out[0].shape(0) * out[0].shape(1);
  for (size_t j = 0; j < 2; ++j) {
    Array x = row_contiguous(in[2 + j]);
    const size_t row = size_t(x.shape(1) * x.shape(2)) * x.itemsize();
    const char* src = static_cast<const char*>(x.data_bytes());
    char* dst = static_cast<char*>(out[j].data_bytes());
    for (int64_t t = 0; t < x.shape(0); ++t) {
      if (slot[t] < 0) continue;  // padding
      if (slot[t] >= n)
        out_of_range("paged_write: slot " + std::to_string(slot[t]) + " is past the pools' " + std::to_string(n));
      std::memcpy(dst + size_t(slot[t]) * row, src + size_t(t) * row, row);
    }
  }
}

void eval_paged_attention(const PagedAttention& prim, const std::vector<Array>& in, std::vector<Array>& out) {
  Array& o = out[0];
  o.allocate_contiguous();
  if (o.size() == 0) return;
  Array q = row_contiguous(in[0]), k = row_contiguous(in[1]), v = row_contiguous(in[2]);
  Array tables = row_contiguous(in[3]), lens_a = row_contiguous(in[4]);
  const int64_t B = q.shape(0), Hq = q.shape(1), N = k.shape(0), P = k.shape(1), Hkv = k.shape(2), D = k.shape(3),
                Dv = v.shape(3), M = tables.shape(1), rep = Hq / Hkv, stride = Dv + 2;
  const int32_t *table = tables.data<int32_t>(), *lens = lens_a.data<int32_t>();
  // Sequence b's key blocks, and the first of them among all sequences'.
  std::vector<int64_t> nb(static_cast<size_t>(B)), first(static_cast<size_t>(B) + 1, 0);
  for (int64_t b = 0; b < B; ++b) {
    if (lens[b] < 0 || lens[b] > M * P)
      out_of_range("paged_attention: context_lens[" + std::to_string(b) + "] = " + std::to_string(lens[b]) +
                   " is outside [0, " + std::to_string(M * P) + "]");
    for (int64_t j = 0; j < (lens[b] + P - 1) / P; ++j)
      if (table[b * M + j] < 0 || table[b * M + j] >= N)
        out_of_range("paged_attention: block id " + std::to_string(table[b * M + j]) + " is outside [0, " +
                     std::to_string(N) + ")");
    nb[size_t(b)] = (lens[b] + KB - 1) / KB;
    first[size_t(b) + 1] = first[size_t(b)] + nb[size_t(b)];
  }
  AttentionOperands a{q.data<float>(),
                      k.data_bytes(),
                      v.data_bytes(),
                      o.data<float>(),
                      B,
                      Hq,
                      Hkv,
                      1,
                      M * P,
                      D,
                      Dv,
                      prim.scale(),
                      AttentionMask::none,
                      nullptr,
                      {},
                      nullptr,
                      &matmul_kernels()};
  std::copy_n(q.strides().begin(), 3, a.qst);
  for (auto [x, st] : {std::pair{&k, a.kst}, {&v, a.vst}}) {  // (page, head, row) strides
    const Strides& s = x->strides();
    st[0] = s[0], st[1] = s[2], st[2] = s[1];
  }
  a.kv = k.dtype();
  a.pages = table, a.page_size = P, a.pages_stride = M;
  // Tasks (sequence, key head, block, chunk of the group's query heads), as the decode kernel
  // orders them; row (b, h)'s nb[b] parts are consecutive. Any split gives the same bits: no task
  // reads another's.
  const int64_t chunks = decode_chunks(rep), per_block = Hkv * chunks;
  const int64_t tasks = first.back() * per_block;
  std::vector<float> parts(size_t(first.back() * Hq * stride));
  auto block = NUVEC_FOR_ISA(attention_decode_block);
  auto merge = NUVEC_FOR_ISA(attention_decode_merge);
  const int64_t work = KB * (D + Dv) * decode_chunk_heads(rep, 0);
  parallel_for(tasks, std::max<int64_t>(1, (int64_t(1) << 16) / work), [&](int64_t t0, int64_t t1) {
    for (int64_t t = t0; t < t1; ++t) {
      // The last sequence starting at or before block t / per_block: the one with blocks there.
      int64_t b = std::upper_bound(first.begin(), first.end(), t / per_block) - first.begin() - 1;
      int64_t n = nb[size_t(b)], local = t - first[size_t(b)] * per_block;
      int64_t c = local % chunks, blk = local / chunks % n, h = local / chunks / n * rep + c * kDecodeHeads;
      block(a, b, h, decode_chunk_heads(rep, c), 0, blk * KB, std::min<int64_t>(lens[b], (blk + 1) * KB), false,
            parts.data() + (first[size_t(b)] * Hq + h * n + blk) * stride, n * stride);
    }
  });
  parallel_for(B * Hq, std::max<int64_t>(1, 4096 / (Dv * std::max<int64_t>(1, first.back() / B))),
               [&](int64_t r0, int64_t r1) {
                 for (int64_t r = r0; r < r1; ++r) {
                   int64_t b = r / Hq, h = r % Hq, n = nb[size_t(b)];
                   if (n == 0)
                     std::fill(a.out + r * Dv, a.out + (r + 1) * Dv, 0.0f);
                   else
                     merge(a, parts.data() + (first[size_t(b)] * Hq + h * n) * stride, n, h, a.out + r * Dv);
                 }
               });
}

}  // namespace

void register_paged_kernels(Backend& b) {
  b.add<PagedWrite, eval_paged_write>();
  b.add<PagedAttention, eval_paged_attention>();
}

}  // namespace nuvec::cpu
