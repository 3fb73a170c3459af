// Sorting and scan ops (declared apart from ops.h, which they extend). `axis` = nullopt works on
// the flattened array, as MLX's axis=None.
#pragma once
#include <optional>

#include "core/ops.h"
#include "core/primitives/scan.h"

namespace nuvec {

// The array and the axis an op along `axis` works on: the flattened array's axis 0 for nullopt,
// else the normalized axis (an axis error naming `op` when out of range).
std::pair<Array, int> along_axis(const Array& a, std::optional<int> axis, const char* op, Stream s);

Array sort(const Array& a, std::optional<int> axis, Stream s);
Array argsort(const Array& a, std::optional<int> axis, Stream s);  // uint32
Array partition(const Array& a, int64_t kth, std::optional<int> axis, Stream s);
Array argpartition(const Array& a, int64_t kth, std::optional<int> axis, Stream s);  // uint32
// The k largest elements along the axis (in no promised order).
Array topk(const Array& a, int64_t k, std::optional<int> axis, Stream s);

// cumsum, cumprod, cummax, cummin, logcumsumexp; `dtype` converts the input first (MLX gives it
// to cumsum and cumprod).
Array scan(ScanOp op, const Array& a, std::optional<int> axis, bool reverse, bool inclusive,
           std::optional<Dtype> dtype, Stream s);

}  // namespace nuvec
