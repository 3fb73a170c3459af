// Differentiation rules of scaled_dot_product_attention, written with ops on the pieces of the
// op composition that defines it (attention_weights): with W the softmax weights, P their key
// columns and dP = dO v^T, the scores' cotangent is dS = P (dP - sum(dP P)); masked scores pass
// none on. The additive mask's cotangent is dS; a sink's is -W_sink sum(dP P). The boolean mask
// has no derivative.
#include "core/ops/attention.h"
#include "core/primitives/attention.h"
#include "core/primitives/grad_util.h"

namespace nuvec {
using namespace grad;

namespace {

Array scaled(const Array& x, float scale) { return mul(x, lit(double(scale), x)); }

// Heads (B, Hq, ...) as (B, Hkv, rep, ...), and back.
Array split_heads(const Array& x, int64_t hkv) { return unflatten(x, 1, {hkv, x.shape(1) / hkv}, x.stream()); }
Array join_heads(const Array& x) { return flatten(x, 1, 2, x.stream()); }

Array sink_column(const AttentionWeights& a, Stream s) {
  Shape stop = a.w.shape();
  stop.back() = 1;
  return slice(a.w, Shape(5, 0), stop, Shape(5, 1), s);
}

}  // namespace

std::vector<Array> ScaledDotProductAttention::vjp(const std::vector<Array>& primals,
                                                  const std::vector<Array>& cotangents, const std::vector<int>& argnums,
                                                  const std::vector<Array>&) {
  Stream s = cotangents[0].stream();
  int64_t hkv = primals[1].shape(1);
  AttentionWeights a = attention_weights(primals, p_, s);
  Array P = attention_keys_weights(a, s), dO = split_heads(cotangents[0], hkv);
  Array dP = matmul(dO, swapaxes(a.v, -1, -2, s), s);
  Array delta = sum(mul(dP, P), std::vector<int>{-1}, true, s);
  Array dS = mul(P, sub(dP, delta));
  if (a.keep) dS = where(*a.keep, dS, lit(0.0, dS), s);
  const int sinks = p_.sinks ? int(primals.size()) - 1 : -1;
  std::vector<Array> out;
  for (int i : argnums) {
    if (i == 0) {
      out.push_back(join_heads(scaled(matmul(dS, a.k, s), p_.scale)));
    } else if (i == 1) {  // (half keys and values take their cotangents in their dtype)
      Array g = sum(matmul(swapaxes(dS, -1, -2, s), a.q, s), std::vector<int>{2}, false, s);
      out.push_back(astype(g, primals[1].dtype(), s));
    } else if (i == 2) {
      Array g = sum(matmul(swapaxes(P, -1, -2, s), dO, s), std::vector<int>{2}, false, s);
      out.push_back(astype(g, primals[2].dtype(), s));
    } else if (i == sinks) {
      Array g = sum(mul(neg(sink_column(a, s)), delta), std::vector<int>{0, 3, 4}, false, s);
      out.push_back(reshape(g, primals[size_t(i)].shape(), s));
    } else {
      out.push_back(p_.mask == AttentionMask::additive ? join_heads(dS) : zeros_like(primals[size_t(i)]));
    }
  }
  return out;
}

std::vector<Array> ScaledDotProductAttention::jvp(const std::vector<Array>& primals, const std::vector<Array>& tangents,
                                                  const std::vector<int>& argnums, const std::vector<Array>&) {
  Stream s = tangents[0].stream();
  int64_t hkv = primals[1].shape(1);
  AttentionWeights a = attention_weights(primals, p_, s);
  const int sinks = p_.sinks ? int(primals.size()) - 1 : -1;
  std::optional<Array> tS, tV, tSink;
  auto add_to = [&](std::optional<Array>& acc, const Array& t) { acc = acc ? add(*acc, t) : t; };
  for (size_t j = 0; j < argnums.size(); ++j) {
    int i = argnums[j];
    const Array& t = tangents[j];
    if (i == 0) add_to(tS, matmul(scaled(split_heads(t, hkv), p_.scale), swapaxes(a.k, -1, -2, s), s));
    if (i == 1) add_to(tS, matmul(a.q, swapaxes(expand_dims(t, {2}, s), -1, -2, s), s));
    if (i == 2) tV = expand_dims(t, {2}, s);
    if (i == 3 && i != sinks && p_.mask == AttentionMask::additive) add_to(tS, split_heads(t, hkv));
    if (i == sinks) tSink = reshape(t, {1, hkv, primals[0].shape(1) / hkv, 1, 1}, s);
  }
  Array P = attention_keys_weights(a, s);
  std::optional<Array> tO;
  if (tS || tSink) {
    Array ts = tS ? *tS : zeros_like(P);
    if (a.keep) ts = where(*a.keep, ts, lit(0.0, ts), s);
    if (p_.sinks) {
      Shape col = P.shape();
      col.back() = 1;
      Array c = tSink ? broadcast_to(*tSink, col, s) : full(col, scalar_array(int64_t(0), P.dtype()), P.dtype(), s);
      ts = concatenate({c, ts}, -1, s);
    }
    Array tW = mul(a.w, sub(ts, sum(mul(a.w, ts), std::vector<int>{-1}, true, s)));
    AttentionWeights t = a;
    t.w = tW;
    tO = matmul(attention_keys_weights(t, s), a.v, s);
  }
  if (tV) add_to(tO, matmul(P, *tV, s));
  return {join_heads(*tO)};
}

}  // namespace nuvec
