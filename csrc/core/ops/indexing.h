// Indexing ops: gather and scatter with integer arrays, the ops built on them, dynamic slices and
// nonzero.
#pragma once
#include <optional>
#include <vector>

#include "core/ops/common.h"
#include "core/primitives/indexing.h"

namespace nuvec {

// Integer-array indexing of `axes` (indices broadcast together to I): shape I + other axes.
Array gather(const Array& x, const std::vector<Array>& indices, const std::vector<int>& axes, Stream s);
Array scatter(const Array& x, const std::vector<Array>& indices, const Array& updates, const std::vector<int>& axes,
              ScatterOp op, Stream s);
Array take(const Array& x, const Array& indices, std::optional<int> axis, Stream s);
Array take_along_axis(const Array& x, const Array& indices, std::optional<int> axis, Stream s);
// `op` combines the values with what is there (set by default; add accumulates repeats).
Array put_along_axis(const Array& x, const Array& indices, const Array& values, std::optional<int> axis, Stream s,
                     ScatterOp op = ScatterOp::set);
// Dynamic slices: `start` holds one start per entry of `axes`; `sizes` is the whole output shape.
Array slice_dynamic(const Array& x, const Array& start, const std::vector<int>& axes, const Shape& sizes, Stream s);
Array slice_update_dynamic(const Array& x, const Array& update, const Array& start, const std::vector<int>& axes,
                           Stream s);
// Their windows as index arrays (gather's and scatter's): start[k] + arange(sizes[d]) on each axis d
// = axes[k], arange(sizes[d]) on the others, spread as an outer product. With `batched`, x's axis 0
// holds examples, each with its own starts (start: x.shape(0) x axes.size()), indexed by arange.
std::vector<Array> window_indices(const Array& x, const Array& start, const std::vector<int>& axes, const Shape& sizes,
                                  bool batched, Stream s);
// Data-dependent, in two steps so the caller evaluates in between (from Python, without the
// GIL): the flags to evaluate (OpError for a traced x: the count depends on values), then one
// int64 index array per axis of x from the evaluated flags.
Array nonzero_flags(const Array& x, Stream s);
std::vector<Array> nonzero(const Array& evaluated_flags);

}  // namespace nuvec
