// Convolutions: conv1d/2d/3d, conv_general and conv_transpose1d/2d/3d with MLX's signatures.
#include <nanobind/nanobind.h>

#include <string>

#include "core/ops.h"
#include "core/ops/conv.h"
#include "python/convert.h"

namespace nuvec::python {
namespace {

bool is_sequence(nb::handle h) { return PyList_Check(h.ptr()) || PyTuple_Check(h.ptr()); }

// An int, or a sequence of `dims` ints (any length when dims is 0, checked by the op); else
// TypeError, as MLX's typed signatures.
Shape sizes(nb::handle h, int dims, const char* name) {
  if (!is_sequence(h)) {
    if (auto v = as_index(h)) return {*v};
  } else if (dims != 1 && (dims == 0 || int(nb::len(h)) == dims)) {
    Shape out;
    for (nb::handle x : nb::borrow<nb::sequence>(h)) {
      auto v = as_index(x);
      if (!v) throw nb::type_error((std::string(name) + " must hold integers").c_str());
      out.push_back(*v);
    }
    return out;
  }
  std::string want = dims == 0   ? "an int or a sequence of ints"
                     : dims == 1 ? "an int"
                                 : "an int or a tuple of " + std::to_string(dims) + " ints";
  throw nb::type_error((std::string(name) + " must be " + want).c_str());
}

// conv_general's padding: an int, a sequence of ints (both sides), or (low, high) sequences.
std::pair<Shape, Shape> padding_pair(nb::handle h) {
  if (is_sequence(h) && nb::len(h) == 2) {
    nb::sequence seq = nb::borrow<nb::sequence>(h);
    if (is_sequence(seq[0]) && is_sequence(seq[1])) return {sizes(seq[0], 0, "padding"), sizes(seq[1], 0, "padding")};
  }
  Shape p = sizes(h, 0, "padding");
  return {p, p};
}

void def_conv_nd(nb::module_& m, int dims) {
  std::string name = "conv" + std::to_string(dims) + "d";
  std::string doc = std::to_string(dims) +
                    "-D convolution over channels-last input (N, *spatial, C_in) with weight "
                    "(C_out, *kernel, C_in / groups).";
  m.def(
      name.c_str(),
      [dims](nb::handle x, nb::handle w, nb::handle stride, nb::handle padding, nb::handle dilation, int64_t groups,
             nb::handle s) {
        return conv_nd(dims, arg(x), arg(w), sizes(stride, dims, "stride"), sizes(padding, dims, "padding"),
                       sizes(dilation, dims, "dilation"), groups, to_stream(s));
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("stride") = 1, nb::arg("padding") = 0, nb::arg("dilation") = 1,
      nb::arg("groups") = 1, nb::kw_only(), nb::arg("stream").none() = nb::none(), doc.c_str());
}

void def_conv_transpose_nd(nb::module_& m, int dims) {
  std::string name = "conv_transpose" + std::to_string(dims) + "d";
  std::string doc = std::to_string(dims) + "-D transposed convolution (the input gradient of conv" +
                    std::to_string(dims) + "d) with weight (C_out, *kernel, C_in / groups).";
  m.def(
      name.c_str(),
      [dims](nb::handle x, nb::handle w, nb::handle stride, nb::handle padding, nb::handle dilation,
             nb::handle output_padding, int64_t groups, nb::handle s) {
        return conv_transpose_nd(dims, arg(x), arg(w), sizes(stride, dims, "stride"), sizes(padding, dims, "padding"),
                                 sizes(dilation, dims, "dilation"), sizes(output_padding, dims, "output_padding"),
                                 groups, to_stream(s));
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("stride") = 1, nb::arg("padding") = 0, nb::arg("dilation") = 1,
      nb::arg("output_padding") = 0, nb::arg("groups") = 1, nb::kw_only(), nb::arg("stream").none() = nb::none(),
      doc.c_str());
}

}  // namespace

void init_conv(nb::module_& m) {
  for (int dims = 1; dims <= 3; ++dims) def_conv_nd(m, dims), def_conv_transpose_nd(m, dims);
  m.def(
      "conv_general",
      [](nb::handle x, nb::handle w, nb::handle stride, nb::handle padding, nb::handle kernel_dilation,
         nb::handle input_dilation, int64_t groups, bool flip, nb::handle s) {
        auto [lo, hi] = padding_pair(padding);
        return conv_general(arg(x), arg(w), sizes(stride, 0, "stride"), lo, hi,
                            sizes(kernel_dilation, 0, "kernel_dilation"), sizes(input_dilation, 0, "input_dilation"),
                            groups, flip, to_stream(s));
      },
      nb::arg("input"), nb::arg("weight"), nb::arg("stride") = 1, nb::arg("padding") = 0,
      nb::arg("kernel_dilation") = 1, nb::arg("input_dilation") = 1, nb::arg("groups") = 1, nb::arg("flip") = false,
      nb::kw_only(), nb::arg("stream").none() = nb::none(),
      "Convolution with per-axis stride, (low, high) padding, kernel and input dilation, groups, and a flipped "
      "kernel (a true convolution) when flip.");
}

}  // namespace nuvec::python
