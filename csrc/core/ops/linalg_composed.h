// nuvec.linalg's functions composed of ops, as MLX composes them (and in its order, so they give
// MLX's bits where the decompositions do): pinv, norm and cross. The Python module binds these
// (csrc/python/linalg.cpp) and the C API calls them.
#pragma once
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "core/array.h"

namespace nuvec::linalg {

// The Moore-Penrose pseudo-inverse from the SVD: singular values at most
// 10 * max(M, N) * eps * max(S) count as zero. float32 and float64.
Array pinv(const Array& a, Stream s);

// norm's `ord`: none (the 2-norm, Frobenius for matrices), a number (p, +-inf, 0) or a named
// matrix norm ("fro", "f", "nuc").
using NormOrder = std::optional<std::variant<double, std::string>>;
// Vector norms over one axis, matrix norms over two; no axes: all of a's (a must then be 1-D or
// 2-D unless ord is none, which takes the 2-norm of every element).
Array norm(const Array& a, const NormOrder& ord, const std::optional<std::vector<int>>& axes, bool keepdims, Stream s);

// The cross product along `axis` (size 2 or 3; a size-2 vector has a zero third component),
// broadcast over the other axes.
Array cross(const Array& a, const Array& b, int axis, Stream s);

}  // namespace nuvec::linalg
