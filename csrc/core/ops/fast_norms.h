// nuvec.fast's row normalizations (core/primitives/fast_norms.h). Each raises OpError as MLX's
// does for a bad weight or bias, and for inputs whose result type is not floating.
#pragma once
#include <optional>
#include <utility>

#include "core/array.h"

namespace nuvec {

// x / sqrt(mean(x^2, -1) + eps) * weight.
Array rms_norm(const Array& x, const std::optional<Array>& weight, float eps, Stream s);
// (x - mean) / sqrt(var + eps) * weight + bias, over the last axis.
Array layer_norm(const Array& x, const std::optional<Array>& weight, const std::optional<Array>& bias, float eps,
                 Stream s);
// (rms_norm(x + residual, weight, eps), x + residual) in one pass; x and residual of one shape and dtype.
std::pair<Array, Array> add_rms_norm(const Array& x, const Array& residual, const std::optional<Array>& weight,
                                     float eps, Stream s);

}  // namespace nuvec
