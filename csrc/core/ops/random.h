// Random numbers, bit for bit MLX's: a key's Threefry-2x32 bit stream (the RandomBits
// primitive) and the samplers MLX composes from it and other ops (docs/random.md). Every
// sampler takes an explicit key; the global key state is the front end's (python/nuvec/random.py).
#pragma once
#include <optional>

#include "core/ops/common.h"

namespace nuvec::random {

// uint32 [seed >> 32, seed & 0xffffffff].
Array key(uint64_t seed);
// `num` new keys from `key`: uint32 of shape (num, 2).
Array split(const Array& key, int64_t num, Stream s);
// MLX's bit stream of a (2,) uint32 key: uint8/16/32 elements for width 1/2/4.
Array bits(const Shape& shape, int width, const Array& key, Stream s);
// Uniform on [0, 1), and on [low, high) with low and high broadcasting to `shape`.
Array uniform(const Shape& shape, Dtype dtype, const Array& key, Stream s);
Array uniform(const Array& low, const Array& high, const Shape& shape, Dtype dtype, const Array& key, Stream s);
Array normal(const Shape& shape, Dtype dtype, const std::optional<Array>& loc, const std::optional<Array>& scale,
             const Array& key, Stream s);
Array randint(const Array& low, const Array& high, const Shape& shape, Dtype dtype, const Array& key, Stream s);
// `shape` defaults to p's.
Array bernoulli(const Array& p, const std::optional<Shape>& shape, const Array& key, Stream s);
// `shape` defaults to the broadcast shape of the bounds.
Array truncated_normal(const Array& lower, const Array& upper, const std::optional<Shape>& shape, Dtype dtype,
                       const Array& key, Stream s);
Array gumbel(const Shape& shape, Dtype dtype, const Array& key, Stream s);
// uint32 indices; at most one of `shape` and `num_samples`.
Array categorical(const Array& logits, int axis, const std::optional<Shape>& shape, std::optional<int64_t> num_samples,
                  const Array& key, Stream s);
Array laplace(const Shape& shape, Dtype dtype, float loc, float scale, const Array& key, Stream s);
// A permutation of arange(n) (uint32), or of x's entries along `axis`.
Array permutation(int64_t n, const Array& key, Stream s);
Array permutation(const Array& x, int axis, const Array& key, Stream s);
// Jointly normal float32 samples given mean (..., n) and cov (..., n, n), by MLX's algorithm (the
// SVD of cov); `shape` broadcasts with their batch shape.
Array multivariate_normal(const Array& mean, const Array& cov, const Shape& shape, Dtype dtype, const Array& key,
                          Stream s);

}  // namespace nuvec::random
