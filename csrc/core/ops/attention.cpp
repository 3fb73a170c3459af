// scaled_dot_product_attention: MLX's checks and casts around the primitive (float32 compute),
// the op composition that defines it (float64's route and the derivative rules'), and the plan.
#include "core/ops/attention.h"

#include <limits>

#include "core/ops.h"

namespace nuvec {
namespace {

constexpr const char* kOp = "scaled_dot_product_attention";

[[noreturn]] void fail(const std::string& why) { throw OpError(kOp, why); }

// MLX's checks, in its order; returns the output dtype.
Dtype check(const Shape& q, const Shape& k, const Shape& v, Dtype qd, Dtype kd, Dtype vd, const std::string& mode,
            std::optional<Dtype> md, const std::optional<Shape>& ms, std::optional<Dtype> sd,
            const std::optional<Shape>& ss) {
  if (mode != "" && mode != "causal" && mode != "array")
    fail("invalid mask option '" + mode + "'. Must be 'causal', or an array.");
  for (const Shape* t : {&q, &k, &v})
    if (t->size() != 4) fail("input with shape " + shape_str(*t) + " expected to be rank 4");
  if (mode == "array" && ms->size() > 4)
    fail("the mask with shape " + shape_str(*ms) + " expected to have at most rank 4.");
  for (const Shape* t : {&k, &v})
    if ((*t)[0] != q[0]) fail("mismatching batch dimension for input with shape " + shape_str(*t) + ".");
  if (q[3] != k[3])
    fail("query, keys expected to have matching last dimension; found query shape " + shape_str(q) +
         " for keys shape " + shape_str(k) + ".");
  if (k[1] != v[1])
    fail("keys, values expected to have matching n_kv_heads; found keys with n_heads " + std::to_string(k[1]) +
         " for values with n_heads " + std::to_string(v[1]) + ".");
  if (k[1] == 0 || q[1] % k[1] != 0)
    fail("n_heads must be a multiple of n_kv_heads, found n_heads " + std::to_string(q[1]) + " for n_kv_heads " +
         std::to_string(k[1]) + ".");
  if (k[2] != v[2])
    fail("keys and values must have the same length; found keys shape " + shape_str(k) + " and values shape " +
         shape_str(v) + ".");
  Dtype out = promote(promote(qd, kd), vd);
  if (!is_floating(out)) fail(std::string("Received unsupported type ") + name_of(out) + ".");
  if (mode == "array") {
    if (promote(*md, out) != out) fail(std::string("Mask type must promote to output type ") + name_of(out) + ".");
    Shape full{q[0], q[1], q[2], k[2]};
    if (broadcast_shapes(*ms, full, "broadcast_shapes") != full)
      throw OpError("broadcast_shapes",
                    "Shapes " + shape_str(*ms) + " and " + shape_str(full) + " cannot be broadcast.");
  }
  if (sd) {
    if (promote(*sd, out) != out) fail(std::string("Type of sinks must promote to output type ") + name_of(out) + ".");
    if (ss->size() != 1 || (*ss)[0] != q[1]) fail("Received invalid shape for sinks " + shape_str(*ss) + ".");
  }
  return out;
}

// The keys query row i of Lq sees: the causal prefix, or every key when the prefix is empty (a row
// with every score masked averages all values, as MLX's softmax of equal lowest scores does).
int64_t row_keys(int64_t i, int64_t lq, int64_t lk, bool causal) {
  int64_t n = causal ? lk - lq + i + 1 : lk;
  return n > 0 ? n : lk;
}

}  // namespace

AttentionPlan plan_attention(const Shape& q, const Shape& k, const Shape& v, Dtype qd, Dtype kd, Dtype vd,
                             const std::string& mode, std::optional<Dtype> md, const std::optional<Shape>& ms,
                             std::optional<Dtype> sd, const std::optional<Shape>& ss) {
  Dtype out = check(q, k, v, qd, kd, vd, mode, md, ms, sd, ss);
  AttentionPlan p;
  int64_t rows = q[0] * q[1], lq = q[2], lk = k[2];
  if (out == Dtype::float64) {
    p.kernel = "reference";
    p.compute = Dtype::float64;
  } else if (lk == 0 || lq == 0 || rows == 0) {
    p.kernel = "empty";
  } else if (lq <= kAttentionDecodeRows) {
    p.kernel = "decode";
    p.key_block = kAttentionKeyBlock;
    p.key_blocks = (lk + kAttentionKeyBlock - 1) / kAttentionKeyBlock;
    for (int64_t i = 0; i < lq; ++i)
      p.tasks += rows * ((row_keys(i, lq, lk, mode == "causal") + kAttentionKeyBlock - 1) / kAttentionKeyBlock);
  } else {
    p.kernel = "prefill";
    p.tile_q = kAttentionTileQ;
    p.tile_k = kAttentionTileK;
    p.tasks = rows * ((lq + kAttentionTileQ - 1) / kAttentionTileQ);
  }
  return p;
}

Array scaled_dot_product_attention(const Array& q, const Array& k, const Array& v, float scale, const std::string& mode,
                                   const std::optional<Array>& mask, const std::optional<Array>& sinks, Stream s) {
  std::optional<Dtype> md, sd;
  std::optional<Shape> ms, ss;
  if (mask) md = mask->dtype(), ms = mask->shape();
  if (sinks) sd = sinks->dtype(), ss = sinks->shape();
  AttentionPlan plan =
      plan_attention(q.shape(), k.shape(), v.shape(), q.dtype(), k.dtype(), v.dtype(), mode, md, ms, sd, ss);
  Dtype out = promote(promote(q.dtype(), k.dtype()), v.dtype());
  Shape out_shape{q.shape(0), q.shape(1), q.shape(2), v.shape(3)};
  if (plan.kernel == "empty") return full(out_shape, scalar_array(int64_t(0), out), out, s);
  AttentionParams p{scale, AttentionMask::none, sinks.has_value()};
  if (mode == "causal") p.mask = AttentionMask::causal;
  if (mode == "array") p.mask = mask->dtype() == Dtype::bool_ ? AttentionMask::boolean : AttentionMask::additive;
  // MLX rounds every operand to the output dtype first; half types then compute in float32 (the
  // kernels read half keys and values as they are).
  Dtype c = plan.compute;
  auto rounded = [&](const Array& x) { return x.dtype() == out ? x : astype(x, out, s); };
  auto prep = [&](const Array& x) { return astype(rounded(x), c, s); };
  bool kv_as_is = plan.kernel != "reference";
  // Half keys and values beside float32 queries (a float16 KV cache) are read as they are too:
  // rounding them to float32 is exact, and would copy the whole cache at every call.
  bool half_kv = is_half(k.dtype()) && k.dtype() == v.dtype() && out == Dtype::float32;
  auto kv = [&](const Array& x) { return !kv_as_is ? prep(x) : half_kv ? x : rounded(x); };
  std::vector<Array> in{prep(q), kv(k), kv(v)};
  Shape scores{q.shape(0), q.shape(1), q.shape(2), k.shape(2)};
  if (p.mask == AttentionMask::boolean) in.push_back(broadcast_to(*mask, scores, s));
  if (p.mask == AttentionMask::additive) in.push_back(broadcast_to(prep(*mask), scores, s));
  if (sinks) in.push_back(prep(*sinks));
  if (plan.kernel == "reference") return attention_reference(in, p, s);
  Array r = Array::lazy(out_shape, Dtype::float32, std::make_shared<ScaledDotProductAttention>(p), std::move(in), s);
  return out == Dtype::float32 ? r : astype(r, out, s);
}

AttentionWeights attention_weights(const std::vector<Array>& in, const AttentionParams& p, Stream s) {
  Dtype d = in[0].dtype();
  int64_t hq = in[0].shape(1), hkv = in[1].shape(1), rep = hq / hkv, lq = in[0].shape(2), lk = in[1].shape(2);
  // (B, Hkv, rep, L, D): query head h = g * rep + r reads key head g.
  Array q = binary(BinaryOp::multiply, unflatten(in[0], 1, {hkv, rep}, s), weak_scalar(double(p.scale), d, kOp), s);
  Array k = expand_dims(in[1], {2}, s), v = expand_dims(in[2], {2}, s);
  Array scores = matmul(q, swapaxes(k, -1, -2, s), s);
  double lowest = d == Dtype::float64 ? std::numeric_limits<double>::lowest() : std::numeric_limits<float>::lowest();
  std::optional<Array> keep;
  if (p.mask == AttentionMask::causal) {
    Array qi = expand_dims(arange(double(lk - lq), double(lk), 1.0, Dtype::int32, s), {1}, s);
    keep = binary(BinaryOp::greater_equal, qi, arange(0.0, double(lk), 1.0, Dtype::int32, s), s);
  } else if (p.mask == AttentionMask::boolean) {
    keep = unflatten(in[3], 1, {hkv, rep}, s);
  } else if (p.mask == AttentionMask::additive) {
    scores = binary(BinaryOp::add, scores, unflatten(in[3], 1, {hkv, rep}, s), s);
  }
  if (keep) scores = where(*keep, scores, weak_scalar(lowest, d, kOp), s);
  if (p.sinks) {
    Shape col = scores.shape();
    col.back() = 1;
    Array sk = reshape(in.back(), {1, hkv, rep, 1, 1}, s);
    scores = concatenate({broadcast_to(sk, col, s), scores}, -1, s);
  }
  return {q, k, v, softmax(scores, std::vector<int>{-1}, true, s), keep};
}

Array attention_keys_weights(const AttentionWeights& a, Stream s) {
  if (a.w.shape(-1) == a.k.shape(-2)) return a.w;
  Shape start(5, 0), stop = a.w.shape();
  start.back() = 1;
  return slice(a.w, start, stop, Shape(5, 1), s);
}

Array attention_reference(const std::vector<Array>& in, const AttentionParams& p, Stream s) {
  AttentionWeights a = attention_weights(in, p, s);
  return flatten(matmul(attention_keys_weights(a, s), a.v, s), 1, 2, s);
}

}  // namespace nuvec
