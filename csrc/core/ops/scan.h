// Scan ops along an axis (`axis` = nullopt works on the flattened array, as MLX's axis=None).
#pragma once
#include <optional>

#include "core/ops/common.h"
#include "core/primitives/scan.h"

namespace nuvec {

// cumsum, cumprod, cummax, cummin, logcumsumexp; `dtype` converts the input first (MLX gives it
// to cumsum and cumprod).
Array scan(ScanOp op, const Array& a, std::optional<int> axis, bool reverse, bool inclusive, std::optional<Dtype> dtype,
           Stream s);
// The n-th discrete difference along `axis`: out[i] = a[i + 1] - a[i], n times.
Array diff(const Array& a, int n, int axis, Stream s);

}  // namespace nuvec
