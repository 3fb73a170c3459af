// Convolutions as MLX's: channels-last input (N, *spatial, C_in), weight (C_out, *kernel,
// C_in / groups), output (N, *spatial_out, C_out); 1 to 3 spatial axes.
#pragma once
#include "core/ops/common.h"
#include "core/primitives/conv.h"

namespace nuvec {

// Each of stride, the paddings and the dilations holds one value per spatial axis, or one value
// for all of them. Negative padding crops. Float16, bfloat16, float32 and float64 (the inputs'
// promoted dtype); other dtypes raise OpError as MLX's ValueError.
Array conv_general(const Array& x, const Array& w, Shape stride, Shape pad_lo, Shape pad_hi, Shape kernel_dilation,
                   Shape input_dilation, int64_t groups, bool flip, Stream s);
// conv1d, conv2d, conv3d: `dims` spatial axes, symmetric padding.
Array conv_nd(int dims, const Array& x, const Array& w, Shape stride, Shape padding, Shape dilation, int64_t groups,
              Stream s);
// conv_transpose1d/2d/3d: the gradient of conv_nd with respect to its input (MLX's weight layout,
// (C_out, *kernel, C_in / groups)); output_padding adds that many positions at the high end.
Array conv_transpose_nd(int dims, const Array& x, const Array& w, Shape stride, Shape padding, Shape dilation,
                        Shape output_padding, int64_t groups, Stream s);
// The node itself, unchecked: x and w of one dtype, params with one value per spatial axis
// (the differentiation and vmap rules build these).
Array convolution(const Array& x, const Array& w, ConvParams p, Stream s);
// The spatial output size along one axis (negative when the kernel does not fit).
int64_t conv_out_size(int64_t n, int64_t k, int64_t stride, int64_t lo, int64_t hi, int64_t kdil, int64_t idil);

}  // namespace nuvec
