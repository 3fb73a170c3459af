// Sorting ops along an axis (`axis` = nullopt works on the flattened array, as MLX's axis=None).
#pragma once
#include <optional>

#include "core/ops/common.h"

namespace nuvec {

Array sort(const Array& a, std::optional<int> axis, Stream s);
Array argsort(const Array& a, std::optional<int> axis, Stream s);  // uint32
Array partition(const Array& a, int64_t kth, std::optional<int> axis, Stream s);
Array argpartition(const Array& a, int64_t kth, std::optional<int> axis, Stream s);  // uint32
// The k largest elements along the axis (in no promised order).
Array topk(const Array& a, int64_t k, std::optional<int> axis, Stream s);

}  // namespace nuvec
