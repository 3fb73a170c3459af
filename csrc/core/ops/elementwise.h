// Element-wise ops: unary and binary kernels with broadcasting and MLX's promotion, and the ops
// composed from them.
#pragma once
#include <optional>
#include <utility>

#include "core/ops/common.h"
#include "core/primitives/elementwise.h"

namespace nuvec {

Array unary(UnaryOp op, const Array& x, Stream s, OpParams p = {});
Array binary(BinaryOp op, const Array& a, const Array& b, Stream s, OpParams p = {});
std::pair<Array, Array> divmod(const Array& a, const Array& b, Stream s);
Array where(const Array& cond, const Array& x, const Array& y, Stream s);
Array clip(const Array& x, const std::optional<Array>& lo, const std::optional<Array>& hi, Stream s);
Array round(const Array& x, int decimals, Stream s);
Array nan_to_num(const Array& x, double nan, std::optional<double> posinf, std::optional<double> neginf, Stream s);
Array degrees(const Array& x, Stream s);
Array radians(const Array& x, Stream s);
Array positive(const Array& x, Stream s);
Array trunc(const Array& x, Stream s);
Array logical_xor(const Array& a, const Array& b, Stream s);
Array isclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan, Stream s);
Array allclose(const Array& a, const Array& b, double rtol, double atol, bool equal_nan, Stream s);
Array array_equal(const Array& a, const Array& b, bool equal_nan, Stream s);
Array astype(const Array& x, Dtype dtype, Stream s);

}  // namespace nuvec
