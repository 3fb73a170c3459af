// nuvec.fast.rope and nuvec.fast.norm_rope (core/primitives/rope.h). Bad arguments raise
// OpError with MLX's reasons.
#pragma once
#include <optional>
#include <utility>
#include <variant>

#include "core/array.h"

namespace nuvec {

// The position offset: an int, or an integer array of shape () or (B,).
using RopeOffset = std::variant<int64_t, Array>;

// One fused node for float32 and half types; float64 is a composition of ops (angles in float64).
Array rope(const Array& x, int64_t dims, bool traditional, std::optional<float> base, float scale,
           const RopeOffset& offset, const std::optional<Array>& freqs, Stream s);

// (y, new_cache): y = rope(rms_norm(x, weight, eps), ...) and the cache with y written at rows
// offset .. offset + T - 1 of its sequence axis (-2), per batch row b for an offset array.
std::pair<Array, Array> norm_rope(const Array& x, const std::optional<Array>& weight, float eps, const Array& cache,
                                  const RopeOffset& offset, int64_t dims, bool traditional, std::optional<float> base,
                                  float scale, const std::optional<Array>& freqs, Stream s);

}  // namespace nuvec
