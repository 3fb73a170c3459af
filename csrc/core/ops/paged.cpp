#include "core/ops/paged.h"

#include <string>

#include "core/ops.h"
#include "core/ops/attention.h"
#include "core/primitives/paged.h"

namespace nuvec {

namespace {

void need(bool ok, const char* op, const std::string& why) {
  if (!ok) throw OpError(op, why);
}

std::string dims(const Shape& s) {
  std::string r = "(";
  for (size_t i = 0; i < s.size(); ++i) r += (i ? ", " : "") + std::to_string(s[i]);
  return r + (s.size() == 1 ? ",)" : ")");
}

// The pools: (N, P, Hkv, D) and (N, P, Hkv, Dv) of one float dtype, P dividing the decode kernel's
// key block so that a block is whole pages.
void check_pools(const char* op, const Array& k, const Array& v) {
  need(k.ndim() == 4 && v.ndim() == 4, op, "k_pages and v_pages must be (num_pages, page_size, kv_heads, head_dim)");
  need(k.shape(0) == v.shape(0) && k.shape(1) == v.shape(1) && k.shape(2) == v.shape(2), op,
       "k_pages " + dims(k.shape()) + " and v_pages " + dims(v.shape()) + " differ in pages, page size or heads");
  need(k.dtype() == v.dtype(), op, "k_pages and v_pages must have one dtype");
  Dtype d = k.dtype();
  need(d == Dtype::float32 || d == Dtype::float16 || d == Dtype::bfloat16, op,
       "the pools must be float32, float16 or bfloat16");
  int64_t p = k.shape(1);
  need(p > 0 && kAttentionKeyBlock % p == 0, op,
       "page_size must divide " + std::to_string(kAttentionKeyBlock) + ", got " + std::to_string(p));
}

Array int32_of(const char* op, const Array& x, const char* what, Stream s) {
  need(is_integer(x.dtype()), op, std::string(what) + " must be an integer array");
  return x.dtype() == Dtype::int32 ? x : astype(x, Dtype::int32, s);
}

// The int32 values of an evaluated row-contiguous array, or null (checked by the kernel instead).
const int32_t* ready(const Array& x) {
  return x.evaluated() && x.dtype() == Dtype::int32 && x.row_contiguous() ? x.data<int32_t>() : nullptr;
}

}  // namespace

std::pair<Array, Array> paged_write(const Array& kp, const Array& vp, const Array& keys, const Array& values,
                                    const Array& slot_mapping, Stream s) {
  const char* op = "paged_write";
  check_pools(op, kp, vp);
  need(keys.ndim() == 3 && values.ndim() == 3 && keys.shape(0) == values.shape(0), op,
       "keys and values must be (tokens, kv_heads, head_dim) of one token count");
  need(keys.shape(1) == kp.shape(2) && keys.shape(2) == kp.shape(3) && values.shape(1) == vp.shape(2) &&
           values.shape(2) == vp.shape(3),
       op,
       "keys " + dims(keys.shape()) + " and values " + dims(values.shape()) + " do not fit pools of heads and dims " +
           dims({kp.shape(2), kp.shape(3), vp.shape(3)}));
  need(keys.dtype() == kp.dtype() && values.dtype() == kp.dtype(), op,
       std::string("keys and values must have the pools' dtype ") + name_of(kp.dtype()));
  need(slot_mapping.shape() == Shape{keys.shape(0)}, op, "slot_mapping must be (tokens,)");
  Array slots = int32_of(op, slot_mapping, "slot_mapping", s);
  if (const int32_t* p = ready(slots)) {
    int64_t n = kp.shape(0) * kp.shape(1);
    for (int64_t t = 0; t < slots.size(); ++t)
      need(p[t] < n, op, "slot " + std::to_string(p[t]) + " is past the pools' " + std::to_string(n) + " slots");
  }
  auto out = Array::lazy_multi({kp.shape(), vp.shape()}, {kp.dtype(), vp.dtype()}, std::make_shared<PagedWrite>(),
                               {kp, vp, keys, values, slots}, s);
  return {out[0], out[1]};
}

Array paged_attention(const Array& q, const Array& kp, const Array& vp, const Array& block_tables,
                      const Array& context_lens, float scale, Stream s) {
  const char* op = "paged_attention";
  check_pools(op, kp, vp);
  need(q.ndim() == 4 && q.shape(2) == 1, op, "queries must be (batch, heads, 1, head_dim): one query per sequence");
  need(is_floating(q.dtype()) && q.dtype() != Dtype::float64, op, "queries must be float32, float16 or bfloat16");
  need(q.shape(3) == kp.shape(3), op, "the queries' head_dim differs from the keys'");
  need(q.shape(1) % kp.shape(2) == 0, op,
       "the query heads (" + std::to_string(q.shape(1)) + ") must be a multiple of the kv heads (" +
           std::to_string(kp.shape(2)) + ")");
  const int64_t B = q.shape(0);
  need(block_tables.ndim() == 2 && block_tables.shape(0) == B, op, "block_tables must be (batch, max_pages)");
  need(context_lens.shape() == Shape{B}, op, "context_lens must be (batch,)");
  Array tables = int32_of(op, block_tables, "block_tables", s), lens = int32_of(op, context_lens, "context_lens", s);
  const int64_t P = kp.shape(1), M = tables.shape(1);
  if (const int32_t *t = ready(tables), *l = ready(lens); t && l) {
    for (int64_t b = 0; b < B; ++b) {
      need(l[b] >= 0 && l[b] <= M * P, op,
           "context_lens[" + std::to_string(b) + "] = " + std::to_string(l[b]) + " is outside [0, " +
               std::to_string(M * P) + "]");
      for (int64_t j = 0; j < (l[b] + P - 1) / P; ++j)
        need(t[b * M + j] >= 0 && t[b * M + j] < kp.shape(0), op,
             "block id " + std::to_string(t[b * M + j]) + " is outside [0, " + std::to_string(kp.shape(0)) + ")");
    }
  }
  Dtype out = promote(q.dtype(), kp.dtype());
  // As scaled_dot_product_attention: the query rounded to the output dtype, then float32.
  Array q32 = astype(q.dtype() == out ? q : astype(q, out, s), Dtype::float32, s);
  Array r = Array::lazy({B, q.shape(1), 1, vp.shape(3)}, Dtype::float32, std::make_shared<PagedAttention>(scale),
                        {q32, kp, vp, tables, lens}, s);
  return out == Dtype::float32 ? r : astype(r, out, s);
}

}  // namespace nuvec
