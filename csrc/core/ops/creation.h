// Creation ops: arrays from values and parameters.
#pragma once
#include <optional>

#include "core/ops/common.h"

namespace nuvec {

// `op` names the caller in errors (zeros, ones, full, ...).
Array full(const Shape& shape, const Array& value, std::optional<Dtype> dtype, Stream s, const char* op = "full");
// ceil((stop - start) / step) values start + i * step (for an integer dtype, with NumPy's increment
// dtype(start + step) - dtype(start) from dtype(start)).
Array arange(double start, double stop, double step, Dtype dtype, Stream s);
// `num` values from start to stop (stop itself only with `endpoint`), computed as MLX does.
Array linspace(double start, double stop, int64_t num, bool endpoint, Dtype dtype, Stream s);
Array eye(int64_t n, int64_t m, int64_t k, Dtype dtype, Stream s);
Array tri(int64_t n, int64_t m, int64_t k, Dtype dtype, Stream s);
Array tril(const Array& x, int64_t k, Stream s);
Array triu(const Array& x, int64_t k, Stream s);
// NumPy's window functions of M points (none for M <= 0), in float32 as MLX's.
enum class Window { bartlett, blackman, hamming, hanning };
Array window(Window w, int64_t M, Stream s);

}  // namespace nuvec
