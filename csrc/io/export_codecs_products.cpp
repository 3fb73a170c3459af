// The codec rows of the products beyond matmul (gathered, segmented, quantized, convolution),
// quantize / dequantize, and the fused Adam step.
#include "core/primitives/conv.h"
#include "core/primitives/gathered.h"
#include "core/primitives/optimizer.h"
#include "core/primitives/quantized.h"

#include <type_traits>
#include "io/export_codec_util.h"

namespace nuvec::io::codec {
namespace {

// The quantization format, with the products' orientation where `transpose` is given.
Json spec_json(const QuantSpec& q, std::vector<std::pair<std::string, Json>> more = {}) {
  more.emplace_back("group_size", json_int(q.group_size));
  more.emplace_back("bits", json_int(q.bits));
  more.emplace_back("mode", json_str(mode_name(q.mode)));
  return json_obj(std::move(more));
}
QuantSpec spec_of(const Json& j) {  // checked as quantize checks its arguments
  return quant_spec(text(member(j, "mode")), int(int_at(j, "group_size")), int(int_at(j, "bits")), kOp);
}

std::vector<Shape> quantize_shapes(const Primitive& p, const std::vector<Array>& in) {
  const QuantSpec& q = as<Quantize>(p).spec();
  const Array& w = in[0];
  need(w.ndim() >= 1 && w.shape(-1) % q.group_size == 0 && w.shape(-1) * q.bits % 32 == 0, "quantize",
       "the last axis is not a whole number of groups");
  Shape words = w.shape(), scales = w.shape();
  words.back() = q.words(w.shape(-1));
  scales.back() = w.shape(-1) / q.group_size;
  if (q.has_biases()) return {words, scales, scales};
  return {words, scales};
}

// The products' activation_bits (absent in files written before it: float x), checked as the ops
// check it.
int activation_bits_of(const Json& j) {
  const Json* a = j.find("activation_bits");
  const int64_t bits = a ? integer(*a) : 0;
  if (bits != 0 && bits != 8) bad("activation_bits must be 0 or 8");
  return int(bits);
}

// Quantize and Dequantize (their format) and the two products (format, orientation, x's precision).
template <class P> Codec quant_row(const char* tag) {
  if constexpr (std::is_base_of_v<QuantizedProduct, P>)
    return {tag, is<P>,
            [](const Primitive& p) {
              const P& q = as<P>(p);
              return spec_json(q.spec(), {{"transpose", json_int(q.transpose())},
                                          {"activation_bits", json_int(q.activation_bits())}});
            },
            [](const Json& j) -> std::shared_ptr<Primitive> {
              return std::make_shared<P>(spec_of(j), flag_at(j, "transpose"), activation_bits_of(j));
            },
            nullptr};
  else
    return {tag,
            is<P>,
            [](const Primitive& p) { return spec_json(as<P>(p).spec()); },
            [](const Json& j) -> std::shared_ptr<Primitive> { return std::make_shared<P>(spec_of(j)); },
            nullptr,
            std::is_same_v<P, Quantize>
            ? +[](const Primitive& p) -> size_t { return as<P>(p).spec().has_biases() ? 3 : 2; }
            : nullptr,
            std::is_same_v<P, Quantize> ? quantize_shapes : nullptr};
}

const Codec kCodecs[] = {
    {"gather_mm", is<GatherMM>,
     [](const Primitive& p) {
       return json_obj({{"grad_b", json_int(as<GatherMM>(p).kind() == GatherMM::Kind::grad_b)}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<GatherMM>(flag_at(j, "grad_b") ? GatherMM::Kind::grad_b : GatherMM::Kind::product);
     },
     nullptr},
    NUVEC_PLAIN(SegmentedMM, "segmented_mm", nullptr),
    quant_row<Quantize>("quantize"),
    quant_row<Dequantize>("dequantize"),
    quant_row<QuantizedMatmul>("quantized_matmul"),
    quant_row<GatherQmm>("gather_qmm"),
    {"convolution", is<Convolution>,
     [](const Primitive& p) {
       const auto& c = as<Convolution>(p).params();
       return json_obj({{"stride", ints(c.stride)},
                        {"pad_lo", ints(c.pad_lo)},
                        {"pad_hi", ints(c.pad_hi)},
                        {"kernel_dilation", ints(c.kernel_dilation)},
                        {"input_dilation", ints(c.input_dilation)},
                        {"groups", json_int(c.groups)},
                        {"flip", json_int(c.flip)}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       return std::make_shared<Convolution>(
           ConvParams{int_list(member(j, "stride")), int_list(member(j, "pad_lo")), int_list(member(j, "pad_hi")),
                      int_list(member(j, "kernel_dilation")), int_list(member(j, "input_dilation")),
                      int_at(j, "groups"), flag_at(j, "flip")});
     },
     nullptr},
    {"adam_update", is<AdamUpdate>,
     [](const Primitive& p) {
       const auto& a = as<AdamUpdate>(p);
       const AdamConstants& c = a.constants();
       return json_obj({{"b1", real(c.b1)},
                        {"one_minus_b1", real(c.one_minus_b1)},
                        {"b2", real(c.b2)},
                        {"one_minus_b2", real(c.one_minus_b2)},
                        {"eps", real(c.eps)},
                        {"corrected", json_int(a.corrected())},
                        {"decayed", json_int(a.decayed())}});
     },
     [](const Json& j) -> std::shared_ptr<Primitive> {
       AdamConstants c{float(real_at(j, "b1")), float(real_at(j, "one_minus_b1")), float(real_at(j, "b2")),
                       float(real_at(j, "one_minus_b2")), float(real_at(j, "eps"))};
       return std::make_shared<AdamUpdate>(c, flag_at(j, "corrected"), flag_at(j, "decayed"));
     },
     nullptr, outputs<3>},
};

}  // namespace

std::span<const Codec> product_codecs() { return kCodecs; }

}  // namespace nuvec::io::codec
