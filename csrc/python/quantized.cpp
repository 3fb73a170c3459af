// Quantization as MLX's: quantize, dequantize and the products with quantized weights.
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>

#include "core/ops/quantized.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

std::optional<Array> opt_array(nb::handle h) { return h.is_none() ? std::nullopt : std::optional<Array>(arg(h)); }

nb::typed<nb::tuple, Array, nb::ellipsis> as_tuple(const std::vector<Array>& xs) {
  nb::list l;
  for (const Array& x : xs) l.append(nb::cast(x));
  return nb::typed<nb::tuple, Array, nb::ellipsis>(nb::tuple(l));
}

}  // namespace

void init_quantized(nb::module_& m) {
  m.def(
      "quantize",
      [](nb::handle w, std::optional<int> group_size, std::optional<int> bits, const std::string& mode,
         nb::handle global_scale, nb::handle s) {
        QuantSpec q = quant_spec(mode, group_size, bits, "quantize");
        return as_tuple(quantize(arg(w), q, opt_array(global_scale), to_stream(s)));
      },
      nb::arg("w"), nb::arg("group_size").none() = nb::none(), nb::arg("bits").none() = nb::none(),
      nb::arg("mode") = "affine", nb::kw_only(), nb::arg("global_scale").none() = nb::none(),
      nb::arg("stream").none() = nb::none(),
      "Quantize w (at least 2-D) along its last axis in groups of group_size: (packed uint32 words, scales, "
      "biases) in affine mode (bits 1-6 or 8, group 32/64/128; defaults 4 and 64), bit for bit as MLX's.");
  m.def(
      "dequantize",
      [](nb::handle w, nb::handle scales, nb::handle biases, std::optional<int> group_size, std::optional<int> bits,
         const std::string& mode, nb::handle global_scale, nb::handle dtype, nb::handle s) {
        QuantSpec q = quant_spec(mode, group_size, bits, "dequantize");
        return dequantize(arg(w), arg(scales), opt_array(biases), q, opt_array(global_scale),
                          to_dtype(dtype, "dequantize"), to_stream(s));
      },
      nb::arg("w"), nb::arg("scales"), nb::arg("biases").none() = nb::none(), nb::arg("group_size").none() = nb::none(),
      nb::arg("bits").none() = nb::none(), nb::arg("mode") = "affine", nb::arg("global_scale").none() = nb::none(),
      nb::arg("dtype").none() = nb::none(), nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "The values quantize's packed words stand for: scale * q + bias per group (affine), rounded as MLX's.");
  m.def(
      "quantized_matmul",
      [](nb::handle x, nb::handle w, nb::handle scales, nb::handle biases, bool transpose,
         std::optional<int> group_size, std::optional<int> bits, const std::string& mode,
         std::optional<int> activation_bits, nb::handle s) {
        QuantSpec q = quant_spec(mode, group_size, bits, "quantized_matmul");
        return quantized_matmul(arg(x), arg(w), arg(scales), opt_array(biases), transpose, q, to_stream(s),
                                activation_bits.value_or(0));
      },
      nb::arg("x"), nb::arg("w"), nb::arg("scales"), nb::arg("biases").none() = nb::none(), nb::arg("transpose") = true,
      nb::arg("group_size").none() = nb::none(), nb::arg("bits").none() = nb::none(), nb::arg("mode") = "affine",
      nb::kw_only(), nb::arg("activation_bits").none() = nb::none(), nb::arg("stream").none() = nb::none(),
      "x @ W.T (transpose) or x @ W with W the quantized weight, computed in float32 by nuvec's kernels; rows "
      "up to ROW_INDEPENDENT_ROWS get the bits of their one-row product. activation_bits=8 (nuvec's own; MLX "
      "has no such argument) rounds x to int8 per group and takes integer dot products: faster for a few rows, "
      "about 0.5% RMS relative error (transpose=True, affine 4- or 8-bit weights; docs/quantization.md).");
  m.def(
      "gather_qmm",
      [](nb::handle x, nb::handle w, nb::handle scales, nb::handle biases, nb::handle lhs, nb::handle rhs,
         bool transpose, std::optional<int> group_size, std::optional<int> bits, const std::string& mode,
         nb::handle global_scale, bool sorted_indices, std::optional<int> activation_bits, nb::handle s) {
        QuantSpec q = quant_spec(mode, group_size, bits, "gather_qmm");
        if (!global_scale.is_none()) throw OpError("gather_qmm", "global_scale is only supported on the GPU (as MLX)");
        (void)sorted_indices;  // runs of one weight are found whatever the flag says
        return gather_qmm(arg(x), arg(w), arg(scales), opt_array(biases), opt_array(lhs), opt_array(rhs), transpose, q,
                          to_stream(s), activation_bits.value_or(0));
      },
      nb::arg("x"), nb::arg("w"), nb::arg("scales"), nb::arg("biases").none() = nb::none(),
      nb::arg("lhs_indices").none() = nb::none(), nb::arg("rhs_indices").none() = nb::none(),
      nb::arg("transpose") = true, nb::arg("group_size").none() = nb::none(), nb::arg("bits").none() = nb::none(),
      nb::arg("mode") = "affine", nb::arg("global_scale").none() = nb::none(), nb::kw_only(),
      nb::arg("sorted_indices") = false, nb::arg("activation_bits").none() = nb::none(),
      nb::arg("stream").none() = nb::none(),
      "quantized_matmul of x's batch items lhs_indices with w's rhs_indices (mixture of experts), as MLX's; each "
      "row has the bits of its one-row product.");
}

}  // namespace nuvec::python
