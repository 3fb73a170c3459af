// MLX's unique, composed of ops so it needs no evaluation: the output sizes are `size`, not data.
#pragma once
#include <optional>
#include <vector>

#include "core/array.h"

namespace nuvec {

// The `size` smallest distinct elements of the flattened `a`, sorted, padded with `fill` (one
// element; the smallest element when none), then the first index of each (uint32), the inverse
// (uint32, a's shape) and the counts (int32): four arrays.
std::vector<Array> unique(const Array& a, int64_t size, const std::optional<Array>& fill, Stream s);

}  // namespace nuvec
