// Convolutions: argument checks as MLX's, then one Convolution node (transposed convolutions are
// convolutions of the stride-dilated input with the flipped kernel).
#include "core/ops/conv.h"

#include <string>

#include "core/ops.h"

namespace nuvec {
namespace {

constexpr const char* kOp = "conv";

std::string tuple_str(const Shape& v) {
  std::string r = "(";
  for (size_t i = 0; i < v.size(); ++i) r += (i ? "," : "") + std::to_string(v[i]);
  return r + ")";
}

// One value per spatial axis (a single value is repeated).
Shape per_axis(Shape v, int dims, const char* what) {
  if (v.size() == 1) v.assign(size_t(dims), v[0]);
  if (int(v.size()) != dims)
    throw OpError(
        kOp, std::string("Invalid ") + what + " " + tuple_str(v) + " for " + std::to_string(dims) + "D convolution.");
  return v;
}

void check_positive(const Shape& v, const char* what) {
  for (int64_t x : v)
    if (x <= 0) throw OpError(kOp, std::string(what) + " sizes must be positive. Got " + tuple_str(v) + ".");
}

void check_weight_rank(const Array& w, int dims) {
  if (w.ndim() != dims + 2)
    throw OpError(kOp, "Invalid weight array with " + std::to_string(w.ndim()) + " dimensions for " +
                           std::to_string(dims) + "D convolution. Expected an array with " + std::to_string(dims + 2) +
                           " dimensions following the format [C_out, ..., C_in].");
}

void check_dtype(const Array& a, const char* role) {
  if (!is_floating(a.dtype()))
    throw OpError(kOp, std::string("Invalid ") + role + " array with type " + name_of(a.dtype()) +
                           ". Convolution currently only supports floating point types");
}

}  // namespace

int64_t conv_out_size(int64_t n, int64_t k, int64_t stride, int64_t lo, int64_t hi, int64_t kdil, int64_t idil) {
  int64_t in = (n > 0 ? (n - 1) * idil + 1 : 0) + lo + hi, span = (k - 1) * kdil + 1;
  if (in < span) return -1;
  return (in - span) / stride + 1;
}

Array convolution(const Array& x, const Array& w, ConvParams p, Stream s) {
  int dims = x.ndim() - 2;
  Shape out{x.shape(0)};
  for (int i = 0; i < dims; ++i)
    out.push_back(conv_out_size(x.shape(i + 1), w.shape(i + 1), p.stride[i], p.pad_lo[i], p.pad_hi[i],
                                p.kernel_dilation[i], p.input_dilation[i]));
  out.push_back(w.shape(0));
  return Array::lazy(out, x.dtype(), std::make_shared<Convolution>(std::move(p)), {x, w}, s);
}

Array conv_general(const Array& x, const Array& w, Shape stride, Shape pad_lo, Shape pad_hi, Shape kernel_dilation,
                   Shape input_dilation, int64_t groups, bool flip, Stream s) {
  check_dtype(x, "input");
  int dims = x.ndim() - 2;
  if (dims < 1 || dims > 3)
    throw OpError(kOp,
                  "Only works for inputs with 1-3 spatial dimensions. The inputs must be in the format [N, ..., C_in]");
  check_weight_rank(w, dims);
  stride = per_axis(std::move(stride), dims, "strides");
  Shape lo = per_axis(pad_lo, dims, "padding"), hi = per_axis(pad_hi, dims, "padding");
  kernel_dilation = per_axis(std::move(kernel_dilation), dims, "kernel dilation");
  input_dilation = per_axis(std::move(input_dilation), dims, "input dilation");
  check_positive(stride, "Stride");
  check_positive(kernel_dilation, "Kernel dilation");
  check_positive(input_dilation, "Input dilation");
  if (groups <= 0) throw OpError(kOp, "groups must be positive, got " + std::to_string(groups) + ".");
  int64_t cin = x.shape(-1), cout = w.shape(0);
  if (cin % groups)
    throw OpError(kOp, "The input channels must be divisible by the number of groups. Got input with shape " +
                           tuple_str(x.shape()) + " and " + std::to_string(groups) + " groups.");
  if (groups > 1 && cout % groups)
    throw OpError(kOp, "If groups > 1, the output channels must be divisible by the number of groups. Got " +
                           std::to_string(cout) + " output channels and " + std::to_string(groups) + " groups.");
  if (w.shape(-1) * groups != cin)
    throw OpError(kOp, "Expect the input channels in the input and weight array to match but got shapes - input: " +
                           tuple_str(x.shape()) + " and weight: " + tuple_str(w.shape()));
  for (int i = 0; i < dims; ++i)
    if (conv_out_size(x.shape(i + 1), w.shape(i + 1), stride[i], lo[i], hi[i], kernel_dilation[i], input_dilation[i]) <
        0)
      throw OpError(kOp,
                    "Spatial dimensions of input after padding cannot be smaller than weight spatial "
                    "dimensions. Got error at axis " +
                        std::to_string(i + 1) + " for input with shape " + tuple_str(x.shape()) + ", padding low " +
                        tuple_str(lo) + ", padding high " + tuple_str(hi) + ", and weight of shape " +
                        tuple_str(w.shape()) + ".");
  // The weight takes the input's floating type (MLX's promotion: an integer weight follows it).
  Dtype d = promote(x.dtype(), w.dtype());
  if (!is_floating(d))
    throw OpError(kOp, std::string("Invalid weight array with type ") + name_of(w.dtype()) +
                           ". Convolution currently only supports floating point types");
  Array xc = x.dtype() == d ? x : astype(x, d, s), wc = w.dtype() == d ? w : astype(w, d, s);
  return convolution(xc, wc, {stride, lo, hi, kernel_dilation, input_dilation, groups, flip}, s);
}

Array conv_nd(int dims, const Array& x, const Array& w, Shape stride, Shape padding, Shape dilation, int64_t groups,
              Stream s) {
  check_dtype(x, "input");
  Shape one(size_t(dims), 1);
  return conv_general(x, w, std::move(stride), padding, padding, std::move(dilation), one, groups, false, s);
}

Array conv_transpose_nd(int dims, const Array& x, const Array& w, Shape stride, Shape padding, Shape dilation,
                        Shape output_padding, int64_t groups, Stream s) {
  // The forward convolution's input gradient: the input dilated by the stride, padded so that
  // every kernel tap that touched it is seen, correlated with the flipped kernel.
  check_dtype(x, "input");
  check_weight_rank(w, dims);
  stride = per_axis(std::move(stride), dims, "strides");
  padding = per_axis(std::move(padding), dims, "padding");
  dilation = per_axis(std::move(dilation), dims, "kernel dilation");
  output_padding = per_axis(std::move(output_padding), dims, "output padding");
  Shape lo(size_t(dims), 0), hi(size_t(dims), 0);
  for (int i = 0; i < dims; ++i) {
    lo[i] = (w.shape(i + 1) - 1) * dilation[i] - padding[i];
    hi[i] = lo[i] + output_padding[i];
  }
  return conv_general(x, w, Shape(size_t(dims), 1), lo, hi, std::move(dilation), std::move(stride), groups, true, s);
}

}  // namespace nuvec
