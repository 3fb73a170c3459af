// Reduction ops. `axes` empty-optional means every axis; negative axes count from the end;
// a wrong axis raises an OpError that is also an IndexError, a repeated one an OpError.
#pragma once
#include <optional>
#include <utility>
#include <vector>

#include "core/array.h"

namespace nuvec {

using Axes = std::optional<std::vector<int>>;

Array sum(const Array& x, const Axes& axes, bool keepdims, Stream s);
Array prod(const Array& x, const Axes& axes, bool keepdims, Stream s);
Array max(const Array& x, const Axes& axes, bool keepdims, Stream s);
Array min(const Array& x, const Axes& axes, bool keepdims, Stream s);
std::pair<Array, Array> minmax(const Array& x, const Axes& axes, bool keepdims, Stream s);  // (min, max)
Array all(const Array& x, const Axes& axes, bool keepdims, Stream s);
Array any(const Array& x, const Axes& axes, bool keepdims, Stream s);
Array all(const Array& x, Stream s);  // over every element, to a 0-d bool
Array mean(const Array& x, const Axes& axes, bool keepdims, Stream s);
Array var(const Array& x, const Axes& axes, bool keepdims, int ddof, Stream s);
Array std(const Array& x, const Axes& axes, bool keepdims, int ddof, Stream s);
Array logsumexp(const Array& x, const Axes& axes, bool keepdims, Stream s);
// `precise` is MLX's flag for computing half inputs in float32; the CPU always does.
Array softmax(const Array& x, const Axes& axes, bool precise, Stream s);
// Over the flattened array when `axis` is empty.
Array argmax(const Array& x, std::optional<int> axis, bool keepdims, Stream s);
Array argmin(const Array& x, std::optional<int> axis, bool keepdims, Stream s);
// The sum of a diagonal (of every 2-D slice of axis1 and axis2), converted to `dtype` first.
Array trace(const Array& x, int64_t offset, int axis1, int axis2, std::optional<Dtype> dtype, Stream s);
Array count_nonzero(const Array& x, const Axes& axes, bool keepdims, Stream s);

}  // namespace nuvec
