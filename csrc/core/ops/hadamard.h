// The Walsh-Hadamard transform, as MLX's hadamard_transform.
#pragma once
#include <optional>

#include "core/ops/common.h"

namespace nuvec {

// Each row along the last axis times scale * H_N (default scale 1 / sqrt(N), in float32), for
// N = m * 2^k, m in {1, 12, 20, 28}. Non-float inputs compute in float32 (complex: the real part).
Array hadamard_transform(const Array& a, std::optional<double> scale, Stream s);

}  // namespace nuvec
