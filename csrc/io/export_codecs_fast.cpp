// The codec rows of nuvec.fast's primitives: the row norms, RoPE (and its fused norm + cache
// form), attention (and its paged form), the cross-entropy loss and the Hadamard transform.
#include "core/primitives/attention.h"
#include "core/primitives/fast_loss.h"
#include "core/primitives/fast_norms.h"
#include "core/primitives/hadamard.h"
#include "core/primitives/paged.h"
#include "core/primitives/rope.h"
#include "io/export_codec_util.h"

namespace nuvec::io::codec {
namespace {

const char* norm_name(NormKind k) { return RowNorm(k, false, false, 0.0f).name(); }

Json rope_json(const RopeParams& r) {
  return json_obj({{"dims", json_int(r.dims)},
                   {"traditional", json_int(r.traditional)},
                   {"base", real(r.base)},
                   {"scale", real(r.scale)},
                   {"offset", json_int(r.offset)},
                   {"inverse", json_int(r.inverse)},
                   {"offsets", json_int(r.has_offsets)},
                   {"freqs", json_int(r.has_freqs)}});
}
RopeParams rope_of(const Json& j) {
  return {int_at(j, "dims"),   flag_at(j, "traditional"), float(real_at(j, "base")), float(real_at(j, "scale")),
          int_at(j, "offset"), flag_at(j, "inverse"),     flag_at(j, "offsets"),     flag_at(j, "freqs")};
}

Shape row_norm_shape(const Primitive& p, const std::vector<Array>& in, const Shape&) {
  const auto& n = as<RowNorm>(p);
  for (int i : {n.weight_index(), n.bias_index()})
    if (size_t(i) < in.size()) need(in[size_t(i)].shape() == Shape{in[0].shape(-1)}, n.name(), "weight or bias size");
  return in[0].shape();
}
std::vector<Shape> add_rms_shapes(const Primitive& p, const std::vector<Array>& in) {
  need(in[1].shape() == in[0].shape(), p.name(), "x and residual differ in shape");
  Shape s = row_norm_shape(p, in, in[0].shape());
  return {s, s};
}
Shape rope_shape(const Primitive& p, const std::vector<Array>& in, const Shape&) {
  const auto& r = as<Rope>(p).params();
  need(in[0].ndim() >= 3 && in[0].shape(-1) >= r.dims, "rope", "x has fewer features than dims");
  if (r.has_offsets) need(in[1].size() == 1 || in[1].shape() == Shape{in[0].shape(0)}, "rope", "offsets size");
  return in[0].shape();
}
Shape cross_entropy_shape(const Primitive&, const std::vector<Array>& in, const Shape&) {
  Shape s(in[0].shape().begin(), in[0].shape().end() - 1);
  need(in[1].shape() == s, "cross_entropy", "targets are not the logits' rows");
  return s;
}
Shape hadamard_shape(const Primitive&, const std::vector<Array>& in, const Shape&) {
  need(in[0].ndim() > 0 && hadamard_m(in[0].shape(-1)) != 0, "hadamard_transform", "unsupported size");
  return in[0].shape();
}
// (B, Hq, Lq, Dv): the queries' shape with the values' last axis.
Shape attention_shape(const Primitive& p, const std::vector<Array>& in, const Shape&) {
  const Array &q = in[0], &k = in[1], &v = in[2];
  need(q.ndim() == 4 && k.ndim() == 4 && v.ndim() == 4 && k.shape(0) == q.shape(0) && v.shape(0) == q.shape(0) &&
           k.shape(1) == v.shape(1) && q.shape(1) % k.shape(1) == 0 && k.shape(2) == v.shape(2) &&
           k.shape(3) == q.shape(3),
       "scaled_dot_product_attention", "q, k and v do not fit");
  const auto& a = as<ScaledDotProductAttention>(p).params();
  size_t next = 3;
  if (a.mask == AttentionMask::additive || a.mask == AttentionMask::boolean)
    need(in[next++].shape() == Shape{q.shape(0), q.shape(1), q.shape(2), k.shape(2)}, "scaled_dot_product_attention",
         "the mask's shape");
  if (a.sinks) need(in[next].shape() == Shape{q.shape(1)}, "scaled_dot_product_attention", "the sinks' size");
  Shape s = q.shape();
  s.back() = in[2].shape(-1);
  return s;
}

// (B, Hq, 1, Dv) for queries (B, Hq, 1, D) over pools (N, P, Hkv, D) and (N, P, Hkv, Dv).
Shape paged_attention_shape(const Primitive&, const std::vector<Array>& in, const Shape&) {
  const Array &q = in[0], &k = in[1], &v = in[2];
  need(q.ndim() == 4 && k.ndim() == 4 && v.ndim() == 4 && q.shape(2) == 1 && k.shape(3) == q.shape(3) &&
           q.shape(1) % k.shape(2) == 0 && in[3].ndim() == 2 && in[3].shape(0) == q.shape(0) &&
           in[4].shape() == Shape{q.shape(0)},
       "paged_attention", "the queries, pools and tables do not fit");
  return {q.shape(0), q.shape(1), 1, v.shape(3)};
}

const Codec kCodecs[] = {
    {"row_norm", is<RowNorm>,
     [](const Primitive& p) {
       const auto& n = as<RowNorm>(p);
       return json_obj({{"kind", json_str(n.name())},
                        {"weighted", json_int(n.weighted())},
                        {"biased", json_int(n.biased())},
                        {"eps", real(n.eps())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<RowNorm>(by_name<NormKind>(member(j, "kind"), 3, norm_name), flag_at(j, "weighted"),
                                        flag_at(j, "biased"), float(real_at(j, "eps")));
     },
     row_norm_shape, [](const Primitive& p) -> size_t { return as<RowNorm>(p).kind() == NormKind::add_rms ? 2 : 1; },
     add_rms_shapes},
    {"rope", is<Rope>, [](const Primitive& p) { return rope_json(as<Rope>(p).params()); },
     [](const Json& j) -> std::shared_ptr<Primitive> { return std::make_shared<Rope>(rope_of(j)); }, rope_shape},
    {"norm_rope", is<NormRope>,
     [](const Primitive& p) {
       const auto& n = as<NormRope>(p);
       return json_obj({{"rope", rope_json(n.params())}, {"eps", real(n.eps())}, {"weighted", json_int(n.weighted())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<NormRope>(rope_of(member(j, "rope")), float(real_at(j, "eps")), flag_at(j, "weighted"));
     },
     nullptr, outputs<2>},
    {"scaled_dot_product_attention", is<ScaledDotProductAttention>,
     [](const Primitive& p) {
       const auto& a = as<ScaledDotProductAttention>(p).params();
       return json_obj({{"scale", real(a.scale)}, {"mask", json_int(int(a.mask))}, {"sinks", json_int(a.sinks)}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       int64_t mask = int_at(j, "mask");
       if (mask < 0 || mask > int(AttentionMask::boolean)) bad("unknown attention mask kind");
       return std::make_shared<ScaledDotProductAttention>(
           AttentionParams{float(real_at(j, "scale")), AttentionMask(mask), flag_at(j, "sinks")});
     },
     attention_shape},
    {"paged_attention", is<PagedAttention>,
     [](const Primitive& p) { return json_obj({{"scale", real(as<PagedAttention>(p).scale())}}); },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<PagedAttention>(float(real_at(j, "scale")));
     },
     paged_attention_shape},
    NUVEC_PLAIN(PagedWrite, "paged_write", nullptr, outputs<2>),
    NUVEC_PLAIN(CrossEntropy, "cross_entropy", cross_entropy_shape),
    {"hadamard_transform", is<Hadamard>,
     [](const Primitive& p) {
       return json_obj(
           {{"scale", real(as<Hadamard>(p).scale())}, {"transposed", json_int(as<Hadamard>(p).transposed())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Hadamard>(float(real_at(j, "scale")), flag_at(j, "transposed"));
     },
     hadamard_shape},
};

}  // namespace

std::span<const Codec> fast_codecs() { return kCodecs; }

}  // namespace nuvec::io::codec
