// Ops composed of sorts: median and searchsorted (kept out of core/ops.h, which every family
// includes: only their bindings use them).
#pragma once
#include <optional>
#include <vector>

#include "core/ops/common.h"

namespace nuvec {

// The median over `axes` (all when nullopt): the mean of the two middle values for an even count,
// NaN where a value is NaN; integers and bools give float32.
Array median(const Array& a, const std::optional<std::vector<int>>& axes, bool keepdims, Stream s);
// Where `values` go in the 1-D ascending `sorted` to keep it sorted: per value, the count of
// elements below it (`right` false) or not above it (`right` true), NaN last; uint32, values' shape.
Array searchsorted(const Array& sorted, const Array& values, bool right, Stream s);

}  // namespace nuvec
